"""Where a failure comes from, said by plain code before a model is asked.

parse() reads build and test output (pytest, unittest, Python tracebacks, mypy,
ruff, gcc/clang and ld, rustc/cargo, tsc, go, and any `path:line[:col]`) into
failing locations, missing names and modules, and failing test ids. blame()
intersects them with the files this logical commit changed and with the
remaining diff: hunks that define a missing name, add a missing module, or
touch a failing file are the candidates. brief() renders the rework brief the
fix prompt carries. Escalation holds the deterministic rules that stop a fix
loop as stuck whatever the model says.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

import pygit2

from git_retcon.diff import hunks
from git_retcon.diff.hunks import Hunk
from git_retcon.git.plumbing import get_tree

PERSISTENT_ATTEMPTS = 3      # rework attempts on one location before it is a trouble spot
MAX_EVIDENCE_LINES = 40
MAX_EVIDENCE_CHARS = 3000
MAX_CANDIDATES = 15

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_Q = "['\"`‘’]"     # quotes tools put around names: ASCII, backticks, and gcc's Unicode ones
_NAME = r"[A-Za-z_$][\w$]*"


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


class _Collector:
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

    def test(self, value: str) -> None:
        value = value.strip()
        if value and value not in self.out.tests:
            self.out.tests.append(value)

    def keep(self, i: int) -> None:
        self.evidence_at.add(i)


# -- the formats ---------------------------------------------------------------

_PY_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+)')
_PY_EXC = re.compile(r"^(?:E\s+)?(?P<exc>(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Exit|Failure))"
                     r"(?::\s*(?P<msg>.*))?$")
_PY_MISSING_NAME = [
    re.compile(r"NameError: name '(?P<n>\w+)' is not defined"),
    re.compile(r"ImportError: cannot import name '(?P<n>\w+)' from"),
    re.compile(r"AttributeError: (?:module|type object|'[\w.]+' object) '?[\w.]*'? ?has no attribute '(?P<n>\w+)'"),
]
_PY_MISSING_MODULE = re.compile(r"ModuleNotFoundError: No module named '(?P<m>[\w.]+)'")
_PYTEST_LOC = re.compile(r"^(?P<path>[^\s:][^:]*\.py):(?P<line>\d+): ?(?P<msg>(?:in \S+|\w+)?)\s*$")
_PYTEST_SUMMARY = re.compile(r"^(?P<kind>FAILED|ERROR) (?P<id>\S+)(?: - (?P<msg>.*))?$")
_PYTEST_INTERRUPTED = re.compile(r"^!+ Interrupted: \d+ errors? during collection")
_UNITTEST = re.compile(r"^(?P<kind>FAIL|ERROR): (?P<test>\w+) \((?P<where>[\w.]+)\)")


def _python(lines: list[str], c: _Collector) -> None:
    frames: list[tuple[int, str, str]] = []
    for i, line in enumerate(lines):
        m = _PY_FRAME.match(line)
        if m:
            frames.append((i, m["path"], m["line"]))
            continue
        m = _PYTEST_LOC.match(line)
        if m:
            # pytest's long traceback: `path:line: ExcName` closes an `E ...` block.
            msg = _last_e_line(lines, i) if m["msg"] and not m["msg"].startswith("in ") else m["msg"]
            c.location("pytest", m["path"], m["line"], None, msg)
            c.keep(i)
            continue
        m = _PYTEST_SUMMARY.match(line)
        if m:
            c.test(m["id"])
            path = m["id"].split("::")[0]
            # The summary names the test file; a traceback above it says more, when there is one.
            if path.endswith(".py") and not any(ln.path == c.path(path) for ln in c.out.locations):
                c.location("pytest", path, None, None, m["msg"] or m["kind"])
            c.keep(i)
            continue
        if _PYTEST_INTERRUPTED.match(line):
            c.out.interrupted = True
            c.keep(i)
            continue
        m = _UNITTEST.match(line)
        if m:
            c.test(f"{m['where']}" if m["where"].endswith("." + m["test"]) else f"{m['where']}.{m['test']}")
            c.tool("unittest")
            c.keep(i)
            continue
        if line.startswith((">   ", ">\t", "E  ")):
            c.keep(i)  # pytest's failing source line and its error text
        m = _PY_EXC.match(line.strip())
        if m:
            _py_missing(line, c)
            if frames:
                # The deepest frame inside the project is where it failed.
                for _, path, ln in reversed(frames):
                    if c.path(path) is not None:
                        c.location("python", path, ln, None, line.strip())
                        break
                for fi, _, _ in frames[-3:]:
                    c.keep(fi)
                    if fi + 1 < len(lines):
                        c.keep(fi + 1)
                frames = []
            c.keep(i)
        elif "Error: " in line:
            _py_missing(line, c)


def _py_missing(line: str, c: _Collector) -> None:
    for rx in _PY_MISSING_NAME:
        m = rx.search(line)
        if m:
            c.name(m["n"])
    m = _PY_MISSING_MODULE.search(line)
    if m:
        c.module(m["m"])


def _last_e_line(lines: list[str], i: int) -> str:
    """The error an `E ...` block above pytest's location line starts with."""
    j = i - 1
    while j >= 0 and not lines[j].startswith("E "):
        if lines[j].startswith(("_" * 10, "=" * 10)):
            return ""
        j -= 1
    while j > 0 and lines[j - 1].startswith("E "):
        j -= 1
    return lines[j][1:].strip() if j >= 0 else ""


