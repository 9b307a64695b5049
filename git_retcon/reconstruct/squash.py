"""Folding each logical commit's WIP commits into it (`git retcon squash`, `run --squash-wip`).

Trees do not change, so the build/test records keyed by tree in
refs/notes/retcon-tests hold for the new commits as they are: nothing is built
or tested again. The logical commits after the first folded one are re-made on
their new parents (same trees, messages and authors). Write order, as for a
created commit: commit objects, their notes, the cleaned branch (CAS), then the
spec's `squashed` entries (CAS). A squash killed between the last two is
finished by running it again: the new commits' notes say what they replace.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import cast

from git_retcon.errors import RetconError
from git_retcon.failpoint import failpoint
from git_retcon.git import ownership
from git_retcon.git.commits import make_commit, signature
from git_retcon.git.ids import CommitId, commit_id, tree_of
from git_retcon.git.ownership import move_branch
from git_retcon.git.plumbing import (
    find_commit,
    full_sha,
    get_commit,
    short,
)
from git_retcon.state import notes, oplog
from git_retcon.state import spec as specmod
from git_retcon.state.notes import CommitNote, SquashedFix, SquashedStop
from git_retcon.state.store import Store, Stored
from git_retcon.ui import plural


def squash(store: Store, stored: Stored, say: Callable[[str], None]) -> int:
    """Fold the WIP commits of every complete logical commit; returns how many were
    folded. The caller holds the spec's run lock."""
    repo = store.repo
    spec = stored.spec
    tip = ownership.branch_tip(repo, spec.cleaned)
    if tip is None:
        raise RetconError(f"branch '{spec.cleaned}' does not exist: there is nothing to squash")
    recorded = [full_sha(repo, s) for c in spec.commits for s in c.created]
    if not recorded:
        say("Nothing to squash: no commits yet.")
        return 0
    base = commit_id(get_commit(repo, recorded[0]).parents[0])
    chain = ownership.chain(repo, spec.cleaned, base).commits
    if chain != recorded:
        if _finish_interrupted(store, stored, chain, recorded):
            say(f"Finished an interrupted squash: '{spec.cleaned}' is at {short(tip)}.")
            return 0
        raise RetconError(
            f"branch '{spec.cleaned}' does not hold exactly the recorded commits "
            f"({len(chain)} on the branch, {len(recorded)} recorded): run `git retcon run {spec.cleaned}` "
            "first (it adopts commits made by hand, or says what is wrong)")

    folds = [k for k, c in enumerate(spec.commits) if c.state == "complete" and len(c.created) > 1]
    if not folds:
        say("Nothing to squash: no WIP commits in complete logical commits.")
        return 0
    for k, c in enumerate(spec.commits):
        if k > folds[0] and c.state != "complete" and len(c.created) > 1:
            raise RetconError(
                f"commit {k + 1}/{len(spec.commits)} is {c.state} with {len(c.created)} commits: squash when "
                f"it is complete (git retcon run {spec.cleaned}), so its fix commits are not rewritten mid-way")

    committer = signature(store.git_dir, "COMMITTER")
    parent = base
    made: dict[int, str] = {}
    folded = 0
    for k, c in enumerate(spec.commits):
        if not c.created:
            continue
        shas = [full_sha(repo, s) for s in c.created]
        fold = k in folds
        if k < folds[0]:
            parent = shas[-1]
            continue
        first, last = get_commit(repo, shas[0]), get_commit(repo, shas[-1])
        new = make_commit(repo, tree_of(last), [parent], first.message, first.author, committer)
        notes.write_commit(store, new, _note(store, stored, k, shas, fold))
        made[k] = new
        failpoint("squash-commit-made")
        parent = new
        folded += len(shas) - 1 if fold else 0
    failpoint("squash-before-branch")
    move_branch(repo, spec.cleaned, parent, tip, f"squash {folded} WIP commits")
    failpoint("squash-after-branch")
    _record(store, stored, made, f"squash: {folded} WIP commits folded into {len(folds)} logical commits")
    say(f"Squashed {plural(folded, 'WIP commit')} into {plural(len(folds), 'logical commit')}; "
        f"'{spec.cleaned}' is now at {short(parent)} (same tree, test records kept).")
    return folded


