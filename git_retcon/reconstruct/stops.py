"""What a stopped run tells the human: the error it exits with (code 3) and the commands
that go on from that state, each one that works there (tests follow every one of them)."""
from __future__ import annotations

import shlex

import pygit2

from git_retcon.errors import BudgetStop, Stopped, StuckStop
from git_retcon.model.choose import choose
from git_retcon.model.outcome import Stuck, Unavailable
from git_retcon.reconstruct.journal import Stop
from git_retcon.reconstruct.work import Run, Work
from git_retcon.state import notes
from git_retcon.state import spec as specmod
from git_retcon.state.store import Stored

# The words of the stuck summaries plain code writes, that call for their own way out.
TIMED_OUT = "timed out after"


def stop_error(w: Work, stop: Stop) -> Stopped:
    """The run's stop at logical commit k, as the error the command exits with."""
    if isinstance(stop, Stuck):
        return StuckStop(f"commit {w.number}/{w.n} is stuck: {stop.summary}\n"
                         + way_out(w.run.repo, w.spec, w.model.model_id, stop.summary,
                                   unavailable=isinstance(stop, Unavailable)))
    spending, opts = w.run.spending, w.run.opts
    return BudgetStop(
        f"token budget reached: {spending.tokens} tokens used in this run "
        f"(--max-tokens {opts.max_tokens}), while on commit {w.number}/{w.n}. Nothing is stuck and "
        f"everything committed so far is kept. To go on, run again (each run has its own budget):\n"
        f"  {run_command(w.run.repo, w.spec, w.model.model_id)} --max-tokens N"
    )


def refuse_stuck(run: Run, stored: Stored, k: int) -> None:
    """A stuck commit needs a human's `resolve` before the run goes on."""
    spec = stored.spec
    c = spec.commits[k]
    if (stuck := c.stuck()) is None:
        return
    run.ui.line(f"Resuming from commit {k + 1}/{len(spec.commits)}: {c.summary}")
    model = run.opts.model or notes.last_run_model(run.store, stored.commit)
    raise StuckStop(f"commit {k + 1}/{len(spec.commits)} is stuck: {stuck.summary}\n"
                    + way_out(run.repo, spec, model, stuck.summary))


def run_command(repo: pygit2.Repository, spec: specmod.Spec, model: str | None) -> str:
    """`git retcon run NAME`, with -m only when the run's model is not the one `run` picks
    without it (the spec's, then retcon.model): a model the user chose once is repeated, one
    the spec names is not."""
    again = f"git retcon run {spec.cleaned}"
    if model and choose(repo, None, spec.model) != model:
        again += f" -m {shlex.quote(model)}"
    return again


def way_out(repo: pygit2.Repository, spec: specmod.Spec, model: str | None, summary: str,
            unavailable: bool = False) -> str:
    """What a human does about this stuck commit: the commands, in order. unavailable: the
    model's backend gave up (nothing to fix, only to try again)."""
    name = spec.cleaned
    again = run_command(repo, spec, model)
    resolve = f"git retcon resolve -m \"what you changed\" {name}"
    if unavailable:
        return (f"Nothing of this step was recorded. When the model's backend answers again, record it and run again:\n"
                f"  git retcon resolve -m \"retry\" {name}\n  {again}")
    if TIMED_OUT in summary:
        return (f"Fix the command, or raise `timeout` (git retcon spec edit {name}), then record it and run again:\n"
                f"  {resolve}\n  {again}")
    return (f"When you have fixed it (a fix committed on '{name}', say), record what you did and run again:\n"
            f"  {resolve}\n  {again}\n"
            f"If the spec was wrong, edit it (git retcon spec edit {name}) and redo this commit: --redo drops "
            f"its commits, so that the next run extracts it afresh:\n"
            f"  git retcon resolve --redo -m \"what you changed\" {name}\n  {again}")