_MYPY = re.compile(r"^(?P<path>[^\s:][^:]*\.pyi?):(?P<line>\d+)(?::(?P<col>\d+))?: "
                   r"error: (?P<msg>.*?)(?:\s+\[[\w-]+\])?$")
_MYPY_NAMES = [
    re.compile(r'Name "(?P<n>\w+)" is not defined'),
    re.compile(r'Module "[\w.]+" has no attribute "(?P<n>\w+)"'),
    re.compile(r'Module "[\w.]+" does not explicitly export attribute "(?P<n>\w+)"'),
    re.compile(r'"[\w.\[\], ]+" has no attribute "(?P<n>\w+)"'),
]
_MYPY_MODULE = re.compile(r'Cannot find implementation or library stub for module named "(?P<m>[\w.]+)"')


def _mypy(lines: list[str], c: _Collector) -> None:
    for i, line in enumerate(lines):
        m = _MYPY.match(line)
        if not m:
            continue
        c.location("mypy", m["path"], m["line"], m["col"], m["msg"])
        c.keep(i)
        for rx in _MYPY_NAMES:
            n = rx.search(m["msg"])
            if n:
                c.name(n["n"])
        mod = _MYPY_MODULE.search(m["msg"])
        if mod:
            c.module(mod["m"])


_RUFF_CONCISE = re.compile(r"^(?P<path>[^\s:][^:]*):(?P<line>\d+):(?P<col>\d+): "
                           r"(?P<code>[A-Z]+\d+) (?:\[\*\] )?(?P<msg>.*)$")
_RUFF_HEAD = re.compile(r"^(?P<code>[A-Z]{1,4}\d{2,4}) (?:\[\*\] )?(?P<msg>.+)$")
_ARROW = re.compile(r"^\s*--> (?P<path>[^\s:][^:]*):(?P<line>\d+):(?P<col>\d+)\s*$")
_RUFF_NAME = re.compile(r"Undefined name `(?P<n>\w+)`")


def _ruff(lines: list[str], c: _Collector) -> None:
    for i, line in enumerate(lines):
        m = _RUFF_CONCISE.match(line)
        head = _RUFF_HEAD.match(line) if not m else None
        arrow = _ARROW.match(lines[i + 1]) if head and i + 1 < len(lines) else None
        if m:
            c.location("ruff", m["path"], m["line"], m["col"], f"{m['code']} {m['msg']}")
            msg = m["msg"]
        elif head and arrow:
            c.location("ruff", arrow["path"], arrow["line"], arrow["col"], f"{head['code']} {head['msg']}")
            c.keep(i + 1)
            msg = head["msg"]
        else:
            continue
        c.keep(i)
        n = _RUFF_NAME.search(msg)
        if n:
            c.name(n["n"])


_C_EXT = r"(?:c|h|cc|cpp|cxx|c\+\+|hpp|hh|hxx|m|mm|ipp|inl)"
_C_DIAG = re.compile(rf"^(?P<path>[^\s:][^:]*\.{_C_EXT}):(?P<line>\d+):(?:(?P<col>\d+):)? "
                     r"(?P<sev>fatal error|error|warning): (?P<msg>.*)$")
