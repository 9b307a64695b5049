"""A list of hunks counted for the prompt's index and stat (in all, per file, per directory),
kept up to date by RemainingDiff path by path."""
from __future__ import annotations

import bisect
import functools

from git_retcon.diff.hunk import Hunk


@functools.lru_cache(maxsize=65536)   # a pure function of its arguments: safe to share process-wide
def directory(path: str, depth: int) -> str:
    """The prompt index's row for path at depth: its first `depth` directories."""
    parts = path.split("/")[:-1][:depth]
    return "/".join(parts) + "/" if parts else "(top level)"


class Sums:
    """A list of hunks counted for the prompt's index and stat: in all, per file and per
    directory. RemainingDiff keeps its diff's up to date path by path (change), so that a
    step's prompt does not count every remaining hunk again: a run would grow with the
    square of its commits. Files and directories come in the order of their first hunk."""

    def __init__(self, hunks: list[Hunk]) -> None:
        self.hunks = len(hunks)
        self.files: dict[str, list[int]] = {}                  # path: [hunks, added, removed]
        for h in hunks:
            f = self.files.get(h.path)
            if f is None:
                self.files[h.path] = [1, h.added_lines, h.removed_lines]
            else:
                f[0] += 1
                f[1] += h.added_lines
                f[2] += h.removed_lines
        self.order = list(self.files)                          # sorted, for a list in path order
        self.file_chars = sum(map(len, self.order))
        self.hunk_chars = sum(len(p) * f[0] for p, f in self.files.items())  # each hunk's path
        self.added = sum(f[1] for f in self.files.values())
        self.removed = sum(f[2] for f in self.files.values())
        self._depths: dict[int, _Groups] = {}

    def groups(self, depth: int) -> _Groups:
        """The directories at depth, made on first use and kept up to date from then on."""
        got = self._depths.get(depth)
        if got is None:
            got = self._depths[depth] = _Groups(depth, self.files, self.order)
        return got

    def change(self, path: str, old: list[Hunk], new: list[Hunk]) -> None:
        """path's hunks `old` are now `new` (for a list in path order: a new file is placed
        where it sorts)."""
        if not old and not new:
            return
        dn = len(new) - len(old)
        da = sum(h.added_lines for h in new) - sum(h.added_lines for h in old)
        dr = sum(h.removed_lines for h in new) - sum(h.removed_lines for h in old)
        self.hunks += dn
        self.added += da
        self.removed += dr
        self.hunk_chars += dn * len(path)
        f = self.files.get(path)
        if f is None:
            self.files[path] = [dn, da, dr]
            bisect.insort(self.order, path)
            self.file_chars += len(path)
        elif not new:
            del self.files[path]
            del self.order[bisect.bisect_left(self.order, path)]
            self.file_chars -= len(path)
        else:
            f[0] += dn
            f[1] += da
            f[2] += dr
        for g in self._depths.values():
            g.change(path, dn, da, dr, "new" if f is None else "gone" if not new else "")

    def __eq__(self, other: object) -> bool:
        """The same counts, files and directories in the same order (for the tests)."""
        if not isinstance(other, Sums):
            return NotImplemented
        mine = (self.hunks, self.added, self.removed, self.hunk_chars, self.file_chars, self.order)
        if mine != (other.hunks, other.added, other.removed, other.hunk_chars, other.file_chars, other.order):
            return False
        return [self.files[p] for p in self.order] == [other.files[p] for p in other.order] and all(
            self.groups(d).rows() == other.groups(d).rows() for d in (1, 2, 3))

    __hash__ = None  # type: ignore[assignment]


class _Groups:
    """The directories at one depth: each one's [files, hunks, added, removed], in the order of
    its first file; each one's files kept sorted, so that a directory whose first file goes
    finds its new place."""

    def __init__(self, depth: int, files: dict[str, list[int]], order: list[str]) -> None:
        self.depth = depth
        self.sums: dict[str, list[int]] = {}
        self.members: dict[str, list[str]] = {}
        self.firsts: list[tuple[str, str]] = []    # (first file, directory)
        for p in order:
            n, a, r = files[p]
            key = directory(p, depth)
            g = self.sums.get(key)
            if g is None:
                self.sums[key] = [1, n, a, r]
                self.members[key] = [p]
                self.firsts.append((p, key))
            else:
                g[0] += 1
                g[1] += n
                g[2] += a
                g[3] += r
                self.members[key].append(p)

    def rows(self) -> list[tuple[str, list[int]]]:
        """Each directory and its [files, hunks, added, removed], in order."""
        return [(key, self.sums[key]) for _, key in self.firsts]

    def change(self, path: str, dn: int, da: int, dr: int, how: str) -> None:
        key = directory(path, self.depth)
        members = self.members.get(key)
        if members is None:
            members = self.members[key] = []
            self.sums[key] = [0, 0, 0, 0]
        g = self.sums[key]
        g[0] += {"new": 1, "gone": -1}.get(how, 0)
        g[1] += dn
        g[2] += da
        g[3] += dr
        if not how:
            return
        first = members[0] if members else None
        if how == "new":
            bisect.insort(members, path)
        else:
            del members[bisect.bisect_left(members, path)]
        if members and members[0] == first:
            return
        if first is not None:
            del self.firsts[bisect.bisect_left(self.firsts, (first, key))]
        if members:
            bisect.insort(self.firsts, (members[0], key))
        else:
            del self.members[key]
            del self.sums[key]
