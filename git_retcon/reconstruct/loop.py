"""The reconstruction loop: the seed's algorithm, resumable at any instant.

1. Load the spec; prepare the cleaned branch at merge-base(source, remote), or
   adopt the commits found on it.
2. For each logical commit whose history does not end in `complete`:
   extract (model) -> commit -> record -> build & test -> complete,
   or the fix loop: a WIP commit per round, until it passes or is stuck.
3. Report.

The parts live beside this file: context (what a step takes), record (the write
order, adoption), verify (build & test), steps (one model step), fixloop, report.
"""
from __future__ import annotations

import llm

from git_retcon import diff as hunks
from git_retcon.errors import BudgetStop, RetconError, StuckStop
from git_retcon.git.ownership import refuse_checked_out
from git_retcon.git.plumbing import get_commit, ref_target
from git_retcon.reconstruct import fixloop, record, report, steps
from git_retcon.reconstruct.ahead import Ahead
from git_retcon.reconstruct.context import Branches, Options, Run, Work, save_unsaved, way_out
from git_retcon.reconstruct.squash import finish_interrupted, squash
from git_retcon.reconstruct.verify import check_base, verify
from git_retcon.sandbox.pool import PoolWorktree, pool_names, remove_pool
from git_retcon.sandbox.runner import Verifier, check_command_exists
from git_retcon.sandbox.worktree import Worktree
from git_retcon.state import notes
from git_retcon.state import spec as specmod
from git_retcon.state.notes import Stop
from git_retcon.state.store import NOTES_REF, TESTS_REF, Stored, spec_ref

__all__ = ["Options", "Run", "reconstruct"]


def reconstruct(run: Run) -> None:
    """`git retcon run`: everything between loading the spec and the report."""
    repo, store, name = run.repo, run.store, run.name
    stored = store.load(name)
    if (k := stored.spec.current()) is not None:
        _refuse_stuck(run, stored, k)
    br = Branches(repo, stored.spec)
    if run.opts.dry_run:
        report.dry_run(run, stored, br)
        return
    model = _ready_model(run, stored.spec) if stored.spec.current() is not None else None
    refuse_checked_out(repo, stored.spec.cleaned)
    record.refuse_taken(repo, stored.spec)
    with store.lock(name):
        stored = store.load(name)  # re-read under the lock
        store.sweep_scratch()
        store.sweep_locks([spec_ref(name), br.cleaned_ref, NOTES_REF, TESTS_REF],
                          [Worktree.admin_dir(repo, name) / "index.lock"]
                          + [PoolWorktree.admin_dir(repo, p) / "index.lock" for p in pool_names(repo, name)])
        report.header(run, stored.spec, br, model.model_id if model else None)
        finish_interrupted(store, stored, run.ui.line)
        tip = record.start_branch(run, stored, br)
        record.adopt(run, stored, br, tip)
        record.note_tip_verdicts(run, stored, tip)
        if stored.spec.current() is None:
            squashed = _squash_if_asked(run, stored)
            _remove_worktrees(run)
            _finished_already(run, stored, br, squashed)
            return
        if model is None:  # only adopted commits reopened the work
            model = _load_model(run, stored.spec)
        wt = Worktree.ensure(repo, name, tip)
        spec = stored.spec
        verifier = Verifier(store, wt.path, spec.build, spec.test, spec.timeout, on_run=wt.touched_by_command)
        report.skipped_commands(run, spec)
        if tip == br.base:   # before commit 1: a command failing here is the command's fault
            check_base(run, br, wt, verifier)
        # --jobs 2 and more: commands in the pool while the model works ahead (nothing to overlap without them)
        ahead = Ahead(run.opts.jobs) if run.opts.jobs > 1 and (spec.build or spec.test) else None
        stop: Stop = "complete"
        try:
            while (k := stored.spec.current()) is not None:
                logical_commit(Work(run, stored, br, wt, verifier, model, k), ahead)
        except RetconError as exc:
            stop = "budget" if isinstance(exc, BudgetStop) else "stuck" if isinstance(exc, StuckStop) else "error"
            raise
        finally:
            save_unsaved(run, stored)   # a stop before a commit's verdict: its entry, as adoption would
            record.write_unwritten(run)
            if stop != "complete":   # the closing report says it otherwise
                report.tokens(run)
            record.run_totals(run, stored, model.model_id, stop)
        squashed = _squash_if_asked(run, stored)
        _remove_worktrees(run)
        report.final(run, stored, squashed)