_C_NAMES = [
    re.compile(rf"implicit declaration of function {_Q}(?P<n>{_NAME}){_Q}"),
    re.compile(rf"^{_Q}(?P<n>{_NAME}){_Q} undeclared"),
    re.compile(rf"unknown type name {_Q}(?P<n>{_NAME}){_Q}"),
    re.compile(rf"use of undeclared identifier {_Q}(?P<n>{_NAME}){_Q}"),
    re.compile(rf"call to undeclared function {_Q}(?P<n>{_NAME}){_Q}"),
    re.compile(rf"no member named {_Q}(?P<n>{_NAME}){_Q}"),
    re.compile(rf"has no member named {_Q}(?P<n>{_NAME}){_Q}"),
]
_C_HEADER = [re.compile(r"^(?P<m>[^\s:]+): No such file or directory"),
             re.compile(rf"^{_Q}(?P<m>[^'\"]+){_Q} file not found")]
_LD_UNDEF = [re.compile(rf"undefined reference to {_Q}(?P<n>{_NAME}){_Q}"),
             re.compile(r"undefined symbol: (?P<n>[A-Za-z_]\w*)"),
             re.compile(r'^\s*"_(?P<n>\w+)", referenced from:')]
_LD_WHERE = re.compile(rf"^(?P<path>[^\s:(]+\.{_C_EXT}):\(")


def _c(lines: list[str], c: _Collector) -> None:
    for i, line in enumerate(lines):
        m = _C_DIAG.match(line)
        if m:
            names = [rx.search(m["msg"]) for rx in _C_NAMES]
            headers = [rx.search(m["msg"]) for rx in _C_HEADER]
            missing = [n["n"] for n in names if n] + [h["m"] for h in headers if h]
            # Warnings count only when they name something missing (the cause of a link error).
            if m["sev"] == "warning" and not missing:
                continue
            c.location("gcc", m["path"], m["line"], m["col"], f"{m['sev']}: {m['msg']}")
            c.keep(i)
            for n in names:
                if n:
                    c.name(n["n"])
            for h in headers:
                if h:
                    c.module(h["m"])
            continue
        for rx in _LD_UNDEF:
            n = rx.search(line)
            if n:
                c.name(n["n"])
                c.tool("ld")
                c.keep(i)
                w = _LD_WHERE.match(line)
                if w:
                    c.location("ld", w["path"], None, None, line.strip())
                break


_RUST_HEAD = re.compile(r"^(?P<sev>error|warning)(?:\[(?P<code>E\d+)\])?: (?P<msg>.*)$")
_RUST_NAMES = [
    re.compile(r"cannot find (?:function|value|type|struct|enum|macro|trait|crate|module|attribute macro|derive macro|"
               r"tuple struct or tuple variant|struct, variant or union type|unit struct, unit variant or constant) "
               r"`(?P<n>\w+)`"),
    re.compile(r"unresolved import `(?:[\w:]+::)?(?P<n>\w+)`"),
    re.compile(r"use of undeclared (?:type|crate or module|type or module|crate|module) `(?P<n>\w+)`"),
    re.compile(r"no (?:function or associated item|method|associated item|field) named `(?P<n>\w+)`"),
    re.compile(r"^\s*\|\s*\^+ no `(?P<n>\w+)` in `"),
]
_RUST_MODULE = re.compile(r"file not found for module `(?P<m>\w+)`")
_RUST_PANIC = re.compile(r"panicked at (?:'.*', )?(?P<path>[^\s:']+\.rs):(?P<line>\d+):(?P<col>\d+)")
_CARGO_TEST = [re.compile(r"^(?P<id>[\w:]+) --- FAILED$"), re.compile(r"^test (?P<id>\S+) \.\.\. FAILED$")]
_CARGO_NOT_BUILT = re.compile(r"^error: could not compile `")


def _rust(lines: list[str], c: _Collector) -> None:
    head: tuple[int, re.Match[str]] | None = None
    for i, line in enumerate(lines):
        m = _RUST_HEAD.match(line)
        if m:
            head = (i, m) if m["sev"] == "error" else None
            if _CARGO_NOT_BUILT.match(line):
                c.out.interrupted = True
                c.keep(i)
            if head:
                _rust_missing(m["msg"], c)
            continue
        if head is not None:
            a = _ARROW.match(line)
            if a and a["path"].endswith(".rs"):
                hi, hm = head
                code = f"[{hm['code']}]" if hm["code"] else ""
                c.location("rustc", a["path"], a["line"], a["col"], f"error{code}: {hm['msg']}")
                c.keep(hi)
                c.keep(i)
                head = None
                continue
            if line.strip().startswith("|"):
                _rust_missing(line, c)
        p = _RUST_PANIC.search(line)
        if p:
            c.location("cargo", p["path"], p["line"], p["col"], "panicked")
            c.keep(i)
            for j in (i + 1, i + 2, i + 3):
                if j < len(lines) and lines[j].strip() and not lines[j].startswith("note:"):
                    c.keep(j)
            continue
        for rx in _CARGO_TEST:
            t = rx.match(line)
            if t:
                c.test(t["id"])
                c.tool("cargo")
                c.keep(i)


