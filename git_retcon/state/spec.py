"""The history spec: its logical commits and their history, as the code holds them
(specparse.py reads a spec file into these, spectoml.py writes one back).
"""
from __future__ import annotations

import copy
import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from git_retcon.errors import RetconError


class SpecError(RetconError):
    """The spec cannot be parsed, is invalid, or cannot be written."""


@dataclass(frozen=True)
class CommitCreated:
    sha: str


@dataclass(frozen=True)
class Squashed:
    """The commits recorded before this entry were replaced by this one commit, with
    the same final tree: their WIP commits folded in, or rebased onto a squashed parent."""

    sha: str


@dataclass(frozen=True)
class Absorbed:
    """The commits recorded before this entry were replaced by the ones recorded after it:
    `git retcon absorb` folded the source's later changes in (text says which), or re-made
    them on a logical commit below that did."""

    text: str


@dataclass(frozen=True)
class Stuck:
    summary: str


@dataclass(frozen=True)
class Resolved:
    text: str


@dataclass(frozen=True)
class Complete:
    pass


Entry = CommitCreated | Squashed | Absorbed | Stuck | Resolved | Complete

# A logical commit's state, and a spec's (status --json: a public contract).
State = Literal["pending", "in-progress", "stuck", "resolved", "complete"]

_STATE_OF: dict[type[Entry], State] = {CommitCreated: "in-progress", Squashed: "in-progress",
                                       Absorbed: "in-progress", Stuck: "stuck",
                                       Resolved: "resolved", Complete: "complete"}


@dataclass
class LogicalCommit:
    message: str
    hints: str = ""
    paths: list[str] = field(default_factory=list)
    history: list[Entry] = field(default_factory=list)
    # Hunk ids (content hashes, see diff/hunk.py) that `plan` assigned to this commit.
    hunks: list[str] = field(default_factory=list)

    @property
    def state(self) -> State:
        return _STATE_OF[type(self.history[-1])] if self.history else "pending"

    def stuck(self) -> Stuck | None:
        """The stuck entry this commit stopped on, if it is stuck."""
        last = self.history[-1] if self.history else None
        return last if isinstance(last, Stuck) else None

    def resolved(self) -> Resolved | None:
        """The human's resolution this commit resumes from, if that is its last entry."""
        last = self.history[-1] if self.history else None
        return last if isinstance(last, Resolved) else None

    @property
    def created(self) -> list[str]:
        """The commits on the cleaned branch for this logical commit, oldest first."""
        shas: list[str] = []
        for e in self.history:
            if isinstance(e, CommitCreated):
                shas.append(e.sha)
            elif isinstance(e, Squashed):
                shas = [e.sha]
            elif isinstance(e, Absorbed):
                shas = []
        return shas

    @property
    def summary(self) -> str:
        # Like git's subject: leading blank lines do not count.
        for line in self.message.split("\n"):
            if line.strip():
                return line.strip()
        return ""


# How fix commits are written: `WIP: <summary>`, or git's autosquash `fixup! <subject>`.
WipStyle = Literal["wip", "fixup"]
WIP_STYLES: tuple[WipStyle, ...] = ("wip", "fixup")

# How the spec's commands are confined (sandbox/confine.py): the strongest sandbox that works,
# refuse to run without one, or never.
SandboxMode = Literal["auto", "require", "off"]
SANDBOX_MODES: tuple[SandboxMode, ...] = ("auto", "require", "off")
# How `run` places hunks no `hunks` or `paths` assign: small questions to the model, answers saved
# in `hunks` before the first commit (owners/; the default), or the model choosing in each commit's
# conversation (for a strong model that should choose lines within hunks).
OwnersMode = Literal["questions", "conversation"]
OWNERS_MODES: tuple[OwnersMode, ...] = ("questions", "conversation")

# Seconds a command may run: past a week it is no timeout, and far past it, too large for
# the clocks that wait on it.
MAX_TIMEOUT = 7 * 24 * 3600


