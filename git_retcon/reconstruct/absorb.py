"""`git retcon absorb`: after a complete spec, the source's new changes (review fixes) go into
the logical commits they belong to, and every commit from the first one changed is re-made
and built and tested again (results are kept by tree: an unchanged tree is not run twice).

Where each change goes is destination.py's. The re-made commits: each logical commit's last commit takes
the changes placed in it and in the ones below, merged onto its old tree (three-way, from
the old tip); its earlier (WIP) commits and every later logical commit's commits are
re-made the same way on the new parents. Changes no logical commit takes go into a new one
at the end. A merge that does not apply moves that commit's changes there too.

Nothing is written before every re-made commit was verified (or the first failed): then,
in order, their notes, the spec (CAS), the branch (CAS). A kill between the last two is
finished by the next run or absorb (`finish_interrupted`): the spec records the commits,
and the pending operation record shows the branch was not moved yet. `git retcon undo`
puts the previous branch and spec back.
"""
from __future__ import annotations

from collections.abc import Callable

import llm
import pygit2

from git_retcon import diff
from git_retcon.errors import RetconError, StuckStop
from git_retcon.failpoint import failpoint
from git_retcon.git.commits import make_commit
from git_retcon.git.ids import CommitId, TreeId, tree_of
from git_retcon.git.ownership import branch_ref, move_branch, refuse_checked_out
from git_retcon.git.plumbing import find_commit, full_sha, get_commit, ref_target, short
from git_retcon.model.choose import BUILTIN
from git_retcon.owners.question import Asker
from git_retcon.reconstruct import ontop, remake, restack
from git_retcon.reconstruct.branch import Branches, recorded
from git_retcon.reconstruct.destination import Ask, Into, Placed, place
from git_retcon.reconstruct.remake import Remade, copy_onto, last_commit, merged, verify
from git_retcon.state import oplog
from git_retcon.state import spec as specmod
from git_retcon.state.store import Store, Stored
from git_retcon.ui import UI, plural

NEW_MESSAGE = "Changes made after the clean history, that no logical commit takes"


def absorb(store: Store, name: str, ui: UI, into: list[str], model: llm.Model | None) -> None:
    """The whole operation, under the spec's lock, recorded for undo."""
    with store.lock(name):
        finish_interrupted(store, store.load(name), ui.line)   # before this absorb's own record starts
        stored = store.load(name)
        with oplog.recording(store, name, "absorb", oplog.refs_of(stored.spec.cleaned, name)):
            absorb_locked(store, stored, ui, into, model)


def absorb_locked(store: Store, stored: Stored, ui: UI, into_args: list[str], model: llm.Model | None) -> None:
    """absorb, for a caller that holds the spec's lock (a run that finds the source moved)."""
    repo, spec = store.repo, stored.spec
    if (k := spec.current()) is not None:
        raise RetconError(f"commit {k + 1}/{len(spec.commits)} is {spec.commits[k].state}: absorb folds changes "
                          f"into a finished history; finish it first: git retcon run {stored.name}")
    if restack.restack_if_rebased(store, stored, Branches(repo, spec), ui) and \
            (why := restack.stopped_text(stored)) is not None:
        raise StuckStop(why)
    br = Branches(repo, spec)
    tip = br.cleaned_tip
    made = recorded(repo, spec)
    # A person's commits on top (ontop.py): absorbed from the source once it holds them, never before.
    on = ontop.find(repo, spec, stored.name)
    if on is not None and not on.in_source:
        raise RetconError(on.advice(repo))
    at = on.tip if on is not None else tip    # where the branch is, and moves from
    if on is not None:
        tip = on.recorded
    if tip is None or at is None or not made or tip != made[-1]:
        raise RetconError(f"'{spec.cleaned}' does not hold exactly the recorded commits: run "
                          f"`git retcon run {stored.name}` first (it adopts what was added, or says what is wrong)")
    refuse_checked_out(repo, spec.cleaned)
    tip_tree = tree_of(get_commit(repo, tip))
    try:
        wanted = [Into.parse(t, len(spec.commits)) for t in into_args]
    except ValueError as exc:
        raise RetconError(str(exc)) from None
    new_changes = diff.remaining(repo, tip_tree, br.source_tree)
    if not new_changes:
        ui.line(f"Nothing to absorb: '{spec.cleaned}' ends on '{spec.source}''s tree.")
        return
    ui.line(f"Absorbing {plural(len(new_changes), 'change')} of '{spec.source}' into '{spec.cleaned}'...")
    owner_of = {full_sha(repo, s): k for k, c in enumerate(spec.commits) for s in c.created}
    ask = _asker(model, spec, new_changes) if model is not None and model.model_id != BUILTIN else None
    placed = place(repo, spec, owner_of, br.base, tip, new_changes, wanted, ask)
    for p in placed:
        where = f"commit {p.into + 1}" if p.into is not None else "a new commit at the end"
        ui.line(f"  {p.hunk.path} ({p.hunk.kind}) -> {where}: {p.why}")
    remade = _remake(store, stored, br, tip, tip_tree, placed, ui)
    verify(store, stored, remade, ui)
    _write(store, stored, br, at, remade, ui)