def _rust_missing(text: str, c: _Collector) -> None:
    for rx in _RUST_NAMES:
        n = rx.search(text)
        if n:
            c.name(n["n"])
    m = _RUST_MODULE.search(text)
    if m:
        c.module(m["m"])


_TSC = [re.compile(r"^(?P<path>[^\s(]+\.[cm]?[jt]sx?)\((?P<line>\d+),(?P<col>\d+)\): "
                   r"error (?P<code>TS\d+): (?P<msg>.*)$"),
        re.compile(r"^(?P<path>[^\s:]+\.[cm]?[jt]sx?):(?P<line>\d+):(?P<col>\d+) - "
                   r"error (?P<code>TS\d+): (?P<msg>.*)$")]
_TSC_NAMES = [
    re.compile(r"Cannot find name '(?P<n>[\w$]+)'"),
    re.compile(r"has no exported member(?: named)? '(?P<n>[\w$]+)'"),
    re.compile(r"Property '(?P<n>[\w$]+)' does not exist on type"),
    re.compile(r"Module '[^']+' declares '(?P<n>[\w$]+)' locally, but it is not exported"),
]
_TSC_MODULE = re.compile(r"Cannot find module '(?P<m>[^']+)'")


def _tsc(lines: list[str], c: _Collector) -> None:
    for i, line in enumerate(lines):
        for rx in _TSC:
            m = rx.match(line)
            if m:
                c.location("tsc", m["path"], m["line"], m["col"], f"{m['code']}: {m['msg']}")
                c.keep(i)
                for n in _TSC_NAMES:
                    hit = n.search(m["msg"])
                    if hit:
                        c.name(hit["n"])
                mod = _TSC_MODULE.search(m["msg"])
                if mod:
                    c.module(mod["m"])
                break


_GO_DIAG = re.compile(r"^(?P<path>[^\s:][^:]*\.go):(?P<line>\d+):(?P<col>\d+): (?P<msg>.*)$")
_GO_TEST_LINE = re.compile(r"^\s+(?P<path>[\w./-]+\.go):(?P<line>\d+): (?P<msg>.*)$")
_GO_FAIL = re.compile(r"^\s*--- FAIL: (?P<id>\S+)")
_GO_NAMES = [re.compile(r"undefined: (?:\w+\.)?(?P<n>\w+)"),
             re.compile(r"\w+\.(?P<n>\w+) undefined \(type"),
             re.compile(r"has no field or method (?P<n>\w+)")]
_GO_MODULE = [re.compile(r"no required module provides package (?P<m>\S+?);?$"),
              re.compile(r'cannot find package "(?P<m>[^"]+)"'),
              re.compile(r'package (?P<m>\S+) is not in (?:GOROOT|std)')]
_GO_BUILD_FAILED = re.compile(r"^FAIL\s+\S+ \[(?:build|setup) failed\]")


def _go(lines: list[str], c: _Collector) -> None:
    for i, line in enumerate(lines):
        m = _GO_DIAG.match(line) or _GO_TEST_LINE.match(line)
        if m:
            c.location("go", m["path"], m["line"], m.groupdict().get("col"), m["msg"])
            c.keep(i)
            for rx in _GO_NAMES:
                n = rx.search(m["msg"])
                if n:
                    c.name(n["n"])
            continue
        f = _GO_FAIL.match(line)
        if f:
            c.test(f["id"])
            c.tool("go")
            c.keep(i)
            continue
        if _GO_BUILD_FAILED.match(line):
            c.out.interrupted = True
            c.keep(i)
        for rx in _GO_MODULE:
            mod = rx.search(line)
            if mod:
                c.module(mod["m"])
                c.keep(i)


