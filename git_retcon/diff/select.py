"""Line selections: a part of a hunk, named by read_diff's numbering (`3f2a9c01bd:1-4,9`).

Inside a text hunk the `-` lines are numbered 1..m and the `+` lines m+1..m+n, in the
order read_diff shows them. A selection removes only the chosen `-` lines and adds only
the chosen `+` lines; the unchosen `-` lines stay. It becomes an ordinary hunk that
replaces the same old lines, so application stays exact and all-or-nothing.

Where a kept old line and a chosen new line go relative to each other is decided by
pairing the hunk's old and new lines that are alike (a line edited in place): a list
whose items two commits edit is one zero-context hunk `-a -b +A +B`, and taking `A`
alone must give `A b`, not `b A`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher

from git_retcon.diff.hunk import Hunk, count_lines, is_text_entry, split_lines

_HEX = re.compile(r"^[0-9a-f]+$")
_RANGE = re.compile(r"^(\d+)(?:\s*-\s*(\d+))?$")
LINE_DIGITS_MAX = 5       # a line number has at most this many digits; a shown id of only digits has more
_SIMILAR = 0.6            # how alike two lines must be to count as one line edited
_MAX_PAIRS = 4000         # old x new lines compared at most; larger hunks pair by position


class SelectionError(ValueError):
    """A selection that names no lines of its hunk, or lines it does not have."""


@dataclass(frozen=True)
class Item:
    """One apply_hunks item: a hunk id, and the numbers of its chosen lines (None: all).
    As parsed, id is what names the hunk (an id, a prefix of one, or a path: diff.ids looks it up)."""

    id: str
    lines: frozenset[int] | None = None
    text: str = ""          # as the model wrote it, for answers
    key: str = ""           # the name as written, case kept (a path's case matters; an id's does not)


def parse_items(raw: list[str]) -> list[Item]:
    """Items from apply_hunks' list. A selection split at its commas or spaces
    (`["ab12:1-3", "9"]`, what a comma-separated string becomes) is put back together."""
    groups: list[tuple[str, list[str] | None]] = []
    for token in raw:
        token = token.strip().strip("[]'\"").strip()
        if not token:
            continue
        last = groups[-1][1] if groups else None
        if last is not None and _line_numbers(token):
            last.append(token)
            continue
        hid, colon, sel = token.partition(":")
        sel = re.sub(r"\s*-\s*", "-", sel)
        if colon and not _HEX.match(hid.strip().lower()) and not all(
                _RANGE.match(s) for s in re.split(r"[\s,]+", sel) if s):
            # A path with a colon in it (`docs/a:b.md`): neither an id nor line numbers around it.
            # (`src/a.py:1` stays a selection, refused with what to write instead.)
            groups.append((token, None))
            continue
        groups.append((hid.strip(), [s for s in re.split(r"[\s,]+", sel) if s] if colon else None))
    return [Item(_id(key), None, _id(key), key) if parts is None else _item(key, parts) for key, parts in groups]


def _line_numbers(token: str) -> bool:
    """A token that continues the selection before it: line numbers have at most LINE_DIGITS_MAX
    digits, and an id is shown with a letter or more digits (one of all digits, `456789`, is an
    item of its own)."""
    m = _RANGE.match(token)
    return m is not None and all(len(g) <= LINE_DIGITS_MAX for g in m.groups() if g)


def _id(key: str) -> str:
    """Ids in any case are one id; anything else (a path) keeps its case."""
    return key.lower() if _HEX.match(key.lower()) else key


def _item(key: str, parts: list[str]) -> Item:
    hid = _id(key)
    text = f"{hid}:{','.join(parts)}"
    if not parts:
        raise SelectionError(f"{text}: no line numbers after ':' (write e.g. {hid}:1-3,7, or {hid} for the "
                             "whole hunk)")
    numbers: set[int] = set()
    for part in parts:
        m = _RANGE.match(part)
        if not m:
            raise SelectionError(f"{text}: {part!r} is not a line number or a range like 1-4")
        lo = int(m.group(1))
        hi = int(m.group(2) or lo)
        if min(lo, hi) < 1:   # the 1.5B model wrote "69d7:1-0": turning it round would not do
            raise SelectionError(f"{text}: {part!r} names line 0, and read_diff numbers each hunk's lines from 1 "
                                 f"(write e.g. {hid}:1 for its first)")
        if hi < lo:
            raise SelectionError(f"{text}: the range {part} runs backwards (write {hi}-{lo})")
        numbers.update(range(lo, hi + 1))
    return Item(hid, frozenset(numbers), text, key)


def merge(items: list[Item]) -> list[Item]:
    """One item per hunk, in first-seen order: selections of one hunk are joined; the whole
    hunk wins over any selection of it."""
    by_id: dict[str, Item] = {}
    for it in items:
        have = by_id.get(it.id)
        if have is None:
            by_id[it.id] = it
        elif have.lines is not None:
            if it.lines is None:
                by_id[it.id] = it
            else:
                lines = have.lines | it.lines
                by_id[it.id] = Item(it.id, lines, f"{it.id}:{compact(lines)}")
    return list(by_id.values())


def compact(numbers: frozenset[int] | set[int]) -> str:
    """{1,2,3,4,9} as '1-4,9'."""
    out: list[str] = []
    for n in sorted(numbers):
        if out and n - 1 == _last(out):
            lo = out[-1].split("-")[0]
            out[-1] = f"{lo}-{n}"
        else:
            out.append(str(n))
    return ",".join(out)


def _last(out: list[str]) -> int:
    return int(out[-1].split("-")[-1])


def selectable(h: Hunk) -> bool:
    """Whether read_diff numbers this hunk's lines: line changes, and new text files."""
    return h.kind == "modify" or (h.kind == "add" and is_text_entry(h.new_mode, h.added))


