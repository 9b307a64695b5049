"""Repair as a search: when a commit fails, the candidate hunks the failure points at (the rework
brief's: a missing name's definition, the file or test it names) are tried one by one, smallest
first, each tree built and tested by plain code (the records answer for a tree tested before),
before all of them together are; the first that passes and leaves every later logical commit
something of its own is the fix, committed with no model call. The tool conversation comes only
after every candidate failed, and the output says what each failed with.

Where the spec names atoms (reconstruct/lines.py), the candidates are first the lines later
commits' `hunks` name, in the files the failure points at or quoting a name it shows (a failing
test's `[newline]`, the entry `"newline",` of tomli's list of expected failures): those that
name the failure together, then each alone, smallest first. One that passes is the fix; where
none does, one that changes the failure for the better is committed too, and the next attempt
goes on from it (tomli's commit 1 needs a parser line, then the entries its tests name).
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from git_retcon import diff
from git_retcon.diff import atoms
from git_retcon.git.ids import CommitId, TreeId, tree_of
from git_retcon.git.plumbing import get_commit
from git_retcon.reconstruct import lines, steps
from git_retcon.reconstruct.empty import emptied
from git_retcon.reconstruct.work import Work
from git_retcon.sandbox.runner import Result
from git_retcon.state.spec import number

if TYPE_CHECKING:
    from git_retcon.rework import Candidate

ALONE_AT_MOST = 4        # single candidates tried at most, each a build and a test run


@dataclass
class Search:
    """The candidates that passed alone (the smallest first found), and what each tried failed with."""

    passed: list[Candidate] | None = None
    tried: list[tuple[Candidate, str]] = field(default_factory=list)


def search(w: Work, tip: CommitId, candidates: list[Candidate]) -> Search:
    """Each candidate alone on tip, smallest first, until one passes (see the module's comment)."""
    out = Search()
    if len(candidates) < 2:
        return out      # one candidate, or none: the fix step tries it as it is
    repo = w.run.repo
    tip_tree = tree_of(get_commit(repo, tip))
    for c in sorted(candidates, key=lambda c: c.hunk.added_lines + c.hunk.removed_lines)[:ALONE_AT_MOST]:
        try:
            tree = TreeId(diff.tree_with(repo, tip_tree, [c.hunk]))
        except ValueError:
            continue
        if emptied(w, tip_tree, tree):
            out.tried.append((c, "it would leave a later commit with nothing of its own"))
            continue
        w.wt.reset_to_tree(tree, tip)
        result = steps.check_candidates(w, f"Trying the candidate {c.hunk.path} alone ({c.reason})...")
        if result is None or result.passed:
            out.passed = [c]
            break
        out.tried.append((c, result.reason()))
    w.wt.reset(tip)
    return out


LINES_AT_MOST = 6        # trees of later commits' lines tried at most per attempt
_QUOTED = re.compile(rb"""["']([\w.-]{3,})["']""")


@dataclass
class Lines:
    """What a search among later commits' lines found: a tree that passes (or, with progress, one
    that fails for the better), what it took in words, and what each tried failed with."""

    tree: TreeId | None = None
    took: str = ""
    progress: bool = False
    tried: list[tuple[str, str]] = field(default_factory=list)


@dataclass(frozen=True)
class _Item:
    item: str            # as the spec's `hunks` name it
    j: int               # the later logical commit that names it
    path: str
    size: int
    names: bool          # it quotes a name the failure shows


def later_lines(w: Work, paths: set[str], output: str) -> list[_Item]:
    """The items later commits' `hunks` name in paths, or quoting a name the output shows."""
    assert w.run.branch_diff is not None
    by_id = {h.id: h for h in w.run.branch_diff[2]}
    out: list[_Item] = []
    for j in range(w.k + 1, w.n):
        for item in w.spec.commits[j].hunks:
            part = atoms.parse_id(item)
            h = by_id.get(part[0] if part else item)
            if h is None:
                continue
            shown = atoms.as_hunk(h, part[1]) if part else h
            quoted = {m.decode("utf-8", "replace") for m in _QUOTED.findall(shown.added + shown.removed)}
            names = any(re.search(rf"(?<![\w-]){re.escape(q)}(?![\w-])", output) for q in quoted)
            if names or h.path in paths:
                out.append(_Item(item, j, h.path, shown.added_lines + shown.removed_lines, names))
    return out


def _groups(found: list[_Item]) -> list[list[_Item]]:
    """Those naming the failure together, then each alone, naming ones and smaller ones first."""
    naming = [i for i in found if i.names]
    alone = [[i] for i in sorted(found, key=lambda i: (not i.names, i.size))]
    return ([naming] if len(naming) > 1 else []) + alone


def by_lines(w: Work, tip: CommitId, paths: set[str], output: str,
             better: Callable[[Result, TreeId], bool]) -> Lines:
    """The lines of later commits that mend commit k (see the module's comment)."""
    out = Lines()
    if not lines.in_lines(w.spec) or w.k >= w.n - 1:
        return out
    lines.planned_tree(w, -1)     # the branch's diff, read once
    tip_tree = tree_of(get_commit(w.run.repo, tip))
    before = lines.planned_tree(w, w.k)
    for group in _groups(later_lines(w, paths, output))[:LINES_AT_MOST]:
        what = _said(group)
        tree = lines.onto(w, tip_tree, before, lines.planned_tree(w, w.k, [i.item for i in group]))
        why = _no_tree(w, group, tree, tip_tree)
        if why:
            out.tried.append((what, why))
            continue
        assert not isinstance(tree, list)
        w.wt.reset_to_tree(tree, tip)
        result = steps.check_candidates(w, f"Trying {what}...")
        if result is None or result.passed:
            out.tree, out.took, out.progress = tree, what, False
            break
        out.tried.append((what, result.reason()))
        if out.tree is None and better(result, tree):
            out.tree, out.took, out.progress = tree, what, True
    w.wt.reset(tip)
    return out


def _said(group: list[_Item]) -> str:
    files = ", ".join(dict.fromkeys(i.path for i in group))
    commits = ", ".join(str(number(j)) for j in dict.fromkeys(i.j for i in group))
    return (f"the {sum(i.size for i in group)} lines commit{'s' if ',' in commits else ''} {commits} "
            f"{'name' if ',' in commits else 'names'} in {files}")


def _no_tree(w: Work, group: list[_Item], tree: TreeId | list[str], tip_tree: TreeId) -> str:
    """Why a group's tree is no candidate, or "" where it is one."""
    if isinstance(tree, list):
        return f"they do not merge onto the branch ({', '.join(tree[:3])})"
    if tree == tip_tree:
        return "they are on the branch already"
    taken = {i.item for i in group}
    for j in {i.j for i in group}:
        c = w.spec.commits[j]
        if not c.paths and set(c.hunks) <= taken:
            return f"commit {number(j)} would have nothing of its own left"
    return ""
