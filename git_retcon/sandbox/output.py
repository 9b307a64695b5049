"""What a command printed, trimmed to what matters: the head, the lines around the first error,
the error-looking lines between (never a warning's), and the tail (a failure brief and a note hold
this much), and the few words that say what went wrong for a `Building... FAIL (...)` line.
"""
from __future__ import annotations

import json
import re

_KEEP_HEAD = 15
_KEEP_TAIL = 60
_KEEP_BEFORE, _KEEP_AFTER = 5, 40    # around the first error
_MAX_CHARS = 6000
_REASON_CHARS = 100
_MAX_ERRORS = 20            # error lines (and their locations) kept wherever they are
_INTERESTING = re.compile(r"error|Error|ERROR|FAIL|failed|Traceback|assert|undefined|not found|No module")
# A line in which a tool states what went wrong, in the words the summary should use (by tier:
# an error's own message first, then a failed test's name).
_CAUSE = re.compile(
    r"^(?:error(?:\[E\d+\])?: (?!could not compile|aborting due to)|"     # rustc, cargo
    r"E\s+\S|[A-Z]{1,3}\d{3,4} (?:\[\*\] )?\S)|"                       # pytest's E lines, ruff's codes
    r"(?:^|\s)(?:fatal )?error(?: TS\d+)?: |"                             # gcc, javac, mypy, tsc, kotlinc
    r"\.\w+:\d+:\d+: ERROR: |"                                             # esbuild (tsx): path:line:col: ERROR:
    r"(?:^|[\s>:])(?:[\w$]+\.)*[A-Z]\w*(?:Error|Exception)(?: \[\w+\])?: |^\s*Error(?: \[\w+\])?: |"  # exceptions
    r"undefined reference to|\bundefined: |undeclared name: |panicked at|cannot find symbol|"
    r"[Nn]o such file or directory|Cannot find module|[Uu]nresolved reference|no required module provides|"
    r"not declared by package")
_LOCATED = re.compile(r"^(?:vet: )?[^\s:]+\.\w+:\d+(?::\d+)?:? ")     # path:line: message
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_TEST_FAILED = re.compile(r"^\s*(?:not ok \d+|--- FAIL:|FAILED |FAIL:? |● |✖ |✘ |\d+\) )")
# Lines that never say what went wrong: stack frames, make's and npm's echoes, warnings (rustc's
# `= warning:` notes too), and tests
# that passed (ava's and mocha's check marks, TAP's `ok`: a test may be named "stop on error").
_NOT_A_CAUSE = re.compile(r"^\s+at |^\s*(?:g?make(?:\[\d+\])?: \*\*\*|npm (?:ERR!|error)|(?:= )?warning\b)|"
                          r"^\S+:\d+(?::\d+)?: warning: |"    # gcc's and clang's
                          r"^(?:E\s+)?SystemExit(?:: -?\d*)?$|"   # only that it exited: what it printed says why
                          r"^\s*(?:[✔✓√]|ok \d+\b)|"
                          r"could not compile|aborting due to|\d+ (?:failed|errors?)\b.*\d+ (?:passed|total)|"
                          r"Transform failed with \d+ errors?:|"    # esbuild's count: the lines under it say which
                          # node:test's TAP: a file that failed to run (its stderr, in `# ` lines above, says
                          # why), or a message that is a YAML block (under the `not ok` line that names the test)
                          r"^\s*error: (?:'test failed'|[|>][-+]?)$")
# rustc's and cargo's warning: its head, then its lines (`-->`, the excerpt, `= warning: ... a hard
# error in Rust 2021!`, `note:`) up to a blank line or the next message. None of them is the cause.
_WARNING_HEAD = re.compile(r"^warning(?:\[\w+\])?: ")
_BLOCK_END = re.compile(r"^\s*$|^(?:error|warning)\b|^\[\.\.\. \d+ lines omitted \.\.\.\]$")
# The line under an error that says where it is (rustc, ruff): kept with it.
_ARROW = re.compile(r"^\s*--> \S")
# An absolute path into a build worktree, as the summary shows it: from the worktree's root.
_IN_WORKTREE = re.compile(r"(?:file://)?/\S*?/worktrees/[^/\s]+/")


def cause(output: str) -> str | None:
    """What the output says went wrong, in a few words (the first error's message, else the first
    failed test), never a stack frame nor a traceback's source line (argparse's
    `self.exit(2, _('%(prog)s: error: ...'))` is the code that printed the error, not the error);
    None when it says nothing of the kind."""
    raw = [_ANSI.sub("", line) for line in output.splitlines()]
    code = _source_lines(raw) | _warned(raw)
    lines = [_IN_WORKTREE.sub("", line).strip() for i, line in enumerate(raw) if i not in code]
    lines = [line for line in lines if line and not _NOT_A_CAUSE.search(line)]
    for rx in (_CAUSE, _TEST_FAILED, _LOCATED, _INTERESTING):
        line = next((ln for ln in lines if rx.search(ln)), None)
        if line is not None:
            return _shorten(re.sub(r"^(?:E\s+|# )", "", line))    # pytest's `E`, TAP's comment
    return None


# A Python traceback's frame line, after which comes the frame's source line; pytest's failure
# section (`____ test_x ____` or `_ _ _ _` to the next `---`/`===` rule), whose indented lines, `>`
# lines and `name = value` lines are source code and locals, and its `path:12: in f` frame lines.
_PY_FRAME = re.compile(r'^\s*File "[^"]+", line \d+')
_PYTEST_SECTION = re.compile(r"^_{3,} .+ _{3,}$|^(?:_ ){5,}_?$")
_PYTEST_END = re.compile(r"^(?:-{3,}|={3,})")
_PYTEST_CODE = re.compile(r"^(?: {4}|\t|>)|^[A-Za-z_]\w* = ")