# Anything else that looks like path:line[:col]: a path with an extension, not a URL or a time.
_GENERIC = re.compile(r"(?<![\w/.:-])(?P<path>(?:\.{0,2}/)?(?:[\w.+-]+/)*(?:[\w.+-]*[A-Za-z_][\w+-]*\.[A-Za-z]\w{0,7}|"
                      r"(?:GNU)?[Mm]akefile|Dockerfile|Containerfile|Jenkinsfile|Rakefile|Gemfile|[Jj]ustfile))"
                      r":(?P<line>\d+)(?::(?P<col>\d+))?(?![\d/])")


def _generic(lines: list[str], c: _Collector, taken: set[int]) -> None:
    for i, line in enumerate(lines):
        if i in taken:
            continue
        for m in _GENERIC.finditer(line):
            if "://" in line[max(0, m.start() - 3): m.start() + 3]:
                continue
            if c.location("generic", m["path"], m["line"], m["col"], line.strip()):
                c.keep(i)


_PARSERS = (_python, _mypy, _ruff, _c, _rust, _tsc, _go)


def parse(output: str, root: str | None = None) -> Parsed:
    """Failing locations, missing names and modules, failing tests, and the evidence
    lines of a build or test output. Paths under root become relative; absolute
    paths elsewhere (the standard library, toolchains) are not the project's."""
    lines = [_ANSI.sub("", line).rstrip("\r") for line in output.splitlines()]
    c = _Collector(root)
    for parser in _PARSERS:
        parser(lines, c)
    _generic(lines, c, set(c.evidence_at))
    kept = sorted(c.evidence_at)
    # Paths under root read as the model knows them: relative to the worktree.
    c.out.evidence = [lines[i].rstrip().replace(c.root, "") if c.root else lines[i].rstrip()
                      for i in kept if lines[i].strip()]
    return c.out


# -- evidence, trimmed -----------------------------------------------------------


def evidence(parsed: Parsed, output: str) -> str:
    """The lines that matter, at most MAX_EVIDENCE_LINES / MAX_EVIDENCE_CHARS; the
    output's tail when no format was recognised."""
    lines = parsed.evidence or [_ANSI.sub("", line).rstrip() for line in output.splitlines() if line.strip()][-25:]
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


# -- blame -------------------------------------------------------------------------


@dataclass(frozen=True)
class Candidate:
    hunk: Hunk
    reason: str


@dataclass
class Blame:
    locations: list[Location]                 # resolved to repository paths
    in_commit: list[tuple[Location, str]]     # locations in files this commit changed, with the change
    candidates: list[Candidate]
    more: int = 0                             # candidates left out of the list


def _definition(name: str) -> re.Pattern[bytes]:
    n = re.escape(name).encode()
    forms = [
        rb"(?:async\s+)?def\s+" + n + rb"\b",                           # Python
        rb"class\s+" + n + rb"\b",                                      # Python, TS, C++
        n + rb"\s*(?::[^=\n]*)?=(?!=)",                                  # X = ... / X: T = ...
        rb"(?:pub(?:\([^)]*\))?\s+)?(?:const\s+|async\s+|unsafe\s+|extern\s+\"C\"\s+)*fn\s+" + n + rb"\b",
        rb"(?:pub(?:\([^)]*\))?\s+)?(?:struct|enum|trait|type|mod|const|static|union|macro_rules!)\s+" + n + rb"\b",
        rb"type\s+" + n + rb"\b",                                       # Go, TS
        rb"func\s+(?:\([^)]*\)\s*)?" + n + rb"\s*[(\[]",                 # Go
        rb"export\b[^\n]*\b" + n + rb"\b",                              # TS/JS exports
        rb"(?:async\s+)?function\s*\*?\s*" + n + rb"\b",                # JS
        rb"(?:const|let|var|interface|enum)\s+" + n + rb"\b",          # JS/TS
        rb"#\s*define\s+" + n + rb"\b",                                 # C macros
        rb"(?:typedef\b[^;]*\b" + n + rb"\s*;|struct\s+" + n + rb"\s*\{)",  # C types
        rb"(?!return\b|else\b|case\b)[A-Za-z_][\w \t*]*[\s*]" + n + rb"\s*\([^;{]*\)\s*[{;]?\s*$",  # C
    ]
    return re.compile(rb"^[ \t]*(?:" + rb"|".join(forms) + rb")", re.M)


_FILE_EXT = re.compile(r"\.(?:h|hh|hpp|hxx|inc|rs|[cm]?[jt]sx?|go|py|pyi)$")
_MODULE_FILES = (".py", "/__init__.py", ".ts", ".tsx", ".d.ts", ".js", "/index.ts", "/index.js", ".rs", "/mod.rs", "/")


