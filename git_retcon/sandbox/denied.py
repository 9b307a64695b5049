"""What the sandbox refused a failed command, read from its output: a write outside the writable
folders, a read of a hidden secret, a connection with the network off. Named in the run's output
and the failure brief, with the path or address, so that nobody chases a phantom bug, and the
fix loop stops with how to allow it instead of asking a model to fix it."""
from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from git_retcon.sandbox.output import cause

DenialKind = Literal["write", "read", "network"]

# An errno's words as tools print them: bubblewrap's read-only mounts give EROFS, Landlock EACCES,
# a hidden folder (an empty tmpfs under bubblewrap) ENOENT.
_WRITE_ERR = re.compile(r"Read-only file system|EROFS|Permission denied|EACCES|Operation not permitted|EPERM", re.I)
_READ_ERR = re.compile(r"No such file or directory|ENOENT|Permission denied|EACCES", re.I)
_PATH = re.compile(r"(?:^|[\s'\"‘`(=\[])((?:/|\.{1,2}/|\.git/)[^\s'\"’`,;:)\]]*)")
_NET_ERR = re.compile(
    r"Network is unreachable|ENETUNREACH|Connection refused|ECONNREFUSED|Couldn't connect to server|"
    r"Temporary failure in name resolution|Could not resolve host|Name or service not known|"
    r"getaddrinfo E(?:AI_AGAIN|NOTFOUND)|EAI_AGAIN|Failed to establish a new connection|"
    r"nodename nor servname|no such host|dial tcp", re.I)
# Landlock refuses connect() with EACCES and no path: a permission error on a socket line.
_NET_EACCES = re.compile(
    r"(?:PermissionError: \[Errno 13\] Permission denied\s*$|connect.*(?:EACCES|Permission denied))", re.I)
_ADDRESS = re.compile(r"(?:https?://)?((?:\d{1,3}\.){3}\d{1,3}|\[[0-9a-fA-F:]+\]|localhost|"
                      r"[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,})(?:(?::| port )(\d{1,5}))?")
_PAIR = re.compile(r"\(\s*\\?['\"]([\w.:-]+)\\?['\"]\s*,\s*(\d{1,5})\s*\)")   # Python's (host, port)
_RESOLVE = re.compile(r"(?:resolve host:?|host|address)\s+'?\"?([A-Za-z0-9.-]+\.[A-Za-z]{2,})")


# Lines that only echo that a command failed (yarn's, make's, a runner's): never a cause of their own.
_ECHO = re.compile(r"[Cc]ommand failed|exit(?:ed)? (?:with )?(?:code|status)|returned non-zero|"
                   r"[Ll]ifecycle script|\bELIFECYCLE\b|^\W*\d+ (?:failed|errors?)\b|short test summary|"
                   r"^\W*(?:FAILED|FAIL|ERROR)\W*$|Tests? failed|tests? did not pass", re.M)


@dataclass(frozen=True)
class Denial:
    kind: DenialKind
    what: str          # the path or address
    in_git: bool = False   # a file of a repository's git folder: never offered for `writable`

    def say(self) -> str:
        """One line for the output and the brief."""
        if self.kind == "write":
            return (f"the sandbox refused a write to {self.what}: commands write only to their worktree, "
                    "a private temp folder (TMPDIR) and the package caches")
        if self.kind == "read":
            return f"the sandbox hides {self.what}: secrets in the home folder are not readable by commands"
        return f"the sandbox has no network for this command: a connection to {self.what} was refused"

    def allow(self) -> str:
        """How the user allows it (the fix loop stops with this, as no code change mends it): the
        folder to add, never a file (`writable` takes folders), never the repository's git folder."""
        if self.kind == "write" and self.in_git:
            return ("the repository's git folder stays read-only to every command, so make the command not "
                    "write there (husky: HUSKY=0 in `setup`), or run with --sandbox off (git-retcon puts "
                    "your repository's config back after each command)")
        if self.kind == "write":
            folder = self.folder()
            tmp = " (or let it write under $TMPDIR, the private temp folder every command gets)" \
                if folder in ("/tmp", os.path.realpath(tempfile.gettempdir())) else ""
            return (f"if the command must write there, add the folder to `writable` in the spec "
                    f"(writable = [\"{folder}\"]){tmp}, or run with --sandbox off")
        if self.kind == "read":
            return "a secret stays hidden: run with --sandbox off if the command truly needs it"
        return "if it needs the network, set `network = true` in the spec (git retcon spec edit)"

    def folder(self) -> str:
        """The folder to make writable for a refused write: the path when it is a folder, else the
        one that holds it (a file the command creates names no folder of its own)."""
        return self.what if os.path.isdir(self.what) else os.path.dirname(self.what.rstrip("/")) or "/"

    def short(self) -> str:
        return {"write": f"sandbox refused a write to {self.what}", "read": f"sandbox hides {self.what}",
                "network": f"no network in the sandbox ({self.what})"}[self.kind]


