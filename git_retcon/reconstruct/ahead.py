"""`run --jobs N`: created commits are built and tested in a pool of N worktrees while the
model goes on extracting the next logical commits on top of them in the build worktree.

A commit made ahead is a commit object only, its note kept in memory: no note, branch
move or spec entry until every commit below it is complete (then the journal records it,
in its write order), so the spec records only verified commits, in order, and a kill at
any instant leaves what --jobs 1 would leave. Its build and test may run meanwhile: a
result is a fact about a tree, recorded by tree like any. When a commit below needs a
fix, the work done ahead is set aside and redone on the fixed tip without the model while
its changes still merge there cleanly (what it changed, merged three-way onto the new
tip); from the first that does not, the model extracts again.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from git_retcon.git.ids import CommitId, TreeId, tree_of
from git_retcon.git.plumbing import get_commit, short
from git_retcon.model.outcome import Proposed, Stuck
from git_retcon.model.step import ModelUnavailable
from git_retcon.reconstruct import steps
from git_retcon.reconstruct.empty import nothing_left, takes_everything
from git_retcon.reconstruct.journal import Journal, Made
from git_retcon.reconstruct.judge import judge, verdict
from git_retcon.reconstruct.work import Work
from git_retcon.sandbox.pool import PoolCommands, PoolWorktree, pool_name
from git_retcon.sandbox.runner import Result
from git_retcon.sandbox.worktree import Worktree

if TYPE_CHECKING:
    # rework (failure parsers: many regexes) is imported when a build or test fails, not at start-up.
    from git_retcon import rework

_LABELS = {"build": "Building", "test": "Tests"}   # else setup's own label (Commands.prepare)


@dataclass
class Held:
    """Work done ahead for logical commit k, on parent (not verified when it was made)."""

    k: int
    parent: CommitId
    made: Made | None = None          # the commit object and its note; None until the step proposed one
    stuck: str | None = None          # the model called stuck instead


@dataclass
class _Slot:
    """One worktree of the pool, and the commands that runs the commands there."""

    wt: Worktree
    commands: PoolCommands
    job: _Job | None = None


@dataclass
class _Job:
    """Build and test of one commit's tree in a pool worktree, in a thread."""

    sha: CommitId
    done: bool = False
    results: list[Result] = field(default_factory=list)
    error: BaseException | None = None