@dataclass
class Spec:
    source: str
    remote: str
    cleaned: str
    commits: list[LogicalCommit]
    setup: str | None = None        # installs dependencies in a build worktree (sandbox/setup.py)
    build: str | None = None
    test: str | None = None
    timeout: int | None = None
    model: str | None = None
    wip: WipStyle | None = None     # fix commits' form; None: "wip" (and not written out)
    # Whether commands reach the network: None (unset) setup only, True all, False none (setup neither).
    network: bool | None = None
    sandbox: SandboxMode | None = None   # None: --sandbox, else git config retcon.sandbox, else auto
    writable: list[str] = field(default_factory=list)   # folders commands may write besides the defaults
    owners: OwnersMode | None = None   # None: git config retcon.owners, else "questions" (not written out)

    def current(self) -> int | None:
        for i, c in enumerate(self.commits):
            if c.state != "complete":
                return i
        return None

    @property
    def state(self) -> State:
        states = [c.state for c in self.commits]
        if all(s == "complete" for s in states):
            return "complete"
        if "stuck" in states:
            return "stuck"
        if any(c.history for c in self.commits):
            return "in-progress"
        return "pending"

    def copy(self) -> Spec:
        return copy.deepcopy(self)


def number(k: int) -> int:
    """People's count of logical commit k (its 0-based index in the spec): in every message,
    prompt and note. The one conversion; `k` is always the index."""
    return k + 1


def paths_match(path: str, patterns: list[str]) -> bool:
    """Whether a commit's `paths` take path: fnmatch globs (`*` crosses directories); a plain name
    also matches what lies under it, and `.` (the repository's root) everything."""
    for raw in patterns:
        pat = _pattern(raw)
        if pat is None or _matches(path, pat):
            return True
    return False


def paths_match_any(paths: Iterable[str | None], patterns: list[str]) -> bool:
    """Whether a commit's `paths` take any of paths: a hunk's path and, for a rename, its old one."""
    return any(p is not None and paths_match(p, patterns) for p in paths)


def _pattern(raw: str) -> str | None:
    """A `paths` entry as it is matched (None: the whole tree)."""
    if raw.strip() in (".", "./"):
        return None
    return raw.strip().lstrip("./") if raw.startswith("./") else raw.strip()


def _matches(path: str, pat: str) -> bool:
    return fnmatch.fnmatchcase(path, pat) or path == pat.rstrip("/") or path.startswith(pat.rstrip("/") + "/")


def plain_name(raw: str) -> str | None:
    """The name a `paths` entry without a glob takes, itself and what lies under it: a path p is
    taken exactly when p == name or p starts with name + "/" (None: a glob, the whole tree, or
    nothing: those are tried with paths_match)."""
    pat = _pattern(raw)
    if pat is None or any(ch in pat for ch in "*?[") or not pat.rstrip("/"):
        return None
    return pat.rstrip("/")


class PathsIndex:
    """Which of many commits' `paths` take a path, as paths_match answers, without trying every
    commit's globs: a plain name is looked up with the path's folders (a run asks about each of
    hundreds of files for each of hundreds of commits)."""

    def __init__(self, lists: Iterable[tuple[int, list[str]]]):
        self._everything: set[int] = set()
        self._plain: dict[str, set[int]] = {}
        self._globs: list[tuple[int, str]] = []
        for j, patterns in lists:
            for raw in patterns:
                pat = _pattern(raw)
                if pat is None:
                    self._everything.add(j)
                elif (name := plain_name(raw)) is not None:
                    self._plain.setdefault(name, set()).add(j)
                else:
                    self._globs.append((j, pat))

    def which(self, path: str) -> set[int]:
        found = set(self._everything)
        found.update(*(self._plain.get(name, ()) for name in
                       (path, *(path[:i] for i, ch in enumerate(path) if ch == "/"))))
        found.update(j for j, pat in self._globs if j not in found and _matches(path, pat))
        return found
