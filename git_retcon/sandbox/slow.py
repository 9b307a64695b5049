"""Why a confined command is slow, measured (`run -v`): what it left in its private temp folder,
and its time beside the same command's unconfined time on the same tree (ARCHITECTURE.md,
"Promises", 5).

A confined command gets a fresh, empty TMPDIR and sees the rest of HOME read-only, so a tool
that keeps a cache in either (tox's and virtualenv's app data, pip's build isolation) starts
cold every time: a tox run took 11.5 s under bubblewrap or Landlock against 4.1 s unconfined,
with no word why. What the command wrote to its TMPDIR is counted before the folder is removed
(runner._run); the comparison uses the tree's record of the command run with `--sandbox off`.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

# A walk of the temp folder stops here: a command that left more is "at least" this much, and
# the count costs a few tens of milliseconds at most.
MAX_ENTRIES = 20_000
# Confined at least this many times the unconfined time (issue 38's tox: 11.5 s against 4.1 s, 2.8
# times) and at least this much longer: a 0.1 s test taking 0.4 s is no news.
SLOWER = 2.5
MORE_SECONDS = 2.0
MUCH = 20_000_000       # bytes in TMPDIR worth a word without an unconfined time to compare
CAUSE = 1_000_000       # bytes in TMPDIR that can cost a cold start


@dataclass(frozen=True)
class Left:
    """What a command left in its private temp folder when it ended."""

    bytes: int
    files: int
    more: bool = False   # the walk stopped at MAX_ENTRIES: at least this much

    def say(self) -> str:
        """`85 MB (3,120 files)`."""
        files = f"{self.files:,} file" + ("" if self.files == 1 else "s")
        return f"{'at least ' if self.more else ''}{size(self.bytes)} ({files})"


def measure(folder: str) -> Left:
    """The bytes and regular files under folder, symlinks not followed, bounded by MAX_ENTRIES."""
    total = files = seen = 0
    stack = [folder]
    while stack:
        try:
            with os.scandir(stack.pop()) as it:
                for entry in it:
                    seen += 1
                    if seen > MAX_ENTRIES:
                        return Left(total, files, more=True)
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            stack.append(entry.path)
                        elif entry.is_file(follow_symlinks=False):
                            files += 1
                            total += entry.stat(follow_symlinks=False).st_size
                    except OSError:
                        continue   # gone meanwhile, or unreadable: not counted
        except OSError:
            continue
    return Left(total, files)


def size(n: int) -> str:
    """Bytes as people read them: `512 bytes`, `12 KB`, `3.4 MB`, `85 MB`, `1.2 GB` (decimal units)."""
    if n < 1000:
        return f"{n} byte" + ("" if n == 1 else "s")
    for unit, scale in (("KB", 1e3), ("MB", 1e6), ("GB", 1e9)):
        value = n / scale
        if value < 1000 or unit == "GB":
            return f"{value:.1f} {unit}" if value < 10 else f"{value:.0f} {unit}"
    raise AssertionError(n)   # the loop returns at GB


def explain(what: str, under: str, seconds: float, unconfined: float | None, left: Left | None,
            network: bool, name: str, advise: bool = True) -> str | None:
    """The -v line after a confined command (what: build, test or setup; under: its mechanism) that
    ran at least SLOWER times its unconfined time on the same tree, or, with no unconfined time to
    compare, that wrote MUCH to its private temp folder; None when neither holds. advise: whether
    the spec has commits for `check --rerun` to time (not at the base of a first run)."""
    if unconfined is not None:
        if seconds < SLOWER * unconfined or seconds - unconfined < MORE_SECONDS:
            return None
        head = f"{what} took {seconds:.1f} s under {under}, {unconfined:.1f} s unconfined on this tree: "
        return head + "; ".join(_causes(left, network, name))
    if left is None or left.bytes < MUCH:
        return None
    line = (f"{what} wrote {left.say()} to its private temp folder under {under} ({seconds:.1f} s), "
            f"{_COLD}")
    if advise and what != "setup":   # check --rerun runs setup only where the worktree needs it
        line += (f"; to time the build and test of each logical commit unconfined: "
                 f"git retcon check --rerun --sandbox off {name}")
    return line


_COLD = ("which starts empty for each command, so a tool that caches there (tox, virtualenv, pip's "
         "build isolation) starts cold")


def _causes(left: Left | None, network: bool, name: str) -> list[str]:
    """What the sandbox did differently that can cost the time, as measured: the temp folder's
    bytes, the network when it was off; else the read-only rest of HOME."""
    out = []
    if left is not None and left.bytes >= CAUSE:
        out.append(f"it wrote {left.say()} to its private temp folder, {_COLD}")
    if not network:
        out.append("network is off, so a tool that checks for updates or downloads waits for it")
    if out:
        return out
    wrote = left.say() if left is not None else "nothing measured"
    return [f"not its private temp folder (it wrote {wrote} there) nor the network (on): everything outside "
            "the worktree, the temp folder and the package caches is read-only, so a tool that keeps a cache "
            f"elsewhere (under HOME) starts cold; the spec's `writable` can add its folder "
            f"(git retcon spec edit {name})"]
