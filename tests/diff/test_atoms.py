"""Atoms: a hunk's lines grouped by the signals their caller reads, a line edited in place kept whole,
a blank line with what follows it; named under the hunk and shown with their own lines only."""
from __future__ import annotations

from git_retcon.diff import atoms
from git_retcon.diff.hunk import Hunk


def _hunk(removed: str, added: str) -> Hunk:
    return Hunk(id="0123456789", path="a.py", kind="modify", old_start=3, old_lines=removed.count("\n"),
                new_start=3, new_lines=added.count("\n"), removed=removed.encode(), added=added.encode())


def test_a_line_edited_in_place_is_one_unit_and_new_lines_are_their_own():
    h = _hunk("x = 1\n", "x = 10\nz = 3\n")
    assert atoms.units(h) == [atoms.Unit((0,), (0,)), atoms.Unit((), (1,))]


def test_adjacent_lines_with_one_signal_stay_together_and_a_blank_line_goes_with_what_follows():
    h = _hunk("", "def a():\n    return 1\n\n\ndef b():\n    return 2\n")
    groups = atoms.group(h, [("def", "a"), None, atoms.BLANK, atoms.BLANK, ("def", "b"), None])
    assert groups == [frozenset({1, 2}), frozenset({3, 4, 5, 6})]
    assert atoms.as_hunk(h, groups[1]).added == b"\n\ndef b():\n    return 2\n"
    assert atoms.as_hunk(h, groups[1]).new_start == 5


def test_one_signal_or_none_is_the_whole_hunk():
    h = _hunk("", "a\nb\n")
    assert atoms.group(h, [None, None]) == [frozenset({1, 2})]
    assert atoms.group(h, [("x",), ("x",)]) == [frozenset({1, 2})]


def test_an_atom_is_named_under_its_hunk_and_read_back():
    h = _hunk("x = 1\ny = 2\n", "x = 10\ny = 20\n")
    assert atoms.atom_id(h, {1, 3}) == "0123456789:1,3"
    assert atoms.parse_id("0123456789:1,3-4") == ("0123456789", frozenset({1, 3, 4}))
    assert atoms.parse_id("0123456789") is None
