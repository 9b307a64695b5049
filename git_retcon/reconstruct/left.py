"""What each logical commit has left to take on a tree, known from one remaining diff.

A logical commit with `paths` or planned `hunks` has something left on a tree when a hunk of the
remaining diff (that tree against the source tip) is one of its hunks or lies under its paths.
`Left` counts those hunks per logical commit and moves the counts from tree to tree by the hunks
that differ: after a commit, what is left for every later logical commit costs the hunks that
commit changed (and one pass over the remaining diff's ids), not one check per later commit,
which made a run quadratic in its commits.
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Iterable

from git_retcon import diff
from git_retcon.state import spec as specmod
from git_retcon.state.spec import PathsIndex, paths_match, plain_name

# What decides a logical commit's claims: its paths and its planned hunks, commit by commit.
_Key = tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]


def _key(spec: specmod.Spec) -> _Key:
    return tuple((tuple(c.paths), tuple(c.hunks)) for c in spec.commits)


class Claims:
    """Which logical commits may take a hunk: its id among their planned hunks, or its file (or,
    for a rename, its old file) under their paths. A file's answer is kept: a run asks about the
    same few files again and again."""

    def __init__(self, spec: specmod.Spec):
        self.key = _key(spec)
        self._by_id: dict[str, set[int]] = {}
        for j, c in enumerate(spec.commits):
            for i in c.hunks:
                self._by_id.setdefault(i, set()).add(j)
        self._index = PathsIndex((j, c.paths) for j, c in enumerate(spec.commits) if c.paths)
        self._by_path: dict[tuple[str, str | None], frozenset[int]] = {}

    def of(self, h: diff.Hunk) -> Iterable[int]:
        where = (h.path, h.old_path)
        if (under := self._by_path.get(where)) is None:
            under = self._by_path[where] = frozenset(
                self._index.which(h.path) | (self._index.which(h.old_path) if h.old_path else set()))
        by_id = self._by_id.get(h.id)
        return under | by_id if by_id else under


class Left:
    """The remaining diff at one tree, and per logical commit how many of its hunks it may take."""

    def __init__(self, remaining: diff.RemainingDiff):
        self.remaining = remaining
        self.claims: Claims | None = None
        self.tree: str | None = None
        self.hunks: list[diff.Hunk] = []
        self._ids: set[str] = set()
        self.count: Counter[int] = Counter()
        self.was: dict[int, int] = {}   # the last move: each count it changed, as it was before

    def at(self, spec: specmod.Spec, tree: str) -> Left:
        """The counts on tree (self, moved there)."""
        if self.claims is None or self.claims.key != _key(spec):
            self.claims, self.tree = Claims(spec), None   # a spec whose claims changed: counted afresh
        if tree == self.tree:
            self.was = {}
            return self
        hunks = self.remaining.at(tree)
        ids = {h.id for h in hunks}
        if self.tree is None:
            gone, came = [], hunks
            self.count = Counter()
        else:
            # A hunk's id is its path and content: the same id is the same hunk, claimed alike.
            gone = [h for h in self.hunks if h.id not in ids]
            came = [h for h in hunks if h.id not in self._ids] if len(ids) != len(self._ids) or gone else []
        was: dict[int, int] = {}
        for sign, moved in ((-1, gone), (1, came)):
            for h in moved:
                for j in self.claims.of(h):
                    was.setdefault(j, self.count[j])
                    self.count[j] += sign
        self.tree, self.hunks, self._ids, self.was = tree, hunks, ids, was
        return self


def under(hunks: list[diff.Hunk], patterns: list[str]) -> list[diff.Hunk]:
    """The hunks whose path patterns take (paths_match), of hunks in path order (as the remaining
    diff is): a plain name is found by bisection, so a step costs its own files, not every hunk left;
    only a glob is tried on every hunk."""
    names = [plain_name(p) for p in patterns]
    if any(n is None for n in names):
        return [h for h in hunks if paths_match(h.path, patterns)]
    picked: set[int] = set()
    for name in names:
        assert name is not None
        for lo, hi in ((name, name), (name + "/", name + "0")):   # "0" is the character after "/"
            start = bisect_left(hunks, lo, key=_path)
            end = bisect_right(hunks, hi, key=_path) if lo == hi else bisect_left(hunks, hi, key=_path)
            picked.update(range(start, end))
    return [hunks[i] for i in sorted(picked)]


def _path(h: diff.Hunk) -> str:
    return h.path
