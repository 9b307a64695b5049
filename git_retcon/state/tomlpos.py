"""Where keys sit in a spec's TOML text: tomli gives values, not positions, and users
edit this file by hand, so errors name the line."""
from __future__ import annotations

import bisect
import contextlib
import re
from dataclasses import dataclass, field

import tomli


@dataclass
class _Table:
    line: int
    keys: dict[str, int] = field(default_factory=dict)  # key -> line of "key ="
    items: dict[str, list[int]] = field(default_factory=dict)  # array key -> line of each element


_BARE = re.compile(r"[A-Za-z0-9_-]+")
_SCALAR = re.compile(r"[^\s,\]}#]+")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


class _Scanner:
    """A minimal TOML walker over text tomli already accepted: records where keys are."""

    def __init__(self, text: str) -> None:
        self.t, self.i = text, 0
        self.newlines = [i for i, c in enumerate(text) if c == "\n"]
        self.top = _Table(1)
        self.commits: list[_Table] = []

    def line(self, pos: int) -> int:
        return bisect.bisect_left(self.newlines, pos) + 1

    def trivia(self, newlines: bool) -> None:
        t = self.t
        while self.i < len(t):
            c = t[self.i]
            if c in " \t" or (newlines and c in "\r\n"):
                self.i += 1
            elif c == "#":
                end = t.find("\n", self.i)
                self.i = len(t) if end < 0 else end
            else:
                return

    def string(self) -> str:
        t, i = self.t, self.i
        q = t[i]
        if t.startswith(q * 3, i):
            j = i + 3
            while not t.startswith(q * 3, j):
                j += 2 if q == '"' and t[j] == "\\" else 1
            run = 3
            while run < 5 and j + run < len(t) and t[j + run] == q:
                run += 1  # up to two quotes may end the content, right before the delimiter
            j += run
        else:
            j = i + 1
            while t[j] != q:
                j += 2 if q == '"' and t[j] == "\\" else 1
            j += 1
        self.i = j
        return t[i:j]

    def key(self) -> list[str]:
        segs: list[str] = []
        while True:
            self.trivia(False)
            if self.t[self.i] in "\"'":
                segs.append(tomli.loads("k = " + self.string())["k"])
            else:
                m = _BARE.match(self.t, self.i)
                assert m
                segs.append(m.group())
                self.i = m.end()
            self.trivia(False)
            if self.t[self.i] != ".":
                return segs
            self.i += 1

    def value(self, record: list[int] | None) -> None:
        t = self.t
        c = t[self.i]
        if c in "\"'":
            self.string()
        elif c == "[":
            self.i += 1
            while True:
                self.trivia(True)
                if t[self.i] == "]":
                    self.i += 1
                    return
                if record is not None:
                    record.append(self.line(self.i))
                self.value(None)
                self.trivia(True)
                if t[self.i] == ",":
                    self.i += 1
        elif c == "{":
            self.i += 1
            while True:
                self.trivia(True)
                if t[self.i] == "}":
                    self.i += 1
                    return
                self.key()
                self.i += 1  # '='
                self.trivia(False)
                self.value(None)
                self.trivia(True)
                if t[self.i] == ",":
                    self.i += 1
        else:
            m = _SCALAR.match(t, self.i)
            assert m
            self.i = m.end()
            # A local date-time may use a space between date and time.
            if _DATE.fullmatch(m.group()) and t[self.i : self.i + 1] == " " and t[self.i + 1 : self.i + 2].isdigit():
                self.i += 1
                self.value(None)

    def scan(self) -> None:
        t = self.t
        cur = self.top
        while True:
            self.trivia(True)
            if self.i >= len(t):
                return
            pos = self.i
            ln = self.line(pos)
            if t[pos] == "[":
                array = t.startswith("[[", pos)
                self.i += 2 if array else 1
                segs = self.key()
                self.i += 2 if array else 1
                cur = _Table(ln)  # keys of tables we do not model are not recorded
                if segs == ["commit"] and array:
                    self.commits.append(cur)
                elif segs[0] == "commit" and len(segs) > 1 and self.commits:
                    self.commits[-1].keys.setdefault(segs[1], ln)
                else:
                    self.top.keys.setdefault(segs[0], ln)
            else:
                segs = self.key()
                self.i += 1  # '='
                self.trivia(False)
                cur.keys.setdefault(segs[0], ln)
                record = None
                if len(segs) == 1 and segs[0] not in cur.items:
                    record = cur.items[segs[0]] = []
                self.value(record)


class Where:
    """Line numbers for error messages; falls back to sensible lines when unknown."""

    def __init__(self, text: str) -> None:
        s = _Scanner(text)
        with contextlib.suppress(Exception):  # positions are a courtesy; never mask the real error
            s.scan()
        self.top = s.top
        self.commits = s.commits or [_Table(n) for n in s.top.items.get("commit", [])]

    def at(self, key: str | None = None) -> int:
        return self.top.keys.get(key, 1) if key else 1

    def commit(self, k: int, key: str | None = None) -> int:
        if k >= len(self.commits):
            return self.at("commit")
        table = self.commits[k]
        return table.keys.get(key, table.line) if key else table.line

    def item(self, k: int, key: str, j: int) -> int:
        lines = self.commits[k].items.get(key, []) if k < len(self.commits) else []
        return lines[j] if j < len(lines) else self.commit(k, key)

