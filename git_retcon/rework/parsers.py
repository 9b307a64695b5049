"""The table of failure formats: parse() reads build and test output into a Parsed.

One parser per language or family of tools (rework/formats/): Python (pytest, unittest,
tracebacks, mypy, ruff), C and C++ (gcc, clang, ld), Rust (rustc and cargo, human and JSON),
JavaScript and TypeScript (node, tsc, esbuild, node:test, tape, jest, vitest, mocha), Go (build,
vet, test), Java and Kotlin (javac, kotlinc, Maven, JUnit), and any `path:line[:col]` that none
of them took: failing locations, missing names, modules and packages, failing test ids,
the evidence lines and the first error's words.
"""
from __future__ import annotations

from collections.abc import Callable

from git_retcon.rework.formats.generic import generic
from git_retcon.rework.formats.go import go
from git_retcon.rework.formats.js import js
from git_retcon.rework.formats.jvm import jvm
from git_retcon.rework.formats.native import native
from git_retcon.rework.formats.python import mypy, python, ruff
from git_retcon.rework.formats.rust import rust
from git_retcon.rework.parsed import ANSI, Collector, Parsed

Parser = Callable[[list[str], Collector], None]

# In this order; generic comes last and reads only the lines no other format took.
FORMATS: tuple[tuple[str, Parser], ...] = (
    ("python", python), ("mypy", mypy), ("ruff", ruff), ("c", native), ("rust", rust), ("js", js),
    ("go", go), ("jvm", jvm), ("generic", generic),
)


def parse(output: str, root: str | None = None) -> Parsed:
    """Failing locations, missing names and modules, failing tests, and the evidence
    lines of a build or test output. Paths under root become relative; absolute
    paths elsewhere (the standard library, toolchains) are not the project's."""
    lines = [ANSI.sub("", line).rstrip("\r") for line in output.splitlines()]
    c = Collector(root)
    for _, parser in FORMATS:
        parser(lines, c)
    return c.finish(lines)
