"""One model step of the loop (an extraction or a fix): its prompt's values, the
tools' session, the call, and the tokens it spent, counted against --max-tokens.
"""
from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from git_retcon import diff as hunks
from git_retcon.diff.sums import Sums
from git_retcon.git.plumbing import get_commit
from git_retcon.model.args import ToolError
from git_retcon.model.choose import BUILTIN
from git_retcon.model.retry import retry_line
from git_retcon.model.step import ModelUnavailable, StepResult, run_step, template
from git_retcon.model.tools import Outcome, Session
from git_retcon.reconstruct import record
from git_retcon.reconstruct.context import Work
from git_retcon.state import notes
from git_retcon.state import spec as specmod

if TYPE_CHECKING:
    # rework (failure parsers: many regexes) is imported when a build or test fails, not at start-up.
    from git_retcon.rework import Brief

INDEX_BUDGET = 12000


def session(w: Work, fix: bool, parent: str, brief: Brief | None = None,
            on_commit: Callable[[str, notes.Invented], str] | None = None) -> Session:
    """The tools' state for one step; a commit it makes is recorded on parent (or handed to
    on_commit: work done ahead)."""
    if w.run.remaining is None:
        w.run.remaining = hunks.RemainingDiff(w.run.repo, w.br.source_tree)
    return Session(
        wt=w.wt, source_tree=w.br.source_tree, parent=parent, verifier=w.verifier, diff=w.run.remaining,
        fix=fix, on_commit=on_commit or (
            lambda message, invented: record.create_commit(w, message, fix, parent, brief, invented)),
        # create_commit("") in a fix makes `WIP: <the failure's one-line summary>`
        default_message=brief.text.splitlines()[0] if brief is not None and brief.text else "",
        base_tree=str(get_commit(w.run.repo, w.br.base).tree_id),
        fixup_of=w.commit.summary if fix and (w.run.opts.fixup or w.spec.wip == "fixup") else None,
    )


def prompt_values(w: Work, s: Session) -> dict[str, str]:
    c = w.commit
    with w.run.ui.waiting("Computing diff"):
        remaining = s.remaining()
    # The run's diff keeps its counts up to date: a step does not count every hunk again.
    sums = s.diff.sums_of(remaining) if s.diff is not None else None
    files, added, removed = (len(sums.files), sums.added, sums.removed) if sums is not None else hunks.stat(remaining)
    w.run.ui.line(f"Computing diff ({added + removed} lines)...")
    return {
        "k": str(w.k + 1), "n": str(w.n), "summary": c.summary,
        "message": c.message, "hints": c.hints.strip() or "(none)",
        "paths": json.dumps(c.paths) if c.paths else "(none given)",
        "assigned": hunks.assigned_text(c.hunks, remaining),
        "resolution": resolution_text(c),
        "stat": f"{len(remaining)} hunks in {files} files (+{added} -{removed})",
        # The last commit's extraction calls no model: no prompt to render the diff into.
        "index": "" if takes_the_rest(w, s.fix) else _index(remaining, s.fix, sums),
    }


def _index(remaining: list[hunks.Hunk], fix: bool, sums: Sums | None = None) -> str:
    """What the prompt shows of the remaining diff: for an extraction, the whole diff when it is
    short (the model applies from it with no read_diff turn first), else an index of it. A fix
    prompt carries the brief's candidates instead, and the index."""
    if not remaining:
        return "(empty)"
    text = None if fix else hunks.whole(remaining, INDEX_BUDGET)
    if text is not None:
        return "The whole remaining diff, as read_diff() shows it (no need to call it):\n" + text
    return hunks.index_lines(remaining, budget=INDEX_BUDGET, short=True, sums=sums)


def resolution_text(commit: specmod.LogicalCommit) -> str:
    """The human's resolution (and what it answers) when the last stuck was resolved."""
    last_stuck = last_resolved = None
    for i, entry in enumerate(commit.history):
        if isinstance(entry, specmod.Stuck):
            last_stuck = (i, entry.summary)
        elif isinstance(entry, specmod.Resolved):
            last_resolved = (i, entry.text)
    if last_resolved is None or (last_stuck is not None and last_stuck[0] > last_resolved[0]):
        return ""
    text = f"\nResolution from a human: {last_resolved[1]}\n"
    if last_stuck is not None:
        text += f"(It answers this earlier stuck summary: {last_stuck[1]})\n"
    return text


