"""The user's repository config is never changed by a command git-retcon runs (issue 38).

A linked worktree shares its repository's config: `git config core.hooksPath .husky` in a setup
(husky's `prepare`) writes the user's own `.git/config`, and their next `git commit` runs hooks
from a folder their checkout may not have. The sandbox makes that file read-only; unconfined
(`--sandbox off`, or no mechanism), the config files are read before each command and put back,
byte for byte, when it changed them: what changed is said, never kept.
"""
from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pygit2


@dataclass
class Kept:
    """What a command changed in the repository's config and was put back (empty: nothing)."""

    changed: list[str] = field(default_factory=list)   # "core.hooksPath=.husky", "-user.name" (removed)

    def say(self) -> str:
        return (f"it changed your repository's config ({', '.join(self.changed[:4])}"
                f"{' ...' if len(self.changed) > 4 else ''}): put back as it was") if self.changed else ""


def config_files(cwd: Path) -> list[Path]:
    """The config files a git command run in cwd may write: the repository's own, and a worktree's."""
    try:
        gitdir = pygit2.discover_repository(str(cwd))
    except pygit2.GitError:
        return []
    if gitdir is None:
        return []
    own = Path(gitdir)
    common = own
    with contextlib.suppress(OSError):
        common = (own / (own / "commondir").read_text().strip()).resolve()
    return list(dict.fromkeys([common / "config", common / "config.worktree", own / "config.worktree"]))


@contextlib.contextmanager
def kept(cwd: Path) -> Iterator[Kept]:
    """Around one command: the config files as they were, put back after it when it changed them."""
    out = Kept()
    before = {p: _read(p) for p in config_files(cwd)}
    try:
        yield out
    finally:
        for path, was in before.items():
            now = _read(path)
            if now == was:
                continue
            out.changed += _keys_changed(path, was, now)
            _put_back(path, was)


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _put_back(path: Path, was: bytes | None) -> None:
    if was is None:
        path.unlink(missing_ok=True)
        return
    tmp = path.with_name(f".{path.name}.retcon-{os.getpid()}")
    tmp.write_bytes(was)
    tmp.replace(path)


def _entries(path: Path, content: bytes | None) -> dict[str, str]:
    if content is None:
        return {}
    with tempfile.TemporaryDirectory(prefix="git-retcon-config-") as tmp:
        copy = Path(tmp) / path.name
        try:
            copy.write_bytes(content)
            return {e.name: e.value or "" for e in pygit2.Config(str(copy))}
        except (pygit2.GitError, OSError, ValueError):
            return {}


def _keys_changed(path: Path, was: bytes | None, now: bytes | None) -> list[str]:
    old, new = _entries(path, was), _entries(path, now)
    keys = sorted(set(old) | set(new), key=str.lower)
    changed = [f"{k}={new[k]}" if k in new else f"-{k}" for k in keys if old.get(k) != new.get(k)]
    return changed or [f"{path.name} rewritten"]
