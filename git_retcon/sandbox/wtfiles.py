"""The build worktree's files as the model's tools reach them: every path confined to the
worktree (no `..`, nothing under .git, no symlink that leaves it), and every write staged as
`git add` would stage it, through git's filters. sandbox/worktree.Worktree is one of these.
"""
from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

import pygit2
from pygit2.enums import FileMode

from git_retcon.sandbox.filters import Filters


class PathRefused(Exception):
    """A path the model may not touch; the message goes back to the model."""


class WorktreeFiles:
    """path: the worktree's folder; repo, index: its repository and index (the tools keep the
    in-memory index ahead of the file, _unsaved, until save_index); filters: git's conversions;
    edited: whether the tools changed index and files since the last exact state."""

    path: Path
    repo: pygit2.Repository
    index: pygit2.Index
    filters: Filters
    edited: bool
    _unsaved: bool

    def save_index(self) -> None:
        """Write the index file once for all the tools' edits since the last write."""
        if self._unsaved:
            self.index.write()
            self._unsaved = False

    # -- what the model may touch ----------------------------------------

    def confine(self, rel: str) -> Path:
        """The real path for a model-supplied relative path, or PathRefused."""
        if not isinstance(rel, str) or not rel.strip():
            raise PathRefused("path is empty: give a path relative to the repository root")
        if "\0" in rel:
            raise PathRefused("path contains a NUL byte")
        pure = PurePosixPath(rel)
        if pure.is_absolute() or rel.startswith("\\") or (len(rel) > 1 and rel[1] == ":"):
            raise PathRefused(f"{rel}: absolute paths are refused: use a path relative to the repository root")
        parts = pure.parts
        if ".." in parts:
            raise PathRefused(f"{rel}: '..' is refused: paths stay inside the repository")
        if any(p.lower() == ".git" for p in parts):
            raise PathRefused(f"{rel}: paths under .git are refused")
        root = self.path.resolve()
        target = root.joinpath(*parts)
        # Every existing ancestor must resolve inside the root: no symlink leaves it.
        real_parent = target.parent.resolve()
        if real_parent != root and root not in real_parent.parents:
            raise PathRefused(f"{rel}: a symlink on this path leads outside the repository")
        if target.is_symlink():
            real = target.resolve()
            if real != root and root not in real.parents:
                raise PathRefused(f"{rel}: is a symlink that leads outside the repository")
        return target

    def rel(self, path: str) -> str:
        return str(PurePosixPath(*PurePosixPath(path).parts))

    def read(self, rel: str) -> bytes:
        target = self.confine(rel)
        if target.is_dir():
            raise PathRefused(f"{rel}: is a directory")
        if not target.exists():
            raise PathRefused(f"{rel}: no such file in the worktree")
        return target.read_bytes()

    def write(self, rel: str, data: bytes) -> None:
        target = self.confine(rel)
        if target.is_dir() and not target.is_symlink():
            raise PathRefused(f"{rel}: is a directory")
        key = self.rel(rel)
        entry = self.index[key] if key in self.index else None  # noqa: SIM401 - pygit2.Index has no .get()
        mode = entry.mode if entry is not None and entry.mode in (
            pygit2.GIT_FILEMODE_BLOB, pygit2.GIT_FILEMODE_BLOB_EXECUTABLE) else pygit2.GIT_FILEMODE_BLOB
        if target.is_symlink():
            target.unlink()
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        if mode == pygit2.GIT_FILEMODE_BLOB_EXECUTABLE:
            os.chmod(target, os.stat(target).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        self.edited = True
        # The blob `git add` would store: the file's bytes through git's clean filters.
        oid = pygit2.Oid(hex=self.filters.clean(key, data)) if self.filters.converts(key) else \
            self.repo.create_blob(data)
        self.index.add(pygit2.IndexEntry(key, oid, FileMode(mode)))
        self._unsaved = True

    def delete(self, rel: str) -> None:
        target = self.confine(rel)
        key = self.rel(rel)
        if key not in self.index:
            raise PathRefused(f"{rel}: not a tracked file")
        self.edited = True
        if target.is_symlink() or target.is_file():
            target.unlink()
        self.index.remove(key)
        self._unsaved = True
        _prune_empty_dirs(target.parent, self.path)

    def index_changed(self, paths: Iterable[str] = ()) -> None:
        """Files and index were changed by hand (hunk application, which writes blobs as
        files): the paths git converts are written again as a checkout writes them, and
        their blobs made again from those files as `git add` makes them. Hunks mix lines of
        two clean forms; a filter whose clean form depends on the whole file (a header that
        counts its lines, an encryption) would not store that mix."""
        self.edited = True
        self._unsaved = True
        filtered = [p for p in paths if self._is_file(p) and self.filters.converts(p)]
        if filtered:
            self.save_index()   # checkout-index reads the index file
            self.filters.smudge(filtered)
            self.filters.reclean(self.index, filtered)

    def _is_file(self, key: str) -> bool:
        return key in self.index and self.index[key].mode in (
            pygit2.GIT_FILEMODE_BLOB, pygit2.GIT_FILEMODE_BLOB_EXECUTABLE)


def _prune_empty_dirs(start: Path, root: Path) -> None:
    cur = start
    while cur != root and root in cur.parents:
        try:
            cur.rmdir()
        except OSError:
            return
        cur = cur.parent
