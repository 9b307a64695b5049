"""The spec written back as TOML: stable, hand-editable, and parse(dump(s)) == s.

Written by hand rather than with tomli-w or tomlkit: both lose the CR of a CRLF
inside a multi-line string (a commit message would change on its way through the
spec), tomli-w picks inline or table layouts by line length (a long stuck summary
would turn a history into [[commit.history]] tables), and tomlkit takes more than
ten times as long per save, which a run makes several times per commit.
"""
from __future__ import annotations

import itertools
import operator
import re
import threading

from git_retcon.state.spec import (
    Absorbed,
    CommitCreated,
    Entry,
    LogicalCommit,
    Resolved,
    Spec,
    SpecError,
    Squashed,
    Stuck,
)

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


# Regexes rather than per-character Python: specs carry long hints and histories.
_CONTROL = re.compile("[\x00-\x1f\x7f]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_LINE_ESC = re.compile('["\\\\\x00-\x1f\x7f]')
# In a multi-line basic string only a quote that precedes another quote (or ends
# the text) needs escaping: then no '"""' can close the string early.
_MULTI_ESC = re.compile('[\\\\\x00-\x08\x0b-\x1f\x7f]|"(?="|\\Z)')


def _control(c: str) -> bool:
    return c < " " or c == "\x7f"


def _check(s: str, what: str) -> None:
    # A lone surrogate has no UTF-8 encoding and no TOML escape: refuse rather than lose it.
    m = _SURROGATE.search(s)
    if m:
        raise SpecError(f"spec: {what} contains a lone surrogate U+{ord(m.group()):04X}, "
                        "which TOML cannot store: remove it")


def _escape(c: str) -> str:
    return _ESCAPES.get(c) or (f"\\u{ord(c):04X}" if _control(c) else c)


def _line_str(s: str) -> str:
    """A one-line TOML string; literal when that spares backslashes."""
    if ("\\" in s or '"' in s) and "'" not in s and not _CONTROL.search(s):
        return f"'{s}'"
    return '"' + _LINE_ESC.sub(lambda m: _escape(m.group()), s) + '"'


def _str(s: str) -> str:
    """A TOML string; multi-line when the text has newlines, so it reads as written."""
    if "\n" not in s:
        return _line_str(s)
    # The newline right after the opening delimiter is dropped by TOML, so text keeps its own.
    if "\\" in s and "'''" not in s and not s.endswith("'") and not any(_control(c) and c not in "\t\n" for c in s):
        return "'''\n" + s + "'''"
    return '"""\n' + _MULTI_ESC.sub(lambda m: _escape(m.group()), s) + '"""'


def _entry(e: Entry) -> str:
    if isinstance(e, CommitCreated):
        return "{ commit_created = " + _line_str(e.sha) + " }"
    if isinstance(e, Squashed):
        return "{ squashed = " + _line_str(e.sha) + " }"
    if isinstance(e, Stuck):
        return "{ stuck = " + _str(e.summary) + " }"  # a brief reads as lines in `spec show`
    if isinstance(e, Absorbed):
        return "{ absorbed = " + _str(e.text) + " }"
    if isinstance(e, Resolved):
        return "{ resolved = " + _str(e.text) + " }"
    return '"complete"'


def dump(spec: Spec, texts: CommitTexts | None = None) -> str:
    """The spec as stable, hand-editable TOML; parse(dump(s)) == s. texts: the [[commit]]
    texts kept from the last save of the same spec (a Store keeps them), else none."""
    lines: list[str] = []
    for name in ("source", "remote", "cleaned", "setup", "build", "test", "timeout", "model", "wip", "network",
                 "sandbox", "owners"):
        value = getattr(spec, name)
        if isinstance(value, bool):
            lines.append(f"{name} = {'true' if value else 'false'}")
        elif isinstance(value, int):
            lines.append(f"{name} = {value}")
        elif value is not None:
            _check(value, f"'{name}'")
            lines.append(f"{name} = {_str(value)}")
    if spec.writable:
        for w in spec.writable:
            _check(w, "'writable'")
        lines.append(f"writable = [{', '.join(_line_str(w) for w in spec.writable)}]")
    lines += (texts or CommitTexts()).of(spec.commits)
    return "\n".join(lines) + "\n"


_FIELDS = operator.attrgetter("message", "hints", "paths", "hunks", "history")
_Fields = tuple[str, str, list[str], list[str], list[Entry]]


class CommitTexts:
    """The [[commit]] texts of the last spec rendered, with the fields each was made from.
    A run saves its spec at each created commit, and all but one [[commit]] are as they were:
    each is rendered once, and a save finds the ones that changed without a Python call per
    commit (else a run of K commits would grow with K squared). The Store keeps one, for the
    spec it saves; the fields are kept per position (lists copied: they change in place)."""

    def __init__(self) -> None:
        self.kept: list[_Fields] = []
        self.texts: list[str] = []
        self.lock = threading.Lock()    # a save from another thread must not interleave: texts and fields go in pairs

    def of(self, commits: list[LogicalCommit]) -> list[str]:
        with self.lock:
            return self._texts(commits)

    def _texts(self, commits: list[LogicalCommit]) -> list[str]:
        kept, texts = self.kept, self.texts
        now: list[_Fields] = list(map(_FIELDS, commits))
        del kept[len(now):], texts[len(now):]
        # Fields compared at C speed (tuples, then lists element by element, by identity first).
        stale = [*itertools.compress(range(len(kept)), map(operator.ne, now, kept)), *range(len(kept), len(now))]
        for k in stale:
            message, hints, paths, hunks, history = now[k]
            text = _commit(k, message, hints, tuple(paths), tuple(hunks), tuple(history))
            fields = (message, hints, list(paths), list(hunks), list(history))
            if k < len(kept):
                kept[k], texts[k] = fields, text
            else:
                kept.append(fields)
                texts.append(text)
        return texts.copy()


def _commit(k: int, message: str, hints: str, paths: tuple[str, ...], hunks: tuple[str, ...],
            history: tuple[Entry, ...]) -> str:
    ctx = f"commit {k + 1}"
    lines = ["", "[[commit]]"]
    _check(message, f"{ctx}: 'message'")
    _check(hints, f"{ctx}: 'hints'")
    lines.append(f"message = {_str(message)}")
    lines.append(f"hints = {_str(hints)}")
    if paths:
        for p in paths:
            _check(p, f"{ctx}: 'paths'")
        one = "paths = [" + ", ".join(_line_str(p) for p in paths) + "]"
        lines += [one] if len(one) <= 88 else ["paths = [", *(f"    {_line_str(p)}," for p in paths), "]"]
    if hunks:
        rows = [", ".join(f'"{h}"' for h in hunks[i:i + 6]) for i in range(0, len(hunks), 6)]
        lines += [f"hunks = [{rows[0]}]"] if len(rows) == 1 else ["hunks = [", *(f"    {r}," for r in rows), "]"]
    if history:
        for e in history:
            _check(getattr(e, "sha", "") + getattr(e, "summary", "") + getattr(e, "text", ""), f"{ctx}: 'history'")
        lines += ["history = [", *(f"    {_entry(e)}," for e in history), "]"]
    return "\n".join(lines)
