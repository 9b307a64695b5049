"""Atoms: the parts of one hunk that belong to different logical commits.

A hunk of the branch's diff (merge base to source tip, zero context) can hold lines of several
commits: one list of expected failures, one import block, a function two commits change. An
atom is a run of such a hunk's lines, named under its hunk by read_diff's numbering
(`3f2a9c01bd:1-2,5`: the `-` lines 1..m, the `+` lines m+1..m+n, diff/select.py), so its name
is stable for as long as the branch's diff is. A line edited in place keeps its removed and
added halves in one atom (the pairing select() uses), and the lines of one atom are adjacent,
but for a list's frame (FRAME): its opening and closing lines, on either side of its entries,
are one atom, for the commit that adds or empties the list takes both; and for a line edited
(edit()) whose halves a diff shows apart, all `-` lines first.

Which lines go together is the caller's to say (owners/atoms.py reads the evidence); here are
the units a hunk splits into, the hunk an atom shows (its own lines only, at its own place),
and the tree a set of atoms makes from the merge base.
"""
from __future__ import annotations

import re
from collections.abc import Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass

import pygit2

from git_retcon.diff.apply import tree_with
from git_retcon.diff.hunk import Hunk
from git_retcon.diff.select import _pairs, compact, interleave, numbered, select

_ATOM = re.compile(r"^([0-9a-f]{10}):(\d+(?:-\d+)?(?:,\d+(?:-\d+)?)*)$")


@dataclass(frozen=True)
class Unit:
    """The smallest part of a hunk that moves alone: one `-` line, one `+` line, or a line edited
    in place (its `-` and `+` halves). old, new: the indexes in the hunk's `-` and `+` lines."""

    old: tuple[int, ...]
    new: tuple[int, ...]

    def numbers(self, m: int) -> frozenset[int]:
        """read_diff's numbers of the unit's lines, in a hunk of m `-` lines."""
        return frozenset([i + 1 for i in self.old] + [m + j + 1 for j in self.new])


def units(h: Hunk) -> list[Unit]:
    """h's units in the order a diff shows them (a hunk whose lines cannot be selected: none)."""
    if h.kind != "modify":
        return []
    old, new = numbered(h)
    pairs = dict(_pairs(old, new))     # the pairing select() places lines by: one rule
    out: list[Unit] = []
    for sign, at in interleave(old, new):
        if sign == "-" and at in pairs:
            out.append(Unit((at,), (pairs[at],)))
        elif sign == "-":
            out.append(Unit((at,), ()))
        elif at not in pairs.values():
            out.append(Unit((), (at,)))
    return out


BLANK = ("blank",)     # the signal of a blank line: it goes with the lines after it
FRAME = ("frame",)     # the signal of a list's frame: every line of it in one atom, adjacent or not
COMMENT = ("comment",)  # the signal of a line that is only a comment: it goes with the lines after it


def edit(k: int) -> tuple[str, int]:
    """The signal of the k-th line edited in a hunk of edits: its halves in one atom, adjacent or not."""
    return ("edit", k)


def group(h: Hunk, signals: Sequence[Hashable | None]) -> list[frozenset[int]]:
    """h's lines in atoms: adjacent units with the same signal together; a unit with no signal
    joins the atom before it (the first ones, the atom after them), a comment (COMMENT) the
    atom after it, a blank line (BLANK) too but where blank lines end the hunk (see below).
    signals: one per unit. A
    single atom is the whole hunk: the caller keeps the hunk as it is."""
    us = units(h)
    m = len(numbered(h)[0])
    if len(us) != len(signals):
        raise ValueError(f"{len(signals)} signals for the {len(us)} units of hunk {h.id}")
    known = [s for s in signals if s is not None and s not in (BLANK, COMMENT)]
    if not known:
        return [frozenset(n for u in us for n in u.numbers(m))]
    # A comment takes the signal after it (a doc comment its definition); a blank line too (it
    # separates what follows), unless the hunk ends with blank lines and begins with none: then
    # each block of it was written with its blank line after it (xmlparser's variants, each
    # "doc, variant, blank"), and a blank line goes with the lines before it. Any other line
    # takes the signal before it; the first lines, the first signal.
    trailing = signals[-1] == BLANK and signals[0] != BLANK
    ahead: list[Hashable | None] = [None if trailing and s == BLANK else s for s in signals]
    for i in range(len(ahead) - 2, -1, -1):
        if ahead[i] in (BLANK, COMMENT):
            ahead[i] = ahead[i + 1]
    filled: list[Hashable] = []
    last: Hashable = known[0]
    for s in ahead:
        last = s if s is not None and s not in (BLANK, COMMENT) else last
        filled.append(last)
    out: list[set[int]] = []
    joined: dict[Hashable, set[int]] = {}
    for i, u in enumerate(us):
        s = filled[i]
        if s == FRAME or isinstance(s, tuple) and s[:1] == edit(0)[:1]:
            if s not in joined:
                joined[s] = set()
                out.append(joined[s])
            joined[s] |= u.numbers(m)
            continue
        if i == 0 or filled[i] != filled[i - 1]:
            out.append(set())
        out[-1] |= u.numbers(m)
    return [frozenset(g) for g in out]


def atom_id(h: Hunk, numbers: Collection[int]) -> str:
    return f"{h.id}:{compact(set(numbers))}"


def parse_id(item: str) -> tuple[str, frozenset[int]] | None:
    """An atom's hunk id and numbers (None: not an atom, a whole hunk's id)."""
    m = _ATOM.match(item)
    if m is None:
        return None
    numbers: set[int] = set()
    for part in m[2].split(","):
        lo, _, hi = part.partition("-")
        numbers |= set(range(int(lo), int(hi or lo) + 1))
    return m[1], frozenset(numbers)


def hunk_id(item: str) -> str:
    """The hunk a spec's `hunks` item names, whole or in part."""
    part = parse_id(item)
    return part[0] if part else item


def as_hunk(h: Hunk, numbers: frozenset[int]) -> Hunk:
    """The hunk an atom shows: its own `-` and `+` lines at their place in the old and new file,
    for what reads a hunk's lines (the evidence, a question, blame). Applying an atom is not this
    hunk's: it is a selection of h (with_parts)."""
    old, new = numbered(h)
    m = len(old)
    rem = sorted(n - 1 for n in numbers if n <= m)
    add = sorted(n - m - 1 for n in numbers if n > m)
    return Hunk(id=atom_id(h, numbers), path=h.path, kind="modify",
                old_start=h.old_start + rem[0] if rem else h.old_start + (len(old) if old else 0),
                old_lines=len(rem), new_start=h.new_start + add[0] if add else h.new_start, new_lines=len(add),
                removed=b"".join(old[i] for i in rem), added=b"".join(new[j] for j in add),
                old_mode=h.old_mode, new_mode=h.new_mode, old_oid=h.old_oid)


def with_parts(repo: pygit2.Repository, base_tree: str, hunks: Sequence[Hunk],
            taken: Mapping[str, frozenset[int] | None]) -> str:
    """The tree the merge base becomes with the taken part of each hunk: taken[hunk id] is the
    numbers of its lines taken, None for the whole hunk; a hunk not in taken is not applied."""
    chosen = [h if taken[h.id] is None else select(h, taken[h.id] or frozenset())
              for h in hunks if h.id in taken and taken[h.id] != frozenset()]
    return tree_with(repo, base_tree, chosen)
