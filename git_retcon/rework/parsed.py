"""What a failing build or test said, as locations, names, modules and tests; its evidence, trimmed."""
from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

MAX_EVIDENCE_LINES = 40
MAX_EVIDENCE_CHARS = 3000
# Of an output no format recognised: its first lines, the lines around its first error, its last lines.
_HEAD, _BEFORE, _AFTER, _TAIL = 5, 3, 12, 15

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
# A line that says something failed, in any language (a warning is not one).
FIRST_ERROR = re.compile(r"\berror\b|\bERROR\b|\w+Error\b|\bFAIL(?:ED)?\b|\bnot ok\b|panicked|Traceback|"
                         r"undefined reference|cannot find|[Nn]o such file|not found|Cannot find|\bfailed\b|"
                         r"\bException\b|✘|✖|×")
# Paths that are never the project's, even inside the worktree: installed dependencies, build output.
_NOT_OURS = re.compile(r"(?:^|/)(?:node_modules|\.cargo/registry|site-packages|\.venv|vendor/bundle)/")


@dataclass(frozen=True)
class Location:
    path: str                 # relative to the worktree when it was printed inside it
    line: int | None = None
    col: int | None = None
    message: str = ""

    @property
    def key(self) -> str:
        return f"{self.path}:{self.line}" if self.line else self.path


@dataclass
class Parsed:
    """What a build or test output says, in a form blame and escalation can use."""

    locations: list[Location] = field(default_factory=list)
    names: list[str] = field(default_factory=list)      # identifiers reported missing
    modules: list[str] = field(default_factory=list)    # modules, headers, files reported missing
    packages: list[str] = field(default_factory=list)   # dependencies reported missing (crates, npm, go modules)
    tests: list[str] = field(default_factory=list)      # failing test ids (a subtest is its test)
    not_run: list[str] = field(default_factory=list)    # test modules or files that failed to load (none ran)
    failed: int | None = None   # failing cases as the runner's summary counts them (subtests each), when it says
    evidence: list[str] = field(default_factory=list)   # the lines that matter, in order
    tools: list[str] = field(default_factory=list)      # which formats were recognised
    cause: str = ""             # the first error's own words: the failure in one line
    interrupted: bool = False   # the tests did not all run (collection error, build failed)

    @property
    def located(self) -> bool:
        return bool(self.locations)


