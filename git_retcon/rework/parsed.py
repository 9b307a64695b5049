"""What a failing build or test said, as locations, names, modules and tests; its evidence, trimmed."""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

MAX_EVIDENCE_LINES = 40
MAX_EVIDENCE_CHARS = 3000

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


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
    tests: list[str] = field(default_factory=list)      # failing test ids
    evidence: list[str] = field(default_factory=list)   # the lines that matter, in order
    tools: list[str] = field(default_factory=list)      # which formats were recognised
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

    def path(self, raw: str) -> str | None:
        p = raw.strip().strip("'\"")
        if p.startswith("/"):
            if self.root and p.startswith(self.root):
                return p[len(self.root):]
            return None  # the standard library, a toolchain, a temp file: not the project's
        while p.startswith("./"):
            p = p[2:]
        return p or None

    def location(self, tool: str, raw_path: str, line: str | int | None = None,
                  col: str | int | None = None, message: str = "") -> bool:
        """Record a location; False when it is outside root or already known."""
        p = self.path(raw_path)
        if p is None:
            return False
        loc = Location(p, int(line) if line else None, int(col) if col else None, message.strip()[:300])
        for i, old in enumerate(self.out.locations):
            if (old.path, old.line) == (loc.path, loc.line):
                if not old.message and loc.message:
                    self.out.locations[i] = loc
                return False
        self.out.locations.append(loc)
        self.tool(tool)
        return True

    def tool(self, name: str) -> None:
        if name not in self.out.tools:
            self.out.tools.append(name)

    def name(self, value: str) -> None:
        value = value.strip()
        if value and value not in self.out.names:
            self.out.names.append(value)

    def module(self, value: str) -> None:
        value = value.strip()
        if value and value not in self.out.modules:
            self.out.modules.append(value)

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
        value = value.strip()
        if value and value not in self.out.tests:
            self.out.tests.append(value)

    def keep(self, i: int) -> None:
        self.evidence_at.add(i)



def evidence(parsed: Parsed, output: str) -> str:
    """The lines that matter, at most MAX_EVIDENCE_LINES / MAX_EVIDENCE_CHARS; the
    output's tail when no format was recognised."""
    lines = parsed.evidence or [ANSI.sub("", line).rstrip() for line in output.splitlines() if line.strip()][-25:]
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
