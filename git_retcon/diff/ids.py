"""Hunk ids as a model reads and writes them: abbreviated the way git abbreviates object
names, and apply_hunks items that name a hunk by a prefix of its id, or hunks by a path.

Internally every id stays whole (10 hex digits: the spec, notes and the plan keep them);
only what a model reads is shortened, and what it writes back is looked up here. Ids cost
output tokens on every apply_hunks call, so the shortest unambiguous form is the one shown.
"""
from __future__ import annotations

import bisect
import functools
import itertools
import operator
import os
import re
import threading
from collections.abc import Callable, Iterable

from git_retcon.diff.hunk import Hunk
from git_retcon.diff.select import LINE_DIGITS_MAX, Item, SelectionError

SHOWN_MIN = 4       # hex digits shown at least (git's abbreviations start at 7; hunks are fewer)
PREFIX_MIN = 4      # hex digits an item must have to name a hunk by prefix
_HEX = re.compile(r"^[0-9a-f]+$")
_FULL = re.compile(r"\b[0-9a-f]{10}\b")


def short_ids(ids: Iterable[str]) -> dict[str, str]:
    """Each id's shortest prefix, at least SHOWN_MIN long, that no other of these ids begins with
    (the result is shared: read it, do not change it)."""
    return _ABBREVIATIONS.get(ids if isinstance(ids, list) else list(ids))


def names_of(hunks: list[Hunk]) -> dict[str, str]:
    """short_ids of the hunks' ids (the same shared answer)."""
    return lookup(hunks).names


class Lookup:
    """A list of hunks found by id and by path (a rename by its old path too), worked out once
    per remaining diff (and each part only when asked for) rather than at every read_diff and
    apply_hunks."""

    def __init__(self, hunks: list[Hunk]) -> None:
        self.hunks = hunks

    @functools.cached_property
    def ids(self) -> list[str]:
        return list(map(_ID, self.hunks))

    @functools.cached_property
    def by_id(self) -> dict[str, Hunk]:
        return dict(zip(self.ids, self.hunks, strict=True))

    @functools.cached_property
    def names(self) -> dict[str, str]:
        return _ABBREVIATIONS.get(self.ids)

    @functools.cached_property
    def sorted_ids(self) -> list[str]:
        return sorted(self.ids)

    @functools.cached_property
    def _index(self) -> tuple[list[str], list[int]]:
        """The paths sorted, each rename's old path among them, and the position in hunks of each
        (pairs (path, position) in sorted order)."""
        # The remaining diff comes sorted by path, with few renames: then its paths are the
        # index as they are, and each old path is put in its place (no Python loop over every
        # hunk at each step: a run would grow with the square of its commits).
        paths = list(map(_PATH, self.hunks))
        renames = any(map(_OLD_PATH, self.hunks))
        olds = sorted((h.old_path, i) for i, h in enumerate(self.hunks) if h.old_path) if renames else []
        if len(olds) <= 64 and all(map(operator.le, paths, itertools.islice(paths, 1, None))):
            where = list(range(len(paths)))
            for old, i in olds:
                at, end = bisect.bisect_left(paths, old), bisect.bisect_right(paths, old)
                while at < end and where[at] < i:
                    at += 1
                paths.insert(at, old)
                where.insert(at, i)
            return paths, where
        keys = [(h.path, i) for i, h in enumerate(self.hunks)]
        keys += olds
        keys.sort()
        return [k for k, _ in keys], [i for _, i in keys]

    @property
    def paths(self) -> list[str]:
        return self._index[0]

    def starting(self, prefix: str) -> list[Hunk]:
        """The hunks whose path (or old path) begins with prefix, in order."""
        at = bisect.bisect_left(self.paths, prefix)
        return self._at(at, lambda q: q.startswith(prefix))

    def covered(self, p: str) -> list[Hunk]:
        """The hunks that covers(h, p) takes, in order (p without its trailing /)."""
        paths, where = self._index
        lo, hi = bisect.bisect_left(paths, p), bisect.bisect_right(paths, p)
        return self._at(bisect.bisect_left(paths, p + "/"), lambda q: q.startswith(p + "/"), where[lo:hi])

    def _at(self, at: int, match: Callable[[str], bool], also: Iterable[int] = ()) -> list[Hunk]:
        """The hunks of the sorted paths from at on that match, and those at positions `also`."""
        paths, where = self._index
        end = at
        while end < len(paths) and match(paths[end]):
            end += 1
        return [self.hunks[i] for i in sorted({*where[at:end], *also})]


