"""Ids as a model reads and writes them: abbreviated like git's, and items that are id
prefixes (diff.ids), on real repositories."""
from __future__ import annotations

import pytest

from git_retcon import diff as H
from tests.diff.test_select import Files


def expand(f: Files, *items: str) -> list[str]:
    """The whole ids the items name, in order."""
    got, unknown = H.expand(H.parse_items(list(items)), f.remaining())
    assert not unknown, unknown
    return [i.id for i in got]


def test_short_ids_grow_past_a_shared_prefix_and_are_at_least_six_digits():
    names = H.short_ids(["abcdef0123", "abcdef4567", "123abc7890", "abcdf00000"])
    assert names == {"abcdef0123": "abcdef0", "abcdef4567": "abcdef4", "123abc7890": "123abc",
                     "abcdf00000": "abcdf0"}
    assert H.short_ids(["aaaaaaaaa1", "aaaaaaaaa2"]) == {"aaaaaaaaa1": "aaaaaaaaa1", "aaaaaaaaa2": "aaaaaaaaa2"}
    # Never all digits: after a selection, a number is read as one more line number.
    assert H.short_ids(["1234567a90", "0123456789"]) == {"1234567a90": "1234567a", "0123456789": "0123456789"}
    items = H.parse_items(["ab12cd:3", "45", "1234567a"])
    assert [(i.id, i.lines) for i in items] == [("ab12cd", frozenset({3, 45})), ("1234567a", None)]
    assert H.shorten("hunk abcdef0123 (a) and 9999999999", names) == "hunk abcdef0 (a) and 9999999999"


@pytest.fixture
def tree(tmp_path) -> Files:
    return Files(tmp_path, {"src/a.py": "1\n2\n3\n4\n5\n", "src/b.py": "b\n", "README": "r\n"},
                 {"src/a.py": "one\n2\n3\n4\nfive\n", "src/b.py": "B\n", "src/sub/c.py": "c\n",
                  "README": "R\n", "docs/x.md": "x\n"})


def test_a_short_prefix_and_the_whole_id_name_the_same_hunk(tree):
    hs = tree.remaining()
    h = hs[0]
    assert expand(tree, h.id[:4]) == expand(tree, h.id[:6].upper()) == expand(tree, h.id) == [h.id]
    assert expand(tree, f"{h.id[:6]}:1") == [h.id]
    tree.take(h.id[:6], hs[1].id)
    assert [x.id for x in tree.remaining()] == [x.id for x in hs[2:]]


def test_an_ambiguous_prefix_is_refused_naming_each_candidate():
    hs = [H.Hunk(id="abcd012345", path="one.txt", kind="modify"),
          H.Hunk(id="abcd987654", path="two.txt", kind="modify")]
    with pytest.raises(H.SelectionError,
                       match=r"abcd is ambiguous: it begins 2 hunk ids: abcd01 \(one.txt\), abcd98 \(two.txt\)"):
        H.expand(H.parse_items(["abcd"]), hs)
    got, unknown = H.expand(H.parse_items(["abcd0", "abc", "abcd00"]), hs)
    assert [i.id for i in got] == ["abcd012345"] and unknown == ["abc", "abcd00"]
