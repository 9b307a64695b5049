"""`run --jobs N`: commit k is built and tested in a pool worktree while the model
extracts commit k+1 on top of it in the build worktree.

Commit k+1 made ahead is a commit object only, its note kept in memory: no note, branch
move or spec entry until commit k is complete (the write order of record.record_commit
then), so the spec records only verified commits, in order, and a kill at any instant
leaves what --jobs 1 would leave. When commit k needs a fix, the work done ahead is set
aside and redone on the fixed tip without the model when its changes still merge there
cleanly (what it changed, merged three-way onto the new tip); else the model extracts
commit k+1 again.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field

from git_retcon import rework
from git_retcon.git.plumbing import get_commit, make_commit, short, signature
from git_retcon.model.tools import Outcome
from git_retcon.reconstruct import record, steps
from git_retcon.reconstruct.context import Work
from git_retcon.reconstruct.verify import judge, verdict
from git_retcon.sandbox.pool import PoolVerifier, PoolWorktree, pool_name
from git_retcon.sandbox.runner import Result
from git_retcon.sandbox.worktree import Worktree
from git_retcon.state import notes

_LABELS = {"build": "Building", "test": "Tests"}


@dataclass
class Held:
    """Work done ahead for logical commit k, on parent (not verified when it was made)."""

    k: int
    parent: str
    sha: str | None = None            # the commit object; None until create_commit
    message: str = ""
    note: notes.CommitNote | None = None
    stuck: str | None = None          # the model called stuck instead


@dataclass
class _Job:
    """Build and test of one tree in the pool worktree, in a thread."""

    thread: threading.Thread | None = None
    results: list[Result] = field(default_factory=list)
    error: BaseException | None = None


class Ahead:
    """The pool and the work done ahead, for one run."""

    def __init__(self) -> None:
        self.pool: Worktree | None = None
        self.verifier: PoolVerifier | None = None
        self.held: Held | None = None

    def verify(self, w: Work) -> rework.Failure | None:
        """verify.verify, with the commands in the pool and the model ahead meanwhile."""
        tip = w.tip()
        tree = str(get_commit(w.run.repo, tip).tree_id)
        job = self._start(w, tip, tree)
        if self.held is None and self._may_go_ahead(w):
            self._go_ahead(w, tip)
        assert job.thread is not None
        job.thread.join()
        if job.error is not None:
            raise job.error
        ui = w.run.ui
        ui.line(f"Commit {w.k + 1}/{w.n}, built and tested in the pool:")
        for r in job.results:
            ui.start(_LABELS[r.kind])
            ui.finish(r.passed, verdict(r) + ("" if r.cached else f" ({r.seconds:.1f}s)"))
        return judge(w, tip, tree, job.results)

    def take(self, w: Work, tip: str) -> bool:
        """Record the work done ahead for logical commit k on tip, if there is any that still
        applies there; False when the model must extract it (again)."""
        held, self.held = self.held, None
        if held is None or held.k != w.k:
            return False
        if held.stuck is not None:
            if held.parent == tip:   # the same step on the same tree: the same answer
                w.stop_stuck(held.stuck)
            return False
        if held.sha is None or held.note is None:
            return False
        sha = held.sha if held.parent == tip else self._redo(w, held, tip)
        if sha is None:
            w.run.ui.line("The work done ahead does not apply on the fixed commit: extracting it again")
            tokens = held.note.get("tokens", {"input": 0, "output": 0})
            notes.add_spent(w.run.store, w.stored.commit, {
                "index": w.k + 1, "why": "set aside", "input": tokens["input"], "output": tokens["output"],
                "calls": held.note.get("model_calls", 0)})
            return False
        w.wt.reset(sha)
        record.record_commit(w, sha, tip, held.note, held.message)
        return True

    # -- the pool ------------------------------------------------------------

    def _start(self, w: Work, tip: str, tree: str) -> _Job:
        if self.pool is None:
            self.pool = PoolWorktree.ensure(w.run.repo, pool_name(w.run.name, 1), tip)
            spec = w.spec
            self.verifier = PoolVerifier(self.pool, w.wt.path, spec.build, spec.test, spec.timeout)
        else:
            self.pool.reset(tip)
        verifier = self.verifier
        assert verifier is not None
        job = _Job()

        def work() -> None:
            try:
                job.results = verifier.verify(tree)
            except BaseException as exc:  # handed to the main thread, which raises it
                job.error = exc

        # A daemon: an interrupted run does not wait for the test to finish before it exits.
        job.thread = threading.Thread(target=work, name="retcon-pool", daemon=True)
        job.thread.start()
        return job

    # -- the work done ahead ---------------------------------------------------

    def _may_go_ahead(self, w: Work) -> bool:
        if w.is_last:
            return False
        nxt = w.spec.commits[w.k + 1]
        limit = w.run.opts.max_tokens
        return not nxt.created and nxt.stuck() is None and (limit is None or w.run.tally.tokens < limit)

    def _go_ahead(self, w: Work, tip: str) -> None:
        """The model extracts commit k+1 on tip in the build worktree; held, not recorded."""
        ahead = Work(w.run, w.stored, w.br, w.wt, w.verifier, w.model, w.k + 1)
        held = self.held = Held(ahead.k, tip)
        ui = w.run.ui
        ui.heading(f"Commit {ahead.k + 1}/{ahead.n}: {ahead.commit.summary} "
                   f"(ahead, while commit {w.k + 1} is built and tested)")
        w.wt.reset(tip)
        session = steps.session(ahead, False, tip, on_commit=lambda message, invented: self._hold(
            ahead, held, message, invented))
        values = steps.prompt_values(ahead, session)
        ui.line("Extracting relevant changes...")
        outcome = steps.step_ahead(ahead, "extract.md", values, session,
                                   on_spent=lambda o, spent, retries: self._spent(ahead, held, o, spent, retries))
        if outcome is not None and outcome.kind == "stuck":
            held.stuck = outcome.text

    def _hold(self, w: Work, held: Held, message: str, invented: notes.Invented) -> str:
        """create_commit ahead: the commit object and its note, kept until commit k passes."""
        held.message = record.initial_message(w.commit.message, message)
        sha = w.wt.commit(held.message, held.parent, signature(w.wt.path, "AUTHOR"),
                          signature(w.wt.path, "COMMITTER"))
        w.wt.move_head(sha)
        held.sha = sha
        held.note = notes.new_commit(w.run.name, w.k + 1, "initial", 1)
        held.note["invented"] = invented
        w.run.ui.line(f"Created {short(sha)} ahead: recorded once commit {w.k} passes")
        return sha

    def _spent(self, w: Work, held: Held, outcome: Outcome, spent: notes.Usage, retries: int) -> None:
        if outcome.commit is not None and outcome.commit == held.sha and held.note is not None:
            record.fill_spent(held.note, spent, retries)
        else:
            record.spent(w, outcome, spent, retries)

    def _redo(self, w: Work, held: Held, tip: str) -> str | None:
        """What the held commit changed, merged onto tip: a new commit object, or None on a conflict."""
        assert held.sha is not None
        repo = w.run.repo
        made, old, new = get_commit(repo, held.sha), get_commit(repo, held.parent), get_commit(repo, tip)
        merged = repo.merge_trees(old.tree, new.tree, made.tree)
        if merged.conflicts is not None:
            return None
        sha = make_commit(repo, str(merged.write_tree(repo)), [tip], held.message,
                          signature(w.wt.path, "AUTHOR"), signature(w.wt.path, "COMMITTER"))
        w.run.ui.line(f"Redoing the work done ahead on the fixed commit, without the model: {short(sha)}")
        return sha
