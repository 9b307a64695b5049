"""Anything else that looks like `path:line[:col]`: a path with an extension, not a URL or a time."""
from __future__ import annotations

import re

from git_retcon.rework.parsed import Collector

_GENERIC = re.compile(r"(?<![\w/.:-])(?P<path>(?:\.{0,2}/)?(?:[\w.+-]+/)*(?:[\w.+-]*[A-Za-z_][\w+-]*\.[A-Za-z]\w{0,7}|"
                      r"(?:GNU)?[Mm]akefile|Dockerfile|Containerfile|Jenkinsfile|Rakefile|Gemfile|[Jj]ustfile))"
                      r":(?P<line>\d+)(?::(?P<col>\d+))?(?![\d/])")
# Lines that name a place without it being the failure's: make's and npm's own complaints.
_WRAPPER = re.compile(r"^(?:g?make(?:\[\d+\])?: \*\*\*|npm (?:ERR!|error)|ELIFECYCLE)")


def generic(lines: list[str], c: Collector) -> None:
    for i, line in enumerate(lines):
        if i in c.seen or i in c.evidence_at or _WRAPPER.match(line):
            continue
        for m in _GENERIC.finditer(line):
            if "://" in line[max(0, m.start() - 3): m.start() + 3]:
                continue
            if c.location("generic", m["path"], m["line"], m["col"], line.strip()):
                c.keep(i)
