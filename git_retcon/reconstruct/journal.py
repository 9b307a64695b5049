"""Every durable write of a run, in the order that makes a kill at any instant resumable.

One created commit: the commit object, its note, the cleaned branch (CAS), the spec entry
(CAS). A model step only returns what it made (model/outcome.py); the loop hands it here.
On resume, commits found on the cleaned branch past the spec's last entry are adopted,
so a kill before the spec's save loses nothing.

Batching is the journal's own business: a created commit's spec entry is saved with its
verdict (complete, the next commit of the fix loop, or a stop: one spec save per commit,
not two), and a commit's build and test verdicts go into its note with the next notes
write. A kill between loses neither: the verdicts are the tree's records
(refs/notes/retcon-tests), and `note_tip_verdicts` copies them into the note on resume.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from git_retcon.errors import RetconError
from git_retcon.failpoint import failpoint
from git_retcon.git import ownership
from git_retcon.git.commits import make_commit, signature
from git_retcon.git.ids import CommitId, TreeId, tree_of
from git_retcon.git.message import cleanup
from git_retcon.git.ownership import move_branch
from git_retcon.git.plumbing import find_commit, full_sha, get_commit, short
from git_retcon.model.outcome import OverBudget, Proposed, Stuck
from git_retcon.model.step import StepResult
from git_retcon.reconstruct.branch import Branches, recorded, refuse_foreign
from git_retcon.reconstruct.work import Run, Work
from git_retcon.sandbox.runner import Result
from git_retcon.state import notes, records
from git_retcon.state import spec as specmod
from git_retcon.state.store import Stored
from git_retcon.ui import plural

if TYPE_CHECKING:
    # rework (failure parsers: many regexes) is imported when a build or test fails, not at start-up.
    from git_retcon.rework import Brief

# How a logical commit's work stops short of complete: stuck (a human decides), or the token budget.
Stop = Stuck | OverBudget


@dataclass
class Made:
    """A commit object made for logical commit k, on parent, and not yet recorded."""

    k: int
    sha: CommitId
    parent: CommitId
    message: str
    note: notes.CommitNote


class Journal:
    """The writes of one run. Everything it holds back is written by `close`."""

    def __init__(self, run: Run, stored: Stored):
        self.run = run
        self.stored = stored
        # Notes of commits this run made, with their verdicts, not written yet: they go out
        # with the next created commit's note (or at close), one notes write per commit.
        self._notes: dict[CommitId, notes.CommitNote] = {}
        # What the spec's history gained in memory that no save has written yet: the reasons.
        self._unsaved: list[str] = []

    # -- the branch, before the first step --------------------------------------------

    def start_branch(self, br: Branches) -> CommitId:
        """The cleaned branch's tip, creating it at the merge-base on the first run."""
        run, spec = self.run, self.stored.spec
        made = [sha for c in spec.commits for sha in c.created]
        tip = br.cleaned_tip
        if tip is None:
            if made:
                last = full_sha(run.repo, made[-1])
                restore = (f"restore it with `git branch {spec.cleaned} {last[:12]}`, or "
                           if find_commit(run.repo, last) is not None else
                           f"fetch its commits (git retcon pull REMOTE: {short(last)} is not in this repository), or ")
                raise RetconError(
                    f"branch '{spec.cleaned}' is gone but the spec records {plural(len(made), 'commit')} on it: "
                    f"{restore}start over with `git retcon abort {spec.cleaned}`"
                )
            run.ui.line("Creating cleaned branch from merge-base...")
            move_branch(run.repo, spec.cleaned, br.base, None, f"start {spec.cleaned} at merge-base")
            failpoint("after-branch-start")   # no history yet: the reflog says whose branch it is
            tip = br.base
        else:
            refuse_foreign(run.repo, run.name, spec, br)
            run.ui.line(f"Resuming cleaned branch at {short(tip)}")
        run.ui.line(f"Base commit: {short(br.base)}")
        return tip

    def adopt(self, br: Branches) -> None:
        """Check the branch still holds the recorded commits; adopt those past them (a human's
        commit gets a note that says so: the run's own from then on). Commits of the logical
        commit under way that a human dropped from the branch's tip by hand are forgotten."""
        run, spec = self.run, self.stored.spec
        on = ownership.chain(run.repo, spec.cleaned, br.base)
        if not on.on_base:
            raise RetconError(
                f"branch '{spec.cleaned}' is not on top of merge-base('{spec.source}', '{spec.remote}') "
                f"{short(br.base)} (the source was rebased since the run): start over with "
                f"`git retcon abort {run.name}` and `git retcon run {run.name}`")
        chain = on.commits
        self._forget_dropped(chain)
        full = recorded(run.repo, spec)
        if chain[: len(full)] != full:
            missing = next((s for i, s in enumerate(full) if i >= len(chain) or chain[i] != s), None)
            raise RetconError(
                f"branch '{spec.cleaned}' no longer holds the recorded commits "
                f"(first missing: {short(missing)}): restore it with "
                f"`git branch -f {spec.cleaned} {full[-1][:12]}`, or start over with "
                f"`git retcon abort {spec.cleaned}`"
            )
        extra = chain[len(full):]
        if not extra:
            return
        k = spec.current()
        if k is None:
            # A commit on a finished branch reopens the last logical commit: it is
            # complete again only once its new tip is verified (and equals the source).
            k = len(spec.commits) - 1
            spec.commits[k].history.pop()
        for sha in extra:
            run.ui.line(f"Adopting {short(sha)} into commit {k + 1}/{len(spec.commits)}")
            c = spec.commits[k]
            if not ownership.made_by(run.repo, sha, run.name):   # a human's: noted before the spec says it
                note = notes.new_commit(run.name, specmod.number(k), "adopted", len(c.created) + 1)
                notes.write_commit(run.store, sha, note)
            c.history.append(specmod.CommitCreated(sha))
            run.store.update(self.stored, f"adopt {short(sha)} into commit {k + 1}")

    def _forget_dropped(self, chain: list[CommitId]) -> None:
        """The logical commit under way lost commits from the branch's tip, by a human's hand
        (a reset to take a try back): its history forgets them, as the branch did. Commits of
        a complete logical commit are never forgotten: that is an error the caller names."""
        run, spec = self.run, self.stored.spec
        k = spec.current()
        if k is None:
            return
        c = spec.commits[k]
        mine = [full_sha(run.repo, s) for s in c.created]
        before = recorded(run.repo, spec)[: len(recorded(run.repo, spec)) - len(mine)]
        if not mine or chain[: len(before)] != before:
            return
        kept = 0
        for a, b in zip(chain[len(before):], mine, strict=False):   # the branch may hold fewer, or others
            if a != b:
                break
            kept += 1
        gone = mine[kept:]
        if not gone:
            return
        for sha in gone:
            run.ui.line(f"Forgetting {short(sha)} of commit {k + 1}/{len(spec.commits)}: it was dropped "
                        f"from '{spec.cleaned}' by hand")
        drop = set(gone)
        c.history = [e for e in c.history if not (isinstance(e, specmod.CommitCreated)
                                                  and full_sha(run.repo, e.sha) in drop)]
        run.store.update(self.stored, f"commit {k + 1}: forget {len(gone)} commit(s) dropped by hand")

    # -- one created commit --------------------------------------------------------------

    def make(self, w: Work, step: StepResult, parent: CommitId, brief: Brief | None = None) -> Made:
        """The commit object of what a step proposed, on parent (no ref moves), with its note:
        which logical commit, what the step spent, and for a fix the brief it was made from."""
        proposed = step.outcome
        assert isinstance(proposed, Proposed)
        c = w.commit
        message = proposed.message if brief is not None else initial_message(c.message, proposed.message)
        message = cleanup(message)   # as `git commit -m` stores it; never empty: the spec's or `WIP: ...`
        sha = make_commit(w.run.repo, proposed.tree, [parent], message,
                          signature(w.wt.path, "AUTHOR"), signature(w.wt.path, "COMMITTER"))
        w.wt.move_head(sha)
        failpoint("after-commit-object")
        note = notes.new_commit(w.run.name, w.number, "wip" if c.created else "initial", len(c.created) + 1)
        if brief is not None:
            note["diagnosis"] = brief.text
            note["rework"] = brief.record
        note["invented"] = proposed.invented
        if proposed.confirmed:
            note["confirmed"] = proposed.confirmed
        if proposed.instead:
            note["instead"] = proposed.instead
        _fill_spent(note, step)
        return Made(w.k, sha, parent, message, note)

    def remake(self, w: Work, made: Made, tree: TreeId, parent: CommitId) -> Made:
        """made's work on another parent (--jobs: work done ahead of a commit that then needed a
        fix, merged onto the fixed one): a new commit object, with the same message and note."""
        sha = make_commit(w.run.repo, tree, [parent], made.message,
                          signature(w.wt.path, "AUTHOR"), signature(w.wt.path, "COMMITTER"))
        return Made(made.k, sha, parent, made.message, made.note)

    def record(self, w: Work, made: Made) -> None:
        """The writes after the commit object, in order: its note (with the notes held back:
        one notes write per created commit), the branch (CAS), the spec entry (saved with the
        commit's verdict). The build worktree holds the commit's tree."""
        held = dict(self._notes)
        held.pop(made.sha, None)
        notes.write_commits(self.run.store, {**held, made.sha: made.note})
        for done in held:
            self._notes.pop(done, None)
        move_branch(self.run.repo, w.spec.cleaned, made.sha, made.parent, made.message.splitlines()[0])
        failpoint("after-branch-ref")
        w.wt.move_head(made.sha)
        w.commit.history.append(specmod.CommitCreated(made.sha))
        self._unsaved.append(f"commit {w.number}: created {short(made.sha)}")
        failpoint("spec-entry-held")   # appended in memory; saved with its verdict, later
        self.run.ui.line(f"Creating commit... {short(made.sha)}")

    def verdicts(self, w: Work, tip: CommitId, results: list[Result]) -> None:
        """The build/test verdicts go into the tested commit's own note too, held back and written
        with the next commit's note, or at close."""
        note = self._notes.pop(tip, None) or notes.read_commit(self.run.store, tip)
        if note is None or note.get("spec") != self.run.name:
            return
        for kind in notes.COMMAND_KINDS:
            r = next((r for r in results if r.kind == kind), None)
            if r is not None:
                note[kind] = r.result
                if r.sandbox is not None:     # what it ran under: the note says, as the record does
                    note["sandbox"] = r.sandbox
            elif not w.commands.configured(kind):
                note[kind] = "skipped"
        self._notes[tip] = note

    def complete(self, w: Work) -> None:
        """Logical commit k built and passed at the branch tip: it is complete."""
        w.commit.history.append(specmod.Complete())
        self._save(f"commit {w.number} complete")
        failpoint("after-complete")   # its verdicts are held for the next notes write

    def complete_empty(self, w: Work, why: str) -> None:
        """Logical commit k has nothing left to take: complete, with no commit of its own."""
        w.commit.history.append(specmod.Complete())
        self._save(f"commit {w.number} complete, with nothing left for it")
        self.run.ui.line(f"Nothing left for it: {why}.")
        self.run.ui.bad(f"! Empty: no commit of its own (merge or drop it: git retcon spec edit {w.spec.cleaned})")

    def stop(self, w: Work, stop: Stop) -> Stop:
        """Logical commit k stops short: a stuck one is recorded for a human's `resolve`."""
        if isinstance(stop, Stuck):
            w.commit.history.append(specmod.Stuck(stop.summary))
            self._save(f"commit {w.number} stuck")
            self.run.ui.bad("✗ Stuck - stopping")
        else:
            self.run.ui.bad("✗ Token budget reached - stopping")
        return stop

    # -- what steps spent ------------------------------------------------------------

    def spent(self, w: Work, step: StepResult, why: str) -> None:
        """What a step that made no commit spent (its commit's note holds it otherwise): on the
        spec chain, so nothing spent goes unaccounted."""
        if step.calls:
            notes.add_spent(self.run.store, self.stored.commit, {
                "index": w.number, "why": why, "input": step.input_tokens, "output": step.output_tokens,
                "calls": step.calls, "seconds": round(step.seconds, 3)})

    def set_aside(self, made: Made) -> None:
        """What a step done ahead spent, when its work is dropped: on the spec chain."""
        note = made.note
        if not note.get("model_calls"):   # plain code's (the last commit) spent nothing
            return
        tokens = note.get("tokens", {"input": 0, "output": 0})
        notes.add_spent(self.run.store, self.stored.commit, {
            "index": specmod.number(made.k), "why": "set aside", "input": tokens["input"], "output": tokens["output"],
            "calls": note.get("model_calls", 0), "seconds": note.get("model_seconds", 0.0)})

    def close(self, model: str, stop: notes.RunEnd) -> None:
        """Write what is held back (a run that stops before a verdict: its entry, as adoption
        would), then the run's token totals on the spec's current commit."""
        if self._unsaved:
            self._save("")
        held = dict(self._notes)
        notes.write_commits(self.run.store, held)
        self._notes.clear()
        spending = self.run.spending
        if spending.calls:
            notes.add_run(self.run.store, self.stored.commit, {
                "model": model, "stop": stop,
                "tokens": notes.usage(spending.input_tokens, spending.output_tokens, spending.calls,
                                      spending.cached_tokens),
                "commits": {str(i): u for i, u in sorted(spending.per_commit.items())},
            })

    def _save(self, message: str) -> None:
        """Write the spec (CAS) with every entry appended since the last save."""
        parts = [*self._unsaved, message] if message else list(self._unsaved)
        self.run.store.update(self.stored, "; ".join(parts))
        self._unsaved.clear()