_IMPORT = re.compile(rb"^[ \t]*(?:import\s|from\s+\S+\s+import\s|#\s*include\s|use\s+[\w:{]|"
                     rb"(?:const|let|var)\s+\w+\s*=\s*require\(|extern\s+crate\s)", re.M)


def _module_suffixes(module: str) -> list[str]:
    """Paths that would provide a missing module (Python dotted, TS relative, Rust),
    header or file."""
    m = module.strip()
    while m.startswith(("./", "../")):
        m = m.split("/", 1)[1]
    if _FILE_EXT.search(m):
        return [m]
    base = m if "/" in m else m.replace(".", "/")
    return [base + ext for ext in _MODULE_FILES]


def _ends_with(path: str, suffix: str) -> bool:
    if suffix.endswith("/"):
        return ("/" + path).find("/" + suffix) >= 0
    return path == suffix or path.endswith("/" + suffix)


def resolve_path(path: str, known: Iterable[str], prefer: Iterable[str] = ()) -> str:
    """A printed path as a repository path: itself, or the one file it is a suffix of
    (go and ld print paths relative to a package, or base names)."""
    known = list(known)
    if path in known:
        return path
    matches = [k for k in known if k.endswith("/" + path)]
    preferred = [k for k in matches if k in set(prefer)]
    if len(preferred) == 1:
        return preferred[0]
    return matches[0] if len(matches) == 1 else path


def blame(parsed: Parsed, commit_hunks: list[Hunk], remaining: list[Hunk],
          known_paths: Iterable[str]) -> Blame:
    """Intersect the failure with this logical commit's change (commit_hunks: the
    diff from before the commit to now) and find its candidates in the remaining diff."""
    changed = {h.path for h in commit_hunks}
    known = set(known_paths) | changed | {h.path for h in remaining}
    locations = []
    for loc in parsed.locations:
        p = resolve_path(loc.path, known, changed)
        locations.append(Location(p, loc.line, loc.col, loc.message))
    in_commit = []
    for loc in locations:
        if loc.path in changed:
            in_commit.append((loc, _describe_change(loc, [h for h in commit_hunks if h.path == loc.path])))

    found: dict[str, Candidate] = {}
    for name in parsed.names:
        rx = _definition(name)
        for h in remaining:
            if h.id in found or h.kind not in ("modify", "add"):
                continue
            m = rx.search(h.added)
            if m:
                end = h.added.find(b"\n", m.start())
                line = h.added[m.start(): end if end >= 0 else None].decode("utf-8", "replace").strip()
                found[h.id] = Candidate(h, f"defines `{name}` ({line[:70]})")
    # A definition often needs the imports added above it in the same file.
    for c in list(found.values()):
        for h in remaining:
            if h.id not in found and h.path == c.hunk.path and h.kind == "modify" and _IMPORT.search(h.added):
                found[h.id] = Candidate(h, f"imports in {h.path}, next to that definition")
    for module in parsed.modules:
        for suffix in _module_suffixes(module):
            for h in remaining:
                if h.id not in found and _ends_with(h.path, suffix):
                    verb = "adds" if h.kind == "add" else "changes"
                    found[h.id] = Candidate(h, f"{verb} {h.path} (missing `{module}`)")
    failing = {loc.path for loc in locations}
    for h in remaining:
        if h.id not in found and h.path in failing:
            found[h.id] = Candidate(h, f"touches the failing file {h.path}")
    ranked = list(found.values())
    return Blame(locations, in_commit, ranked[:MAX_CANDIDATES], max(len(ranked) - MAX_CANDIDATES, 0))


def _describe_change(loc: Location, hunks: list[Hunk]) -> str:
    """Which part of this commit's change the location falls in (or near)."""
    if not hunks:
        return "changed by this commit"
    whole = [h for h in hunks if h.kind != "modify"]
    if whole:
        return f"{whole[0].kind} by this commit"
    if loc.line is None:
        return f"changed by this commit in {len(hunks)} places"
    best = min(hunks, key=lambda h: _distance(loc.line or 0, h))
    lo, hi = best.new_start, best.new_start + max(best.new_lines, 1) - 1
    where = f"lines {lo}-{hi}" if hi > lo else f"line {lo}"
    near = "in" if _distance(loc.line, best) == 0 else "near"
    return f"{near} this commit's change at {where} (+{best.added_lines} -{best.removed_lines})"


