"""Exact application of hunks to the build worktree's index and files.

Application is byte-exact: applying every hunk of the remaining diff makes the index
tree equal the target tree.
"""
from __future__ import annotations

import contextlib
import os
import stat as _stat
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pygit2
from pygit2.enums import FileMode

from git_retcon.diff.hunk import (
    KINDS,
    MODE_EXEC,
    MODE_GITLINK,
    MODE_LINK,
    Hunk,
    Lines,
    as_tree,
    is_file_mode,
    start_index,
)
from git_retcon.git.plumbing import get_blob


class _View:
    """The index as it will be after the hunks planned so far; nothing is mutated.

    Directory questions go to the index's tree (built once, lazily) plus the planned
    changes: listing a large index in Python on every apply would cost more than
    the whole apply.
    """

    def __init__(self, repo: pygit2.Repository, index: pygit2.Index):
        self.repo = repo
        self.index = index
        self.changes: dict[str, tuple[str, int] | None] = {}
        self._tree: pygit2.Tree | None = None

    def get(self, path: str) -> tuple[str, int] | None:
        if path in self.changes:
            return self.changes[path]
        try:
            entry = self.index[path]
        except KeyError:
            return None
        return str(entry.id), entry.mode

    def set(self, path: str, value: tuple[str, int] | None) -> None:
        self.changes[path] = value

    def _is_dir(self, path: str) -> bool:
        """Whether some entry lives under path/ once the planned changes are made."""
        prefix = path + "/"
        if any(v is not None for p, v in self.changes.items() if p.startswith(prefix)):
            return True
        if self._tree is None:
            self._tree = as_tree(self.repo, self.index.write_tree(self.repo))
        try:
            obj = self._tree[path]
        except KeyError:
            return False
        if not isinstance(obj, pygit2.Tree):
            return False
        return any(self.changes.get(f, True) is not None for f in _files_under(self.repo, obj, prefix))

    def conflict(self, path: str) -> str | None:
        """A path that blocks creating `path` (a file where a directory must be, or vice versa)."""
        parts = path.split("/")
        for k in range(1, len(parts)):
            parent = "/".join(parts[:k])
            if self.get(parent) is not None:
                return parent
        if self._is_dir(path):
            return path + "/"
        return None


def _files_under(repo: pygit2.Repository, tree: pygit2.Tree, prefix: str) -> Iterator[str]:
    for entry in tree:
        if entry.type == pygit2.GIT_OBJECT_TREE:
            yield from _files_under(repo, as_tree(repo, entry.id), f"{prefix}{entry.name}/")
        else:
            yield f"{prefix}{entry.name}"


def _fail(h: Hunk, why: str) -> ValueError:
    return ValueError(f"hunk {h.id} ({h.kind} of {h.path}) does not apply: {why}")