def numbered(h: Hunk) -> tuple[list[bytes], list[bytes]]:
    """The hunk's `-` lines (numbers 1..m) and `+` lines (m+1..m+n)."""
    if h.kind == "add":
        return [], split_lines(h.added)
    return split_lines(h.removed), split_lines(h.added)


def select(h: Hunk, numbers: frozenset[int]) -> Hunk:
    """The part of h that the numbers choose, as a hunk of its own (h itself when all are chosen)."""
    if not selectable(h):
        what = "a rename's" if h.kind == "rename" else f"a {h.kind} hunk's"
        raise SelectionError(f"hunk {h.id} ({h.kind} of {h.path}): {what} lines cannot be selected: "
                             f"take it whole ({h.id})")
    old, new = numbered(h)
    m, total = len(old), len(old) + len(new)
    bad = sorted(n for n in numbers if n < 1 or n > total)
    if bad:
        have = (f"- lines 1-{m}, + lines {m + 1}-{total}" if m and len(new) else
                f"lines 1-{total}" if total else "no lines")
        raise SelectionError(f"hunk {h.id} ({h.path}) has {have}; {compact(set(bad))} "
                             f"{'is' if len(bad) == 1 else 'are'} not among them")
    if len(numbers) == total:
        return h
    drop = {i for i in range(m) if i + 1 in numbers}
    take = {j for j in range(len(new)) if m + j + 1 in numbers}
    block: list[bytes] = []
    for sign, i in interleave(old, new):
        if sign == "-" and i not in drop:
            block.append(old[i])
        elif sign == "+" and i in take:
            block.append(new[i])
    # A line that had no newline (the file's last) gets one when something now follows it.
    block = [ln if ln.endswith(b"\n") or k == len(block) - 1 else ln + b"\n" for k, ln in enumerate(block)]
    added = b"".join(block)
    sel_id = f"{h.id}:{compact(numbers)}"
    if h.kind == "add":
        return Hunk(id=sel_id, path=h.path, kind="add", added=added, new_mode=h.new_mode, new_oid=h.new_oid)
    return Hunk(id=sel_id, path=h.path, kind="modify", old_start=h.old_start, old_lines=h.old_lines,
                new_start=h.new_start, new_lines=count_lines(added), removed=h.removed, added=added,
                old_mode=h.old_mode, new_mode=h.new_mode, old_oid=h.old_oid)


def interleave(old: list[bytes], new: list[bytes]) -> list[tuple[str, int]]:
    """Old and new lines in one order consistent with both: a line edited in place
    (old i paired with new j) puts new j right after old i; unpaired old lines come
    before unpaired new lines between pairs, as a diff shows them."""
    out: list[tuple[str, int]] = []
    i = j = 0
    for pi, pj in [*_pairs(old, new), (len(old), len(new))]:
        out += [("-", k) for k in range(i, pi)] + [("+", k) for k in range(j, pj)]
        if pi < len(old):
            out += [("-", pi), ("+", pj)]
        i, j = pi + 1, pj + 1
    return out


def _pairs(old: list[bytes], new: list[bytes]) -> list[tuple[int, int]]:
    """Old and new lines that are one line edited: the most alike pairing in order."""
    m, n = len(old), len(new)
    if not m or not n:
        return []
    if m * n > _MAX_PAIRS:
        return [(k, k) for k in range(m)] if m == n else []
    a = [x.decode("utf-8", "replace").strip() for x in old]
    b = [y.decode("utf-8", "replace").strip() for y in new]
    score = [[0.0] * n for _ in range(m)]
    for i in range(m):
        for j in range(n):
            sm = SequenceMatcher(None, a[i], b[j], autojunk=False)
            if sm.real_quick_ratio() >= _SIMILAR and sm.quick_ratio() >= _SIMILAR:
                r = sm.ratio()
                score[i][j] = r if r >= _SIMILAR else 0.0
    # best[i][j]: the highest total score pairing old[i:] with new[j:], in order.
    best = [[0.0] * (n + 1) for _ in range(m + 1)]
    for i in range(m - 1, -1, -1):
        for j in range(n - 1, -1, -1):
            paired = best[i + 1][j + 1] + score[i][j] if score[i][j] else 0.0
            best[i][j] = max(best[i + 1][j], best[i][j + 1], paired)
    out: list[tuple[int, int]] = []
    i = j = 0
    while i < m and j < n:
        if score[i][j] and best[i][j] == best[i + 1][j + 1] + score[i][j]:
            out.append((i, j))
            i, j = i + 1, j + 1
        elif best[i][j] == best[i + 1][j]:
            i += 1
        else:
            j += 1
    return out


def hunks_of(items: list[Item], by_id: dict[str, Hunk]) -> list[Hunk]:
    """The hunks the items name (ids known), selections cut out; every item's problem in
    one SelectionError, so the answer says which items failed and why."""
    out: list[Hunk] = []
    problems: list[str] = []
    for it in merge(items):
        h = by_id[it.id]
        if it.lines is None:
            out.append(h)
            continue
        try:
            out.append(select(h, it.lines))
        except SelectionError as exc:
            problems.append(str(exc))
    if problems:
        raise SelectionError("; ".join(problems))
    return out
