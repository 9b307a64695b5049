"""Writing the build worktree's files for apply, with a rollback that puts back every change.

apply changes the worktree first and the index last; when a write fails half way
(a directory in the way, a full disk, a permission), the rollback puts back what
each touched path held before, so a failed apply leaves no trace.
"""
from __future__ import annotations

import contextlib
import os
import stat as _stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pygit2

from git_retcon.diff.hunk import MODE_EXEC, MODE_GITLINK, MODE_LINK
from git_retcon.git.plumbing import get_blob


@dataclass(frozen=True)
class _Was:
    """What a path held before it was touched: a file (bytes, mode), a symlink, an empty directory, nothing."""

    kind: Literal["file", "link", "dir", "absent"]
    data: bytes = b""
    mode: int = 0
    link: str = ""


class Rollback:
    """The worktree paths an apply touched, with what they held before."""

    def __init__(self, workdir: Path):
        self.workdir = workdir
        self.was: dict[Path, _Was] = {}
        self.made: list[Path] = []  # directories that did not exist

    def save(self, path: Path) -> None:
        if path in self.was:
            return
        if path.is_symlink():
            self.was[path] = _Was("link", link=os.readlink(path))
        elif path.is_file():
            self.was[path] = _Was("file", path.read_bytes(), _stat.S_IMODE(os.stat(path).st_mode))
        elif path.is_dir():
            self.was[path] = _Was("dir")  # only empty directories are ever removed
        else:
            self.was[path] = _Was("absent")

    def mkdirs(self, path: Path) -> None:
        missing = []
        cur = path
        while cur != self.workdir and not cur.is_dir():
            missing.append(cur)
            cur = cur.parent
        for d in reversed(missing):
            d.mkdir()
            self.made.append(d)

    def roll_back(self) -> list[str]:
        """Put every touched path back; the paths that could not be restored."""
        failed: list[str] = []
        deepest_first = sorted(self.was, key=lambda p: len(p.parts), reverse=True)
        for path in deepest_first:
            with contextlib.suppress(OSError):
                if path.is_symlink() or path.is_file():
                    path.unlink()
                elif path.is_dir() and self.was[path].kind != "dir":
                    path.rmdir()
        for d in sorted(self.made, key=lambda p: len(p.parts), reverse=True):
            with contextlib.suppress(OSError):
                d.rmdir()
        for path in reversed(deepest_first):
            was = self.was[path]
            try:
                if was.kind == "dir":
                    path.mkdir(exist_ok=True)
                elif was.kind == "link":
                    os.symlink(was.link, path)
                elif was.kind == "file":
                    path.write_bytes(was.data)
                    os.chmod(path, was.mode)
            except OSError:
                failed.append(str(path.relative_to(self.workdir)))
        return failed


def safe_target(workdir: Path, path: str) -> Path:
    parts = path.split("/")
    if path.startswith("/") or any(p in ("", ".", "..") for p in parts) or parts[0] == ".git":
        raise ValueError(f"refusing to write outside the worktree: {path!r}")
    cur = workdir
    for p in parts[:-1]:
        cur = cur / p
        if cur.is_symlink():
            raise ValueError(f"refusing to write {path}: {cur.relative_to(workdir)} is a symlink")
    return workdir / path


def remove(rollback: Rollback, path: str) -> None:
    workdir = rollback.workdir
    target = safe_target(workdir, path)
    rollback.save(target)
    if target.is_symlink() or target.is_file():
        target.unlink()
    elif target.is_dir():
        with contextlib.suppress(OSError):
            target.rmdir()  # an empty gitlink directory
    parent = target.parent
    while parent != workdir and parent.is_dir() and not parent.is_symlink():
        if any(parent.iterdir()):
            break
        rollback.save(parent)
        try:
            parent.rmdir()
        except OSError:
            break
        parent = parent.parent


def write(repo: pygit2.Repository, rollback: Rollback, path: str, value: tuple[str, int]) -> None:
    oid, mode = value
    workdir = rollback.workdir
    target = safe_target(workdir, path)
    # A file left where a directory is needed (its deletion was applied to the index) goes.
    for anc in _ancestors(workdir, target):
        if anc.is_symlink() or anc.is_file():
            rollback.save(anc)
            anc.unlink()
            break
    rollback.mkdirs(target.parent)
    rollback.save(target)
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
