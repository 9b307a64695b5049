"""C and C++: gcc, g++ and clang diagnostics, missing headers, and the linker's undefined references."""
from __future__ import annotations

import re

from git_retcon.rework.formats.common import NAME, Q
from git_retcon.rework.parsed import Collector

_C_EXT = r"(?:c|h|cc|cpp|cxx|c\+\+|hpp|hh|hxx|m|mm|ipp|inl|tcc)"
_C_DIAG = re.compile(rf"^(?P<path>[^\s:][^:]*\.{_C_EXT}):(?P<line>\d+):(?:(?P<col>\d+):)? "
                     r"(?P<sev>fatal error|error|warning|note): (?P<msg>.*)$")
_C_NAMES = [
    re.compile(rf"implicit declaration of function {Q}(?P<n>{NAME}){Q}"),
    re.compile(rf"^{Q}(?P<n>{NAME}){Q} undeclared"),
    re.compile(rf"^{Q}(?:[\w:]+::)?(?P<n>{NAME}){Q} was not declared in this scope"),
    re.compile(rf"^{Q}(?P<n>{NAME}){Q} (?:is not a member of|has not been declared|does not name a type)"),
    re.compile(rf"unknown type name {Q}(?P<n>{NAME}){Q}"),
    re.compile(rf"use of undeclared identifier {Q}(?P<n>{NAME}){Q}"),
    re.compile(rf"call to undeclared function {Q}(?P<n>{NAME}){Q}"),
    re.compile(rf"no member named {Q}(?P<n>{NAME}){Q}"),
    re.compile(rf"has no member named {Q}(?P<n>{NAME}){Q}"),
    re.compile(rf"no type named {Q}(?P<n>{NAME}){Q}"),
    # A call that no longer fits its callee: a later commit may change the callee's signature.
    re.compile(rf"too (?:many|few) arguments to function {Q}(?P<n>{NAME}){Q}"),
]
_C_HEADER = [re.compile(r"^(?P<m>[^\s:]+): No such file or directory"),
             re.compile(rf"^{Q}(?P<m>[^'\"]+){Q} file not found")]
# The symbol the linker misses: a C name, or a C++ one with its namespace and parameters.
_LD_UNDEF = [re.compile(rf"undefined reference to {Q}(?:[\w:]+::)?(?P<n>{NAME})(?:\(.*\))?{Q}"),
             re.compile(r"undefined symbol: (?:[\w:]+::)?(?P<n>[A-Za-z_]\w*)"),
             re.compile(r'^\s*"_?(?:[\w:]+::)?(?P<n>\w+)(?:\(.*\))?", referenced from:')]
_LD_WHERE = re.compile(rf"^(?P<path>[^\s:(]+\.{_C_EXT}):\(")
_EXCERPT = re.compile(r"^\s*(?:\d+\s*)?\|")     # gcc's source excerpt under a message


def native(lines: list[str], c: Collector) -> None:
    in_warning = False
    for i, line in enumerate(lines):
        m = _C_DIAG.match(line)
        if m:
            names = [rx.search(m["msg"]) for rx in _C_NAMES]
            headers = [rx.search(m["msg"]) for rx in _C_HEADER]
            missing = [n["n"] for n in names if n] + [h["m"] for h in headers if h]
            # Warnings count only when they name something missing (the cause of a link error).
            in_warning = m["sev"] in ("warning", "note") and not missing
            if in_warning:
                c.seen.add(i)
                continue
            c.location("gcc", m["path"], m["line"], m["col"], f"{m['sev']}: {m['msg']}")
            c.keep(i)
            if m["sev"] != "warning":
                c.cause(i, f"{c.path(m['path']) or m['path']}:{m['line']}: {m['sev']}: {m['msg']}")
            for n in names:
                if n:
                    c.name(n["n"])
            for h in headers:
                if h:
                    c.module(h["m"])
            continue
        if in_warning and _EXCERPT.match(line):
            c.seen.add(i)
            continue
        in_warning = False
        for rx in _LD_UNDEF:
            n = rx.search(line)
            if n:
                c.name(n["n"])
                c.tool("ld")
                c.keep(i)
                c.cause(i, line.strip())
                w = _LD_WHERE.match(line)
                if w:
                    c.location("ld", w["path"], None, None, line.strip())
                break
