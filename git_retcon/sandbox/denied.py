"""What the sandbox refused a failed command, read from its output: a write outside the writable
folders, a read of a hidden secret, a connection with the network off. Named in the run's output
and the failure brief, with the path or address, so that nobody chases a phantom bug, and the
fix loop stops with how to allow it instead of asking a model to fix it."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

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


@dataclass(frozen=True)
class Denial:
    kind: DenialKind
    what: str          # the path or address

    def say(self) -> str:
        """One line for the output and the brief."""
        if self.kind == "write":
            return (f"the sandbox refused a write to {self.what}: commands write only to their worktree, "
                    "a private temp folder (TMPDIR) and the package caches")
        if self.kind == "read":
            return f"the sandbox hides {self.what}: secrets in the home folder are not readable by commands"
        return f"the sandbox has no network for this command: a connection to {self.what} was refused"

    def allow(self) -> str:
        """How the user allows it (the fix loop stops with this, as no code change mends it)."""
        if self.kind == "write":
            return (f"if the command must write there, add its folder to `writable` in the spec "
                    f"(writable = [\"{self.what}\"]), or run with --sandbox off")
        if self.kind == "read":
            return "a secret stays hidden: run with --sandbox off if the command truly needs it"
        return "if it needs the network, set `network = true` in the spec (git retcon spec edit)"

    def short(self) -> str:
        return {"write": f"sandbox refused a write to {self.what}", "read": f"sandbox hides {self.what}",
                "network": f"no network in the sandbox ({self.what})"}[self.kind]


def _under(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def find(output: str, cwd: Path, writable: tuple[str, ...], hidden: tuple[str, ...], network: bool,
         command: str = "") -> Denial | None:
    """The first refusal of the sandbox that a failed command's output shows, if any (the address of
    a refused connection from the output, else from the command's own text)."""
    for line in output.splitlines():
        for errors, kind in ((_READ_ERR, "read"), (_WRITE_ERR, "write")):
            raw = _path_of(line, errors)
            if raw is None:
                continue
            path = os.path.normpath(raw if raw.startswith("/") else os.path.join(cwd, raw))
            if kind == "read" and hidden and _under(path, hidden):
                return Denial("read", path)
            in_git = ".git" in Path(raw).parts   # the repository's own files: read-only from inside
            if kind == "write" and (in_git or not _under(path, writable)):
                return Denial("write", path if not in_git or raw.startswith("/") else raw)
    if network:
        return None
    for line in output.splitlines():
        if _NET_ERR.search(line) or _NET_EACCES.search(line):
            return Denial("network", _address(line) or _address(output) or _address(command) or "the network")
    return None


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
