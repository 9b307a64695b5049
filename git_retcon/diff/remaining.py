"""The remaining diff between two trees, as hunks.

The remaining diff is the tree-to-tree diff from the build worktree's index tree to
the source tip's tree, computed with zero context lines so that every hunk stands
on its own.
"""
from __future__ import annotations

import bisect
from collections import defaultdict
from typing import TYPE_CHECKING, Protocol

import pygit2
from pygit2.enums import DeltaStatus, DiffFind, DiffOption

from git_retcon.diff.hunk import (
    MODE_GITLINK,
    Edit,
    Hunk,
    HunkFields,
    Lines,
    as_tree,
    has_nul,
    hunk_id,
    is_file_mode,
    is_text_entry,
    start_index,
)
from git_retcon.diff.sums import Sums
from git_retcon.git.plumbing import get_blob

if TYPE_CHECKING:
    from typing_extensions import Unpack


def _blob_data(repo: pygit2.Repository, oid: pygit2.Oid | str, mode: int) -> bytes:
    if mode == MODE_GITLINK:
        return b""
    return get_blob(repo, oid).data



def _slice_hunks(patch: pygit2.Patch, old: Lines, new: Lines) -> list[Edit] | None:
    """The patch's hunks with their bytes cut from the blobs; None unless they rebuild `new` exactly."""
    edits: list[Edit] = []
    pieces: list[bytes] = []
    prev = 0
    for h in patch.hunks:
        begin = start_index(h.old_start, h.old_lines)
        end = begin + h.old_lines
        nbegin = start_index(h.new_start, h.new_lines)
        if begin < prev or end > old.count or nbegin + h.new_lines > new.count:
            return None
        removed = old.slice(begin, end)
        added = new.slice(nbegin, nbegin + h.new_lines)
        edits.append(Edit(h.old_start, h.old_lines, h.new_start, h.new_lines, removed, added))
        pieces.append(old.slice(prev, begin))
        pieces.append(added)
        prev = end
    pieces.append(old.slice(prev, old.count))
    # Belt and braces: the hunks must turn the old blob into the new one, byte for byte.
    if not edits or b"".join(pieces) != new.data:
        return None
    return edits


def _patch(old: pygit2.Blob, new: pygit2.Blob, old_path: str, new_path: str) -> pygit2.Patch:
    # From the blobs already loaded (diff[i] would inflate them again); the paths let
    # .gitattributes (e.g. `binary`, `-diff`) speak.
    return pygit2.Patch.create_from(old, new, old_as_path=old_path, new_as_path=new_path,
                                    context_lines=0, interhunk_lines=0)


def remaining(repo: pygit2.Repository, current_tree: pygit2.Oid | str, target_tree: pygit2.Oid | str) -> list[Hunk]:
    """Every change from current_tree to target_tree as hunks, ordered by path then position."""
    old_tree = as_tree(repo, current_tree)
    new_tree = as_tree(repo, target_tree)
    diff = old_tree.diff_to_tree(
        new_tree, flags=DiffOption.INCLUDE_TYPECHANGE, context_lines=0, interhunk_lines=0,
    )
    diff.find_similar(flags=DiffFind.FIND_RENAMES | DiffFind.FIND_DONT_IGNORE_WHITESPACE)
    raw: list[_Raw] = []
    for delta in diff.deltas:
        _collect(repo, delta.status, delta.old_file, delta.new_file, raw, delta.similarity)
    return _identify(raw)


# (sort key: path, rank, position) and a hunk's fields, before ids are assigned
_Raw = tuple[tuple[str, int, int], HunkFields]


class _Side(Protocol):
    """One side of a delta: pygit2's DiffFile, or an entry of a tree."""

    @property
    def path(self) -> str: ...
    @property
    def id(self) -> pygit2.Oid: ...
    @property
    def mode(self) -> int: ...


