"""Python: pytest, unittest, tracebacks, mypy and ruff."""
from __future__ import annotations

import re

from git_retcon.rework.formats.common import ARROW
from git_retcon.rework.parsed import Collector

_PY_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+)')
_PY_EXC = re.compile(r"^(?:E\s+)?(?P<exc>(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Exit|Failure))"
                     r"(?::\s*(?P<msg>.*))?$")
_PY_MISSING_NAME = [
    re.compile(r"NameError: name '(?P<n>\w+)' is not defined"),
    re.compile(r"ImportError: cannot import name '(?P<n>\w+)' from"),
    re.compile(r"AttributeError: (?:module|type object|'[\w.]+' object) '?[\w.]*'? ?has no attribute '(?P<n>\w+)'"),
    # A call that no longer fits its callee: a later commit may change the callee's signature.
    re.compile(r"TypeError: (?:[\w.]+\.)?(?P<n>\w+)\(\) (?:takes|missing|got an unexpected keyword|"
               r"got multiple values)"),
]
_PY_MISSING_MODULE = re.compile(r"ModuleNotFoundError: No module named '(?P<m>[\w.]+)'")
# A file read at runtime that is not there yet (a later commit adds it), often by an absolute path.
_PY_MISSING_FILE = re.compile(r"(?:FileNotFoundError|NotADirectoryError): \[Errno \d+\] [^:]+: '(?P<m>[^']+)'")
_PYTEST_LOC = re.compile(r"^(?P<path>[^\s:][^:]*\.py):(?P<line>\d+): ?(?P<msg>(?:in \S+|\w+)?)\s*$")
# `FAILED id - msg`, and pytest 9's subtests: `SUBFAILED[label] id` or `SUBFAILED(k='v') id` (the
# test is the subtest's). Not unittest's `FAILED (errors=9)`, a summary.
_PYTEST_SUMMARY = re.compile(r"^(?P<sub>SUB)?(?P<kind>FAILED|ERROR)(?:\[[^\]]*\]|\((?:[^()]|\([^()]*\))*\))? "
                             r"(?P<id>[^\s(]\S*)(?: - (?P<msg>.*))?$")
# pytest's last line, `4 failed, 5 passed, 1 error, 5 subtests passed in 0.03s`; unittest's
# `FAILED (failures=1, errors=4)`.
_PYTEST_COUNTS = re.compile(r"^=*\s*(?P<counts>\d+ \w[^=]*?) in [\d.]+s\b.*$")
_UNITTEST_COUNTS = re.compile(r"^FAILED \((?P<counts>\w+=\d+(?:, \w[\w ]*=\d+)*)\)$")
_COUNT = re.compile(r"(?P<n>\d+) (?:failed|errors?)\b|\b(?:failures|errors|unexpected successes)=(?P<n2>\d+)")
_PYTEST_INTERRUPTED = re.compile(r"^!+ Interrupted: \d+ errors? during collection")
# `FAIL: test_valid (pkg.mod.Class.test_valid) [label]` (3.11+), `(pkg.mod.Class)` before 3.11; a
# module that failed to import is `ERROR: pkg.mod (unittest.loader._FailedTest[.pkg.mod])`.
_UNITTEST = re.compile(r"^(?P<kind>FAIL|ERROR): (?P<test>[\w.]+) \((?P<where>[\w.]+)\)")
_UNITTEST_NOT_LOADED = "unittest.loader._FailedTest"
# Only that the program exited (argparse's parser.error, sys.exit(2)): what it printed says why.
_EXIT_ONLY = re.compile(r"^SystemExit(?:: -?\d*)?$")
# A command-line tool's own error line (argparse's `prog: error: unrecognized arguments: ...`).
_TOOL_ERROR = re.compile(r"^[A-Za-z_][\w.-]*: error: \S")