def note_tip_verdicts(run: Run, stored: Stored, tip: CommitId) -> None:
    """A run killed after a commit's verdicts and before the next notes write left them only in
    the tree's records (and the spec): copy them into the commit's note. Only the branch tip can
    be so, since every notes write carries the verdicts held before it."""
    spec = stored.spec
    note = notes.read_commit(run.store, tip)
    if note is None or note.get("spec") != run.name:
        return
    tree = tree_of(get_commit(run.repo, tip))
    found = False
    for kind in notes.COMMAND_KINDS:
        command = getattr(spec, kind)
        rec = records.for_spec(notes.tree_records(run.store, tree), command, records.of_spec(spec, kind)) \
            if command and kind not in note else None
        if rec is not None and rec.get("result") in ("pass", "fail"):
            note[kind] = rec["result"]
            found = True
    if found:
        for kind in notes.COMMAND_KINDS:
            if not getattr(spec, kind):
                note.setdefault(kind, "skipped")
        notes.write_commit(run.store, tip, note)


def _fill_spent(note: notes.CommitNote, step: StepResult) -> None:
    note["tokens"] = {"input": step.input_tokens, "output": step.output_tokens}
    if step.cached_tokens:
        note["tokens"]["cached"] = step.cached_tokens
    note["model_calls"] = step.calls
    note["model_seconds"] = round(step.seconds, 3)
    if step.retries:
        note["model_retries"] = step.retries


def initial_message(spec_message: str, model_message: str) -> str:
    """The spec's message is authoritative; a body the model wrote is kept when the spec has none."""
    spec_message = spec_message.strip()
    if "\n" in spec_message:
        return spec_message + "\n"
    lines = model_message.strip().splitlines()
    body = "\n".join(lines[1:]).strip()
    return spec_message + ("\n\n" + body if body else "") + "\n"
