"""Re-made commits: a logical commit's commits made again on a new parent, three-way, and
verified by their build and tests. absorb (new changes placed in a finished history) and
restack (a source rebased onto a moved remote) are both made of these.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import pygit2

from git_retcon.errors import RetconError
from git_retcon.git.commits import make_commit
from git_retcon.git.ids import CommitId, TreeId, tree_of
from git_retcon.git.plumbing import full_sha, get_commit, get_tree, short
from git_retcon.reconstruct.destination import Placed
from git_retcon.sandbox import choice
from git_retcon.sandbox.runner import Commands, Result
from git_retcon.sandbox.setup import Setup
from git_retcon.sandbox.worktree import Worktree
from git_retcon.state import notes
from git_retcon.state import spec as specmod
from git_retcon.state.store import Store, Stored
from git_retcon.ui import UI


@dataclass
class Remade:
    """Logical commit k re-made: its new commits, what it absorbed, and its verdict."""

    k: int
    commits: list[CommitId]
    placed: list[Placed] = field(default_factory=list)
    results: list[Result] = field(default_factory=list)
    new: bool = False                      # a logical commit absorb added at the end

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.results)


def merged(repo: pygit2.Repository, ancestor: TreeId, ours: TreeId, theirs: TreeId) -> TreeId | None:
    """ours with the change from ancestor to theirs merged in; None on a conflict."""
    if theirs == ancestor:
        return ours
    index = repo.merge_trees(get_tree(repo, ancestor), get_tree(repo, ours), get_tree(repo, theirs))
    if index.conflicts is not None:
        return None
    return TreeId(str(index.write_tree(repo)))


def copy_onto(repo: pygit2.Repository, sha: CommitId, tree: TreeId, parent: CommitId) -> CommitId:
    """sha's commit, with tree, on parent: same message, author and committer."""
    old = get_commit(repo, sha)
    return make_commit(repo, tree, [parent], old.message, old.author, old.committer)


def verify(store: Store, stored: Stored, remade: list[Remade], ui: UI) -> None:
    """Build and test each re-made logical commit's last tree, in order, until one fails
    (a tree recorded already answers at once)."""
    spec = stored.spec
    if not (spec.build or spec.test):
        ui.line("No build or test command configured: the re-made commits are not built or tested.")
        return
    wt = Worktree.ensure(store.repo, stored.name, last_commit(remade, stored.name))
    sandbox = choice.for_spec(store.repo, spec)
    commands = Commands(store, wt.path, spec.build, spec.test, spec.timeout, on_run=wt.touched_by_command,
                        setup=Setup.of(wt, spec.setup, spec.timeout, sandbox), sandbox=sandbox)
    for r in remade:
        if not r.commits:
            continue
        last = r.commits[-1]
        wt.reset(last)
        label = f"Commit {r.k + 1}" + (" (new)" if r.new else "")
        ui.line(f"{label}: building and testing {short(last)}...")
        r.results = commands.build_and_test(tree_of(get_commit(store.repo, last)))
        for res in r.results:
            verdict = "PASS" if res.passed else f"FAIL ({res.reason()})"
            ui.line(f"  {res.kind}: {verdict}" + (" (recorded)" if res.cached else f" ({res.seconds:.1f}s)"))
        if not r.passed:
            break


def last_commit(remade: list[Remade], name: str) -> CommitId:
    """The last commit re-made: a logical commit with no commit of its own (the last, often)
    has none, and the one below it ends the branch."""
    last = next((r.commits[-1] for r in reversed(remade) if r.commits), None)
    if last is None:   # absorb re-makes from the first commit that takes a change: it has one
        raise RetconError("absorb re-made no commit: nothing was changed; report it, and place the changes "
                          f"with `git retcon spec edit {name}`")
    return last


def kept(remade: list[Remade]) -> tuple[Remade | None, list[Remade]]:
    """The first re-made logical commit that failed its build or tests (None: none did), and the
    ones to write: up to it, it included."""
    failed = next((r for r in remade if r.results and not r.passed), None)
    return failed, remade[: remade.index(failed) + 1] if failed is not None else remade


def write_notes(store: Store, stored: Stored, made: list[Remade]) -> None:
    """Each re-made commit's note: its old commit's, re-pointed (`rewritten_from`), with the new
    verdicts on a logical commit's last commit; a commit with no old one gets a new note."""
    repo, spec = store.repo, stored.spec
    for r in made:
        old = [full_sha(repo, s) for s in spec.commits[r.k].created] if not r.new else []
        for i, sha in enumerate(r.commits):
            before = notes.read_commit(store, old[i]) if i < len(old) else None
            note = before or notes.new_commit(stored.name, specmod.number(r.k), "initial", i + 1)
            note["index"] = specmod.number(r.k)
            if i < len(old):
                note["rewritten_from"] = old[i]
            if i == len(r.commits) - 1:
                for res in r.results:
                    note[res.kind] = res.result
                for kind in notes.COMMAND_KINDS:
                    if not getattr(spec, kind):
                        note[kind] = "skipped"
            notes.write_commit(store, sha, note)
