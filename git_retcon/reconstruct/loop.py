"""The reconstruction loop, resumable at any instant.

1. Load the spec; prepare the cleaned branch at merge-base(source, remote), or
   adopt the commits found on it.
2. For each logical commit whose history does not end in `complete`:
   extract (the model's judgement) -> commit -> build & test -> complete,
   or the fix loop: a WIP commit per round, until it passes or is stuck.
3. Report.

A model step only returns what it made; the journal writes it (commit object, note,
branch, spec entry, in that order). The parts live beside this file: work (what a step
takes), journal (every durable write), judge (build & test), steps (one model step), fixloop,
ahead (--jobs), stops (what a stop says), report.
"""
from __future__ import annotations

from contextlib import suppress
from itertools import count

import llm

from git_retcon.errors import RetconError
from git_retcon.git.ids import CommitId, tree_of
from git_retcon.git.plumbing import get_commit, ref_target, short
from git_retcon.model.outcome import Proposed, Stuck
from git_retcon.reconstruct import absorb, fixloop, report, restack, steps, unassigned
from git_retcon.reconstruct.ahead import Ahead
from git_retcon.reconstruct.branch import Branches
from git_retcon.reconstruct.empty import emptied, nothing_left, takes_everything
from git_retcon.reconstruct.journal import Journal, Made, Stop, note_tip_verdicts
from git_retcon.reconstruct.judge import check_base, set_up, test_tip
from git_retcon.reconstruct.preflight import load_model, preflight
from git_retcon.reconstruct.squash import finish_interrupted, squash
from git_retcon.reconstruct.stops import refuse_stuck, stop_error
from git_retcon.reconstruct.work import Options, Run, Work
from git_retcon.sandbox import confine, keep
from git_retcon.sandbox.pool import PoolWorktree, pool_names
from git_retcon.sandbox.runner import Commands
from git_retcon.sandbox.setup import Setup
from git_retcon.sandbox.worktree import Worktree
from git_retcon.state import oplog
from git_retcon.state import spec as specmod
from git_retcon.state.store import NOTES_REF, TESTS_REF, Stored, spec_ref

__all__ = ["Options", "Run", "reconstruct"]


def reconstruct(run: Run) -> None:
    """`git retcon run`: everything between loading the spec and the report."""
    store, name = run.store, run.name
    stored = store.load(name)
    ready = preflight(run, stored)    # every refusal before anything is written, in one list
    if run.opts.dry_run:
        report.dry_run(run, stored, ready.branches)
        return
    assert ready.sandbox is not None
    run.owners = ready.owners
    with store.lock(name):
        # An absorb killed half way is finished before this run's own record starts.
        absorb.finish_interrupted(store, store.load(name), run.ui.line)
        with oplog.recording(store, name, "run", oplog.refs_of(stored.spec.cleaned, name)):
            _locked(run, ready.branches, ready.model, ready.sandbox, ready.owners)


def _locked(run: Run, br: Branches, model: llm.Model | None, sandbox: confine.Sandbox,
            owners: specmod.OwnersMode) -> None:
    """reconstruct, under the spec's lock and recorded for undo."""
    repo, store, name = run.repo, run.store, run.name
    stored = store.load(name)  # re-read under the lock
    store.sweep_scratch()
    store.sweep_locks([spec_ref(name), br.cleaned_ref, NOTES_REF, TESTS_REF],
                      [Worktree.admin_dir(repo, name) / "index.lock"]
                      + [PoolWorktree.admin_dir(repo, p) / "index.lock" for p in pool_names(repo, name)])
    report.header(run, stored.spec, br, model.model_id if model else None)
    if stored.spec.setup or stored.spec.build or stored.spec.test:
        run.ui.line(f"Sandbox: {sandbox.describe()}")
    finish_interrupted(store, stored, run.ui.line)
    if restack.restack_if_rebased(store, stored, br, run.ui):   # the source was rebased onto a moved remote
        br = Branches(repo, stored.spec)
    unassigned.place_first(run, stored, model, owners)   # hunks no spec rule assigns: asked, saved in `hunks`
    journal = Journal(run, stored)
    tip = journal.start_branch(br)
    journal.adopt(br)
    note_tip_verdicts(run, stored, tip)
    if stored.spec.current() is None:
        _finished_already(run, stored, br)
        squashed = _squash_if_asked(run, stored)
        _remove_worktrees(run)
        report.final(run, stored, squashed)
        return
    if model is None:  # only adopted commits reopened the work
        model = load_model(run, stored.spec)
    wt = Worktree.ensure(repo, name, tip)
    spec = stored.spec
    commands = Commands(store, wt.path, spec.build, spec.test, spec.timeout, on_run=wt.touched_by_command,
                        setup=Setup.of(wt, spec.setup, spec.timeout, sandbox), sandbox=sandbox,
                        retest=run.opts.retest)
    report.skipped_commands(run, spec)
    if tip == br.base:   # before commit 1: a command failing here is the command's fault
        check_base(run, br, wt, commands)
    else:                # setup's too, before any model call, in a worktree where it never ran
        set_up(run, wt, commands, tip)
    # --jobs 2 and more: commands in the pool while the model works ahead (nothing to overlap without them)
    ahead = Ahead(run.opts.jobs) if run.opts.jobs > 1 and (spec.build or spec.test) else None
    stop: Stop | None = None
    try:
        while stop is None and (k := stored.spec.current()) is not None:
            w = Work(run, stored, br, wt, commands, model, k)
            stop = logical_commit(w, journal, ahead)
    except BaseException:
        # What is held back is written as far as it can be; the error that stopped the run
        # (a full disk, Ctrl-C) is the one to see, not one of these writes after it.
        with suppress(RetconError, OSError):
            journal.close(model.model_id, "error")
        report.tokens(run)
        raise
    journal.close(model.model_id, "complete" if stop is None else
                  "stuck" if isinstance(stop, Stuck) else "budget")
    if stop is not None:
        report.tokens(run)
        raise stop_error(w, stop)
    squashed = _squash_if_asked(run, stored)
    _remove_worktrees(run)
    report.final(run, stored, squashed)