class Collector:
    """Accumulates findings while the parsers walk the lines; drops paths outside root."""

    def __init__(self, root: str | None):
        self.root = root.rstrip("/") + "/" if root else None
        self.out = Parsed()
        self.evidence_at: set[int] = set()
        self.seen: set[int] = set()             # lines a format read and set aside (a warning's block, JSON)
        self.shown: dict[int, list[str]] = {}   # what evidence shows for a line (a JSON message: its text)
        self._cause: tuple[int, str] | None = None

    def path(self, raw: str) -> str | None:
        p = raw.strip().strip("'\"")
        if p.startswith("file://"):
            p = p[len("file://"):]
        if p.startswith("/"):
            if self.root and p.startswith(self.root):
                p = p[len(self.root):]
            else:
                return None  # the standard library, a toolchain, a temp file: not the project's
        while p.startswith("./"):
            p = p[2:]
        if not p or _NOT_OURS.search(p) or p.startswith("node:"):
            return None
        return p

    def relative(self, spec: str, importer: str | None) -> str:
        """A module or file as it was asked for (`../colors.mjs`, an absolute path in the worktree),
        as a path from the worktree's root when it can be told, else as it was written."""
        s = spec.strip().strip("'\"")
        if s.startswith("file://"):
            s = s[len("file://"):]
        if s.startswith("/"):
            return self.path(s) or s
        src = self.path(importer) if importer else None
        if s.startswith(("./", "../")) and src is not None:
            joined = posixpath.normpath(posixpath.join(posixpath.dirname(src), s))
            if not joined.startswith("../"):
                return joined
        return s

    def location(self, tool: str, raw_path: str, line: str | int | None = None,
                 col: str | int | None = None, message: str = "") -> bool:
        """Record a location; False when it is outside root or already known."""
        p = self.path(raw_path)
        if p is None:
            return False
        loc = Location(p, int(line) if line else None, int(col) if col else None, self.unroot(message.strip())[:300])
        for i, old in enumerate(self.out.locations):
            if (old.path, old.line) == (loc.path, loc.line):
                if not old.message and loc.message:
                    self.out.locations[i] = loc
                return False
        self.out.locations.append(loc)
        self.tool(tool)
        return True

    def unroot(self, text: str) -> str:
        """text with the worktree's absolute paths written as the model knows them: relative."""
        if not self.root:
            return text
        return text.replace("file://" + self.root, "").replace(self.root, "")

    def cause(self, i: int, text: str) -> None:
        """The first error's words (by its line in the output), for the one-line summary."""
        if self._cause is None or i < self._cause[0]:
            self._cause = (i, self.unroot(text.strip()))

    def tool(self, name: str) -> None:
        if name not in self.out.tools:
            self.out.tools.append(name)

    def name(self, value: str) -> None:
        _add(self.out.names, value)

    def module(self, value: str) -> None:
        _add(self.out.modules, value)

    def missing_file(self, raw: str) -> bool:
        """A file the program could not open, as the module that adds it: by its path from the
        worktree's root (an absolute path inside it, or a relative one, as run from the root).
        False for one outside the worktree: not the project's."""
        p = self.relative(raw, None)
        if p.startswith("/") or not p:
            return False
        p = posixpath.normpath(p)
        if p.startswith("../") or _NOT_OURS.search(p):
            return False
        self.module(p)
        return True

    def package(self, value: str) -> None:
        _add(self.out.packages, value)

    def missing(self, text: str, names: Iterable[re.Pattern[str]], modules: Iterable[re.Pattern[str]] = ()) -> None:
        """The names (group `n`) and modules (group `m`) that text reports missing."""
        for rx in names:
            m = rx.search(text)
            if m:
                self.name(m["n"])
        for rx in modules:
            m = rx.search(text)
            if m:
                self.module(m["m"])

    def test(self, value: str) -> None:
        _add(self.out.tests, value)

    def not_run(self, value: str) -> None:
        """A test module or file that failed to load: it fails, and none of its tests ran."""
        _add(self.out.tests, value)
        _add(self.out.not_run, value)

    def failed(self, count: int) -> None:
        """The runner's own count of failing cases (its last summary wins)."""
        self.out.failed = count

    def keep(self, i: int, shown: list[str] | None = None) -> None:
        self.evidence_at.add(i)
        if shown is not None:
            self.shown[i] = shown

    def finish(self, lines: list[str]) -> Parsed:
        """The evidence in output order, paths under root relative; the cause."""
        out: list[str] = []
        for i in sorted(self.evidence_at):
            for line in self.shown.get(i, [lines[i]]):
                if line.strip():
                    out.append(self.unroot(line.rstrip()))
        self.out.evidence = out
        if self._cause is not None:
            self.out.cause = self._cause[1]
        return self.out


def _add(values: list[str], value: str) -> None:
    value = value.strip()
    if value and value not in values:
        values.append(value)


def first_error(lines: list[str]) -> int | None:
    """The index of the first line that says something failed (not a warning)."""
    for i, line in enumerate(lines):
        if FIRST_ERROR.search(line) and not re.match(r"\s*(?:warning|note|help)\b", line, re.I):
            return i
    return None


def _unrecognised(output: str) -> list[str]:
    """An output no format knew: its head, the lines around its first error, and its tail."""
    lines = [ANSI.sub("", line).rstrip() for line in output.splitlines() if line.strip()]
    if len(lines) <= _HEAD + _BEFORE + _AFTER + _TAIL:
        return lines
    at = first_error(lines)
    keep = set(range(_HEAD)) | set(range(len(lines) - _TAIL, len(lines)))
    if at is not None:
        keep |= set(range(max(at - _BEFORE, 0), min(at + _AFTER, len(lines))))
    out: list[str] = []
    prev = -1
    for i in sorted(keep):
        if i > prev + 1:
            out.append(f"[... {i - prev - 1} lines ...]")
        out.append(lines[i])
        prev = i
    return out


def evidence(parsed: Parsed, output: str) -> str:
    """The lines that matter, at most MAX_EVIDENCE_LINES / MAX_EVIDENCE_CHARS; of an output
    no format recognised, its head, the lines around its first error and its tail."""
    lines = parsed.evidence or _unrecognised(output)
    out: list[str] = []
    size = 0
    for line in lines:
        line = line if len(line) <= 240 else line[:239] + "…"
        if len(out) >= MAX_EVIDENCE_LINES or size + len(line) > MAX_EVIDENCE_CHARS:
            out.append(f"[... {len(lines) - len(out)} more lines: call run_build/run_tests for the whole output]")
            break
        out.append(line)
        size += len(line) + 1
    return "\n".join(out)