class Ahead:
    """The pool and the work done ahead, for one run with --jobs N."""

    def __init__(self, jobs: int) -> None:
        self.size = jobs
        self.slots: list[_Slot] = []
        self.jobs: dict[CommitId, _Job] = {}     # by commit: started, running or done
        self.held: list[Held] = []                # made ahead, each on the one before (the first on the tip)
        self.aside: list[Held] = []               # made ahead on a commit that then failed
        self.changed = threading.Condition()      # a job finished

    def test_tip(self, w: Work, journal: Journal) -> rework.Failure | Stuck | None:
        """judge.test_tip, with the commands in the pool while the model works ahead."""
        tip = w.tip()
        tree = tree_of(get_commit(w.run.repo, tip))
        while True:
            self._start_jobs(w, tip)
            job = self.jobs.get(tip)
            if job is not None and job.done:
                break
            if self._may_go_ahead(w):
                self._go_ahead(w, journal, tip)
            else:
                self._wait()
        del self.jobs[tip]
        if job.error is not None:
            raise job.error
        ui = w.run.ui
        ui.line(f"Commit {w.number}/{w.n}, built and tested in the pool:")
        for r in job.results:
            ui.start(_LABELS[r.kind] if r.setup is None else f"Setup `{r.command}` ({r.setup})")
            ui.finish(r.passed, verdict(r) + ("" if r.cached else f" ({r.seconds:.1f}s)"))
            if (slow := r.slowdown(w.run.name)) is not None:
                ui.detail(slow)
        failure = judge(w, journal, tip, tree, job.results)
        if failure is not None and self.held:
            self.aside, self.held = self.held, []   # on a failing commit: redone once it is fixed
        return failure

    def take(self, w: Work, journal: Journal, tip: CommitId) -> Made | Stuck | None:
        """The work done ahead for logical commit k on tip, if there is any that still applies
        there; None when the model must extract it (again)."""
        if self.aside:
            self.held = self._redo(w, journal, tip)
        if not self.held or self.held[0].k != w.k:
            self.held = []
            return None
        held = self.held.pop(0)
        if held.stuck is not None:   # the same step on the same tree: the same answer
            return Stuck(held.stuck)
        if held.made is None:
            self.held = []
            return None
        w.wt.reset(held.made.sha)
        return held.made

    # -- the pool ------------------------------------------------------------

    def _start_jobs(self, w: Work, tip: CommitId) -> None:
        """Start the builds and tests not yet started, oldest first, in the free worktrees."""
        for slot in self.slots:
            if slot.job is not None and slot.job.done:
                slot.job = None
        for sha in [tip] + [h.made.sha for h in self.held if h.made is not None]:
            if sha in self.jobs:
                continue
            free = self._free_slot(w, sha)
            if free is None:
                return
            self._start(free, sha, tree_of(get_commit(w.run.repo, sha)))

    def _free_slot(self, w: Work, sha: CommitId) -> _Slot | None:
        for slot in self.slots:
            if slot.job is None:
                slot.wt.reset(sha)
                return slot
        if len(self.slots) == self.size:
            return None
        wt = PoolWorktree.ensure(w.run.repo, pool_name(w.run.name, len(self.slots) + 1), sha)
        spec = w.spec
        self.slots.append(_Slot(wt, PoolCommands(wt, w.wt.path, spec.build, spec.test, spec.timeout, spec.setup,
                                                       sandbox=w.commands.sandbox, retest=w.commands.retest)))
        return self.slots[-1]

    def _start(self, slot: _Slot, sha: CommitId, tree: TreeId) -> None:
        job = slot.job = self.jobs[sha] = _Job(sha)
        commands = slot.commands

        def work() -> None:
            try:
                job.results = commands.build_and_test(tree)
            except BaseException as exc:  # handed to the main thread, which raises it
                job.error = exc
            with self.changed:
                job.done = True
                self.changed.notify_all()

        # A daemon: an interrupted run does not wait for a test to finish before it exits.
        threading.Thread(target=work, name=f"retcon-pool-{short(sha)}", daemon=True).start()

    def _wait(self) -> None:
        with self.changed:
            # Slots whose job was done are freed by _start_jobs first: this waits for a running one.
            self.changed.wait_for(lambda: any(s.job is not None and s.job.done for s in self.slots))

    # -- the work done ahead ---------------------------------------------------

    def _may_go_ahead(self, w: Work) -> bool:
        k = w.k + len(self.held) + 1     # the logical commit after those held
        if self.aside or len(self.held) >= self.size or k >= w.n:
            return False
        if self.held and (self.held[-1].made is None or self.held[-1].stuck is not None):
            return False
        nxt = w.spec.commits[k]
        if nxt.created or nxt.stuck() is not None or steps.spent_all(w):
            return False
        # A commit with nothing left is the loop's to complete in its turn, with no step.
        parent = self.held[-1].made.sha if self.held and self.held[-1].made else w.tip()
        ahead = Work(w.run, w.stored, w.br, w.wt, w.commands, w.model, k)
        tree = tree_of(get_commit(w.run.repo, parent))
        # One whose spec takes everything left stops in its own turn, before anything is applied.
        return nothing_left(ahead, tree, who=False) is None and takes_everything(ahead, tree) is None

    def _go_ahead(self, w: Work, journal: Journal, tip: CommitId) -> None:
        """The model extracts the next logical commit on the last one made; held, not recorded."""
        parent = self.held[-1].made.sha if self.held and self.held[-1].made else tip
        ahead = Work(w.run, w.stored, w.br, w.wt, w.commands, w.model, w.number + len(self.held))
        held = Held(ahead.k, parent)
        self.held.append(held)
        w.run.ui.heading(f"Commit {ahead.number}/{ahead.n}: {ahead.commit.summary} "
                         f"(ahead, while commit {w.number} is built and tested)")
        w.wt.reset(parent)
        session = steps.session(ahead, "extract", parent)
        values = steps.prompt_values(ahead, session)
        w.run.ui.line(steps.extracting_line(ahead, session))
        if steps.spent_all(ahead) and not steps.takes_the_rest(ahead, "extract"):
            return   # the budget, or the backend below: the commit's own turn meets them again
        try:
            res = steps.attempt(ahead, journal, "extract.md", values, session)
        except ModelUnavailable:
            return
        if isinstance(res.outcome, Proposed):
            held.made = journal.make(ahead, res, parent)
            w.run.ui.line(f"Created {short(held.made.sha)} ahead: recorded once commit {ahead.k} passes")
        elif isinstance(res.outcome, Stuck):
            held.stuck = res.outcome.summary

    def _redo(self, w: Work, journal: Journal, tip: CommitId) -> list[Held]:
        """The work set aside, merged onto the fixed tip one commit after the other, until the
        first that does not merge cleanly (it and those after it are extracted again)."""
        aside, self.aside = self.aside, []
        redone: list[Held] = []
        repo = w.run.repo
        parent = tip
        for i, held in enumerate(aside):
            if held.made is None or held.stuck is not None:
                break
            made, old, new = get_commit(repo, held.made.sha), get_commit(repo, held.parent), get_commit(repo, parent)
            merged = repo.merge_trees(old.tree, new.tree, made.tree)
            if merged.conflicts is not None:
                w.run.ui.line(f"The work done ahead for commit {held.k + 1} does not apply on the fixed "
                              "commit: extracting it again")
                for lost in aside[i:]:
                    if lost.made is not None:
                        journal.set_aside(lost.made)
                break
            again = journal.remake(w, held.made, TreeId(str(merged.write_tree(repo))), parent)
            w.run.ui.line(f"Redoing the work done ahead for commit {held.k + 1} on the fixed commit, "
                          f"without the model: {short(again.sha)}")
            redone.append(Held(held.k, parent, again))
            parent = again.sha
        return redone