def python(lines: list[str], c: Collector) -> None:
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
            if m["kind"] == "ERROR" and "::" not in m["id"] and not m["sub"]:
                c.not_run(m["id"])      # a file that could not be collected
            else:
                c.test(m["id"])
            if m["msg"] and not _EXIT_ONLY.match(m["msg"]):
                c.cause(i, m["msg"])
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
            if m["where"].startswith(_UNITTEST_NOT_LOADED):
                c.not_run(m["test"])
            else:
                c.test(m["where"] if m["where"].endswith("." + m["test"]) else f"{m['where']}.{m['test']}")
            c.tool("unittest")
            c.keep(i)
            continue
        m = _UNITTEST_COUNTS.match(line) or _PYTEST_COUNTS.match(line)
        if m:
            c.failed(_failing(m["counts"]))
            continue
        if line.startswith((">   ", ">\t", "E  ")):
            c.keep(i)  # pytest's failing source line and its error text
        if _TOOL_ERROR.match(line):
            c.cause(i, line.strip())
            c.keep(i)
            continue
        m = _PY_EXC.match(line.strip())
        if m:
            if not _EXIT_ONLY.match(said := re.sub(r"^E\s+", "", line.strip())):
                c.cause(i, said)
            _py_missing(line, c)
            if frames:
                # The deepest frame inside the project is where it failed.
                for _, path, ln in reversed(frames):
                    if c.path(path) is not None:
                        c.location("python", path, ln, None, line.strip())
                        break
                # The last frames, the project's first (unittest's loader is no part of the failure).
                ours = [f for f in frames if c.path(f[1]) is not None]
                for fi, _, _ in (ours or frames)[-3:]:
                    c.keep(fi)
                    if fi + 1 < len(lines):
                        c.keep(fi + 1)
                frames = []
            c.keep(i)
        elif "Error: " in line:
            _py_missing(line, c)


def _failing(counts: str) -> int:
    """Failing cases in a runner's summary: failed and errors (and unittest's unexpected successes)."""
    return sum(int(m["n"] or m["n2"]) for m in _COUNT.finditer(counts))


def _py_missing(line: str, c: Collector) -> None:
    c.missing(line, _PY_MISSING_NAME, [_PY_MISSING_MODULE])
    f = _PY_MISSING_FILE.search(line)
    if f:
        c.missing_file(f["m"])


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


def mypy(lines: list[str], c: Collector) -> None:
    for i, line in enumerate(lines):
        m = _MYPY.match(line)
        if not m:
            continue
        c.location("mypy", m["path"], m["line"], m["col"], m["msg"])
        c.cause(i, f"{m['path']}:{m['line']}: {m['msg']}")
        c.keep(i)
        c.missing(m["msg"], _MYPY_NAMES, [_MYPY_MODULE])


_RUFF_CONCISE = re.compile(r"^(?P<path>[^\s:][^:]*):(?P<line>\d+):(?P<col>\d+): "
                           r"(?P<code>[A-Z]+\d+) (?:\[\*\] )?(?P<msg>.*)$")
_RUFF_HEAD = re.compile(r"^(?P<code>[A-Z]{1,4}\d{2,4}) (?:\[\*\] )?(?P<msg>.+)$")
_RUFF_NAME = re.compile(r"Undefined name `(?P<n>\w+)`")


def ruff(lines: list[str], c: Collector) -> None:
    for i, line in enumerate(lines):
        m = _RUFF_CONCISE.match(line)
        head = _RUFF_HEAD.match(line) if not m else None
        arrow = ARROW.match(lines[i + 1]) if head and i + 1 < len(lines) else None
        if m:
            c.location("ruff", m["path"], m["line"], m["col"], f"{m['code']} {m['msg']}")
            msg = m["msg"]
            c.cause(i, line.strip())
        elif head and arrow:
            c.location("ruff", arrow["path"], arrow["line"], arrow["col"], f"{head['code']} {head['msg']}")
            c.keep(i + 1)
            msg = head["msg"]
            c.cause(i, f"{arrow['path']}:{arrow['line']}: {head['code']} {msg}")
        else:
            continue
        c.keep(i)
        n = _RUFF_NAME.search(msg)
        if n:
            c.name(n["n"])
