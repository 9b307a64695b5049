"""Rust: rustc and cargo, human output and `--message-format=json`; cargo test's failures.

Errors apart from warnings: a warning's block is read (so no other format takes its
`--> path:line`) and left out of the locations and the evidence.
"""
from __future__ import annotations

import json
import re
from typing import Any

from git_retcon.rework.formats.common import ARROW
from git_retcon.rework.parsed import Collector

_HEAD = re.compile(r"^(?P<sev>error|warning)(?:\[(?P<code>E\d+)\])?: (?P<msg>.*)$")
_NAMES = [
    re.compile(r"cannot find (?:function|value|type|struct|enum|macro|trait|crate|module|attribute macro|derive macro|"
               r"tuple struct or tuple variant|struct, variant or union type|unit struct, unit variant or constant) "
               r"`(?P<n>\w+)`"),
    re.compile(r"unresolved import `(?:[\w:]+::)?(?P<n>\w+)`"),
    re.compile(r"use of undeclared (?:type|crate or module|type or module|crate|module) `(?P<n>\w+)`"),
    re.compile(r"no (?:function or associated item|method|associated item|field) named `(?P<n>\w+)`"),
    re.compile(r"^\s*\|\s*\^+ no `(?P<n>\w+)` in `"),
    re.compile(r"unresolved (?:macro|attribute) `(?P<n>\w+)`"),
    re.compile(r"could not find `(?P<n>\w+)` in `"),
]
_MODULE = re.compile(r"file not found for module `(?P<m>\w+)`")
# rustc names the files that would provide the module: the exact paths.
_MODULE_FILES = re.compile(r'create file "(?P<a>[^"]+)"(?: or "(?P<b>[^"]+)")?')
_CRATE_MODULE = re.compile(r"unresolved import `crate::(?P<m>\w+)")
_CRATE = re.compile(r"(?:unlinked crate|undeclared crate or module|can't find crate for|"
                    r"use of unresolved module or unlinked crate) `(?P<p>\w+)`")
_PANIC = re.compile(r"panicked at (?:'.*', )?(?P<path>[^\s:']+\.rs):(?P<line>\d+):(?P<col>\d+)")
# A panic's message that says a file is not there (io::Error's Display or Debug), and the paths in it:
# a later commit may add the file. include_str!/include_bytes! of one is a build error.
_NOT_FOUND = re.compile(r"No such file or directory|kind: NotFound")
_PATH_WORD = re.compile(r"(?<![\w/.-])(?P<p>/?(?:[\w.-]+/)+[\w.-]+)")
_DEFINED_HERE = re.compile(r"^note: (?:\w+ )*(?:function|method) defined here$")
_FN = re.compile(r"\bfn\s+(?P<n>\w+)")
_INCLUDE = re.compile(r"couldn't read `(?P<m>[^`]+)`")
_CARGO_TEST = [re.compile(r"^(?P<id>[\w:]+) --- FAILED$"), re.compile(r"^test (?P<id>\S+) \.\.\. FAILED$")]
# cargo test's lines after the build: where a trimmed output joins them to a warning's block
# (xmlparser: `test attribute_err_01 ... FAILED` was read as part of a warning, and no test failed).
_AFTER_BUILD = re.compile(r"^(?:running \d+ tests?|test \S+ \.\.\. |---- \S+ stdout ----|test result: |\[\.\.\. )")
_NOT_BUILT = re.compile(r"^error: (?:could not compile `|aborting due to)")
_SOURCE = re.compile(r"^\s*\d+\s*\|")    # the source line under a message
_JSON_LINE = re.compile(r'^\{.*"(?:reason":"compiler-message|\$message_type":"diagnostic)')