def step(w: Work, prompt_file: str, values: dict[str, str], s: Session) -> Outcome:
    """Run one step with the prompt template prompt_file; stuck and budget stops end the run."""
    if _spent_all(w) and not takes_the_rest(w, s.fix):
        w.stop_budget()
    try:
        res = _call(w, prompt_file, values, s)
    except ModelUnavailable as exc:
        w.stop_stuck(f"{exc}. Nothing of this step was recorded; the state is saved. "
                     "When the backend works again, resolve (e.g. -m \"retry\") and run again.")
    _account(w, res, lambda outcome, spent, retries, seconds: record.spent(w, outcome, spent, retries, seconds))
    if res.outcome.kind == "budget":
        w.stop_budget()
    if res.outcome.kind == "stuck":
        w.stop_stuck(res.outcome.text)
    return res.outcome


def step_ahead(w: Work, prompt_file: str, values: dict[str, str], s: Session,
               on_spent: Callable[[Outcome, notes.Usage, int, float], None]) -> Outcome | None:
    """step() for work done ahead (--jobs): nothing here stops the run or goes into the spec.
    None when the budget or the backend cut it short: the commit's own turn meets them again."""
    if _spent_all(w) and not takes_the_rest(w, s.fix):
        return None
    try:
        res = _call(w, prompt_file, values, s)
    except ModelUnavailable:
        return None
    _account(w, res, on_spent)
    return res.outcome


def _spent_all(w: Work) -> bool:
    limit = w.run.opts.max_tokens
    return limit is not None and w.run.tally.tokens >= limit


def takes_the_rest(w: Work, fix: bool) -> bool:
    """The last logical commit's extraction: its tree must be the source tip's, so there is
    nothing to judge and no model is called (the tokens of a whole step saved)."""
    return not fix and w.k == w.n - 1


def extracting_line(w: Work) -> str:
    return ("Taking every remaining change: the last commit ends at the source's tree (no model needed)..."
            if takes_the_rest(w, False) else "Extracting relevant changes...")


def _the_rest(s: Session) -> StepResult:
    """The last commit's step in plain code, through the same tools a model calls: every
    remaining hunk, then create_commit with the spec's message."""
    start = time.monotonic()
    if not s.remaining():
        s.give_up("nothing is left for the last commit: the commits before it already hold every change "
                  "of the source; drop it from the spec (git retcon spec edit) and run again")
    else:
        try:
            s.apply_hunks(["."])
            s.create_commit("")
        except ToolError as exc:   # kept for a human: what stopped plain code stops a model too
            s.give_up(f"taking every remaining change failed: {exc}")
    assert s.outcome is not None
    return StepResult(s.outcome, seconds=time.monotonic() - start)


def _call(w: Work, prompt_file: str, values: dict[str, str], s: Session) -> StepResult:
    run = w.run
    if takes_the_rest(w, s.fix):
        return _the_rest(s)
    # Every wait on the model shows its elapsed time, and the retry under way, on the live line.
    with run.ui.waiting(f"Waiting for {w.model.model_id}") as tail:
        return run_step(w.model, template("system.md").template, template(prompt_file).substitute(values),
                        template("steer.md").substitute(values), s, run.opts.chain_limit,
                        over_budget=_over_budget(run.opts.max_tokens, run.tally.tokens),
                        on_retry=_retrying(w, tail),
                        # retcon-paths is plain code replaying the tools: nothing for `llm logs`
                        log=None if w.model.model_id == BUILTIN else run.exchange_log())


def _account(w: Work, res: StepResult, on_spent: Callable[[Outcome, notes.Usage, int, float], None]) -> None:
    spent = notes.usage(res.input_tokens, res.output_tokens, res.calls)
    w.run.tally.add(w.k + 1, spent)
    on_spent(res.outcome, spent, res.retries, res.seconds)
    if res.calls:   # a step plain code took (the last commit's) called no model
        w.run.ui.detail(f"model: {res.calls} calls, {res.input_tokens} tokens in, {res.output_tokens} out")


def _over_budget(limit: int | None, before: int) -> Callable[[int], bool] | None:
    return None if limit is None else (lambda spent: before + spent >= limit)


def _retrying(w: Work, tail: Callable[[str], None]) -> Callable[[str, int, float], None]:
    def say(error: str, attempt: int, seconds: float) -> None:
        w.run.ui.line(retry_line(error, attempt, seconds))
        tail(f"retry {attempt + 1} in {seconds:.1f}s after {error.split(':')[0]}")
    return say
