"""The remaining diff between two trees, as hunks.

The remaining diff is the tree-to-tree diff from the build worktree's index tree to
the source tip's tree, computed with zero context lines so that every hunk stands
on its own.
"""
from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

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
        edits.append((h.old_start, h.old_lines, h.new_start, h.new_lines, removed, added))
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

    # (sort key, path, kind, removed, added, fields) before ids are assigned
    raw: list[tuple[tuple[str, int, int], HunkFields]] = []

    def emit(rank: int, pos: int, **fields: Unpack[HunkFields]) -> None:
        raw.append(((fields["path"], rank, pos), fields))

    for delta in diff.deltas:
        status = delta.status
        of, nf = delta.old_file, delta.new_file
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
                continue
            edits: tuple[Edit, ...] = ()
            if of.id != nf.id and is_text_entry(of.mode, old) and is_text_entry(nf.mode, new):
                patch = _patch(get_blob(repo, of.id), get_blob(repo, nf.id), of.path, nf.path)
                if not patch.delta.is_binary:
                    edits = tuple(_slice_hunks(patch, Lines(old), Lines(new)) or ())
            emit(0, 0, path=nf.path, kind="rename", old_path=of.path, added=new,
                 old_mode=of.mode, new_mode=nf.mode, new_oid=str(nf.id), old_oid=str(of.id),
                 old_size=len(old), similarity=int(delta.similarity), edits=edits)
        elif status in (DeltaStatus.MODIFIED, DeltaStatus.TYPECHANGE):
            path = nf.path
            whole = HunkFields(path=path, kind="binary", old_mode=of.mode, new_mode=nf.mode,
                                new_oid=str(nf.id), old_oid=str(of.id))
            if status == DeltaStatus.TYPECHANGE or not (is_file_mode(of.mode) and is_file_mode(nf.mode)):
                old_size = len(_blob_data(repo, of.id, of.mode))
                emit(0, 0, **(whole | {"added": _blob_data(repo, nf.id, nf.mode), "old_size": old_size}))
                continue
            if of.id == nf.id:
                emit(2, 0, path=path, kind="mode", old_mode=of.mode, new_mode=nf.mode, old_oid=str(of.id))
                continue
            old_blob, new_blob = get_blob(repo, of.id), get_blob(repo, nf.id)
            old, new = old_blob.data, new_blob.data
            edits_l: list[Edit] | None = None
            if not (has_nul(old) or has_nul(new)):
                patch = _patch(old_blob, new_blob, of.path, nf.path)
                if not patch.delta.is_binary:
                    edits_l = _slice_hunks(patch, Lines(old), Lines(new))
            if edits_l is None:
                emit(0, 0, **(whole | {"added": new, "old_size": len(old)}))
                continue
            for os_, ol, ns, nl, removed, added in edits_l:
                emit(1, os_, path=path, kind="modify", old_start=os_, old_lines=ol, new_start=ns,
                     new_lines=nl, removed=removed, added=added, old_mode=of.mode,
                     new_mode=of.mode, old_oid=str(of.id))
            if of.mode != nf.mode:
                emit(2, 0, path=path, kind="mode", old_mode=of.mode, new_mode=nf.mode, old_oid=str(of.id))
        # UNMODIFIED/COPIED/IGNORED/UNTRACKED/... do not occur in a tree-to-tree diff without those flags.

    raw.sort(key=lambda r: r[0])
    seen: dict[tuple[str, str, bytes, bytes], int] = defaultdict(int)
    out: list[Hunk] = []
    for _key, f in raw:
        kind = f["kind"]
        id_path = f["path"] if kind != "rename" else f"{f['old_path']}\0{f['path']}"
        id_kind = kind
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

