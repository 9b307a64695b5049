"""Reading a history spec: the TOML file parsed and validated into state/spec.py's model.

Errors are one line naming file, line and field, because users edit this file by hand.
"""
from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Sequence
from datetime import date, datetime, time
from typing import Any, cast

import tomli

from git_retcon.errors import RetconError
from git_retcon.state.spec import (
    MAX_TIMEOUT,
    OWNERS_MODES,
    SANDBOX_MODES,
    WIP_STYLES,
    Absorbed,
    CommitCreated,
    Complete,
    Entry,
    LogicalCommit,
    OwnersMode,
    Resolved,
    SandboxMode,
    Spec,
    SpecError,
    Squashed,
    Stuck,
    WipStyle,
)
from git_retcon.state.tomlpos import Where

_TOP = ("source", "remote", "cleaned", "setup", "build", "test", "timeout", "model", "wip", "network", "sandbox",
        "writable", "owners", "commit")
_COMMIT = ("message", "hints", "paths", "hunks", "history")
_ENTRY = ("commit_created", "squashed", "absorbed", "stuck", "resolved")
_BRANCH_HELP = {
    "source": 'name the branch with the messy history, e.g. source = "feature-x"',
    "remote": 'name the upstream branch, e.g. remote = "origin/main"',
    "cleaned": 'name the branch to create, e.g. cleaned = "feature-x-clean"',
}
_ENTRY_HELP = ('use "complete", { commit_created = "<sha>" }, { squashed = "<sha>" }, { stuck = "..." } '
               ', { absorbed = "..." } or { resolved = "..." }')
_HEX = re.compile(r"[0-9a-fA-F]{4,40}")
# A hunk's id, or an atom's: the hunk's id and the numbers of its lines (`0123abcdef:1-2,5`).
_HUNK_ID = re.compile(r"[0-9a-fA-F]{10}(?::\d+(?:-\d+)?(?:,\d+(?:-\d+)?)*)?")
_BAD_BRANCH = re.compile(r"[\s\x00-\x1f\x7f]")


def _q(value: object) -> str:
    """A user value quoted on one line, cut short so the message stays one line."""
    r = repr(value)
    return r if len(r) <= 60 else r[:57] + "..."


def _type(value: object) -> str:
    for kind, name in (
        (bool, "a boolean"), (int, "an integer"), (float, "a float"), (str, "a string"),
        (list, "an array"), (dict, "a table"), (datetime, "a date-time"), (date, "a date"), (time, "a time"),
    ):
        if isinstance(value, kind):
            return name
    return type(value).__name__


def _unknown(name: str, allowed: tuple[str, ...], what: str = "field") -> str:
    close = difflib.get_close_matches(name, allowed, n=1)
    if close:
        return f"unknown {what} {_q(name)} (did you mean {_q(close[0])}?)"
    return f"unknown {what} {_q(name)}: remove it; allowed are {', '.join(allowed)}"


def example_glob(paths: Sequence[str]) -> str:
    """A `paths` glob like this repository's own files (the diff's, or the spec's): the folder and
    extension most of them share (`src/*.rs`), else a folder, else a neutral `src/`."""
    count: dict[str, int] = {}
    for p in paths:
        if not p or p.startswith("/") or ".." in p.split("/"):
            continue
        folder, _, name = p.rpartition("/")
        stem, dot, ext = name.rpartition(".")
        if "*" in p or "?" in p:
            glob = p
        elif dot and stem and ext.isalnum() and len(ext) <= 5:
            glob = f"{folder}/*.{ext}" if folder else f"*.{ext}"
        elif folder:
            glob = folder.split("/")[0] + "/"
        else:
            continue
        count[glob] = count.get(glob, 0) + 1
    return max(count, key=lambda g: (count[g], "/" in g, -len(g))) if count else "src/"