def _under(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def find(output: str, cwd: Path, writable: tuple[str, ...], hidden: tuple[str, ...], network: bool,
         command: str = "") -> Denial | None:
    """The refusal of the sandbox that a failed command's output shows as its cause, if any (the
    address of a refused connection from the output, else from the command's own text). A refusal
    that the output goes on past, to fail for another reason (husky's harmless write to
    .git/config before a setup's real error), is not the cause: None, as for no refusal."""
    lines = output.splitlines()
    for at, line in enumerate(lines):
        for errors, kind in ((_READ_ERR, "read"), (_WRITE_ERR, "write")):
            raw = _path_of(line, errors)
            if raw is None:
                continue
            path = os.path.normpath(raw if raw.startswith("/") else os.path.join(cwd, raw))
            in_git = ".git" in Path(raw).parts   # the repository's own files: read-only from inside
            if kind == "read" and hidden and _under(path, hidden):
                found = Denial("read", path)
            elif kind == "write" and (in_git or not _under(path, writable)):
                found = Denial("write", path if not in_git or raw.startswith("/") else raw, in_git)
            else:
                continue
            if not _failed_after(lines[at + 1:], raw):
                return found
    if network:
        return None
    for line in output.splitlines():
        if _NET_ERR.search(line) or _NET_EACCES.search(line):
            return Denial("network", _address(line) or _address(output) or _address(command) or "the network")
    return None


def _failed_after(rest: list[str], raw: str) -> bool:
    """Whether the lines after a refusal state another error: one that names neither the refused
    path nor a refusal (a stack frame, an echo that the command failed, a warning name none)."""
    for line in rest:
        said = cause(line)
        if said is not None and raw not in line and not _WRITE_ERR.search(line) \
                and not _READ_ERR.search(line) and not _ECHO.search(line):
            return True
    return False


def _path_of(line: str, errors: re.Pattern[str]) -> str | None:
    """The path an error on line is about: the first after the errno's words (Python's, node's
    form), else the last before them (coreutils', git's, the shell's)."""
    err = errors.search(line)
    if err is None:
        return None
    paths = [(m.start(1), m.group(1).rstrip(".")) for m in _PATH.finditer(line)]
    paths = [(at, p) for at, p in paths if p not in ("", "/", "./", "../")]
    after = [p for at, p in paths if at > err.start()]
    before = [p for at, p in paths if at < err.start()]
    return after[0] if after else before[-1] if before else None


def _address(text: str) -> str | None:
    m = _RESOLVE.search(text) or _PAIR.search(text)
    if m:
        return m.group(1) if m.re is _RESOLVE else f"{m.group(1)}:{m.group(2)}"
    for m in _ADDRESS.finditer(text):
        host, port = m.group(1), m.group(2)
        if port or re.match(r"^(?:\d{1,3}\.){3}\d{1,3}$|^localhost$", host):
            return f"{host}:{port}" if port else host
    return None
