"""Commit messages as `git commit -m` leaves them (its cleanup mode "whitespace")."""
from __future__ import annotations

from git_retcon.errors import RetconError


def cleanup(message: str) -> str:
    """Trailing whitespace (a CR too) cut from every line, runs of blank lines made one,
    blank lines at either end dropped, one final newline; empty when nothing is left.
    A NUL is refused: libgit2 would cut the message there, and git refuses it."""
    if "\0" in message:
        raise RetconError("a commit message cannot hold a NUL character: remove it from the message")
    out: list[str] = []
    for line in message.split("\n"):
        line = line.rstrip()
        if line or (out and out[-1]):
            out.append(line)
    while out and not out[-1]:
        out.pop()
    return "\n".join(out) + "\n" if out else ""
