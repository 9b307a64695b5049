"""JavaScript and TypeScript: node's errors and stack traces, tsc, esbuild's (tsx's) transform
errors, and the test runners' reports (node:test in TAP and spec, tape, jest, vitest, mocha).

A module is resolved against the file that imports it (`'../colors.mjs'` from `test/x.mjs`
is `colors.mjs`); a bare one (`kleur`) is a package. Stack frames count only in the
project's files: never in node's internals or in node_modules/.
"""
from __future__ import annotations

import re

from git_retcon.rework.parsed import Collector

_JS = r"[cm]?[jt]sx?"
_ERROR = re.compile(r"^\s*(?:Exception during run: |Uncaught )?(?P<exc>[A-Z]\w*(?:Error|Exception)|Error)"
                    r"(?: \[\w+\])?: (?P<msg>.+)$")
_FRAME = re.compile(rf"^\s+(?:at |❯ |at: )?(?:async )?(?:(?:[^()]*?) \(|(?:\S+ )?)?"
                    rf"(?P<path>(?:file://)?[^\s()]+\.{_JS}):(?P<line>\d+):(?P<col>\d+)\)?$")
# esbuild (tsx, vite) failing to transform a file: `/abs/test/test.ts:1316:0: ERROR: Unexpected "}"`,
# in node:test's TAP as a `# ` comment. The `Error [TransformError]: Transform failed with 1 error:`
# above it only counts them.
_ESBUILD = re.compile(rf"^(?:# )?(?P<path>\S+\.{_JS}):(?P<line>\d+):(?P<col>\d+): ERROR: (?P<msg>.+)$")
_COUNT_ONLY = re.compile(r"^Transform failed with \d+ errors?:$")
_UNCAUGHT_AT = re.compile(rf"^(?P<path>(?:file://)?/\S+\.{_JS}):(?P<line>\d+)$")
_TAP_LOCATION = re.compile(rf"^\s+location: '(?P<path>[^']+\.{_JS}):(?P<line>\d+):(?P<col>\d+)'$")
_NODE_TEST_AT = re.compile(rf"^test at (?P<path>\S+\.{_JS}):(?P<line>\d+):(?P<col>\d+)$")
_MODULE = [
    re.compile(r"Cannot find module '(?P<m>[^']+)'(?: imported from (?P<from>\S+)| from '(?P<from2>[^']+)')?"),
    re.compile(r"Failed to load url (?P<m>\S+) \(resolved id: [^)]*\) in (?P<from>\S+?)\.? Does the file exist"),
    re.compile(r"ENOENT: no such file or directory, \w+ '(?P<m>[^']+)'"),
]
_PACKAGE = re.compile(r"Cannot find package '(?P<p>(?:@[^/']+/)?[^/']+)[^']*'")
# The error's own words, as node, the TAP reporters (`error: '...'`) and vitest (`→ ...`) print them.
_SAYS = r"(?:(?:Reference|Type)Error(?: \[\w+\])?: |error: '|→ )"
_NAMES = [
    re.compile(_SAYS + r"(?P<n>[A-Za-z_$][\w$]*) is not defined"),
    re.compile(_SAYS + r"(?:[\w$]+\.)*(?P<n>[A-Za-z_$][\w$]*) is not a (?:function|constructor)\b"),
    re.compile(r"does not provide an export named '(?P<n>[\w$]+)'"),
]
_REQUIRE_STACK = re.compile(r"^- (?P<path>\S+)$")
_TAP_NOT_OK = re.compile(r"^\s*not ok \d+ (?:- )?(?P<id>.+?)(?:\s+# .*)?$")
_RUNNER_FAIL = re.compile(rf"^\s*FAIL\s+(?P<id>\S+\.{_JS}(?: > .+)?)\s*(?:\[.*\])?$")
_JEST_TEST = re.compile(r"^\s+● (?P<id>.+)$")
_SPEC_FAIL = re.compile(r"^\s*✖ (?P<id>.+?) \(\d[\d.]*m?s\)$")
_MOCHA_FAIL = re.compile(r"^\s+\d+\) (?P<id>.+?):?$")
_DETAIL = re.compile(r"^\s*(?:Expected|Received|expected|actual|operator|[+-] expected|[+-] actual)\b|"
                     r"^\s*>\s*\d+ \||^\s*\^+\s*$|^\s+\|\s+\^")
_TSC = [re.compile(rf"^(?P<path>[^\s(]+\.{_JS})\((?P<line>\d+),(?P<col>\d+)\): "
                   r"error (?P<code>TS\d+): (?P<msg>.*)$"),
        re.compile(rf"^(?P<path>[^\s:]+\.{_JS}):(?P<line>\d+):(?P<col>\d+) - "
                   r"error (?P<code>TS\d+): (?P<msg>.*)$")]