def apply(repo: pygit2.Repository, index: pygit2.Index, workdir: Path, hunks: list[Hunk]) -> list[str]:
    """Apply hunks to the in-memory index and the worktree; return the touched paths, sorted.

    Everything is checked before anything changes: a hunk that no longer applies raises
    ValueError (naming its id and path) and leaves index and worktree untouched.
    The caller writes the index.
    """
    workdir = Path(workdir)
    unique: dict[str, Hunk] = {}
    for h in hunks:
        if h.kind not in KINDS:
            raise ValueError(f"hunk {h.id}: unknown kind {h.kind!r}")
        unique.setdefault(h.id, h)
    todo = list(unique.values())
    view = _View(repo, index)

    def create(h: Hunk, path: str, value: tuple[str, int]) -> None:
        current = view.get(path)
        if current is not None:
            if current == value:
                return
            raise _fail(h, f"{path} already exists with other content")
        blocker = view.conflict(path)
        if blocker is not None:
            raise _fail(h, f"{blocker} is in the way (apply its deletion first)")
        view.set(path, value)

    def target_entry(h: Hunk) -> tuple[str, int]:
        assert h.new_oid is not None
        if h.new_mode == MODE_GITLINK:
            return h.new_oid, h.new_mode
        return str(repo.create_blob(h.added)), h.new_mode

    # 1. removals
    for h in todo:
        if h.kind in ("delete", "rename"):
            src = h.path if h.kind == "delete" else h.old_path
            assert src is not None
            if view.get(src) is None:
                raise _fail(h, f"{src} does not exist")
            if h.kind == "rename" and h.old_oid and view.get(src) != (h.old_oid, h.old_mode):
                raise _fail(h, f"{src} changed since the diff was computed")
            view.set(src, None)
    # 2. whole-file writes
    for h in todo:
        if h.kind in ("add", "rename"):
            create(h, h.path, target_entry(h))
        elif h.kind == "binary":
            entry = target_entry(h)
            if view.get(h.path) is None:
                create(h, h.path, entry)
            else:
                view.set(h.path, entry)
    # 3. line changes, one pass per file
    by_path: dict[str, list[Hunk]] = defaultdict(list)
    for h in todo:
        if h.kind == "modify":
            by_path[h.path].append(h)
    for path, group in by_path.items():
        current = view.get(path)
        if current is None:
            raise _fail(group[0], f"{path} does not exist")
        oid, mode = current
        if not is_file_mode(mode):
            raise _fail(group[0], f"{path} is not a regular file")
        text = Lines(get_blob(repo, oid).data)
        fresh = all(h.old_oid is None or h.old_oid == oid for h in group)
        pieces: list[bytes] = []
        prev: Hunk | None = None
        prev_end = 0
        # Non-overlapping by construction (one zero-context diff), so applying them bottom-up
        # against the current content is the same as stitching them top-down, which is cheaper.
        for h in sorted(group, key=lambda h: (h.old_start, h.old_lines)):
            begin = start_index(h.old_start, h.old_lines)
            end = begin + h.old_lines
            if begin < 0 or end > text.count:
                raise _fail(h, f"line {h.old_start} is past the end of {path} ({text.count} lines)")
            if prev is not None and begin < prev_end:
                raise _fail(h, f"it overlaps hunk {prev.id}")
            if text.slice(begin, end) != h.removed:
                raise _fail(h, f"{path} no longer has the removed lines at line {h.old_start}")
            if not fresh and not h.removed:
                raise _fail(h, f"{path} changed since the diff was computed (recompute the diff)")
            pieces.append(text.slice(prev_end, begin))
            pieces.append(h.added)
            prev, prev_end = h, end
        pieces.append(text.slice(prev_end, text.count))
        view.set(path, (str(repo.create_blob(b"".join(pieces))), mode))
    # 4. mode changes
    for h in todo:
        if h.kind == "mode":
            current = view.get(h.path)
            if current is None:
                raise _fail(h, f"{h.path} does not exist")
            if not (is_file_mode(current[1]) and is_file_mode(h.new_mode)):
                raise _fail(h, f"{h.path} is not a regular file")
            view.set(h.path, (current[0], h.new_mode))

    # Everything checked: now change the index, then the worktree.
    changes = {p: v for p, v in view.changes.items() if v != _entry(index, p)}
    for path, value in sorted(changes.items(), key=lambda kv: kv[1] is not None):
        if value is None:
            index.remove(path)
        else:
            index.add(pygit2.IndexEntry(path, pygit2.Oid(hex=value[0]), FileMode(value[1])))
    for path, value in changes.items():
        if value is None:
            _remove_from_workdir(workdir, path)
    for path, value in changes.items():
        if value is not None:
            _write_to_workdir(repo, workdir, path, value)
    touched = set(changes)
    for h in todo:
        touched.add(h.path)
        if h.old_path:
            touched.add(h.old_path)
    return sorted(touched)


def _entry(index: pygit2.Index, path: str) -> tuple[str, int] | None:
    try:
        e = index[path]
    except KeyError:
        return None
    return str(e.id), e.mode


def _safe_target(workdir: Path, path: str) -> Path:
    parts = path.split("/")
    if path.startswith("/") or any(p in ("", ".", "..") for p in parts) or parts[0] == ".git":
        raise ValueError(f"refusing to write outside the worktree: {path!r}")
    cur = workdir
    for p in parts[:-1]:
        cur = cur / p
        if cur.is_symlink():
            raise ValueError(f"refusing to write {path}: {cur.relative_to(workdir)} is a symlink")
    return workdir / path


def _remove_from_workdir(workdir: Path, path: str) -> None:
    target = _safe_target(workdir, path)
    if target.is_symlink() or target.is_file():
        target.unlink()
    elif target.is_dir():
        with contextlib.suppress(OSError):
            target.rmdir()  # an empty gitlink directory
    parent = target.parent
    while parent != workdir and parent.is_dir() and not parent.is_symlink():
        try:
            parent.rmdir()
        except OSError:
            break
        parent = parent.parent


def _write_to_workdir(repo: pygit2.Repository, workdir: Path, path: str, value: tuple[str, int]) -> None:
    oid, mode = value
    target = _safe_target(workdir, path)
    parent = target.parent
    # A file left where a directory is needed (its deletion was applied to the index) goes.
    for anc in _ancestors(workdir, target):
        if anc.is_symlink() or anc.is_file():
            anc.unlink()
            break
    parent.mkdir(parents=True, exist_ok=True)
    if target.is_symlink() or target.is_file():
        target.unlink()  # never write through a symlink
    if mode == MODE_GITLINK:
        target.mkdir(exist_ok=True)
        return
    if target.is_dir():
        try:
            target.rmdir()
        except OSError:
            raise ValueError(f"cannot write {path}: a non-empty directory is in the way") from None
    data = get_blob(repo, oid).data
    if mode == MODE_LINK:
        os.symlink(os.fsdecode(data), target)
        return
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o666)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    st_mode = _stat.S_IMODE(os.stat(target).st_mode)
    new = st_mode | ((st_mode & 0o444) >> 2) if mode == MODE_EXEC else st_mode & ~0o111
    if new != st_mode:
        os.chmod(target, new)


def _ancestors(workdir: Path, target: Path) -> Iterator[Path]:
    """The directories between workdir and target, outermost first."""
    rel = target.relative_to(workdir).parts[:-1]
    cur = workdir
    for p in rel:
        cur = cur / p
        yield cur