def _remake(store: Store, stored: Stored, br: Branches, tip: CommitId, tip_tree: TreeId,
            placed: list[Placed], ui: UI) -> list[Remade]:
    """The re-made commits, from the first logical commit that takes a change (commit objects only)."""
    repo, spec = store.repo, stored.spec
    n = len(spec.commits)
    while True:
        by_k: dict[int, list[Placed]] = {}
        for p in placed:
            by_k.setdefault(n if p.into is None else p.into, []).append(p)
        first = min(by_k)
        below = [full_sha(repo, s) for c in spec.commits[:first] for s in c.created]
        parent = below[-1] if below else br.base
        out: list[Remade] = []
        taken: list[diff.Hunk] = []
        failed: int | None = None
        for k in range(first, n):
            c = spec.commits[k]
            mine = by_k.get(k, [])
            before = _tree_with(repo, tip_tree, taken)
            taken += [p.hunk for p in mine]
            after = _tree_with(repo, tip_tree, taken)
            commits: list[CommitId] = []
            old = [full_sha(repo, s) for s in c.created]
            for i, sha in enumerate(old):
                theirs = after if i == len(old) - 1 else before
                tree = merged(repo, tip_tree, tree_of(get_commit(repo, sha)), theirs)
                if tree is None:
                    failed = k
                    break
                parent = copy_onto(repo, sha, tree, parent)
                commits.append(parent)
            if failed is not None:
                break
            if not old and mine:   # a logical commit that had nothing left now has changes of its own
                parent = make_commit(repo, after, [parent], c.message, get_commit(repo, tip).author,
                                     get_commit(repo, tip).committer)
                commits.append(parent)
            out.append(Remade(k, commits, mine))
        if failed is None:
            break
        # Its own changes go to the end; when it has none, those of the commits below it whose
        # changes it does not merge with (at worst all: the new commit at the end needs no merge).
        moving = {id(p) for p in placed if p.into == failed} or {
            id(p) for p in placed if p.into is not None and p.into < failed}
        ui.line(f"Changes do not merge onto the commits of commit {failed + 1}: "
                f"{plural(len(moving), 'change')} {'goes' if len(moving) == 1 else 'go'} into a new commit at "
                "the end instead")
        placed = [Placed(p.hunk, None, f"{p.why}, but it does not merge there") if id(p) in moving else p
                  for p in placed]
    rest = by_k.get(n, [])
    if rest:
        tree = _tree_with(repo, tip_tree, taken + [p.hunk for p in rest])
        author = get_commit(repo, tip).author
        message = _new_message(repo, spec, br, tip)
        parent = make_commit(repo, tree, [parent], message, author, get_commit(repo, tip).committer)
        out.append(Remade(n, [parent], rest, new=True))
    if tree_of(get_commit(repo, parent)) != br.source_tree:
        raise RetconError(f"absorbing left '{spec.cleaned}' on a tree other than '{spec.source}''s: nothing was "
                          f"changed; report it, and place the changes with `git retcon spec edit {stored.name}`")
    return out


def _tree_with(repo: pygit2.Repository, tree: TreeId, hunks: list[diff.Hunk]) -> TreeId:
    return TreeId(diff.tree_with(repo, tree, hunks))


def _new_message(repo: pygit2.Repository, spec: specmod.Spec, br: Branches, tip: CommitId) -> str:
    """For the new logical commit: the subjects of the source's commits since the tree the
    spec completed at."""
    done = tree_of(get_commit(repo, tip))
    subjects: list[str] = []
    for c in repo.walk(br.source.id, pygit2.enums.SortMode.TOPOLOGICAL):
        if tree_of(c) == done or str(c.id) == br.base:
            break
        subjects.append(c.message.splitlines()[0] if c.message else str(c.id)[:9])
    body = "\n".join(f"- {s}" for s in reversed(subjects[:20]))
    return NEW_MESSAGE + ("\n\n" + body if body else "") + "\n"


