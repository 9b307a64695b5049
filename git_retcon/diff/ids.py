"""Hunk ids as a model reads and writes them: abbreviated the way git abbreviates object
names, and apply_hunks items that name a hunk by a prefix of its id, or hunks by a path.

Internally every id stays whole (10 hex digits: the spec, notes and the plan keep them);
only what a model reads is shortened, and what it writes back is looked up here. Ids cost
output tokens on every apply_hunks call, so the shortest unambiguous form is the one shown.
"""
from __future__ import annotations

import bisect
import functools
import os
import re
from collections.abc import Callable, Iterable

from git_retcon.diff.hunk import Hunk
from git_retcon.diff.select import Item, SelectionError

SHOWN_MIN = 6       # hex digits shown at least (git's abbreviations start at 7; hunks are fewer)
PREFIX_MIN = 4      # hex digits an item must have to name a hunk by prefix
_HEX = re.compile(r"^[0-9a-f]+$")
_FULL = re.compile(r"\b[0-9a-f]{10}\b")


def short_ids(ids: Iterable[str]) -> dict[str, str]:
    """Each id's shortest prefix, at least SHOWN_MIN long, that no other of these ids begins with
    (the result is shared: read it, do not change it)."""
    # A step names the same remaining diff several times (its prompt, each read_diff, apply_hunks'
    # answer): sorted once, not at every call.
    return _short_ids(tuple(ids))


@functools.lru_cache(maxsize=8)
def _short_ids(ids: tuple[str, ...]) -> dict[str, str]:
    """short_ids of these ids.
    One of all digits is no line number: select.parse_items reads numbers of 6 digits or more
    after a selection as an item of their own."""
    order = sorted(set(ids))
    out: dict[str, str] = {}
    for i, full in enumerate(order):
        need = SHOWN_MIN
        for j in (i - 1, i + 1):
            # Neighbours rarely share SHOWN_MIN digits: the common prefix is measured only when they do.
            if 0 <= j < len(order) and order[j][:SHOWN_MIN] == full[:SHOWN_MIN]:
                need = max(need, _common(full, order[j]) + 1)
        out[full] = full[:need]
    return out


def _common(a: str, b: str) -> int:
    return len(os.path.commonprefix([a, b]))


def shorten(text: str, names: dict[str, str]) -> str:
    """text with every whole id of `names` written as its shown form (answers built below the
    tools, such as an apply failure naming its hunk, name ids whole)."""
    return _FULL.sub(lambda m: names.get(m.group(0), m.group(0)), text)


def covers(h: Hunk, path: str) -> bool:
    """Whether a path item takes h: the file itself, or a directory above it (with or without
    its trailing /); a rename counts under its old path too, as read_diff's filter has it.
    Whole names only: `src/fo` is not `src/foo.py` (an item applies, a filter only shows)."""
    if path in ("", "."):
        return True
    p = path.rstrip("/")
    return any(q == p or q.startswith(p + "/") for q in (h.path, h.old_path or "") if q)


def looks_like_id(key: str) -> bool:
    return len(key) >= PREFIX_MIN and bool(_HEX.match(key.lower()))


def expand(items: list[Item], remaining: list[Hunk], as_path: Callable[[str], str]) -> tuple[list[Item], list[str]]:
    """The items with whole ids: a unique id prefix (the whole id too) names its hunk, else a
    path names every remaining hunk under it, whole. Returns the items and remarks for the
    answer; every item that names nothing (or names several hunks by one prefix) is in one
    SelectionError, so nothing is applied."""
    order = sorted(h.id for h in remaining)
    by_id = {h.id: h for h in remaining}
    names = short_ids(h.id for h in remaining)   # as read_diff named them (the same cached answer)
    named = sorted(q for h in remaining for q in (h.path, h.old_path) if q)
    out: list[Item] = []
    remarks: list[str] = []
    unknown_ids: list[str] = []
    unknown_paths: list[str] = []
    problems: list[str] = []
    for it in items:
        key = it.key or it.id
        found = [by_id[i] for i in _begin(order, key.lower())] if looks_like_id(key) else []
        path = as_path(key)
        is_path = path in ("", ".") or _under(named, path.rstrip("/"))
        if len(found) == 1:
            out.append(Item(found[0].id, it.lines, it.text))
            if is_path:
                remarks.append(f"{key} is a hunk id and also a path: the hunk was taken "
                               f"(write ./{path} for the path's hunks)")
        elif is_path and it.lines is not None:
            problems.append(f"{it.text}: a path takes its hunks whole; to take some lines, name a hunk id "
                            f"(read_diff({path!r}) numbers them)")
        elif is_path:
            out += [Item(h.id, None, names[h.id]) for h in remaining if covers(h, path)]
        elif found:
            problems.append(f"{key} is ambiguous: it begins {len(found)} hunk ids: "
                            + ", ".join(f"{names[h.id]} ({h.path})" for h in found[:20]))
        elif _HEX.match(key.lower()):
            unknown_ids.append(key)
        else:
            unknown_paths.append(path)
    if unknown_ids:
        problems.append(f"unknown hunk ids: {', '.join(dict.fromkeys(unknown_ids[:20]))}"
                        + ("" if all(len(k) >= PREFIX_MIN for k in unknown_ids) else
                           f" (an id needs at least {PREFIX_MIN} of its hex digits)"))
    if unknown_paths:
        problems.append("no remaining hunk is under " + ", ".join(repr(p) for p in dict.fromkeys(unknown_paths[:20]))
                        + " (neither a hunk id nor a path with changes left)")
    if problems:
        raise SelectionError("; ".join(problems))
    return out, remarks


def _begin(order: list[str], prefix: str) -> list[str]:
    """The sorted ids that begin with prefix (a model may send a thousand ids: no scan each)."""
    at = bisect.bisect_left(order, prefix)
    end = at
    while end < len(order) and order[end].startswith(prefix):
        end += 1
    return order[at:end]


def _under(paths: list[str], p: str) -> bool:
    """Whether one of the sorted paths is p or lies under it (bisection: an apply_hunks call
    costs no walk of every remaining path's directories)."""
    at = bisect.bisect_left(paths, p)
    if at < len(paths) and paths[at] == p:
        return True
    below = bisect.bisect_left(paths, p + "/")
    return below < len(paths) and paths[below].startswith(p + "/")
