"""Ids as a model reads and writes them: abbreviated like git's, and items that are id
prefixes or paths (diff.ids), on real repositories."""
from __future__ import annotations

import pytest

from git_retcon import diff
from git_retcon.diff.ids import covers
from git_retcon.diff.select import merge
from tests.diff.test_select import Files


def same(path: str) -> str:
    return path


def expand(f: Files, *items: str) -> list[str]:
    """The whole ids the items name, in order."""
    got, _ = diff.expand(diff.parse_items(list(items)), f.remaining(), same)
    return [i.id for i in got]


def test_short_ids_grow_past_a_shared_prefix_and_are_at_least_four_digits_with_a_letter():
    names = diff.short_ids(["abcdef0123", "abcdef4567", "123abc7890", "abcdf00000", "9876afffff", "98765fffff"])
    assert names == {"abcdef0123": "abcdef0", "abcdef4567": "abcdef4", "123abc7890": "123a",
                     "abcdf00000": "abcdf", "9876afffff": "9876a", "98765fffff": "98765f"}
    assert diff.short_ids(["aaaaaaaaa1", "aaaaaaaaa2"]) == {"aaaaaaaaa1": "aaaaaaaaa1", "aaaaaaaaa2": "aaaaaaaaa2"}
    # All digits: after a selection (a comma-split "ab12:3,45,123456"), up to 5 digits are lines, so an id
    # shown shorter than 6 has a letter, and one of only digits is shown with 6.
    assert diff.short_ids(["1234567a90", "0123456789"]) == {"1234567a90": "123456", "0123456789": "012345"}
    items = diff.parse_items(["ab12:3", "45", "123456", "ab12:1-99999", "012345", "ab12:7", "123a", "9876a"])
    assert [(i.id, i.lines and max(i.lines)) for i in items] == [
        ("ab12", 45), ("123456", None), ("ab12", 99999), ("012345", None), ("ab12", 7), ("123a", None),
        ("9876a", None)]
    assert diff.shorten("hunk abcdef0123 (a) and 9999999999", names) == "hunk abcdef0 (a) and 9999999999"


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
    hs = [diff.Hunk(id="abcd012345", path="one.txt", kind="modify"),
          diff.Hunk(id="abcd987654", path="two.txt", kind="modify")]
    with pytest.raises(diff.SelectionError,
                       match=r"abcd is ambiguous: it begins 2 hunk ids: abcd0 \(one.txt\), abcd9 \(two.txt\)"):
        diff.expand(diff.parse_items(["abcd"]), hs, same)
    got, _ = diff.expand(diff.parse_items(["abcd0"]), hs, same)
    assert [i.id for i in got] == ["abcd012345"]
    with pytest.raises(diff.SelectionError, match=r"unknown hunk ids: abc, abcd00 \(an id needs at least 4"):
        diff.expand(diff.parse_items(["abc", "abcd00"]), hs, same)
    # A path of the prefix's spelling is taken when the prefix names no one hunk.
    hs.append(diff.Hunk(id="0000000001", path="abcd/f.txt", kind="modify"))
    got, _ = diff.expand(diff.parse_items(["abcd"]), hs, same)
    assert [i.id for i in got] == ["0000000001"]


def test_a_path_names_every_remaining_hunk_under_it_whole(tree):
    hs = tree.remaining()
    a = [h.id for h in hs if h.path == "src/a.py"]
    assert len(a) == 2
    assert expand(tree, "src/a.py") == a
    under_src = [h.id for h in hs if h.path.startswith("src/")]
    assert expand(tree, "src") == expand(tree, "src/") == under_src and len(under_src) == 4
    assert expand(tree, "src/sub") == [h.id for h in hs if h.path == "src/sub/c.py"]
    assert expand(tree, ".") == [h.id for h in hs]
    # Whole names only: `src/a` is neither src/a.py nor a directory.
    with pytest.raises(diff.SelectionError, match=r"no remaining hunk is under 'src/a', 'nope/'"):
        expand(tree, "README", "src/a", "nope/")


def test_a_path_and_an_id_together_apply_once_each(tree):
    hs = tree.remaining()
    readme = next(h for h in hs if h.path == "README")
    tree.take("src/a.py", readme.id[:6], "src/")
    assert [h.path for h in tree.remaining()] == ["docs/x.md"]
    assert tree.read("src/a.py") == "one\n2\n3\n4\nfive\n" and tree.read("README") == "R\n"


def test_an_unknown_path_or_id_applies_nothing(tree):
    before = tree.index.write_tree(tree.repo)
    with pytest.raises(diff.SelectionError) as err:
        tree.take("src/a.py", "src/missing.py", "0123abcd99")
    assert "unknown hunk ids: 0123abcd99" in str(err.value)
    assert "no remaining hunk is under 'src/missing.py'" in str(err.value)
    assert tree.index.write_tree(tree.repo) == before and tree.read("src/a.py") == "1\n2\n3\n4\n5\n"


def test_lines_of_a_path_are_refused(tree):
    with pytest.raises(diff.SelectionError, match=r"src/a.py:1: a path takes its hunks whole"):
        expand(tree, "src/a.py:1")


