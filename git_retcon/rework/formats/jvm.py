"""Java and Kotlin: javac (plain, as Gradle prints it, or in Maven's `[ERROR]` lines), kotlinc,
and JUnit's reports (the console launcher's, and stack frames as Maven surefire prints them).

A stack frame names a class and a file name, not a path: `com.shop.AppTest.total(AppTest.java:10)`
becomes `com/shop/AppTest.java:10`, which blame finds under `src/test/java/`.
"""
from __future__ import annotations

import re

from git_retcon.rework.parsed import Collector

_JAVAC = re.compile(r"^(?:\[ERROR\] )?(?P<path>(?:file://)?[^\s:][^:]*\.java):(?:(?P<line>\d+)|\[(?P<mline>\d+),"
                    r"(?P<mcol>\d+)\]):? (?:(?P<sev>error|warning): )?(?P<msg>.*)$")
_KOTLIN = re.compile(r"^(?:e: |\[ERROR\] )?(?P<path>(?:file://)?[^\s:][^:]*\.kts?):(?:\s*\(?)(?P<line>\d+)[:,]\s*"
                     r"(?P<col>\d+)\)?:? (?:(?P<sev>error|warning): )?(?P<msg>.*)$")
_NAMES = [re.compile(r"^\s*symbol:\s+(?:variable|method|class|static|interface|enum|record)?\s*(?P<n>\w+)"),
          re.compile(r"[Uu]nresolved reference:? '?(?P<n>\w+)'?")]
_PACKAGE = re.compile(r"package (?P<m>[\w.]+) does not exist")
_FRAME = re.compile(r"^\s+(?:at )?(?:[\w.]+/+)?(?P<cls>(?:[a-z_]\w*\.)+)(?P<type>[A-Z][\w$]*)\.[\w$<>]+"
                    r"\((?P<file>\w+\.(?:java|kt)):(?P<line>\d+)\)$")
_NOT_OURS = re.compile(r"^(?:java|javax|jdk|sun|kotlin|kotlinx|org\.junit|org\.opentest4j|org\.gradle|"
                       r"org\.apache\.maven|junit|org\.hamcrest|org\.assertj|org\.mockito)\.")
_JUNIT_FAILED = re.compile(r"^\s+JUnit \w+:(?P<cls>[\w$]+):(?P<m>[\w$]+)\(")
_EXCEPTION = re.compile(r"^\s*(?:=> |Caused by: )?(?P<exc>(?:[a-z]\w*\.)+[A-Z]\w*(?:Error|Exception)): (?P<msg>.*)$")
_SUREFIRE = re.compile(r"^\[ERROR\]\s+(?:Failures|Errors):\s*$|^\[ERROR\]\s+(?P<id>[\w$.]+[.#][\w$]+)(?::\d+)? ")


def jvm(lines: list[str], c: Collector) -> None:
    error = ""
    frames = 0
    for i, line in enumerate(lines):
        if i in c.seen:
            continue  # a line another format read (a warning's, a JSON message)
        m = _JAVAC.match(line) or _KOTLIN.match(line)
        if m and m["sev"] != "warning" and (m["sev"] or line.startswith(("e: ", "[ERROR]"))):
            gd = m.groupdict()
            ln, col = gd.get("line") or gd.get("mline"), gd.get("col") or gd.get("mcol")
            c.location("javac" if m.re is _JAVAC else "kotlinc", m["path"], ln, col, m["msg"])
            c.cause(i, f"{c.path(m['path']) or m['path']}:{ln}: error: {m['msg']}")
            c.keep(i)
            c.missing(m["msg"], _NAMES[1:])
            pkg = _PACKAGE.search(m["msg"])
            if pkg:
                c.module(pkg["m"])
            continue
        if m and m["sev"] == "warning":
            c.seen.add(i)
            continue
        n = _NAMES[0].match(line)
        if n:
            c.name(n["n"])
            c.keep(i)
            continue
        e = _EXCEPTION.match(line)
        if e:
            error, frames = f"{e['exc']}: {e['msg']}", 0
            c.cause(i, error)
            c.keep(i)
            continue
        f = _FRAME.match(line)
        if f:
            c.seen.add(i)
            if frames < 2 and not _NOT_OURS.match(f["cls"]):
                path = f["cls"].replace(".", "/") + f["file"]
                if c.location("junit", path, f["line"], None, error):
                    frames += 1
                    c.keep(i)
            continue
        t = _JUNIT_FAILED.match(line)
        if t:
            c.test(f"{t['cls']}.{t['m']}")
            c.tool("junit")
            c.keep(i)
            continue
        s = _SUREFIRE.match(line)
        if s and s["id"]:
            c.test(s["id"])
            c.keep(i)