def lookup(hunks: list[Hunk]) -> Lookup:
    """The Lookup of these hunks: found again while the list holds the same hunks (compared
    element by element, by identity first, at C speed), made anew when it does not."""
    with _LOOKUPS_LOCK:
        for kept, found in _LOOKUPS:
            if kept == hunks:
                return found
    found = Lookup(list(hunks))
    with _LOOKUPS_LOCK:
        _LOOKUPS[:] = [*_LOOKUPS[-3:], (found.hunks, found)]
    return found


# The last few Lookups, process-wide for the same reason as _ABBREVIATIONS: lookup() takes a list.
_LOOKUPS: list[tuple[list[Hunk], Lookup]] = []
_LOOKUPS_LOCK = threading.Lock()     # plan proposes in threads


_ID = operator.attrgetter("id")
_PATH = operator.attrgetter("path")
_OLD_PATH = operator.attrgetter("old_path")


class _Abbreviations:
    """short_ids' answers. A step names the same remaining diff several times (its prompt, each
    read_diff, apply_hunks' answer) and each step's diff differs from the last by a few hunks:
    an answer is found again by comparing the list of ids (each element by identity first, at
    C speed: no tuple to build and hash), and a new one is worked out from the last one,
    redoing only the ids next to those that came or went (an id's form depends on its
    neighbours in sorted order alone)."""

    KEPT = 8

    def __init__(self) -> None:
        self.lock = threading.Lock()     # plan proposes in threads
        self.answers: list[tuple[list[str], dict[str, str]]] = []
        self.order: list[str] = []       # the last answer's ids, sorted
        self.known: set[str] = set()
        self.names: dict[str, str] = {}

    def get(self, ids: list[str]) -> dict[str, str]:
        with self.lock:
            for key, names in self.answers:
                if key == ids:
                    return names
            names = self._work_out(ids)
            self.answers = [*self.answers[1 - self.KEPT:], (list(ids), names)]
            return names

    def _work_out(self, ids: list[str]) -> dict[str, str]:
        new = set(ids)
        gone, fresh = self.known - new, new - self.known
        if self.known and not gone and not fresh:
            return self.names
        if not self.known or len(gone) + len(fresh) > len(new) // 4:
            order = sorted(new)
            names = {full: full[:_need(order, i)] for i, full in enumerate(order)}
        else:
            order, names = self.order.copy(), self.names.copy()
            for g in gone:
                del order[bisect.bisect_left(order, g)]
                del names[g]
            for f in fresh:
                bisect.insort(order, f)
            near: set[str] = set()
            for x in (*gone, *fresh):
                at = bisect.bisect_left(order, x)
                near.update(order[max(at - 1, 0):at + 2])
            for x in near:
                names[x] = x[:_need(order, bisect.bisect_left(order, x))]
        self.order, self.known, self.names = order, new, names
        return names


def _need(order: list[str], i: int) -> int:
    """How many digits order[i] needs to differ from its sorted neighbours, and to be no line
    number: select.parse_items reads a number of up to LINE_DIGITS_MAX digits after a selection
    (`["3f2a:1", "45"]`, a comma-split "3f2a:1,45") as more of its lines, so a shown id that short
    has a letter, else it is shown with a digit more than a line number has."""
    full = order[i]
    need = SHOWN_MIN
    for j in (i - 1, i + 1):
        # Neighbours rarely share SHOWN_MIN digits: the common prefix is measured only when they do.
        if 0 <= j < len(order) and order[j][:SHOWN_MIN] == full[:SHOWN_MIN]:
            need = max(need, _common(full, order[j]) + 1)
    while need <= LINE_DIGITS_MAX and full[:need].isdigit():
        need += 1
    return need