def test_a_file_whose_name_looks_like_hex(tmp_path):
    base = {"a.txt": "a\n"}
    first = Files(tmp_path / "one", base, {"a.txt": "A\n"})
    [ha] = first.remaining()
    # A file named like a prefix of a.txt's hunk id, and one named like no id at all.
    look, plain = ha.id[:6], "cafe" if not ha.id.startswith("cafe") else "beef"
    f = Files(tmp_path / "two", {**base, "Deadbeef": "d\n"},
              {"a.txt": "A\n", look: "x\n", plain: "y\n", "Deadbeef": "D\n"})
    hs = f.remaining()
    assert ha.id in [h.id for h in hs]            # ids hash path and content: a.txt's is the same here
    by_path = {h.path: h.id for h in hs}
    # The id wins over a path of the same spelling, and the answer says how to name the path.
    got, remarks = diff.expand(diff.parse_items([look]), hs, same)
    assert [i.id for i in got] == [ha.id]
    assert remarks == [f"{look} is a hunk id and also a path: the hunk was taken (write ./{look} for the path's hunks)"]
    assert expand(f, look + "/") == [by_path[look]]     # not hex: a path (apply_hunks' ./X is tested there)
    # A hex name that begins no id is the path; a path keeps its case.
    assert expand(f, plain) == [by_path[plain]]
    assert expand(f, "Deadbeef") == [by_path["Deadbeef"]]
    assert covers(hs[0], ".") and not covers(hs[0], "a.tx")


def test_an_exclusion_leaves_one_hunk_out_of_the_paths_of_the_call(tree):
    hs = tree.remaining()
    one, five = [h for h in hs if h.path == "src/a.py"]
    under_src = [h.id for h in hs if h.path.startswith("src/")]
    assert expand(tree, "src/", f"-{five.id[:6]}") == [i for i in under_src if i != five.id]
    # Anywhere in the list, any case, and under a directory or '.'.
    assert expand(tree, f"-{five.id[:6].upper()}", "src/a.py") == [one.id]
    assert expand(tree, ".", f"-{one.id[:4]}", f"-{five.id}") == [h.id for h in hs if h.path != "src/a.py"]
    tree.take("src", f"-{one.id[:6]}")
    assert tree.read("src/a.py") == "1\n2\n3\n4\nfive\n" and tree.read("src/b.py") == "B\n"
    assert [h.path for h in tree.remaining()] == ["README", "docs/x.md", "src/a.py"]


def test_an_exclusion_outside_every_path_or_of_a_named_hunk_applies_nothing(tree):
    hs = tree.remaining()
    one, five = [h for h in hs if h.path == "src/a.py"]
    readme = next(h for h in hs if h.path == "README")
    before = tree.index.write_tree(tree.repo)
    with pytest.raises(diff.SelectionError) as err:
        tree.take("src/", f"-{readme.id[:6]}")
    assert f"-{readme.id[:6]}: an exclusion leaves a hunk out of the paths of the same call, and no path item " \
           f"covers {diff.short_ids(h.id for h in hs)[readme.id]} (README)" in str(err.value)
    with pytest.raises(diff.SelectionError, match="which this call also names: name it or leave it out, not both"):
        tree.take("src/", f"-{one.id[:6]}", f"{one.id[:5]}:1")
    with pytest.raises(diff.SelectionError, match="an exclusion leaves out a whole hunk; to take some of its lines"):
        tree.take("src/", f"-{one.id[:6]}:1")
    with pytest.raises(diff.SelectionError, match=r"-0000ffff: unknown hunk id 0000ffff \(an exclusion is"):
        tree.take("src/", "-0000ffff")
    with pytest.raises(diff.SelectionError, match="the exclusions leave out every hunk"):
        tree.take("src/a.py", f"-{one.id[:6]}", f"-{five.id[:6]}")
    assert tree.index.write_tree(tree.repo) == before and tree.read("src/a.py") == "1\n2\n3\n4\n5\n"


def test_a_file_named_with_a_leading_dash_is_a_path(tmp_path):
    base = {"a.txt": "a\n"}
    first = Files(tmp_path / "one", base, {"a.txt": "A\n"})
    [ha] = first.remaining()
    like = "-" + ha.id[:6]
    plain = "-cafe" if not ha.id.startswith("cafe") else "-beef"
    f = Files(tmp_path / "two", base, {"a.txt": "A\n", "-notes": "n\n", plain: "b\n", like: "x\n"})
    hs = f.remaining()
    by_path = {h.path: h.id for h in hs}
    assert ha.id == by_path["a.txt"]
    assert expand(f, "-notes") == [by_path["-notes"]]
    # `-` and hex that begins no id: the file; one that does: the exclusion, and the answer says how to name the file.
    assert expand(f, plain) == [by_path[plain]]
    got, remarks = diff.expand(diff.parse_items([".", like]), hs, same)
    assert [i.id for i in got] == [h.id for h in hs if h.id != ha.id]
    assert remarks == [f"{like} leaves out hunk {diff.short_ids(by_path.values())[ha.id]} and is also a path: the hunk "
                       f"was left out (write ./{like} for the path's hunks)"]


def test_a_hunk_under_a_path_that_the_call_selects_lines_of_gives_only_those_lines(tree):
    hs = tree.remaining()
    one, five = [h for h in hs if h.path == "src/a.py"]
    b = next(h for h in hs if h.path == "src/b.py")
    got, _ = diff.expand(diff.parse_items([f"{one.id[:6]}:1", "src", f"-{b.id[:6]}"]), hs, same)
    assert [(i.id, i.lines) for i in got] == [(one.id, frozenset({1})), (five.id, None)] + [
        (h.id, None) for h in hs if h.path == "src/sub/c.py"]
    # Named whole as well: the whole hunk wins, as between two items naming it.
    got, _ = diff.expand(diff.parse_items(["src/a.py", f"{five.id[:6]}:1", five.id[:6]]), hs, same)
    assert [(i.id, i.lines) for i in merge(got)] == [(one.id, None), (five.id, None)]
    tree.take("src/a.py", f"{one.id[:6]}:1")
    assert tree.read("src/a.py") == "2\n3\n4\nfive\n"