def _collect(repo: pygit2.Repository, status: DeltaStatus, of: _Side, nf: _Side, raw: list[_Raw],
             similarity: int = 0) -> None:
    """The hunks of one delta, appended to raw."""

    def emit(rank: int, pos: int, **fields: Unpack[HunkFields]) -> None:
        raw.append(((fields["path"], rank, pos), fields))

    if status == DeltaStatus.ADDED:
        data = _blob_data(repo, nf.id, nf.mode)
        emit(0, 0, path=nf.path, kind="add", added=data, new_mode=nf.mode, new_oid=str(nf.id))
    elif status == DeltaStatus.DELETED:
        data = _blob_data(repo, of.id, of.mode)
        emit(0, 0, path=of.path, kind="delete", removed=data, old_mode=of.mode,
             old_oid=str(of.id), old_size=len(data))
    elif status == DeltaStatus.RENAMED:
        old = _blob_data(repo, of.id, of.mode)
        new = _blob_data(repo, nf.id, nf.mode)
        if not old and of.mode != MODE_GITLINK:
            # Like git, an empty file is no rename source: a delete and an add.
            emit(0, 0, path=of.path, kind="delete", removed=old, old_mode=of.mode,
                 old_oid=str(of.id), old_size=0)
            emit(0, 0, path=nf.path, kind="add", added=new, new_mode=nf.mode, new_oid=str(nf.id))
            return
        edits: tuple[Edit, ...] = ()
        if of.id != nf.id and is_text_entry(of.mode, old) and is_text_entry(nf.mode, new):
            patch = _patch(get_blob(repo, of.id), get_blob(repo, nf.id), of.path, nf.path)
            if not patch.delta.is_binary:
                edits = tuple(_slice_hunks(patch, Lines(old), Lines(new)) or ())
        emit(0, 0, path=nf.path, kind="rename", old_path=of.path, added=new,
             old_mode=of.mode, new_mode=nf.mode, new_oid=str(nf.id), old_oid=str(of.id),
             old_size=len(old), similarity=int(similarity), edits=edits)
    elif status in (DeltaStatus.MODIFIED, DeltaStatus.TYPECHANGE):
        path = nf.path
        whole = HunkFields(path=path, kind="binary", old_mode=of.mode, new_mode=nf.mode,
                            new_oid=str(nf.id), old_oid=str(of.id))
        if status == DeltaStatus.TYPECHANGE or not (is_file_mode(of.mode) and is_file_mode(nf.mode)):
            old_size = len(_blob_data(repo, of.id, of.mode))
            emit(0, 0, **(whole | {"added": _blob_data(repo, nf.id, nf.mode), "old_size": old_size}))
            return
        if of.id == nf.id:
            emit(2, 0, path=path, kind="mode", old_mode=of.mode, new_mode=nf.mode, old_oid=str(of.id))
            return
        old_blob, new_blob = get_blob(repo, of.id), get_blob(repo, nf.id)
        old, new = old_blob.data, new_blob.data
        edits_l: list[Edit] | None = None
        if not (has_nul(old) or has_nul(new)):
            patch = _patch(old_blob, new_blob, of.path, nf.path)
            if not patch.delta.is_binary:
                edits_l = _slice_hunks(patch, Lines(old), Lines(new))
        if edits_l is None:
            emit(0, 0, **(whole | {"added": new, "old_size": len(old)}))
            return
        for os_, ol, ns, nl, removed, added in edits_l:
            emit(1, os_, path=path, kind="modify", old_start=os_, old_lines=ol, new_start=ns,
                 new_lines=nl, removed=removed, added=added, old_mode=of.mode,
                 new_mode=of.mode, old_oid=str(of.id))
        if of.mode != nf.mode:
            emit(2, 0, path=path, kind="mode", old_mode=of.mode, new_mode=nf.mode, old_oid=str(of.id))
    # UNMODIFIED/COPIED/IGNORED/UNTRACKED/... do not occur in a tree-to-tree diff without those flags.


def _identify(raw: list[_Raw]) -> list[Hunk]:
    """Hunks in (path, position) order, with their ids."""
    raw.sort(key=lambda r: r[0])
    seen: dict[tuple[str, str, bytes, bytes], int] = defaultdict(int)
    out: list[Hunk] = []
    for _key, f in raw:
        kind = f["kind"]
        id_path = f["path"] if kind != "rename" else f"{f['old_path']}\0{f['path']}"
        id_kind: str = kind
        if kind == "mode":
            id_kind = f"mode {f['old_mode']:o} {f['new_mode']:o}"
        elif kind in ("add", "rename", "binary"):
            id_kind = f"{kind} {f['new_mode']:o}"
            if f["new_mode"] == MODE_GITLINK:
                id_kind += " " + f["new_oid"]
        removed = f.get("removed", b"")
        added = f.get("added", b"")
        ident = (id_path, id_kind, removed, added)
        occurrence = seen[ident]
        seen[ident] += 1
        out.append(Hunk(id=hunk_id(id_path, id_kind, removed, added, occurrence), **f))
    return out