def _distance(line: int, h: Hunk) -> int:
    lo, hi = h.new_start, h.new_start + max(h.new_lines, 1) - 1
    return 0 if lo <= line <= hi else min(abs(line - lo), abs(line - hi))


# -- the brief -----------------------------------------------------------------------

CONSTRAINT = ("Take what is missing from the remaining diff first (apply_hunks with the candidate ids); "
              "write new code only when the source branch has none to take. "
              "Do not edit tests to make them pass: they say what is right.")


@dataclass
class Brief:
    text: str
    record: dict[str, object]      # what goes into the WIP commit's note


def brief(headline: str, output: str, parsed: Parsed, b: Blame, attempts: dict[str, int]) -> Brief:
    """The rework brief: evidence, the blamed change, the candidates, the constraint."""
    parts = [headline, "", "Evidence:", evidence(parsed, output)]
    if b.locations:
        shown = []
        for loc in b.locations[:10]:
            change = next((d for ln, d in b.in_commit if ln == loc), "not changed by this commit")
            shown.append(f"  {loc.key}: {change}")
        parts += ["", "Where it fails:", *shown]
        if len(b.locations) > 10:
            parts.append(f"  ... and {len(b.locations) - 10} more")
    else:
        parts += ["", ("Where it fails: no file and line could be read from the output "
                       "(an environment problem, a flaky test, or a format git-retcon does not know)")]
    missing = [f"`{n}`" for n in parsed.names] + [f"module `{m}`" for m in parsed.modules]
    if missing:
        parts.append("Missing: " + ", ".join(missing[:20]))
    if b.candidates:
        parts += ["", "Candidate hunks in the remaining diff:"]
        parts += [f"  {c.hunk.id} {c.hunk.path} {c.hunk.kind} +{c.hunk.added_lines} -{c.hunk.removed_lines}: {c.reason}"
                  for c in b.candidates]
        if b.more:
            parts.append(f"  ... and {b.more} more")
    else:
        parts += ["", "Candidate hunks in the remaining diff: none found for these locations and names"]
    repeat = sorted(((n, k) for k, n in attempts.items() if n and k in {ln.key for ln in b.locations}), reverse=True)
    if repeat:
        n, key = repeat[0]
        parts.append(f"This is rework attempt {n + 1} at {key}.")
    parts += ["", "Constraint: " + CONSTRAINT]
    record: dict[str, object] = {
        "locations": [ln.key for ln in b.locations],
        "names": parsed.names, "modules": parsed.modules, "tests": parsed.tests,
        "blamed": sorted({ln.path for ln, _ in b.in_commit}),
        "candidates": [c.hunk.id for c in b.candidates],
    }
    return Brief("\n".join(parts), record)


# -- escalation ------------------------------------------------------------------------


@dataclass(frozen=True)
class Observation:
    """One failing verification, as the escalation rules see it."""

    phase: str                  # build, test, or tree (the final tree differs)
    keys: frozenset[str]        # failing locations
    tests: frozenset[str]       # failing test ids
    tests_ran: bool             # every test ran, so the ones not failing passed
    signature: str              # the failure with timings and addresses taken out
    remaining: frozenset[str]   # hunk ids of the remaining diff at that tree
    summary: str                # a few lines of evidence for a stuck summary

    @property
    def located(self) -> bool:
        return bool(self.keys)


_NOISE = [(re.compile(r"0x[0-9a-fA-F]+"), "0x?"), (re.compile(r"\b\d+(?:\.\d+)?\s*(?:s|ms|sec|seconds)\b"), "?s"),
          (re.compile(r"\(\d+\) panicked"), "panicked"), (re.compile(r"/tmp/\S+"), "/tmp/?")]


def signature(parsed: Parsed, output: str) -> str:
    """What stays the same when the same failure happens again."""
    if parsed.locations or parsed.names or parsed.modules or parsed.tests:
        text = "\n".join([ln.key + " " + ln.message for ln in parsed.locations]
                         + parsed.names + parsed.modules + parsed.tests)
    else:
        text = "\n".join(ln.strip() for ln in output.splitlines() if ln.strip())
    for rx, sub in _NOISE:
        text = rx.sub(sub, text)
    return text