def logical_commit(w: Work, journal: Journal, ahead: Ahead | None = None) -> Stop | None:
    """Logical commit k: extract (or take the work done ahead), commit, then build & test until
    it passes (complete) or stops (stuck, or the token budget)."""
    c = w.commit
    w.run.ui.heading(f"Commit {w.number}/{w.n}: {c.summary}")
    refuse_stuck(w.run, w.stored, w.k)
    if (resolved := c.resolved()) is not None:
        w.run.ui.line(f"Resolved: {resolved.text}")
    if not c.created and (why := nothing_left(w, tree_of(get_commit(w.run.repo, w.tip())))):
        journal.complete_empty(w, why)
        return None
    if not c.created:
        made = _extract(w, journal, ahead)
        if not isinstance(made, Made):
            return journal.stop(w, made)
        journal.record(w, made)
        _say_emptied(w, made)
    escalation = fixloop.replay(w)
    for round_ in count(1):
        failure = test_tip(w, journal) if ahead is None else ahead.test_tip(w, journal)
        if failure is None:
            break
        if isinstance(failure, Stuck):
            return journal.stop(w, failure)
        made = fixloop.fix(w, journal, failure, escalation, round_)
        if not isinstance(made, Made):
            return journal.stop(w, made)
        journal.record(w, made)
        _say_emptied(w, made)
    journal.complete(w)
    wips = report.wip_count(w.run, c.created)
    w.run.ui.good("✓ Commit created" + (f" ({wips} WIP)" if wips else ""))
    return None


def _say_emptied(w: Work, made: Made) -> None:
    """A commit that took every change a later logical commit had left: a finding, said here, at
    the step that did it (the run goes on; the final report counts the empty ones)."""
    repo = w.run.repo
    before, after = tree_of(get_commit(repo, made.parent)), tree_of(get_commit(repo, made.sha))
    for j, _ in emptied(w, before, after):
        w.run.ui.bad(f"! {short(made.sha)} took every change left for commit {j + 1}/{w.n} "
                     f"({w.spec.commits[j].summary}): it will have no commit of its own")


def _extract(w: Work, journal: Journal, ahead: Ahead | None) -> Made | Stop:
    """This commit's changes on the tip, as a commit object: the work done ahead (--jobs) when
    it still applies, else the model's step."""
    tip = w.tip()
    if ahead is not None and (taken := ahead.take(w, journal, tip)) is not None:
        return taken
    w.wt.reset(tip)
    if (why := takes_everything(w, tree_of(get_commit(w.run.repo, tip)))) is not None:
        return Stuck(why)   # nothing applied: the worktree stays at the tip
    session = steps.session(w, "extract", tip)
    values = steps.prompt_values(w, session)
    w.run.ui.line(steps.extracting_line(w, session))
    res = steps.step(w, journal, "extract.md", values, session)
    if not isinstance(res.outcome, Proposed):
        return res.outcome
    return journal.make(w, res, tip)


def _finished_already(run: Run, stored: Stored, br: Branches) -> None:
    """Every logical commit complete: nothing to do, or the source's later changes to absorb."""
    tip: CommitId | None = ref_target(run.repo, br.cleaned_ref)
    tip_tree = tree_of(get_commit(run.repo, tip)) if tip else ""
    if tip_tree != br.source_tree:   # the source moved on since (review fixes): absorbed where they belong
        run.ui.line(f"All logical commits are complete, and '{stored.spec.source}' has changed since:")
        name = run.opts.model or stored.spec.model
        absorb.absorb_locked(run.store, stored, run.ui, [], load_model(run, stored.spec) if name else None)
    else:
        run.ui.line(f"Nothing to do: all {len(stored.spec.commits)} logical commits are complete.")


def _remove_worktrees(run: Run) -> None:
    """A complete spec needs no build worktree (nor --jobs pool): they leave `git worktree
    list`. One that holds what git ignores (installed dependencies, build outputs) is kept aside
    for the next run, which brings it back (sandbox/keep.py); one that holds nothing is removed."""
    kept = keep.keep(run.repo, run.name)
    if kept.where:
        files = ", ".join(kept.ignored[:4]) + (", ..." if len(kept.ignored) > 4 else "")
        about = "; ".join(x for x in (files, keep.human(kept.size)) if x)
        run.ui.line(f"Kept the build worktree for the next run, with the files git ignores there"
                    f"{f' ({about})' if about else ''}: {keep.shown(run.repo, kept.where[0])}"
                    + (f" and {len(kept.where) - 1} of the --jobs pool" if len(kept.where) > 1 else "")
                    + f". Free {'them' if len(kept.where) > 1 else 'it'} with `git retcon free {run.name}`.")
    elif kept.removed:
        run.ui.line("Removed the build worktree: the spec is complete (a run that reopens it makes a new one)")


def _squash_if_asked(run: Run, stored: Stored) -> int:
    """How many WIP commits were folded (0 without --squash-wip)."""
    if not run.opts.squash_wip:
        return 0
    run.ui.heading("Squashing WIP commits")
    return squash(run.store, stored, run.ui.line)
