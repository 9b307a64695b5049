"""What a stopped run tells the human: the error it exits with (code 3) and the commands
that go on from that state."""
from __future__ import annotations

import shlex

from git_retcon.errors import BudgetStop, Stopped, StuckStop
from git_retcon.model.outcome import Stuck
from git_retcon.reconstruct.journal import Stop
from git_retcon.reconstruct.work import Run, Work
from git_retcon.state import notes
from git_retcon.state.store import Stored


def stop_error(w: Work, stop: Stop) -> Stopped:
    """The run's stop at logical commit k, as the error the command exits with."""
    if isinstance(stop, Stuck):
        return StuckStop(f"commit {w.k + 1}/{w.n} is stuck: {stop.summary}\n"
                         + way_out(w.spec.cleaned, w.model.model_id))
    spending, opts = w.run.spending, w.run.opts
    return BudgetStop(
        f"token budget reached: {spending.tokens} tokens used in this run "
        f"(--max-tokens {opts.max_tokens}), while on commit {w.k + 1}/{w.n}. Nothing is stuck and "
        f"everything committed so far is kept. To go on, run again (each run has its own budget):\n"
        f"  git retcon run {w.spec.cleaned} --max-tokens N"
    )


def refuse_stuck(run: Run, stored: Stored, k: int) -> None:
    """A stuck commit needs a human's `resolve` before the run goes on."""
    spec = stored.spec
    c = spec.commits[k]
    if (stuck := c.stuck()) is None:
        return
    run.ui.line(f"Resuming from commit {k + 1}/{len(spec.commits)}: {c.summary}")
    raise StuckStop(f"commit {k + 1}/{len(spec.commits)} is stuck: {stuck.summary}\n"
                    + way_out(spec.cleaned, run.opts.model or notes.last_run_model(run.store, stored.commit)))


def way_out(cleaned: str, model: str | None) -> str:
    """What a human does about a stuck commit: the commands, with the run's model repeated
    (without it, `run` picks the default model, which may want another key)."""
    again = f"  git retcon run {cleaned}" + (f" -m {shlex.quote(model)}" if model else "")
    return (f"When you have fixed it (a fix committed on '{cleaned}', say), record what you did and run again:\n"
            f"  git retcon resolve -m \"what you changed\" {cleaned}\n{again}\n"
            f"If the spec was wrong, edit it (git retcon spec edit {cleaned}) and redo this commit: --redo drops "
            f"its commits, so that the next run extracts it afresh:\n"
            f"  git retcon resolve --redo -m \"what you changed\" {cleaned}\n{again}")
