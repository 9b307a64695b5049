"""Helpers of the sandbox tests: which mechanisms work here, a listener outside any sandbox, and
the processes a command left running."""
from __future__ import annotations

import os
import socket
import threading
from pathlib import Path

import pytest

from git_retcon.sandbox.probe import probe

WORKS, WHY = probe()
# Each mechanism's tests, skipped only where it does not work on this machine.
MECHANISMS = [pytest.param(m, marks=pytest.mark.skipif(m not in WORKS, reason=f"{m} does not work here: {WHY}"))
              for m in ("bubblewrap", "landlock")]


class Listener:
    """A TCP server on the loopback address, outside any sandbox: what it was sent."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(5)
        self.port = self.sock.getsockname()[1]
        self.got: list[bytes] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                self.got.append(conn.recv(100))


def sleepers(tag: str) -> list[int]:
    """Live `sleep TAG` processes (a unique TAG per test)."""
    found = []
    for pid in os.listdir("/proc"):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if cmd[:2] == [b"sleep", tag.encode()] and state not in ("Z", "X"):
            found.append(int(pid))
    return found


def worktrees(repo_path: Path) -> Path:
    """Where the repository's build worktrees live (the user's cache folder, sandbox/admin.py)."""
    import pygit2

    from git_retcon.sandbox.admin import worktrees_root

    return worktrees_root(pygit2.Repository(str(repo_path)))


def shown(path: Path) -> str:
    """A path under HOME as git-retcon's messages show it (~/...)."""
    return "~/" + str(path.resolve().relative_to(Path(os.environ["HOME"]).resolve()))