def _source_lines(raw: list[str]) -> set[int]:
    """The indices of lines that are a traceback's source code or locals, never what went wrong."""
    out: set[int] = set()
    section = False
    for i, line in enumerate(raw):
        if _PYTEST_SECTION.match(line):
            section = True
        elif _PYTEST_END.match(line):
            section = False
        elif (section and _PYTEST_CODE.match(line)) or (i and _PY_FRAME.match(raw[i - 1]) and line[:4] == "    "):
            out.add(i)
    return out


def _warned(lines: list[str]) -> set[int]:
    """The indices of the lines of rustc's and cargo's warnings, their heads included."""
    out: set[int] = set()
    inside = False
    for i, line in enumerate(lines):
        inside = bool(_WARNING_HEAD.match(line)) or (inside and not _BLOCK_END.match(line))
        if inside:
            out.add(i)
    return out


_CARGO_JSON = re.compile(r'^\{"(?:reason|\$message_type)":')


def _readable(lines: list[str]) -> list[str]:
    """cargo's and rustc's JSON messages as the text they render (a diagnostic's JSON carries
    its whole explanation: kilobytes a line); cargo's other JSON records left out."""
    if not any(_CARGO_JSON.match(ln) for ln in lines[:200]):
        return lines
    out: list[str] = []
    for line in lines:
        if not _CARGO_JSON.match(line):
            out.append(line)
            continue
        try:
            doc = json.loads(line)
        except ValueError:
            out.append(line)
            continue
        msg = doc.get("message", doc) if isinstance(doc, dict) else None
        text = msg.get("rendered") if isinstance(msg, dict) else None
        if isinstance(text, str):
            out += [*text.rstrip("\n").splitlines(), ""]
    return out


def _shorten(line: str) -> str:
    line = " ".join(line.split())
    if len(line) <= _REASON_CHARS:
        return line
    return line[: _REASON_CHARS - 1].rsplit(" ", 1)[0] + "…"


def trim(output: str) -> str:
    """Head, the lines around the first error, the error-looking lines between, and the tail:
    what a reader of a log needs (a location in the middle of a long output survives)."""
    lines = _readable(output.splitlines())
    warned = _warned(lines)
    errors = _errors(lines, warned)
    if len(lines) <= _KEEP_HEAD + _KEEP_TAIL:
        text = "\n".join(lines)
        return text if len(text) <= _MAX_CHARS else _cut(lines, set(range(len(lines))), errors)
    first = errors[0] if errors else _first(lines, warned)
    keep = set(range(_KEEP_HEAD)) | set(range(len(lines) - _KEEP_TAIL, len(lines)))
    if first is not None:
        keep |= set(range(max(first - _KEEP_BEFORE, 0), min(first + _KEEP_AFTER, len(lines))))
    # A warning's `hard error in Rust 2021!` is no error: between head and tail, errors only.
    middle = [i for i in range(len(lines)) if i not in keep and i not in warned and _INTERESTING.search(lines[i])]
    keep |= set(middle[:30]) | set(errors)
    return _cut(lines, keep, errors)


def _first(lines: list[str], warned: set[int]) -> int | None:
    """Where an output with no error's own line failed: its first failed test (a TAP `not ok`
    whose message is a YAML block), else its first error-looking line."""
    for rx in (_TEST_FAILED, _INTERESTING):
        at = next((i for i, ln in enumerate(lines) if rx.search(ln) and i not in warned
                   and not _NOT_A_CAUSE.search(ln)), None)
        if at is not None:
            return at
    return None


def _errors(lines: list[str], warned: set[int]) -> list[int]:
    """The indices of the lines that say what went wrong (not a warning's), each with the `-->`
    line under it that says where: what the character cap cuts last."""
    out: list[int] = []
    for i, line in enumerate(lines):
        if i not in warned and _CAUSE.search(line) and not _NOT_A_CAUSE.search(line):
            out.append(i)
            if i + 1 < len(lines) and _ARROW.match(lines[i + 1]):
                out.append(i + 1)
        if len(out) >= _MAX_ERRORS:
            break
    return out


def _cut(lines: list[str], keep: set[int], errors: list[int]) -> str:
    """The kept lines, a marker where lines were left out; past _MAX_CHARS the tail's first
    lines go, then the head's, and the errors' own lines last: the first error stays."""
    def render(kept: list[int]) -> str:
        out: list[str] = []
        prev = -1
        for i in kept:
            if i > prev + 1:
                out.append(f"[... {i - prev - 1} lines omitted ...]")
            out.append(lines[i] if len(lines[i]) <= 500 else lines[i][:499] + "…")
            prev = i
        if prev < len(lines) - 1:
            out.append(f"[... {len(lines) - 1 - prev} lines omitted ...]")
        return "\n".join(out)

    kept = sorted(keep)
    last = set(errors)
    text = render(kept)
    while len(text) > _MAX_CHARS and len(kept) > 1:
        # Drop from the middle of the kept lines' second half (the tail's start), so the head,
        # the first error and the very last lines stay; an error's own lines go only when
        # nothing else is left to drop.
        spare = [i for i in kept if i not in last] or kept
        drop = spare[len(spare) * 3 // 4 - 1] if len(spare) > 4 else spare[-1]
        kept.remove(drop)
        text = render(kept)
    return text
