"""Whether a stuck summary is the model's judgement, or only echoes git-retcon's own words back.

A weak model that is told "nothing to commit ... call stuck if ..." calls stuck with that very
sentence, and the human reads our text as the model's finding. A summary most of whose words
come from one answer of the step is sent back once (tools.Session.stuck): the answer named a
call that gets the step on. So is one that says the commit is complete while the worktree holds
changes. The second time, the step ends with no judgement of the model's (outcome.GaveUp).
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from git_retcon.model import meaning
from git_retcon.model.outcome import GaveUp, Stuck
from git_retcon.ui import clip

SHARE = 0.75        # of the summary's words found in one answer
MIN_WORDS = 3
_WORD = re.compile(r"[a-z0-9_]{3,}")
_COMMON = frozenset({
    "the", "and", "for", "that", "this", "with", "from", "are", "was", "were", "not", "but", "its", "has", "have",
    "had", "you", "your", "all", "any", "can", "cannot", "into", "than", "then", "there", "these", "those", "when",
    "which", "what", "will", "would"})


def _words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in _COMMON]


def says_done(summary: str) -> bool:
    """Whether a stuck summary says the commit is complete (the 1.5B model's "... so this commit is
    complete. No further actions are required.", with its hunks applied)."""
    return bool(meaning.SAYS_DONE.search(summary))


def echoes(summary: str, answers: Iterable[str]) -> str | None:
    """The answer the summary echoes (its first line), or None when it says something of its own."""
    words = _words(summary)
    if len(words) < MIN_WORDS:
        return None
    for answer in answers:
        theirs = set(_words(answer))
        if theirs and sum(w in theirs for w in words) >= SHARE * len(words):
            return " ".join(answer.split())
    return None


def weigh_stuck(summary: str, answers: Iterable[str], echoed: str,
                changed: Callable[[], bool]) -> tuple[Stuck | None, str, str]:
    """How a stuck call ends: the step's outcome, or None with the refusal that sends it back; and
    what it echoed, kept for the next time. answers: the step's answers so far; echoed: why a
    stuck was sent back before ("" if none); changed: whether the worktree holds changes."""
    said = echoes(summary, answers)
    if said is not None and echoed:
        # Sent back once already: a stop, in our words, with the answer the model could not act on
        # (its summary now echoes that refusal, which would tell a human nothing).
        return GaveUp("the model gave up without saying why; git-retcon's answer to it, which it could not act "
                      f"on: \"{clip(echoed.removeprefix('Error: '), 300)}\""), "", echoed
    if said is None and says_done(summary) and changed():
        if echoed:   # told once to commit what it says is complete, it says so again
            return GaveUp(f"the model said the commit is complete but did not make it ({clip(summary, 200)})"), \
                "", echoed
        return None, ("Not recorded: your summary says this commit is complete, and the worktree holds changes: "
                      "call create_commit() to make the commit. stuck is only for what a human must decide or fix"), \
            f"it said the commit is complete ({summary.strip()[:160]})"
    if said is not None:
        return None, ("Not recorded: your summary repeats git-retcon's own answer (" + said[:160] + ") instead of "
                      "saying what a human must decide. That answer names the call that gets this step on: make it. "
                      "Call stuck again only for what a human must decide or fix, in your own words"), said
    return Stuck(summary.strip() or "the model called stuck without a summary"), "", echoed