def _note(store: Store, stored: Stored, k: int, shas: list[CommitId], fold: bool) -> CommitNote:
    """The new commit's note: the first commit's, with tokens summed over all it replaces,
    the last one's build/test results, and for a fold the provenance of the fixes."""
    olds = [notes.read_commit(store, s) for s in shas]
    note = notes.new_commit(stored.name, specmod.number(k), "initial", 1)
    # Keys of the first note this version does not know are kept, as they were.
    kept = {key: v for key, v in (olds[0] or {}).items() if key not in ("diagnosis", "rework", "squashed")}
    note = cast(CommitNote, {**kept, **note})
    tokens = [notes.tokens_of(n) for n in olds]
    note["tokens"] = {"input": sum(t["input"] for t in tokens), "output": sum(t["output"] for t in tokens)}
    note["model_calls"] = sum(int(n.get("model_calls", 0) or 0) for n in olds if n)
    tested = olds[-1]
    for kind in notes.COMMAND_KINDS:
        if tested and kind in tested:
            note[kind] = tested[kind]
    if not fold:
        note["rewritten_from"] = shas[-1]
        return note
    repo = store.repo
    fixes: list[SquashedFix] = []
    for sha, old in zip(shas[1:], olds[1:], strict=True):
        mine = old if old and old.get("spec") == stored.name else None
        rework = mine.get("rework") if mine else None
        fixes.append({
            "commit": sha, "message": (get_commit(repo, sha).message or "").splitlines()[0],
            "by": _made_by(mine),
            "diagnosis": ((mine.get("diagnosis") or "").splitlines() or [""])[0] if mine else "",
            "candidates": cast("list[str]", rework.get("candidates", [])) if rework else [],
        })
    stops: list[SquashedStop] = []
    history = stored.spec.commits[k].history
    for i, e in enumerate(history):
        if isinstance(e, specmod.Stuck):
            answer = next((h.text for h in history[i + 1:] if isinstance(h, specmod.Resolved)), "")
            rule = e.summary.split(":", 1)[0] if e.summary.startswith("escalated (") else "model or loop"
            stops.append({"stuck": e.summary.splitlines()[0][:300], "by": rule, "resolved": answer})
    last = fixes[-1]
    note["squashed"] = {
        "from": list[str](shas), "attempts": len(shas), "fixes": fixes, "stops": stops,
        "resolved_by": f"{last['by'].split(' (')[0]}: {last['message']}"
        + (f" (after a human's resolution: {stops[-1]['resolved']})" if stops and stops[-1]["resolved"] else ""),
    }
    return note


def _record(store: Store, stored: Stored, made: dict[int, str], message: str) -> None:
    for k, sha in made.items():
        history = stored.spec.commits[k].history
        # "complete" stays the last entry: the logical commit is as finished as it was.
        at = len(history) - 1 if history and isinstance(history[-1], specmod.Complete) else len(history)
        history.insert(at, specmod.Squashed(sha))
    store.update(stored, message)


def finish_interrupted(store: Store, stored: Stored, say: Callable[[str], None]) -> None:
    """A squash killed after it moved the branch and before it wrote the spec: record it,
    so that a run (which checks the branch against the spec) resumes. The caller holds
    the spec's run lock."""
    repo = store.repo
    spec = stored.spec
    recorded = [full_sha(repo, s) for c in spec.commits for s in c.created]
    tip = ownership.branch_tip(repo, spec.cleaned)
    first = find_commit(repo, recorded[0]) if recorded else None
    if tip is None or first is None or not first.parent_ids:
        return   # nothing recorded, or not here: the run says what is wrong
    chain = ownership.chain(repo, spec.cleaned, str(first.parent_ids[0])).commits
    if chain != recorded and _finish_interrupted(store, stored, chain, recorded):
        say(f"Finished an interrupted squash: '{spec.cleaned}' is at {short(tip)}.")


def _finish_interrupted(store: Store, stored: Stored, chain: list[CommitId], recorded: list[CommitId]) -> bool:
    """The branch already holds a squash of the recorded commits (killed before the
    spec was written): record it."""
    replaced: list[str] = []
    made: dict[int, str] = {}
    for sha in chain:
        if sha in recorded:
            replaced.append(sha)
            continue
        note = notes.read_commit(store, sha)
        if note is None or note.get("spec") != stored.name:
            return False
        squashed = note.get("squashed")
        rewritten = note.get("rewritten_from")
        was = list(squashed.get("from") or []) if squashed else []
        was = was or ([rewritten] if rewritten else [])
        k = int(note.get("index", 0)) - 1
        if not (0 <= k < len(stored.spec.commits)) or not was:
            return False
        replaced += was
        made[k] = sha
    if not made or [full_sha(store.repo, s) for s in replaced] != recorded:
        return False
    _record(store, stored, made, "squash: finished after an interruption")
    return True


def squash_spec(store: Store, stored: Stored, say: Callable[[str], None]) -> int:
    """`git retcon squash`: refused while the branch is checked out; folded under the spec's lock."""
    ownership.refuse_checked_out(store.repo, stored.spec.cleaned)
    with store.lock(stored.name), oplog.recording(store, stored.name, "squash",
                                                  oplog.refs_of(stored.spec.cleaned, stored.name)):
        return squash(store, store.load(stored.name), say)


def _made_by(mine: CommitNote | None) -> str:
    """Who made a fix commit, for the squashed note: a fix whose candidates passed, or a step the
    model gave no judgement in, was committed by plain code (its note counts no model call)."""
    if mine is None:
        return "human (a commit adopted from the cleaned branch)"
    if mine.get("instead") or mine.get("model_calls") == 0:
        return "plain code"
    return "model"