def logical_commit(w: Work, ahead: Ahead | None = None) -> None:
    """Extract (or take the work done ahead), commit, then build & test until it passes
    (complete) or is stuck."""
    c = w.commit
    w.run.ui.heading(f"Commit {w.k + 1}/{w.n}: {c.summary}")
    _refuse_stuck(w.run, w.stored, w.k)
    if (resolved := c.resolved()) is not None:
        w.run.ui.line(f"Resolved: {resolved.text}")
    tip = w.tip()
    if not c.created and (ahead is None or not ahead.take(w, tip)):
        w.wt.reset(tip)
        _extract(w, tip)
    escalation = fixloop.replay(w)
    rounds = 0
    check = verify if ahead is None else ahead.verify
    while (failure := check(w)) is not None:
        rounds += 1
        fixloop.fix(w, failure, escalation, rounds)
    record.complete(w)
    wips = report.wip_count(w.run, c.created)
    w.run.ui.good("✓ Commit created" + (f" ({wips} WIP)" if wips else ""))


def _extract(w: Work, tip: str) -> None:
    """The model picks and applies this commit's changes and commits them on tip."""
    session = steps.session(w, False, tip)
    values = steps.prompt_values(w, session)
    w.run.ui.line(steps.extracting_line(w))
    steps.step(w, "extract.md", values, session)


def _refuse_stuck(run: Run, stored: Stored, k: int) -> None:
    """A stuck commit needs a human's `resolve` before the run goes on."""
    spec = stored.spec
    c = spec.commits[k]
    if (stuck := c.stuck()) is None:
        return
    run.ui.line(f"Resuming from commit {k + 1}/{len(spec.commits)}: {c.summary}")
    raise StuckStop(f"commit {k + 1}/{len(spec.commits)} is stuck: {stuck.summary}\n"
                    + way_out(spec.cleaned, run.opts.model or notes.last_run_model(run.store, stored.commit)))


def _load_model(run: Run, spec: specmod.Spec) -> llm.Model:
    from git_retcon.model import choose as models

    return models.load(models.choose(run.repo, run.opts.model, spec.model))


def _ready_model(run: Run, spec: specmod.Spec) -> llm.Model:
    """The model, and the configured commands checked, before anything is written."""
    model = _load_model(run, spec)
    for kind in ("build", "test"):
        command = getattr(spec, kind)
        if command:
            check_command_exists(command, kind)
    return model


def _finished_already(run: Run, stored: Stored, br: Branches, squashed: int) -> None:
    tip = ref_target(run.repo, br.cleaned_ref)
    tip_tree = str(get_commit(run.repo, tip).tree_id) if tip else ""
    if tip_tree != br.source_tree:
        paths = sorted({h.path for h in hunks.remaining(run.repo, tip_tree, br.source_tree)})
        raise RetconError(
            f"all logical commits are complete, but '{stored.spec.source}' has changed since: "
            f"{len(paths)} paths differ ({', '.join(paths[:5])}{'...' if len(paths) > 5 else ''}); "
            "add a [[commit]] for them (git retcon spec edit) and run again"
        )
    run.ui.line(f"Nothing to do: all {len(stored.spec.commits)} logical commits are complete.")
    report.final(run, stored, squashed)


def _remove_worktrees(run: Run) -> None:
    """A complete spec needs no build worktree (nor --jobs pool): they leave `git worktree
    list`. A run that reopens the spec makes a new one."""
    removed = Worktree.remove(run.repo, run.name)
    if remove_pool(run.repo, run.name) or removed:
        run.ui.line("Removed the build worktree: the spec is complete (a run that reopens it makes a new one)")


def _squash_if_asked(run: Run, stored: Stored) -> int:
    """How many WIP commits were folded (0 without --squash-wip)."""
    if not run.opts.squash_wip:
        return 0
    run.ui.heading("Squashing WIP commits")
    return squash(run.store, stored, run.ui.line)

