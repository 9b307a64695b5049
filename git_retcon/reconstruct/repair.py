"""Repair as a search: when a commit fails, the candidate hunks the failure points at (the rework
brief's: a missing name's definition, the file or test it names) are tried one by one, smallest
first, each tree built and tested by plain code (the records answer for a tree tested before),
before all of them together are; the first that passes and leaves every later logical commit
something of its own is the fix, committed with no model call. The tool conversation comes only
after every candidate failed, and the output says what each failed with.

Where the spec names atoms (reconstruct/lines.py), the candidates are first the lines that make
what commit k's code writes and the failure expects (_makers), then the lines later
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

import pygit2

from git_retcon import diff
from git_retcon.diff import atoms
from git_retcon.git.ids import CommitId, TreeId, tree_of
from git_retcon.git.plumbing import get_commit
from git_retcon.owners import names
from git_retcon.owners.listing import evidence_firsts
from git_retcon.owners.rules import formats
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


LINES_AT_MOST = 8        # trees of lines moved tried at most per attempt
_QUOTED = re.compile(rb"""["']([\w.-]{3,})["']""")
# The lines of a test run's output that name a failing test (unittest, pytest, go, cargo, node's
# test runner and TAP, JUnit): a name quoted in a changed line counts only when one of these shows it.
_FAILED = re.compile(r"^(?:FAIL|ERROR|FAILED|--- FAIL|not ok|✖|test .* FAILED|\s*\d+\) ).*$", re.M)


@dataclass
class Lines:
    """What a search among the lines the spec names found: a tree that passes (or, with progress,
    one that fails for the better), the move in words, and what each move tried failed with."""

    tree: TreeId | None = None
    took: str = ""
    progress: bool = False
    given: bool = False      # the move gives commit k's lines back, to the commit after it
    moved: list[tuple[str, int, int]] = field(default_factory=list)   # `hunks` item, from, to
    tried: list[tuple[str, str]] = field(default_factory=list)


@dataclass(frozen=True)
class _Item:
    item: str            # as the spec's `hunks` name it
    j: int               # the logical commit that names it
    path: str
    size: int
    names: bool          # it quotes a name the failure shows
    fit: int             # the words its lines share with commit k's message and hints
    added: tuple[str, ...] = ()     # its added lines


@dataclass(frozen=True)
class _Move:
    items: tuple[_Item, ...]
    give: bool           # back from commit k to the commit that fits them, not taken forward

    def said(self) -> str:
        files = ", ".join(dict.fromkeys(i.path for i in self.items))
        size = sum(i.size for i in self.items)
        if self.give:
            return f"the {size} lines of {files} it took that name the failure, given back"
        commits = ", ".join(str(number(j)) for j in dict.fromkeys(i.j for i in self.items))
        many = "," in commits
        return f"the {size} lines commit{'s' if many else ''} {commits} {'name' if many else 'names'} in {files}"


def relevant(w: Work, commits: range, paths: set[str] | None, output: str) -> list[_Item]:
    """The items these commits' `hunks` name in paths, or quoting a name the output shows (paths
    None: every item)."""
    assert w.run.branch_diff is not None
    by_id = {h.id: h for h in w.run.branch_diff[2]}
    headers = "\n".join(m[0] for m in _FAILED.finditer(output))
    said = names.words(w.commit.message + "\n" + w.commit.hints)
    out: list[_Item] = []
    for j in commits:
        for item in w.spec.commits[j].hunks:
            part = atoms.parse_id(item)
            h = by_id.get(part[0] if part else item)
            if h is None:
                continue
            shown = atoms.as_hunk(h, part[1]) if part else h
            text = (shown.added + shown.removed).decode("utf-8", "replace")
            # the names it quotes, and those it defines (go's `func TestX`, named by `--- FAIL: TestX`)
            quoted = {m.decode("utf-8", "replace") for m in _QUOTED.findall(shown.added + shown.removed)}
            quoted |= {n for n in names.defined(text.splitlines()) if len(n) >= 3}
            quotes = any(re.search(rf"(?<![\w-]){re.escape(q)}(?![\w-])", headers) for q in quoted)
            if quotes or paths is None or h.path in paths:
                fit = len(said & names.words(text))
                out.append(_Item(item, j, h.path, shown.added_lines + shown.removed_lines, quotes, fit,
                                 tuple(names.text_lines(shown.added))))
    return out


def moves(w: Work, paths: set[str], output: str) -> list[_Move]:
    """What names the failure first: later commits' lines that name it, taken forward together,
    then commit k's own that name it, given back together (tomli's commit 2 took three entries of
    the expected failures that commit 3's parser makes pass); then each alone, forward (those whose
    words commit k's message says first) before back; then later lines in the failure's files."""
    every = relevant(w, range(w.k, w.n), None, output)     # read once: each filter below is a view
    later = [i for i in every if i.j != w.k]
    ahead = sorted((i for i in later if i.names or i.path in paths), key=lambda i: (-i.fit, i.size))
    mine = sorted((i for i in every if i.j == w.k and i.names), key=lambda i: (i.fit, i.size))
    forward, back = tuple(i for i in ahead if i.names), tuple(mine)
    # The lines the evidence ranked first for commit k that the model placed later (pflag, with the
    # 1.5B model: 46 atoms of the feature put in the rename after it): the evidence's second chance.
    firsts = evidence_firsts(w.run.store, w.stored)
    overruled = tuple(i for i in later if firsts.get(i.item) == w.k)
    made = _makers(w, every, output)
    out = [_Move(made, False)] if made else []
    out += [_Move(forward, False)] if len(forward) > 1 else []
    out += [_Move(overruled, False)] if overruled else []
    out += [_Move(back, True)] if len(back) > 1 else []
    out += [_Move((i,), False) for i in forward] + [_Move((i,), True) for i in back]
    return out + [_Move((i,), False) for i in ahead if not i.names]


def _makers(w: Work, every: list[_Item], output: str) -> tuple[_Item, ...]:
    """Later lines that make what commit k's code writes and the failure expects, and the later
    tests that expect it: commit k's lines with a format string the output shows a text of
    (xmlparser's commit 2: its Display arm writes "expected quote mark not '{}' at {}", a failing
    test's expected text) name a thing new to the branch (the variant `InvalidQuote`); the later
    code lines that use it produce it (commit 3's `Err(StreamError::InvalidQuote(...))` in
    stream.rs), and the later test lines that the format writes expect it (tests/pi.rs's, moved
    to commit 4). Names the base has already tell nothing."""
    written: set[str] = set()
    shown: list[str] = []
    for i in every:
        found = [p for p in formats(list(i.added)) if re.search(p, output)]
        if i.j == w.k and not names.is_test(i.path) and found:
            written |= {n for n in names.identifiers("\n".join(i.added)) if len(n) >= 3}
            shown += found
    new = written - _at_base(w, written)
    return tuple(i for i in every if i.j > w.k and (
        names.is_test(i.path) and any(re.search(p, line) for p in shown for line in i.added)
        or not names.is_test(i.path) and new & set(names.identifiers("\n".join(i.added)))))


def _at_base(w: Work, wanted: set[str]) -> set[str]:
    """Which of the names the merge base's versions of the branch's changed files already say."""
    assert w.run.branch_diff is not None
    base, _, hunks = w.run.branch_diff
    tree = get_commit(w.run.repo, base).tree
    found: set[str] = set()
    for path in {p for h in hunks for p in (h.old_path or h.path,)}:
        if not wanted - found:
            break
        try:
            blob = w.run.repo[tree[path].id]
        except KeyError:
            continue
        if isinstance(blob, pygit2.Blob):
            found |= wanted & set(names.identifiers(blob.data.decode("utf-8", "replace")))
    return found


def by_lines(w: Work, tip: CommitId, paths: set[str], output: str,
             better: Callable[[Result, TreeId], str]) -> Lines:
    """The lines moved between commit k and later ones that mend commit k (the module's comment)."""
    out = Lines()
    if not lines.in_lines(w.spec) or w.k >= w.n - 1:
        return out
    lines.planned_tree(w, -1)     # the branch's diff, read once
    tip_tree = tree_of(get_commit(w.run.repo, tip))
    before = lines.planned_tree(w, w.k)
    for move in moves(w, paths, output)[:LINES_AT_MOST]:
        items = [i.item for i in move.items]
        after = lines.planned_tree(w, w.k, without=items) if move.give else lines.planned_tree(w, w.k, items)
        tree = lines.onto(w, tip_tree, before, after)
        why = _no_tree(w, move, tree, tip_tree)
        if why:
            out.tried.append((move.said(), why))
            continue
        assert not isinstance(tree, list)
        w.wt.reset_to_tree(tree, tip)
        result = steps.check_candidates(w, f"Trying {move.said()}...")
        if result is None or result.passed:
            out.tree, out.took, out.progress, out.given = tree, move.said(), False, move.give
            out.moved = _moved(w, move)
            break
        out.tried.append((move.said(), result.reason()))
        # Progress only forward: lines given back can hide a test, which is no step towards a fix.
        if out.tree is None and not move.give and _progress(w, move, result, better(result, tree)):
            out.tree, out.took, out.progress, out.given = tree, move.said(), True, move.give
            out.moved = _moved(w, move)
    w.wt.reset(tip)
    return out


def _progress(w: Work, move: _Move, result: Result, verdict: str) -> bool:
    """A move forward that fails is progress where the tests now run that did not (xmlparser's
    commit 2: a match arm taken, the crate compiles), or where it fails for the better and leads on."""
    return verdict == "ran" or (verdict == "better" and _leads_on(w, move, result.output))


def _leads_on(w: Work, move: _Move, output: str) -> bool:
    """Whether a move that fails leaves a failure the lines can go on from: one whose failing tests
    the lines of commit k or later ones name. A move that breaks a file's syntax, or fails where
    no line names the tests, is no step towards a fix (sindresorhus/is: three such moves, each
    taking one more line of a test block, ended in `Unexpected "}"`)."""
    moved = {i.item for i in move.items}
    return any(i.names and i.item not in moved for i in relevant(w, range(w.k, w.n), set(), output))


def _moved(w: Work, move: _Move) -> list[tuple[str, int, int]]:
    """Each item of the move, the commit whose `hunks` name it, and the commit that takes it."""
    after = range(w.k + 1, w.n)     # lines given back go to the first of the commits after k
    return [(i.item, i.j, after[0] if move.give else w.k) for i in move.items]


def move_in_spec(w: Work, moved: list[tuple[str, int, int]]) -> str:
    """The moves written into the spec's `hunks` (saved with the fix's entry), so that every
    planned tree from here on holds what the branch holds; said in words."""
    for item, src, dst in moved:
        w.spec.commits[src].hunks = [i for i in w.spec.commits[src].hunks if i != item]
        w.spec.commits[dst].hunks = list(dict.fromkeys([*w.spec.commits[dst].hunks, item]))
    return "; ".join(f"{item} from commit {number(src)} to commit {number(dst)}" for item, src, dst in moved)


def _no_tree(w: Work, move: _Move, tree: TreeId | list[str], tip_tree: TreeId) -> str:
    """Why a move's tree is no candidate, or "" where it is one."""
    if isinstance(tree, list):
        return f"they do not merge onto the branch ({', '.join(tree[:3])})"
    if tree == tip_tree:
        return "it changes nothing on the branch"
    if move.give and not w.commit.paths and set(w.commit.hunks) <= {i.item for i in move.items}:
        return f"commit {w.number} would have nothing of its own left"
    empty = _emptied_later(w, tree)
    return f"commit {number(empty)} would have nothing of its own left" if empty is not None else ""


def emptying_none(w: Work, tip: CommitId, candidates: list[Candidate]) -> list[Candidate]:
    """The candidates, where the spec names lines, if taking them all leaves every later commit
    something of its own (on the planned trees); else none: a whole hunk of the remaining diff
    can hold the lines of several later commits, and committing it would empty one."""
    if not candidates:
        return candidates
    try:
        tree = TreeId(diff.tree_with(w.run.repo, tree_of(get_commit(w.run.repo, tip)), [c.hunk for c in candidates]))
    except ValueError:
        return candidates
    empty = _emptied_later(w, tree)
    if empty is None:
        return candidates
    w.run.ui.detail(f"The candidate hunks would leave commit {number(empty)} nothing of its own: not applied")
    return []


def _emptied_later(w: Work, tree: TreeId) -> int | None:
    """The first later commit whose planned step, put on tree after those before it, changes
    nothing (what was moved and what earlier repairs took hold it all)."""
    at = tree
    for j in range(w.k + 1, w.n):
        nxt = lines.onto(w, at, lines.planned_tree(w, j - 1), lines.planned_tree(w, j))
        if isinstance(nxt, list):
            return None      # it does not merge: the step that makes it stops and says so
        if nxt == at:
            return j
        at = nxt
    return None
