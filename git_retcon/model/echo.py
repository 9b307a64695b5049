"""Whether a stuck summary only echoes git-retcon's own words back.

A weak model that is told "nothing to commit ... call stuck if ..." calls stuck with that very
sentence, and the human reads our text as the model's finding. A summary most of whose words
come from one answer of the step is sent back once (tools.Session.stuck): the answer named a
call that gets the step on.
"""
from __future__ import annotations

import re
from collections.abc import Iterable

SHARE = 0.75        # of the summary's words found in one answer
MIN_WORDS = 3
_WORD = re.compile(r"[a-z0-9_]{3,}")
_COMMON = frozenset({
    "the", "and", "for", "that", "this", "with", "from", "are", "was", "were", "not", "but", "its", "has", "have",
    "had", "you", "your", "all", "any", "can", "cannot", "into", "than", "then", "there", "these", "those", "when",
    "which", "what", "will", "would"})


def _words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in _COMMON]


# "this commit is complete", "no further actions are required": a model that says it is done, in stuck.
_DONE = re.compile(r"\b(?:is|are|looks?|seems?) (?:now |already )?(?:complete|done|finished|ready)\b|"
                   r"\bno (?:further |more |other )?(?:action|change|step)s? "
                   r"(?:are |is )?(?:needed|required|necessary)\b|"
                   r"\bno further (?:action|change|step)s?\b|"
                   r"\balready (?:contains|holds|has|includes|in the worktree)\b|"
                   r"\bnothing (?:else|more) (?:is )?(?:needed|required|to do)\b", re.I)


def says_done(summary: str) -> bool:
    """Whether a stuck summary says the commit is complete (the 1.5B model's "... so this commit is
    complete. No further actions are required.", with its hunks applied)."""
    return bool(_DONE.search(summary))


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
