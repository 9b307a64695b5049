"""git's filters in the build worktree: a file is what checkout writes, a blob what `git add`
stores (end of line, clean/smudge drivers, ident, working-tree-encoding), through git itself."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pygit2

from git_retcon.errors import RetconError
from git_retcon.git.plumbing import clean_env

# Attributes under which git converts a file's bytes on checkout and add.
_FILTER_ATTRS = ("filter", "text", "eol", "crlf", "ident", "working-tree-encoding")
# The user's hooks never run for git-retcon's own worktree.
_NO_HOOKS = ("-c", "core.hooksPath=/dev/null")


class Filters:
    """The conversions of one worktree (its repository handle and its directory)."""

    def __init__(self, repo: pygit2.Repository, path: Path):
        self.repo = repo
        self.path = path
        self._autocrlf: bool | None = None

    def converts(self, key: str) -> bool:
        """Whether git converts this path between blob and file: end of line (core.autocrlf,
        text, eol), a clean/smudge filter driver, ident, working-tree-encoding."""
        if self._autocrlf is None:
            try:
                value = str(self.repo.config["core.autocrlf"]).lower()
            except (KeyError, ValueError, pygit2.GitError):
                value = "false"
            self._autocrlf = value in ("true", "yes", "on", "1", "input")
        if self._autocrlf:
            return True
        # The path as bytes: a name that is not UTF-8 (surrogate-escaped, as git gives it) is one too.
        raw = os.fsencode(key)
        return any(self.repo.get_attr(raw, attr) not in (None, False) for attr in _FILTER_ATTRS)

    def clean(self, key: str, data: bytes) -> str:
        """The blob id `git add` gives data at path key (written to the object store)."""
        return _git_bytes(self.path, "hash-object", "-w", f"--path={key}", "--stdin", input=data).decode().strip()

    def reclean(self, index: pygit2.Index, keys: list[str]) -> None:
        """Each file's blob as `git add` makes it (one git process for all), in the index."""
        keys = [k for k in keys if "\n" not in k]   # --stdin-paths reads a path a line
        if not keys:
            return
        out = _git_bytes(self.path, "hash-object", "-w", "--stdin-paths",
                         input=b"".join(os.fsencode(k) + b"\n" for k in keys))
        for key, oid in zip(keys, out.decode().split(), strict=True):
            entry = index[key]
            if str(entry.id) != oid:
                index.add(pygit2.IndexEntry(key, pygit2.Oid(hex=oid), entry.mode))

    def smudge(self, keys: list[str]) -> None:
        """Write these entries of the index file as checkout does (one git process for all)."""
        _git_bytes(self.path, "checkout-index", "-f", "-z", "--stdin",
                   input=b"".join(os.fsencode(k) + b"\0" for k in keys))


def _git_bytes(cwd: Path, *args: str, input: bytes) -> bytes:
    """git with bytes in and out (file contents); a failure names the command and cause."""
    proc = subprocess.run(["git", *_NO_HOOKS, *args], cwd=cwd, env=clean_env(), input=input,
                          capture_output=True)
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", errors="replace").strip().splitlines()
        raise RetconError(f"git {args[0]} failed in {cwd}: {err[-1] if err else f'exit {proc.returncode}'}")
    return proc.stdout
