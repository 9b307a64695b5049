"""What the loop writes, in the order that makes a crash at any instant resumable.

One created commit: commit object, its note, the cleaned branch (CAS), the spec
entry (CAS). The cleaned branch ref moves here and only here (`move_branch`).
The spec entry is written with the commit's verdict (complete, or the next commit of
the fix loop, or a stop): one spec save per commit, not two. On resume, commits found
on the cleaned branch past the spec's last entry are adopted, so a kill before that
save loses nothing; a logical commit becomes complete here (`complete`), once verified.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import pygit2

from git_retcon.errors import RetconError
from git_retcon.failpoint import failpoint
from git_retcon.git import ownership
from git_retcon.git.message import cleanup
from git_retcon.git.plumbing import cas_ref, full_sha, get_commit, short, signature
from git_retcon.model.tools import Outcome
from git_retcon.reconstruct.context import Branches, Run, Work
from git_retcon.state import notes
from git_retcon.state import spec as specmod
from git_retcon.state.store import Stored

if TYPE_CHECKING:
    # rework (failure parsers: many regexes) is imported when a build or test fails, not at start-up.
    from git_retcon.rework import Brief


def move_branch(repo: pygit2.Repository, cleaned: str, new: str, old: str | None, why: str) -> None:
    """The one place run, squash and redo move the cleaned branch: compare-and-swap from
    old, and never while a work tree has it checked out (asked at every move: the user
    may check it out while a run goes on)."""
    ownership.refuse_checked_out(repo, cleaned)
    cas_ref(repo, ownership.branch_ref(cleaned), new, old, f"retcon: {why}")
    if old is None and new is not None:
        ownership.ensure_reflog(repo, ownership.branch_ref(cleaned), new, f"retcon: {why}")


def recorded(repo: pygit2.Repository, spec: specmod.Spec) -> list[str]:
    """The commits the spec records on the cleaned branch, in full, oldest first."""
    return [full_sha(repo, sha) for c in spec.commits for sha in c.created]


def refuse_foreign(repo: pygit2.Repository, name: str, spec: specmod.Spec, br: Branches) -> None:
    """The cleaned branch exists but git-retcon did not make it: refuse to touch it."""
    why = ownership.foreign(repo, name, spec.cleaned, br.base, recorded(repo, spec),
                            any(c.history for c in spec.commits), (str(br.source.id), str(br.remote.id)))
    if why:
        raise ownership.NotOurs(
            f"{why}: git-retcon moves only branches it made; choose another `cleaned` name "
            f"(a new spec: git retcon spec export, change `cleaned`, git retcon spec import), "
            f"or delete that branch if you do not need it")


def refuse_taken(repo: pygit2.Repository, spec: specmod.Spec) -> None:
    """A cleaned branch still to be made: its name was free when the spec was saved, but
    a ref made since (or an older version's save) may stand in the way now."""
    if ownership.branch_tip(repo, spec.cleaned) is not None:
        return
    taken = ownership.name_problem(spec.cleaned) or ownership.taken_problem(repo, spec.cleaned, spec.source,
                                                                            spec.remote)
    if taken:
        raise ownership.NotOurs(f"cannot create branch '{spec.cleaned}': {taken}: rename what is in the way, "
                                "or give the spec another `cleaned` name")


def start_branch(run: Run, stored: Stored, br: Branches) -> str:
    """The cleaned branch's tip, creating it at the merge-base on the first run."""
    spec = stored.spec
    made = [sha for c in spec.commits for sha in c.created]
    tip = br.cleaned_tip
    if tip is None:
        if made:
            raise RetconError(
                f"branch '{spec.cleaned}' is gone but the spec records {len(made)} commits on it: "
                f"restore it with `git branch {spec.cleaned} {made[-1][:12]}`, "
                f"or start over with `git retcon abort {spec.cleaned}`"
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


def adopt(run: Run, stored: Stored, br: Branches, tip: str) -> None:
    """Check the branch still holds the recorded commits; adopt those past them."""
    spec = stored.spec
    full = recorded(run.repo, spec)
    on = ownership.chain(run.repo, spec.cleaned, br.base)
    if not on.on_base:
        raise RetconError(
            f"branch '{spec.cleaned}' is not on top of merge-base('{spec.source}', '{spec.remote}') "
            f"{short(br.base)} (the source was rebased since the run): start over with "
            f"`git retcon abort {run.name}` and `git retcon run {run.name}`")
    chain = on.commits
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
        spec.commits[k].history.append(specmod.CommitCreated(sha))
        run.store.update(stored, f"adopt {short(sha)} into commit {k + 1}")


def create_commit(w: Work, message: str, fix: bool, parent: str, brief: Brief | None = None,
                  invented: notes.Invented | None = None) -> str:
    """Commit the worktree on parent as logical commit k's next commit, and record it.
    A fix's brief goes into the WIP commit's note: why it was made, for squash and for humans."""
    c = w.commit
    if not fix:
        message = initial_message(c.message, message)
    message = cleanup(message)   # as `git commit -m` stores it; never empty: the spec's or `WIP: ...`
    author = signature(w.wt.path, "AUTHOR")
    committer = signature(w.wt.path, "COMMITTER")
    sha = w.wt.commit(message, parent, author, committer)
    failpoint("after-commit-object")
    note = notes.new_commit(w.run.name, w.k + 1, "wip" if c.created else "initial", len(c.created) + 1)
    if brief is not None:
        note["diagnosis"] = brief.text
        note["rework"] = brief.record
    if invented is not None:
        note["invented"] = invented
    record_commit(w, sha, parent, note, message)
    return sha


def record_commit(w: Work, sha: str, parent: str, note: notes.CommitNote, message: str) -> None:
    """The writes after the commit object, in order: its note, the branch (CAS), the spec entry (CAS).
    The build worktree holds sha's tree (the tools made it there, or it was reset to sha).
    The notes held back (the commit before: its verdicts and what its step spent) go in the
    same notes commit: one write per created commit."""
    held = dict(w.run.unwritten)
    held.pop(sha, None)
    notes.write_commits(w.run.store, {**held, sha: note})
    for done in held:
        w.run.unwritten.pop(done, None)
    move_branch(w.run.repo, w.spec.cleaned, sha, parent, message.splitlines()[0])
    failpoint("after-branch-ref")
    w.wt.move_head(sha)
    w.commit.history.append(specmod.CommitCreated(sha))
    w.save_later(f"commit {w.k + 1}: created {short(sha)}")
    failpoint("after-spec-entry")
    w.run.ui.line(f"Creating commit... {short(sha)}")


def complete(w: Work) -> None:
    """Logical commit k built and passed at the branch tip: it is complete."""
    w.commit.history.append(specmod.Complete())
    w.save(f"commit {w.k + 1} complete")
    failpoint("after-complete")   # its verdicts are held for the next notes write


def note_tip_verdicts(run: Run, stored: Stored, tip: str) -> None:
    """A run killed after a commit's verdicts and before the next notes write left them only in
    the tree's records (and the spec): copy them into the commit's note. Only the branch tip can
    be so, since every notes write carries the verdicts held before it."""
    note = notes.read_commit(run.store, tip)
    if note is None or note.get("spec") != run.name:
        return
    tree = str(get_commit(run.repo, tip).tree_id)
    found = False
    for kind in notes.COMMAND_KINDS:
        command = getattr(stored.spec, kind)
        rec = notes.command_record(run.store, tree, command) if command and kind not in note else None
        if rec is not None and rec.get("result") in ("pass", "fail"):
            note[kind] = rec["result"]
            found = True
    if found:
        for kind in notes.COMMAND_KINDS:
            if not getattr(stored.spec, kind):
                note.setdefault(kind, "skipped")
        notes.write_commit(run.store, tip, note)


def spent(w: Work, outcome: Outcome, spent: notes.Usage, retries: int, seconds: float) -> None:
    """What a step spent (tokens, calls, its wall time): on the note of the commit it made (kept
    in memory until its verdicts are noted, see `commit_note`), else on the spec chain."""
    if outcome.commit:
        note = commit_note(w.run, outcome.commit)
        if note is None:   # create_commit wrote it; only a hand-deleted note is missing
            note = notes.new_commit(w.run.name, w.k + 1, "initial", 1)
        fill_spent(note, spent, retries, seconds)
        w.run.unwritten[outcome.commit] = note
    elif spent["calls"]:
        notes.add_spent(w.run.store, w.stored.commit, {"index": w.k + 1, "why": outcome.kind, **spent,
                                                      "seconds": round(seconds, 3)})


def commit_note(run: Run, sha: str) -> notes.CommitNote | None:
    """sha's note as it will be written: the one held back by `spent`, else the stored one.
    The caller that writes it takes it out of `run.unwritten` (`take_note`)."""
    return run.unwritten.get(sha) or notes.read_commit(run.store, sha)


def take_note(run: Run, sha: str) -> notes.CommitNote | None:
    """sha's note, taken out of `run.unwritten` for the caller to complete (it holds it back again,
    or writes it)."""
    held = run.unwritten.pop(sha, None)
    return held if held is not None else notes.read_commit(run.store, sha)


def write_unwritten(run: Run) -> None:
    """Write the notes still held back (the run's last verdict, or a run that stops before a
    verdict: stuck, an error, Ctrl-C), in one write. A kill loses only what they add to the note
    written with the commit (its verdicts and what its step spent), never a commit or a
    result: the verdicts are the tree's records (refs/notes/retcon-tests) and the spec's."""
    held = dict(run.unwritten)
    notes.write_commits(run.store, held)
    for sha in held:
        run.unwritten.pop(sha, None)


def fill_spent(note: notes.CommitNote, spent: notes.Usage, retries: int, seconds: float) -> None:
    note["tokens"] = {"input": spent["input"], "output": spent["output"]}
    note["model_calls"] = spent["calls"]
    note["model_seconds"] = round(seconds, 3)
    if retries:
        note["model_retries"] = retries


def run_totals(run: Run, stored: Stored, model: str, stop: notes.Stop) -> None:
    """The run's token totals, noted on the spec's current commit."""
    tally = run.tally
    if not tally.calls:
        return
    notes.add_run(run.store, stored.commit, {
        "model": model, "stop": stop,
        "tokens": notes.usage(tally.input_tokens, tally.output_tokens, tally.calls),
        "commits": {str(i): u for i, u in sorted(tally.per_commit.items())},
    })


def initial_message(spec_message: str, model_message: str) -> str:
    """The spec's message is authoritative; a body the model wrote is kept when the spec has none."""
    spec_message = spec_message.strip()
    if "\n" in spec_message:
        return spec_message + "\n"
    lines = model_message.strip().splitlines()
    body = "\n".join(lines[1:]).strip()
    return spec_message + ("\n\n" + body if body else "") + "\n"
