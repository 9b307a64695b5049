"""Commit messages as `git commit -m` leaves them (its cleanup mode "whitespace"), and the
two forms of a fix commit's message: `WIP: ...`, or git's autosquash `fixup! <subject>`."""
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


FIX_PREFIXES = ("WIP:", "fixup! ")


def is_fix(message: str) -> bool:
    """A fix commit, in either form: what check refuses to push and squash folds."""
    return message.startswith(FIX_PREFIXES)


def wip_message(message: str, fixup_of: str | None) -> str:
    """A fix commit's message from what the model wrote (or the failure's summary):
    `WIP: <it>`, or with fixup_of (the logical commit's subject) `fixup! <subject>` with
    it as the body, so `git rebase -i --autosquash` folds the fix into its commit."""
    if fixup_of is None:
        return message if message.startswith("WIP:") else "WIP: " + (message or "fix")
    head = f"fixup! {fixup_of}"
    if message.startswith(head):
        return message
    body = message.removeprefix("WIP:").removeprefix("fixup!").strip()
    return head + (f"\n\n{body}" if body else "")