def observe(phase: str, output: str, parsed: Parsed, b: Blame, remaining: Iterable[str]) -> Observation:
    return Observation(
        phase=phase, keys=frozenset(ln.key for ln in b.locations), tests=frozenset(parsed.tests),
        tests_ran=phase == "test" and bool(parsed.tests) and not parsed.interrupted,
        signature=signature(parsed, output), remaining=frozenset(remaining),
        summary=evidence(parsed, output).split("\n[...")[0][:800],
    )


class Escalation:
    """The rules that end a fix loop as stuck, whatever the model says.

    Feed it every failing verification in order (observe), and tell it when a
    fix attempt starts (attempt). A rule that fires returns the stuck summary.
    """

    def __init__(self) -> None:
        self.attempts: Counter[str] = Counter()
        self.last: Observation | None = None
        self.unlocated = 0

    def attempt(self, obs: Observation) -> None:
        for key in obs.keys:
            self.attempts[key] += 1

    def observe(self, obs: Observation, fix_changed: set[str] | None = None) -> str | None:
        """fix_changed: the paths the last fix attempt changed (None before any attempt)."""
        prev, self.last = self.last, obs
        self.unlocated = self.unlocated + 1 if not obs.located else 0
        persistent = sorted(k for k in obs.keys if self.attempts[k] >= PERSISTENT_ATTEMPTS)
        if persistent:
            return (f"escalated (persistent trouble spot): {persistent[0]} still fails after "
                    f"{self.attempts[persistent[0]]} rework attempts.\n{obs.summary}")
        if prev is not None and fix_changed is not None:
            if prev.tests_ran and obs.phase == "test":
                # A test failing now that ran and did not fail before, and that the fix did not edit.
                newly = sorted(t for t in obs.tests - prev.tests if t.split("::")[0] not in fix_changed)
                if newly:
                    return (f"escalated (regression cascade): the last fix made previously passing tests fail: "
                            f"{', '.join(newly[:10])}.\nBefore it, only these failed: "
                            f"{', '.join(sorted(prev.tests)[:10])}.\n{obs.summary}")
            if obs.signature == prev.signature and prev.remaining <= obs.remaining:
                return ("escalated (no progress): the last fix took nothing from the remaining diff and "
                        f"the same failure happened again.\n{obs.summary}")
        if self.unlocated >= 2:
            return ("escalated (no location): twice in a row the failure named no file and line of the "
                    "project: an environment problem or a flaky test, which a model cannot fix.\n"
                    f"{obs.summary}")
        return None


# -- one failing verification, diagnosed ------------------------------------------------


@dataclass(frozen=True)
class Failure:
    phase: str                  # build, test, or tree (the last commit's tree differs from the source)
    headline: str               # e.g. "Test failed: `pytest -q` (exit 1)"
    output: str = ""            # the command's output, trimmed
    paths: tuple[str, ...] = ()  # for a tree failure: the paths that still differ

    @property
    def text(self) -> str:
        return self.headline + ("\n" + self.output if self.output else "")


@dataclass
class Diagnosis:
    failure: Failure
    parsed: Parsed
    blame: Blame
    brief: Brief
    obs: Observation
    fix_changed: set[str]       # the paths the failing commit changed on its parent


def _paths(repo: pygit2.Repository, tree: str) -> list[str]:
    index = pygit2.Index()
    index.read_tree(get_tree(repo, tree))
    return [e.path for e in index]


def diagnose(repo: pygit2.Repository, failure: Failure, *, base_tree: str, tree: str, parent_tree: str,
             source_tree: str, root: str, attempts: dict[str, int]) -> Diagnosis:
    """Parse, blame and brief one failure of `tree`; base_tree is the tree before this
    logical commit, parent_tree the tree the failing commit was made on."""
    commit_hunks = hunks.remaining(repo, base_tree, tree)
    remaining = hunks.remaining(repo, tree, source_tree)
    if failure.phase == "tree":
        parsed = Parsed(locations=[Location(p) for p in failure.paths])
    else:
        parsed = parse(failure.output, root)
    b = blame(parsed, commit_hunks, remaining, _paths(repo, tree))
    fixed = hunks.remaining(repo, parent_tree, tree)
    fix_changed = {h.path for h in fixed} | {h.old_path for h in fixed if h.old_path}
    return Diagnosis(failure, parsed, b, brief(failure.headline, failure.output, parsed, b, attempts),
                     observe(failure.phase, failure.output, parsed, b, [h.id for h in remaining]), fix_changed)