class _Entry:
    """A path of a tree, as one side of a delta."""

    __slots__ = ("path", "id", "mode")

    def __init__(self, path: str, id: pygit2.Oid, mode: int):
        self.path = path
        self.id = id
        self.mode = mode


def _entry(tree: pygit2.Tree, path: str) -> _Entry | None:
    try:
        obj = tree[path]
    except KeyError:
        return None
    return _Entry(path, obj.id, obj.filemode)


class RemainingDiff:
    """remaining(tree, target) for a tree that moves a few paths at a time: only the
    paths that changed since the last tree asked for are diffed again.

    A step applies a few hunks, so diffing the whole tree each time would make a run
    grow with the square of its commits. Whatever could pair differently under rename
    detection (a path that appears or goes, a rename hunk) or read other attributes (a
    .gitattributes) is diffed whole, so the answer is always remaining()'s.

    Nor is the whole list walked or sorted again: the hunks of a changed path are one run of
    the list (it is in path order), found by bisection over their paths and replaced there.
    The list answered is a new one each time the tree moves (callers keep answers by list)."""

    def __init__(self, repo: pygit2.Repository, target_tree: pygit2.Oid | str):
        self.repo = repo
        self.target = as_tree(repo, target_tree)
        self.target_id = str(self.target.id)
        self.tree: str | None = None
        self.hunks: list[Hunk] = []
        self._paths: list[str] = []      # each hunk's path, in the same (sorted) order
        self._renamed: set[str] = set()  # the paths and old paths of the rename hunks
        self.sums = Sums([])

    def at(self, tree: str) -> list[Hunk]:
        if tree != self.tree:
            hunks = self._update(tree) if self.tree is not None else None
            if hunks is None:
                hunks = remaining(self.repo, tree, self.target_id)
                self._paths = [h.path for h in hunks]
                self._renamed = {p for h in hunks if h.kind == "rename" for p in (h.path, h.old_path) if p}
                self.sums = Sums(hunks)
            self.hunks = hunks
            self.tree = tree
        return self.hunks

    def sums_of(self, hunks: list[Hunk]) -> Sums | None:
        """The counts of hunks when they are the list at() answered last (by identity)."""
        return self.sums if hunks is self.hunks else None

    def _update(self, tree: str) -> list[Hunk] | None:
        assert self.tree is not None
        new = as_tree(self.repo, tree)
        changed: set[str] = set()
        for delta in as_tree(self.repo, self.tree).diff_to_tree(new).deltas:
            changed.update((delta.old_file.path, delta.new_file.path))
        if any(p == ".gitattributes" or p.endswith("/.gitattributes") for p in changed):
            return None
        if not self._renamed.isdisjoint(changed):
            return None
        raw: list[_Raw] = []
        for path in changed:
            cur, want = _entry(new, path), _entry(self.target, path)
            if cur is None and want is None:
                continue
            if cur is None or want is None:
                return None   # an add or a delete: rename detection may pair it
            if cur.id == want.id and cur.mode == want.mode:
                continue
            if not (is_file_mode(cur.mode) and is_file_mode(want.mode)):
                return None
            _collect(self.repo, DeltaStatus.MODIFIED, cur, want, raw)
        fresh: dict[str, list[Hunk]] = {}
        for h in _identify(raw):
            fresh.setdefault(h.path, []).append(h)
        # Each changed path's run of hunks (none of them a rename: those were diffed whole)
        # gives way to its fresh ones, at the same place in the path order.
        hunks: list[Hunk] = []
        paths: list[str] = []
        done = 0
        for path in sorted(changed):
            at = bisect.bisect_left(self._paths, path, done)
            end = bisect.bisect_right(self._paths, path, at)
            got = fresh.get(path, [])
            self.sums.change(path, self.hunks[at:end], got)
            hunks += self.hunks[done:at]
            hunks += got
            paths += self._paths[done:at]
            paths += [path] * len(got)
            done = end
        hunks += self.hunks[done:]
        paths += self._paths[done:]
        self._paths = paths
        return hunks
