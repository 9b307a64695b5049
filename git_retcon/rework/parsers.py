"""The table of failure formats: parse() reads build and test output into a Parsed.

pytest, unittest, Python tracebacks, mypy, ruff, gcc/clang and ld, rustc/cargo, tsc,
go, and any `path:line[:col]`: failing locations, missing names and modules, failing
test ids and the evidence lines.
"""
from __future__ import annotations

import re

from git_retcon.rework.parsed import ANSI, Collector, Parsed

_Q = "['\"`‘’]"     # quotes tools put around names: ASCII, backticks, and gcc's Unicode ones
_NAME = r"[A-Za-z_$][\w$]*"

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


def _python(lines: list[str], c: Collector) -> None:
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


def _py_missing(line: str, c: Collector) -> None:
    c.missing(line, _PY_MISSING_NAME, [_PY_MISSING_MODULE])


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


def _mypy(lines: list[str], c: Collector) -> None:
    for i, line in enumerate(lines):
        m = _MYPY.match(line)
        if not m:
            continue
        c.location("mypy", m["path"], m["line"], m["col"], m["msg"])
        c.keep(i)
        c.missing(m["msg"], _MYPY_NAMES, [_MYPY_MODULE])


_RUFF_CONCISE = re.compile(r"^(?P<path>[^\s:][^:]*):(?P<line>\d+):(?P<col>\d+): "
                           r"(?P<code>[A-Z]+\d+) (?:\[\*\] )?(?P<msg>.*)$")
_RUFF_HEAD = re.compile(r"^(?P<code>[A-Z]{1,4}\d{2,4}) (?:\[\*\] )?(?P<msg>.+)$")
_ARROW = re.compile(r"^\s*--> (?P<path>[^\s:][^:]*):(?P<line>\d+):(?P<col>\d+)\s*$")
_RUFF_NAME = re.compile(r"Undefined name `(?P<n>\w+)`")


def _ruff(lines: list[str], c: Collector) -> None:
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


def _c(lines: list[str], c: Collector) -> None:
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


def _rust(lines: list[str], c: Collector) -> None:
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


def _rust_missing(text: str, c: Collector) -> None:
    c.missing(text, _RUST_NAMES, [_RUST_MODULE])


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


def _tsc(lines: list[str], c: Collector) -> None:
    for i, line in enumerate(lines):
        for rx in _TSC:
            m = rx.match(line)
            if m:
                c.location("tsc", m["path"], m["line"], m["col"], f"{m['code']}: {m['msg']}")
                c.keep(i)
                c.missing(m["msg"], _TSC_NAMES, [_TSC_MODULE])
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


def _go(lines: list[str], c: Collector) -> None:
    for i, line in enumerate(lines):
        m = _GO_DIAG.match(line) or _GO_TEST_LINE.match(line)
        if m:
            c.location("go", m["path"], m["line"], m.groupdict().get("col"), m["msg"])
            c.keep(i)
            c.missing(m["msg"], _GO_NAMES)
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


def _generic(lines: list[str], c: Collector, taken: set[int]) -> None:
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
    lines = [ANSI.sub("", line).rstrip("\r") for line in output.splitlines()]
    c = Collector(root)
    for parser in _PARSERS:
        parser(lines, c)
    _generic(lines, c, set(c.evidence_at))
    kept = sorted(c.evidence_at)
    # Paths under root read as the model knows them: relative to the worktree.
    c.out.evidence = [lines[i].rstrip().replace(c.root, "") if c.root else lines[i].rstrip()
                      for i in kept if lines[i].strip()]
    return c.out