def _write(store: Store, stored: Stored, br: Branches, tip: CommitId, remade: list[Remade], ui: UI) -> None:
    """Notes, the spec (CAS), then the branch (CAS): up to the first commit that failed."""
    repo, spec = store.repo, stored.spec
    failed, kept = remake.kept(remade)
    source_at = short(str(br.source.id))
    remake.write_notes(store, stored, kept)
    for r in kept:
        if not r.commits and not r.placed:
            continue   # an empty logical commit stays as it was
        what = (f"{plural(len(r.placed), 'change')} of '{spec.source}' at {source_at}: "
                + ", ".join(f"{p.hunk.path} ({p.why})" for p in r.placed[:10])
                + (" ..." if len(r.placed) > 10 else "")) if r.placed else \
            "re-made on the changes absorbed below it"
        entries: list[specmod.Entry] = [specmod.CommitCreated(s) for s in r.commits]
        if r.new:
            paths = sorted({p.hunk.path for p in r.placed})
            spec.commits.append(specmod.LogicalCommit(
                get_commit(repo, r.commits[-1]).message, hints="Added by git retcon absorb: " + what,
                paths=paths[:50], history=[*entries]))
            target = spec.commits[-1]
        else:
            target = spec.commits[r.k]
            if target.history and isinstance(target.history[-1], specmod.Complete):
                target.history.pop()
            target.history += [specmod.Absorbed(what), *entries]
        if r.passed:
            target.history.append(specmod.Complete())
    if failed is not None:   # the ones after it are built afresh by the next run
        for r in remade[remade.index(failed) + 1:]:
            if not r.new:
                spec.commits[r.k].history.clear()
    new_tip = last_commit(remade if failed is None else kept, stored.name)
    store.update(stored, "absorb: " + (f"{plural(len(kept), 'logical commit')} re-made" if failed is None
                                       else f"re-made up to commit {failed.k + 1}, which fails"))
    failpoint("absorb-spec-saved")   # the branch not moved yet: finish_interrupted moves it
    move_branch(repo, spec.cleaned, new_tip, tip, "absorb")
    ui.line(f"'{spec.cleaned}' is now at {short(new_tip)} (it was {short(tip)}; `git retcon undo` puts it back).")
    if failed is not None:
        raise StuckStop(
            f"commit {failed.k + 1}/{len(spec.commits)} does not pass with the absorbed changes: "
            f"{'; '.join(r.reason() for r in failed.results if not r.passed)}\n"
            f"The next run fixes it (the fix loop) and builds the commits after it afresh:\n"
            f"  git retcon run {stored.name}\nOr put everything back as it was:\n  git retcon undo {stored.name}")
    ui.good(f"✓ Absorbed: {plural(len(kept), 'logical commit')} re-made, built and tested.")


def finish_interrupted(store: Store, stored: Stored, say: Callable[[str], None]) -> None:
    """An absorb (or a restack) killed after it saved the spec and before it moved the branch:
    move it now. The pending operation record says what the branch was before; it is still
    there (a run moves the branch before it saves the spec: never this state otherwise)."""
    try:
        op = oplog.last(store, stored.name)
    except oplog.DamagedLog:
        return      # no record of an absorb to finish (undo says how to clear the log)
    ref = branch_ref(stored.spec.cleaned)
    # A run restacks inside its own record (restack.py): the same writes, the same finish.
    if op is None or op.what not in ("absorb", "run") or op.after is not None:
        return
    now = ref_target(store.repo, ref)
    made = recorded(store.repo, stored.spec)
    if not made or now is None or now == made[-1] or now != op.before.get(ref) or \
            find_commit(store.repo, made[-1]) is None:
        return
    move_branch(store.repo, stored.spec.cleaned, made[-1], now, "absorb, finished after an interruption")
    say(f"Finished an interrupted absorb: '{stored.spec.cleaned}' is at {short(made[-1])}.")


def _asker(model: llm.Model, spec: specmod.Spec, hunks: list[diff.Hunk]) -> Ask:
    """The owners' question (owners/question.py) for each hunk placement leaves ambiguous: among
    the candidate commits only, in an order that favours none, the reply constrained where the
    model allows; asked again in the other order, two answers that differ are said."""
    asker = Asker(model, spec)
    asker.index = {h.id: i for i, h in enumerate(hunks)}

    def ask(h: diff.Hunk, candidates: list[int]) -> tuple[int | None, str]:
        try:
            got = asker.answer(h, [(k, 0.0) for k in candidates], None)
        except RetconError as exc:
            return None, f"the model could not answer ({str(exc)[:120]})"
        if all(r is None for r in got.replies):
            return None, f"{model.model_id} named none of the candidates"
        if got.who == "model, uncertain":
            said = " then ".join("?" if r is None else str(r + 1) for r in got.replies)
            return got.k, f"{model.model_id} was unsure (answered {said}): check it"
        return got.k, f"{model.model_id} judged it commit {got.k + 1}'s"
    return ask
