"""Exact application of hunks to the build worktree's index and files.

Application is byte-exact: applying every hunk of the remaining diff makes the index
tree equal the target tree.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pygit2
from pygit2.enums import FileMode

from git_retcon.diff.hunk import (
    KINDS,
    MODE_GITLINK,
    Hunk,
    Lines,
    as_tree,
    is_file_mode,
    start_index,
)
from git_retcon.diff.workdir import Rollback, remove, write
from git_retcon.errors import machine_error
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
        return any(self.changes.get(f, True) is not None for f in files_under(self.repo, obj, prefix))

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


def files_under(repo: pygit2.Repository, tree: pygit2.Tree, prefix: str = "") -> Iterator[str]:
    """Every file's path in tree, under prefix."""
    for entry in tree:
        if entry.type == pygit2.GIT_OBJECT_TREE:
            yield from files_under(repo, as_tree(repo, entry.id), f"{prefix}{entry.name}/")
        else:
            yield f"{prefix}{entry.name}"


def _fail(h: Hunk, why: str) -> ValueError:
    return ValueError(f"hunk {h.id} ({h.kind} of {h.path}) does not apply: {why}")


def apply(repo: pygit2.Repository, index: pygit2.Index, workdir: Path, hunks: list[Hunk]) -> list[str]:
    """Apply hunks to the in-memory index and the worktree; return the touched paths, sorted.

    Everything is checked before anything changes: a hunk that no longer applies raises
    ValueError (naming its id and path) and leaves index and worktree untouched, and so
    does a worktree write that fails part way (a directory in the way, a full disk):
    what it had changed is put back. The caller writes the index.
    """
    changes, todo = _plan(repo, index, hunks)
    _commit_changes(repo, index, Path(workdir), changes, todo)
    touched = set(changes)
    for h in todo:
        touched.add(h.path)
        if h.old_path:
            touched.add(h.old_path)
    return sorted(touched)


def tree_with(repo: pygit2.Repository, tree: str, hunks: list[Hunk]) -> str:
    """The tree that tree becomes with hunks applied (their bytes as they are: no worktree,
    no filters); ValueError as apply raises it."""
    index = pygit2.Index()
    index.read_tree(as_tree(repo, tree))
    changes, _ = _plan(repo, index, hunks)
    for p, value in sorted(changes.items(), key=lambda kv: kv[1] is not None):
        if value is None:
            index.remove(p)
        else:
            index.add(pygit2.IndexEntry(p, pygit2.Oid(hex=value[0]), FileMode(value[1])))
    return str(index.write_tree(repo))


def _plan(repo: pygit2.Repository, index: pygit2.Index,
          hunks: list[Hunk]) -> tuple[dict[str, tuple[str, int] | None], list[Hunk]]:
    """What applying hunks to index changes, path by path (None: removed), every hunk checked."""
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

    # Everything checked: what changes, for the caller to write (worktree, then index).
    return {p: v for p, v in view.changes.items() if v != _entry(index, p)}, todo


def _entry(index: pygit2.Index, path: str) -> tuple[str, int] | None:
    try:
        e = index[path]
    except KeyError:
        return None
    return str(e.id), e.mode


def _commit_changes(repo: pygit2.Repository, index: pygit2.Index, workdir: Path,
                    changes: dict[str, tuple[str, int] | None], todo: list[Hunk]) -> None:
    """Write the planned entries to the worktree, then to the in-memory index; on any
    failure put both back as they were and raise ValueError naming the hunk and why."""
    rollback = Rollback(workdir)
    old = {p: index[p] for p in changes if p in index}
    path = ""
    try:
        for path, value in changes.items():
            if value is None:
                remove(rollback, path)
        for path, value in changes.items():
            if value is not None:
                write(repo, rollback, path, value)
        path = ""
        for p, value in sorted(changes.items(), key=lambda kv: kv[1] is not None):
            if value is None:
                index.remove(p)
            else:
                index.add(pygit2.IndexEntry(p, pygit2.Oid(hex=value[0]), FileMode(value[1])))
    except (OSError, ValueError, pygit2.GitError) as exc:
        for p in changes:
            if p in index:
                index.remove(p)
        for entry in old.values():
            index.add(entry)
        lost = rollback.roll_back()
        machine = machine_error(exc, str(workdir / path) if path else None)
        if machine is not None:
            raise machine from None   # a full disk: not the hunk's fault, nor the model's
        why = f"writing {path} failed: {exc.strerror}" if isinstance(exc, OSError) and exc.strerror else str(exc)
        if lost:
            why += f" (and {', '.join(lost[:5])} could not be put back: reset the worktree)"
        culprit = next((h for h in todo if path and path in (h.path, h.old_path)), None)
        if culprit is None:
            raise ValueError(f"applying failed: {why}") from None
        raise _fail(culprit, why) from None