_TSC_NAMES = [
    re.compile(r"Cannot find name '(?P<n>[\w$]+)'"),
    re.compile(r"has no exported member(?: named)? '(?P<n>[\w$]+)'"),
    re.compile(r"Property '(?P<n>[\w$]+)' does not exist on type"),
    re.compile(r"Module '[^']+' declares '(?P<n>[\w$]+)' locally, but it is not exported"),
]
_TSC_MODULE = re.compile(r"Cannot find module '(?P<m>[^']+)'")
_FRAMES_PER_ERROR = 2     # the deepest frames in the project: where it failed, and its caller


def js(lines: list[str], c: Collector) -> None:
    error = ""          # the error the frames below belong to
    frames = 0          # project frames recorded for it
    for i, line in enumerate(lines):
        if i in c.seen:
            continue  # a line another format read (a warning's, a JSON message)
        if _tsc(i, line, c) or _esbuild(i, line, c):
            continue
        m = _ERROR.match(line)
        if m:
            error, frames = f"{m['exc']}: {m['msg']}".strip(), 0
            c.keep(i)
            if not _COUNT_ONLY.match(m["msg"]):
                c.cause(i, error)
            _missing(i, lines, line, c)
            continue
        f = _FRAME.match(line) or _TAP_LOCATION.match(line) or _NODE_TEST_AT.match(line)
        if f:
            if frames < _FRAMES_PER_ERROR and c.location("node", f["path"], f["line"], f["col"], error):
                frames += 1
                c.keep(i)
            c.seen.add(i)
            continue
        u = _UNCAUGHT_AT.match(line)
        if u:
            # An uncaught error's first line: where it was thrown, above the source line and caret.
            c.location("node", u["path"], u["line"], None, "")
            c.keep(i)
            continue
        if _tests(i, line, c):
            error, frames = line.strip(), 0
            continue
        if _missing(i, lines, line, c) or _DETAIL.match(line):
            c.keep(i)


def _missing(i: int, lines: list[str], text: str, c: Collector) -> bool:
    """Modules, packages and names text reports missing (a module against its importer)."""
    found = False
    for rx in _MODULE:
        m = rx.search(text)
        if m:
            importer = m.groupdict().get("from") or m.groupdict().get("from2") or _require_stack(lines, i)
            spec = m["m"]
            if importer:
                c.location("node", importer, None, None, text.strip())
            if not spec.startswith((".", "/", "file:")) and not importer and "ENOENT" not in text:
                c.package(_package_name(spec))
            else:
                c.module(c.relative(spec, importer) if importer else c.relative(spec, None))
            c.tool("node")
            found = True
            break
    p = _PACKAGE.search(text)
    if p:
        c.package(p["p"])
        found = True
    before = len(c.out.names)
    c.missing(text, _NAMES)
    return found or len(c.out.names) > before


def _require_stack(lines: list[str], i: int) -> str | None:
    """CommonJS: the file that required the missing module, under `Require stack:`."""
    for j in range(i + 1, min(i + 3, len(lines))):
        if lines[j].strip() == "Require stack:" and j + 1 < len(lines):
            m = _REQUIRE_STACK.match(lines[j + 1].strip())
            return m["path"] if m else None
    return None


def _package_name(spec: str) -> str:
    parts = spec.split("/")
    return "/".join(parts[:2]) if spec.startswith("@") else parts[0]


def _tests(i: int, line: str, c: Collector) -> bool:
    for rx in (_TAP_NOT_OK, _RUNNER_FAIL, _SPEC_FAIL, _JEST_TEST):
        m = rx.match(line)
        if m and m["id"] != "Test suite failed to run":
            c.test(m["id"].strip())
            c.tool("node")
            c.keep(i)
            if rx is _TAP_NOT_OK:
                c.cause(i, line.strip())
            return True
    m = _MOCHA_FAIL.match(line)
    if m and "passing" not in line:
        c.keep(i)
        return False
    return False


def _esbuild(i: int, line: str, c: Collector) -> bool:
    m = _ESBUILD.match(line)
    if m:
        c.location("esbuild", m["path"], m["line"], m["col"], m["msg"])
        c.cause(i, line.removeprefix("# "))
        c.keep(i)
    return m is not None


def _tsc(i: int, line: str, c: Collector) -> bool:
    for rx in _TSC:
        m = rx.match(line)
        if m:
            c.location("tsc", m["path"], m["line"], m["col"], f"{m['code']}: {m['msg']}")
            c.keep(i)
            if c.path(m["path"]) is not None:   # not an error in typescript's own lib files
                c.cause(i, f"{c.path(m['path'])}:{m['line']}: error {m['code']}: {m['msg']}")
            c.missing(m["msg"], _TSC_NAMES)
            mod = _TSC_MODULE.search(m["msg"])
            if mod:
                spec = mod["m"]
                if spec.startswith("."):
                    c.module(c.relative(spec, m["path"]))
                else:
                    c.package(_package_name(spec))
            return True
    return False