def rust(lines: list[str], c: Collector) -> None:
    head: tuple[int, re.Match[str]] | None = None
    warning = False
    for i, line in enumerate(lines):
        if _JSON_LINE.match(line):
            _json(i, line, c)
            continue
        m = _HEAD.match(line)
        if m:
            warning = m["sev"] == "warning"
            head = (i, m) if not warning else None
            if _NOT_BUILT.match(line):
                c.out.interrupted = True
                c.keep(i)
                head = None
            elif head:
                _missing(m["msg"], c)
            if warning:
                c.seen.add(i)
            continue
        if warning and _AFTER_BUILD.match(line):
            warning = False    # cargo test's own lines end a warning block a trim left unclosed
        if warning:
            # A warning's block runs to the next blank line: not one of the error's locations.
            if line.strip():
                c.seen.add(i)
            else:
                warning = False
            continue
        if head is not None:
            a = ARROW.match(line)
            if a and a["path"].endswith(".rs"):
                hi, hm = head
                code = f"[{hm['code']}]" if hm["code"] else ""
                c.location("rustc", a["path"], a["line"], a["col"], f"error{code}: {hm['msg']}")
                c.cause(hi, f"error{code}: {hm['msg']}")
                c.keep(hi)
                c.keep(i)
                continue
            if line.strip().startswith(("|", "=")) or _SOURCE.match(line):
                _missing(line, c)
                if "^" in line or "= help: to create" in line or _SOURCE.match(line):
                    c.keep(i)
                continue
            if not line.strip():
                head = None
            _callee(lines, i, c)
        p = _PANIC.search(line)
        if p:
            c.location("cargo", p["path"], p["line"], p["col"], "panicked")
            c.cause(i, line.strip())
            c.keep(i)
            for j in (i + 1, i + 2, i + 3):
                if j < len(lines) and lines[j].strip() and not lines[j].startswith("note:"):
                    c.keep(j)
                    _panic_file(lines[j], c)     # the message, under `panicked at path:line:col:`
            continue
        for rx in _CARGO_TEST:
            t = rx.match(line)
            if t:
                c.test(t["id"])
                c.tool("cargo")
                c.keep(i)


def _callee(lines: list[str], i: int, c: Collector) -> None:
    """A call that does not fit its callee (E0061) shows the callee under `note: function defined
    here`: its name, for the later commit that may change its signature."""
    if not _DEFINED_HERE.match(lines[i]):
        return
    for j in range(i + 1, min(i + 5, len(lines))):
        if _SOURCE.match(lines[j]):
            fn = _FN.search(lines[j])
            if fn:
                c.name(fn["n"])
            return


def _panic_file(message: str, c: Collector) -> None:
    """The files a panic's message says are not there (its paths, inside the worktree)."""
    if _NOT_FOUND.search(message):
        for m in _PATH_WORD.finditer(message):
            c.missing_file(m["p"])


def _missing(text: str, c: Collector) -> None:
    c.missing(text, _NAMES, [_MODULE, _CRATE_MODULE])
    inc = _INCLUDE.search(text)
    if inc:
        c.missing_file(inc["m"])
    files = _MODULE_FILES.search(text)
    if files:
        for f in (files["a"], files["b"]):
            if f:
                c.module(f)
    crate = _CRATE.search(text)
    if crate:
        c.package(crate["p"])


def _json(i: int, line: str, c: Collector) -> None:
    """One message of `--message-format=json` (cargo) or `--error-format=json` (rustc)."""
    try:
        doc = json.loads(line)
    except ValueError:
        return
    msg: dict[str, Any] = doc.get("message", doc) if isinstance(doc, dict) else {}
    if not isinstance(msg, dict) or msg.get("level") != "error":
        c.seen.add(i)
        return
    text = str(msg.get("message", ""))
    code = (msg.get("code") or {}).get("code") if isinstance(msg.get("code"), dict) else None
    head = f"error[{code}]: {text}" if code else f"error: {text}"
    rendered = str(msg.get("rendered") or head)
    c.tool("rustc")
    if _NOT_BUILT.match(head):
        c.out.interrupted = True
        return
    c.cause(i, head)
    c.keep(i, rendered.rstrip("\n").splitlines()[:12])
    for part in [text, rendered] + [str(ch.get("message", "")) for ch in msg.get("children", []) or []]:
        _missing(part, c)
    shown = rendered.splitlines()
    for j in range(len(shown)):
        _callee(shown, j, c)
    for span in msg.get("spans", []) or []:
        if span.get("is_primary") and str(span.get("file_name", "")).endswith(".rs"):
            c.location("rustc", span["file_name"], span.get("line_start"), span.get("column_start"), head)
