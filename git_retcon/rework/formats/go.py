"""Go: the compiler's and go vet's diagnostics, missing packages, go test's FAIL lines."""
from __future__ import annotations

import re

from git_retcon.rework.parsed import Collector

_DIAG = re.compile(r"^(?:vet: )?(?P<path>[^\s:][^:]*\.go):(?P<line>\d+):(?P<col>\d+): (?P<msg>.*)$")
_TEST_LINE = re.compile(r"^\s+(?P<path>[\w./-]+\.go):(?P<line>\d+): (?P<msg>.*)$")
_FAIL = re.compile(r"^\s*--- FAIL: (?P<id>\S+)")
_NAMES = [re.compile(r"undefined: (?:\w+\.)?(?P<n>\w+)"),
          re.compile(r"undeclared name: (?P<n>\w+)"),
          re.compile(r"\w+\.(?P<n>\w+) undefined \(type"),
          re.compile(r"has no field or method (?P<n>\w+)"),
          re.compile(r"(?P<n>\w+) not declared by package \w+"),
          # A call that no longer fits its callee: a later commit may change the callee's signature.
          re.compile(r"(?:too many|not enough) arguments in call to (?:[\w.]+\.)?(?P<n>\w+)")]
# A package the build cannot find: in this module (a directory not added yet) or a dependency.
_PACKAGE = [re.compile(r"no required module provides package (?P<m>[^\s;]+)"),
            re.compile(r"cannot find module providing package (?P<m>[^\s:;]+)"),
            re.compile(r'cannot find package "(?P<m>[^"]+)"'),
            re.compile(r"package (?P<m>\S+) is not in (?:GOROOT|std)")]
# A file a test opens (go test runs in the package's folder: blame finds it by its tail).
_FILE = re.compile(r"\bopen (?P<m>[^\s:]+): no such file or directory")
_BUILD_FAILED = re.compile(r"^FAIL\s+\S+ \[(?:build|setup) failed\]")


def go(lines: list[str], c: Collector) -> None:
    for i, line in enumerate(lines):
        if i in c.seen:
            continue  # a line another format read (a warning's, a JSON message)
        m = _DIAG.match(line) or _TEST_LINE.match(line)
        if m:
            c.location("go", m["path"], m["line"], m.groupdict().get("col"), m["msg"])
            c.keep(i)
            c.cause(i, f"{m['path']}:{m['line']}: {m['msg'].removesuffix('; to add it:')}")
            c.missing(m["msg"], _NAMES)
        f = _FAIL.match(line)
        if f:
            c.test(f["id"])
            c.tool("go")
            c.keep(i)
            continue
        if _BUILD_FAILED.match(line):
            c.out.interrupted = True
            c.keep(i)
        f = _FILE.search(line)
        if f:
            c.module(f["m"])
            c.cause(i, line.strip())
            c.keep(i)
        for rx in _PACKAGE:
            pkg = rx.search(line)
            if pkg:
                # The module's own packages are directories (blame tries the path's tails); a
                # dependency is a line of go.mod.
                c.module(pkg["m"])
                c.package(pkg["m"])
                c.keep(i)
                break