# Process-wide, as short_ids is a function of a list of ids: its callers (prompts, read_diff,
# apply_hunks' answers, plan) hold lists, not one object whose lifetime the answers share.
_ABBREVIATIONS = _Abbreviations()


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
    path names every remaining hunk under it, whole, but those an exclusion (`-` and an id:
    `-3f2a`) leaves out and those an item of the call selects lines of (`3f2a:1-4`: those lines).
    Returns the items and remarks for the answer; every item that names nothing (or names several
    hunks by one prefix) is in one SelectionError, so nothing is applied."""
    look = lookup(remaining)    # as read_diff found and named them (the same cached answer)
    order, by_id, names, named = look.sorted_ids, look.by_id, look.names, look.paths
    out: list[Item] = []
    remarks: list[str] = []
    unknown_ids: list[str] = []
    unknown_paths: list[str] = []
    problems: list[str] = []
    excluded, rest = _exclusions(items, order, by_id, names, as_path, named, problems, remarks)
    positive: set[str] = set()
    path_items: list[str] = []
    paths_at: list[tuple[int, str]] = []    # (where in out, path): expanded once every id is known
    for it in rest:
        key = it.key or it.id
        found = [by_id[i] for i in _begin(order, key.lower())] if looks_like_id(key) else []
        path = as_path(key)
        is_path = path in ("", ".") or _under(named, path.rstrip("/"))
        if len(found) == 1:
            out.append(Item(found[0].id, it.lines, it.text))
            positive.add(found[0].id)
            if is_path:
                remarks.append(f"{key} is a hunk id and also a path: the hunk was taken "
                               f"(write ./{path} for the path's hunks)")
        elif is_path and it.lines is not None:
            problems.append(f"{it.text}: a path takes its hunks whole; to take some lines, name a hunk id "
                            f"(read_diff({path!r}) numbers them)")
        elif is_path:
            path_items.append(path)
            paths_at.append((len(out), path))
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
    for hid, text in excluded.items():
        h = by_id[hid]
        if hid in positive:
            problems.append(f"{text} leaves out hunk {names[hid]} ({h.path}), which this call also names: "
                            "name it or leave it out, not both")
        elif not any(p in ("", ".") or covers(h, p) for p in path_items):
            problems.append(f"{text}: an exclusion leaves a hunk out of the paths of the same call, and no "
                            f"path item covers {names[hid]} ({h.path}): name the path too, e.g. "
                            f"[{h.path!r}, {text!r}], or leave {text} out")
    if problems:
        raise SelectionError("; ".join(problems))
    # A path takes its hunks whole, but not those left out, and of those named with lines only the lines.
    skip = excluded.keys() | {i.id for i in out if i.lines is not None}
    for at, path in reversed(paths_at):
        took = remaining if path in ("", ".") else look.covered(path.rstrip("/"))
        out[at:at] = [Item(h.id, None, names[h.id]) for h in took if h.id not in skip]
    if excluded and not out:
        raise SelectionError("the exclusions leave out every hunk the other items name: nothing to apply")
    return out, remarks


def _exclusions(items: list[Item], order: list[str], by_id: dict[str, Hunk], names: dict[str, str],
                as_path: Callable[[str], str], named: list[str], problems: list[str],
                remarks: list[str]) -> tuple[dict[str, str], list[Item]]:
    """The hunks that exclusions (`-3f2a`) leave out (whole id -> the item as written), and the
    other items. `-` and a name that begins no hunk id is a path (a file may be named `-x`)."""
    excluded: dict[str, str] = {}
    rest: list[Item] = []
    for it in items:
        key = it.key or it.id
        hid = key[1:]
        if not key.startswith("-") or not looks_like_id(hid):
            rest.append(it)
            continue
        found = [by_id[i] for i in _begin(order, hid.lower())]
        is_path = _under(named, as_path(key).rstrip("/"))
        if not found and is_path:
            rest.append(it)         # a file named like an exclusion, and no hunk of that id
        elif not found:
            problems.append(f"{it.text or key}: unknown hunk id {hid} (an exclusion is '-' and a hunk id "
                            "as read_diff shows it)")
        elif len(found) > 1:
            problems.append(f"{it.text or key} is ambiguous: {hid} begins {len(found)} hunk ids: "
                            + ", ".join(f"{names[h.id]} ({h.path})" for h in found[:20]))
        elif it.lines is not None:
            problems.append(f"{it.text}: an exclusion leaves out a whole hunk; to take some of its lines, "
                            f"name them ({names[found[0].id]}:LINES)")
        else:
            excluded[found[0].id] = key
            if is_path:
                remarks.append(f"{key} leaves out hunk {names[found[0].id]} and is also a path: the hunk "
                               f"was left out (write ./{key} for the path's hunks)")
    return excluded, rest


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