class _Parser:
    def __init__(self, text: str, filename: str, files: Callable[[str, str], Sequence[str]] | None = None) -> None:
        self.text, self.filename = text, filename
        self.files = files           # the files the diff from remote to source touches, for examples
        self.branches: tuple[str, str] | None = None
        self.raw_commits: object = None

    def example(self, raw_commits: object) -> str:
        """A glob for an error's example, in the repository's own terms: the diff's files when the
        caller can list them, else the spec's other paths."""
        if self.files is not None and self.branches is not None:
            try:
                touched = list(self.files(*self.branches))
            except RetconError:
                touched = []
            if touched:
                return example_glob(touched)
        lists = [c.get("paths") for c in raw_commits if isinstance(c, dict)] if isinstance(raw_commits, list) else []
        own = [p for ps in lists if isinstance(ps, list) for p in ps if isinstance(p, str)]
        return example_glob(own)

    def error(self, line: int, msg: str) -> SpecError:
        return SpecError(f"{self.filename} line {line}: {msg}".replace("\n", " "))

    def fail(self, msg: str, key: str | None = None, k: int | None = None, j: int | None = None) -> SpecError:
        """An error at a top-level key, commit k's key, or element j of commit k's array key."""
        # Only errors need positions, so valid specs skip the scan.
        w = Where(self.text)
        if k is None:
            line = w.at(key)
        elif j is None:
            line = w.commit(k, key)
        else:
            line = w.item(k, key or "", j)
        where = "" if k is None else f"commit {k + 1}: "
        where += "" if j is None else f"{key} entry {j + 1}: "
        return self.error(line, where + msg)

    def run(self) -> Spec:
        try:
            data = tomli.loads(self.text)
        except tomli.TOMLDecodeError as exc:
            line = getattr(exc, "lineno", None)
            if line is None:
                m = re.search(r"at line (\d+)", str(exc))
                line = int(m.group(1)) if m else 0
            last = max(1, len(self.text.splitlines()))
            # "At end of document" points past a final newline, at a line editors do not show.
            raise self.error(last if not line or line > last else line, f"TOML syntax error: {exc}") from None
        for key in data:
            if key not in _TOP:
                raise self.fail(_unknown(key, _TOP), key)
        source, remote, cleaned = (self.branch(data, name) for name in ("source", "remote", "cleaned"))
        self.branches = (source, remote)
        self.raw_commits = data.get("commit")
        for other, value in (("source", source), ("remote", remote)):
            if cleaned == value:
                raise self.fail(f"'cleaned' is the same branch as '{other}' ({_q(value)}): name a new branch",
                                "cleaned")
        setup, build, test, model = (self.optional_str(data, name) for name in ("setup", "build", "test", "model"))
        timeout = data.get("timeout")
        if timeout is not None and (type(timeout) is not int or not 0 < timeout <= MAX_TIMEOUT):
            got = _q(timeout) if type(timeout) is int else _type(timeout)
            raise self.fail(f"'timeout' must be a positive integer of seconds, at most {MAX_TIMEOUT} (a week), "
                            f"not {got}: e.g. timeout = 600", "timeout")
        wip = data.get("wip")
        if wip is not None and wip not in WIP_STYLES:
            raise self.fail(f"'wip' must be \"wip\" (fix commits as WIP: ...) or \"fixup\" (as fixup! <subject>, "
                            f"for git rebase -i --autosquash), not {_q(wip) if isinstance(wip, str) else _type(wip)}",
                            "wip")
        network = data.get("network")
        if network is not None and not isinstance(network, bool):
            raise self.fail(f"'network' must be true or false, not {_type(network)}: network = true lets build and "
                            "test reach the network; network = false keeps setup off it too", "network")
        sandbox = data.get("sandbox")
        if sandbox is not None and sandbox not in SANDBOX_MODES:
            raise self.fail(f"'sandbox' must be \"auto\", \"require\" or \"off\", not "
                            f"{_q(sandbox) if isinstance(sandbox, str) else _type(sandbox)}", "sandbox")
        writable = data.get("writable", [])
        if not isinstance(writable, list) or not all(isinstance(w, str) and w.startswith(("/", "~")) for w in writable):
            raise self.fail("'writable' must be an array of absolute folder paths (or from ~), e.g. "
                            "writable = [\"~/.cache/my-tool\"]", "writable")
        owners = data.get("owners")
        if owners is not None and owners not in OWNERS_MODES:
            raise self.fail("'owners' must be \"questions\" (hunks placed by small questions before the first commit) "
                            "or \"conversation\" (the model chooses in each commit's step), not "
                            f"{_q(owners) if isinstance(owners, str) else _type(owners)}", "owners")
        raw = data.get("commit")
        if raw is None or raw == []:
            raise self.fail("no [[commit]] entries: add at least one logical commit", "commit")
        if not isinstance(raw, list):
            raise self.fail(f"'commit' must be an array of tables, not {_type(raw)}: write each as [[commit]]",
                            "commit")
        commits = [self.commit(k, c) for k, c in enumerate(raw)]
        return Spec(source, remote, cleaned, commits, setup=setup, build=build, test=test, timeout=timeout, model=model,
                    wip=cast("WipStyle | None", wip), network=network, sandbox=cast("SandboxMode | None", sandbox),
                    writable=list(writable), owners=cast("OwnersMode | None", owners))

    def branch(self, data: dict[str, Any], name: str) -> str:
        value, help = data.get(name), _BRANCH_HELP[name]
        if value is None:
            raise self.fail(f"'{name}' is missing: {help}", name)
        if not isinstance(value, str):
            raise self.fail(f"'{name}' must be a string, not {_type(value)}: {help}", name)
        if not value:
            raise self.fail(f"'{name}' is empty: {help}", name)
        if _BAD_BRANCH.search(value):
            raise self.fail(f"'{name}' contains whitespace or control characters ({_q(value)}): {help}", name)
        return value

    def optional_str(self, data: dict[str, Any], name: str) -> str | None:
        value = data.get(name)
        if value is not None and (not isinstance(value, str) or not value):
            got = "empty" if value == "" else _type(value)
            raise self.fail(f"'{name}' must be a non-empty string, not {got}: give it a value or remove the line", name)
        return value

    def commit(self, k: int, raw: object) -> LogicalCommit:
        if not isinstance(raw, dict):
            raise self.fail(f"must be a table, not {_type(raw)}: write it as [[commit]] with message = \"...\"", k=k)
        for key in raw:
            if key not in _COMMIT:
                raise self.fail(_unknown(key, _COMMIT), key, k)
        message = raw.get("message")
        if message is None:
            raise self.fail("'message' is missing: add message = \"...\" under this [[commit]]", k=k)
        if not isinstance(message, str) or not message.strip():
            got = "empty" if message == "" else "blank" if isinstance(message, str) else _type(message)
            raise self.fail(f"'message' must be a non-empty string, not {got}: write the commit message", "message", k)
        if "\0" in message:
            raise self.fail("'message' contains a NUL character (\\u0000), which a git commit message cannot hold: "
                            "remove it", "message", k)
        hints = raw.get("hints", "")
        if not isinstance(hints, str):
            raise self.fail(f"'hints' must be a string, not {_type(hints)}: e.g. hints = \"\"\"...\"\"\"", "hints", k)
        return LogicalCommit(message, hints, self.paths(k, raw.get("paths", [])),
                             self.history(k, raw.get("history", [])), self.hunks(k, raw.get("hunks", [])))

    def hunks(self, k: int, raw: object) -> list[str]:
        if not isinstance(raw, list):
            raise self.fail(f"'hunks' must be an array of hunk ids, not {_type(raw)}: e.g. hunks = [\"0123abcdef\"]",
                            "hunks", k)
        for j, h in enumerate(raw):
            if not isinstance(h, str) or not _HUNK_ID.fullmatch(h):
                got = _q(h) if isinstance(h, str) else _type(h)
                raise self.fail(f"must be a hunk id of 10 hex digits (an atom: the id, ':' and its lines, "
                                f"0123abcdef:1-2), not {got}: copy the ids `git retcon plan` wrote",
                                "hunks", k, j)
        return [h.lower() for h in raw]

    def paths(self, k: int, raw: object) -> list[str]:
        if not isinstance(raw, list):
            raise self.fail(f"'paths' must be an array of strings, not {_type(raw)}: "
                            f"e.g. paths = [\"{self.example(self.raw_commits)}\"]", "paths", k)
        for j, p in enumerate(raw):
            if not isinstance(p, str) or not p:
                got = "empty" if p == "" else _type(p)
                raise self.fail(f"must be a non-empty string, not {got}: write a glob such as "
                                f"\"{self.example(self.raw_commits)}\"", "paths", k, j)
            # Git paths use '/' only; a drive letter is refused too, as it is surely a mistake.
            if p.startswith("/") or re.match(r"[A-Za-z]:[/\\]", p):
                raise self.fail(f"{_q(p)} is absolute: write it relative to the repository root", "paths", k, j)
            if ".." in p.split("/"):
                raise self.fail(f"{_q(p)} has a '..' component: write it relative to the repository root",
                                "paths", k, j)
        return list(raw)

    def history(self, k: int, raw: object) -> list[Entry]:
        if not isinstance(raw, list):
            raise self.fail(f"'history' must be an array, not {_type(raw)}: {_ENTRY_HELP}", "history", k)
        out: list[Entry] = []
        for j, e in enumerate(raw):
            if isinstance(e, str):
                if e != "complete":
                    hint = "did you mean 'complete'?" if difflib.get_close_matches(e, ["complete"]) else _ENTRY_HELP
                    raise self.fail(f"unknown entry {_q(e)}: {hint}", "history", k, j)
                if j != len(raw) - 1:
                    raise self.fail('"complete" must be the last entry: remove it or the entries after it',
                                    "history", k, j)
                out.append(Complete())
                continue
            if not isinstance(e, dict):
                raise self.fail(f"must be a string or an inline table, not {_type(e)}: {_ENTRY_HELP}", "history", k, j)
            for key in e:
                if key not in _ENTRY:
                    raise self.fail(_unknown(key, _ENTRY, "key"), "history", k, j)
            if len(e) != 1:
                raise self.fail(f"must have exactly one key, not {len(e)}: {_ENTRY_HELP}", "history", k, j)
            ((key, value),) = e.items()
            if not isinstance(value, str):
                raise self.fail(f"'{key}' must be a string, not {_type(value)}: {_ENTRY_HELP}", "history", k, j)
            if key in ("commit_created", "squashed"):
                if not _HEX.fullmatch(value):
                    msg = f"'{key}' is not a commit sha ({_q(value)}): write 4 to 40 hex digits"
                    raise self.fail(msg, "history", k, j)
                out.append(CommitCreated(value.lower()) if key == "commit_created" else Squashed(value.lower()))
            else:
                out.append(Stuck(value) if key == "stuck" else
                           Absorbed(value) if key == "absorbed" else Resolved(value))
        return out


def parse(text: str, filename: str = "spec.toml", files: Callable[[str, str], Sequence[str]] | None = None) -> Spec:
    """Parse and validate a spec; raises SpecError with file, line and field. files(source, remote):
    the paths the branch changes, so that an error's example looks like the repository's files."""
    return _Parser(text.removeprefix("\ufeff"), filename, files).run()
