"""Hunk ids as a model reads and writes them: abbreviated the way git abbreviates object
names, and apply_hunks items that name a hunk by a prefix of its id.

Internally every id stays whole (10 hex digits: the spec, notes and the plan keep them);
only what a model reads is shortened, and what it writes back is looked up here. Ids cost
output tokens on every apply_hunks call, so the shortest unambiguous form is the one shown.
"""
from __future__ import annotations

import os
import re
from collections.abc import Iterable

from git_retcon.diff.hunk import Hunk
from git_retcon.diff.select import Item, SelectionError

SHOWN_MIN = 6       # hex digits shown at least (git's abbreviations start at 7; hunks are fewer)
PREFIX_MIN = 4      # hex digits an item must have to name a hunk by prefix
_HEX = re.compile(r"^[0-9a-f]+$")
_FULL = re.compile(r"\b[0-9a-f]{10}\b")


def short_ids(ids: Iterable[str]) -> dict[str, str]:
    """Each id's shortest prefix, at least SHOWN_MIN long and not all digits, that no other of
    these ids begins with."""
    order = sorted(set(ids))
    out: dict[str, str] = {}
    for i, full in enumerate(order):
        need = SHOWN_MIN
        for j in (i - 1, i + 1):
            if 0 <= j < len(order):
                need = max(need, _common(full, order[j]) + 1)
        # All decimal digits would read as a line number after a selection (`ab12:3`, `456789`
        # is how a comma-split `ab12:3,456789` arrives): show up to the first letter.
        while need < len(full) and full[:need].isdigit():
            need += 1
        out[full] = full[:need]
    return out


def _common(a: str, b: str) -> int:
    return len(os.path.commonprefix([a, b]))


def shorten(text: str, names: dict[str, str]) -> str:
    """text with every whole id of `names` written as its shown form (answers built below the
    tools, such as an apply failure naming its hunk, name ids whole)."""
    return _FULL.sub(lambda m: names.get(m.group(0), m.group(0)), text)


def looks_like_id(key: str) -> bool:
    return len(key) >= PREFIX_MIN and bool(_HEX.match(key))


def expand(items: list[Item], remaining: list[Hunk]) -> tuple[list[Item], list[str]]:
    """The items with whole ids (a unique prefix of an id, the whole id too, names its hunk),
    and the items that name no hunk. A prefix that begins several ids is a SelectionError
    naming them, so nothing is applied."""
    names = short_ids(h.id for h in remaining)
    out: list[Item] = []
    unknown: list[str] = []
    problems: list[str] = []
    for it in items:
        found = [h for h in remaining if h.id.startswith(it.id)] if looks_like_id(it.id) else []
        if len(found) == 1:
            out.append(Item(found[0].id, it.lines, it.text))
        elif found:
            problems.append(f"{it.id} is ambiguous: it begins {len(found)} hunk ids: "
                            + ", ".join(f"{names[h.id]} ({h.path})" for h in found[:20]))
        else:
            unknown.append(it.id)
    if problems:
        raise SelectionError("; ".join(problems))
    return out, list(dict.fromkeys(unknown))
