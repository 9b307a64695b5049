"""Line selections (`id:1-4,9`): the part of a hunk that an intermediate commit needs."""
from __future__ import annotations

import pygit2
import pytest

from git_retcon import diff
from git_retcon.diff.select import merge
from testing.gitrepo import GitRepo


class Files:
    """A base and a target commit; an in-memory index and a worktree at base, moved by applying hunks."""

    def __init__(self, tmp_path, base: dict[str, str], target: dict[str, str]):
        git = GitRepo.init(tmp_path / "repo")
        b = git.commit("base", base)
        for rel in base:
            if rel not in target:
                git.delete(rel)
        t = git.commit("target", target)
        self.repo = pygit2.Repository(str(git.path))
        self.target = git.tree(t)
        self.workdir = tmp_path / "wt"
        git.git("worktree", "add", "-q", "--detach", str(self.workdir), b)
        self.index = pygit2.Index()
        self.index.read_tree(self.repo[pygit2.Oid(hex=git.tree(b))])

    def remaining(self) -> list[diff.Hunk]:
        return diff.remaining(self.repo, self.index.write_tree(self.repo), self.target)

    def take(self, *items: str) -> None:
        """Apply as apply_hunks does: items named (ids, id prefixes, paths), then cut and applied."""
        hunks = self.remaining()
        named, _ = diff.expand(diff.parse_items(list(items)), hunks, lambda path: path)
        chosen = diff.hunks_of(named, {h.id: h for h in hunks})
        diff.apply(self.repo, self.index, self.workdir, chosen)

    def read(self, rel: str) -> str:
        return (self.workdir / rel).read_text()


def test_a_list_edited_by_two_commits_is_one_hunk_and_a_selection_takes_one_edit(tmp_path):
    base = "ITEMS = [\n    'a',\n    'b',\n    'c',\n    'd',\n]\n"
    target = "ITEMS = [\n    'A',\n    'B',\n    'C',\n    'D',\n]\n"
    f = Files(tmp_path, {"l.py": base}, {"l.py": target})
    [h] = f.remaining()
    assert (h.removed_lines, h.added_lines) == (4, 4)
    text = diff.render([h])
    assert "2 -    'b'," in text and "6 +    'B'," in text   # - lines 1..4, + lines 5..8
    f.take(f"{h.id}:2,6")
    assert f.read("l.py") == "ITEMS = [\n    'a',\n    'B',\n    'c',\n    'd',\n]\n"
    rest = f.remaining()
    f.take(*(r.id for r in rest))
    assert f.read("l.py") == target


def test_two_functions_appended_in_one_insertion_hunk_are_taken_one_at_a_time(tmp_path):
    one = "def one():\n    return 1\n"
    two = "\n\ndef two():\n    return 2\n"
    three = "\n\ndef three():\n    return 3\n"
    f = Files(tmp_path, {"m.py": one}, {"m.py": one + two + three})
    [h] = f.remaining()
    assert h.removed == b"" and h.added_lines == 8
    f.take(f"{h.id}:1-4")
    assert f.read("m.py") == one + two
    [rest] = f.remaining()
    # The rest is an ordinary hunk whose id hashes its content: computed again, it is the same.
    assert rest.added == three.encode() and [r.id for r in f.remaining()] == [rest.id]
    f.take(rest.id)
    assert f.read("m.py") == one + two + three


def test_a_new_file_is_created_with_the_selected_lines(tmp_path):
    f = Files(tmp_path, {"keep": "k\n"}, {"keep": "k\n", "new.txt": "a\nb\nc\n"})
    [h] = f.remaining()
    assert h.kind == "add" and "1 +a" in diff.render([h])
    f.take(f"{h.id}:1,3")
    assert f.read("new.txt") == "a\nc\n"
    f.take(*(r.id for r in f.remaining()))
    assert f.read("new.txt") == "a\nb\nc\n"


def test_kept_lines_and_selected_lines_without_a_final_newline(tmp_path):
    f = Files(tmp_path, {"t": "x"}, {"t": "x\ny\n"})
    [h] = f.remaining()
    assert "No newline at end of file" in diff.render([h])
    f.take(f"{h.id}:3")          # only `y`; `x` stays, and now ends its line
    assert f.read("t") == "x\ny\n"


def test_removing_only_some_lines(tmp_path):
    f = Files(tmp_path, {"t": "a\nb\nc\nd\n"}, {"t": "a\nd\n"})
    [h] = f.remaining()
    f.take(f"{h.id}:1")          # the hunk's - lines are b (1) and c (2)
    assert f.read("t") == "a\nc\nd\n"


def test_selection_items_as_models_write_them(tmp_path):
    items = diff.parse_items(["AB12cd34ef:1-3", "9", " ab12cd34ef : 5 ", "0123456789", "fe:2 - 4,7"])
    assert [(i.id, sorted(i.lines) if i.lines else None) for i in items] == [
        ("ab12cd34ef", [1, 2, 3, 9]), ("ab12cd34ef", [5]), ("0123456789", None), ("fe", [2, 3, 4, 7])]
    assert [(i.id, sorted(i.lines or [])) for i in merge(items)][:1] == [("ab12cd34ef", [1, 2, 3, 5, 9])]
    for bad, why in (("ab:", "no line numbers"), ("ab:x", "not a line number"), ("ab:4-2", "backwards")):
        with pytest.raises(diff.SelectionError, match=why):
            diff.parse_items([bad])


def test_a_path_with_a_colon_is_an_item_and_line_numbers_after_a_colon_are_a_selection(tmp_path):
    f = Files(tmp_path, {"a": "1\n"}, {"a": "1\n", "docs/x:y.md": "new\n", "docs/z.md": "z\n"})
    assert [(i.id, i.lines) for i in diff.parse_items(["docs/x:y.md", "src/a.py:1"])] == [
        ("docs/x:y.md", None), ("src/a.py", frozenset({1}))]   # the second is refused, saying why
    f.take("docs/x:y.md")
    assert f.read("docs/x:y.md") == "new\n" and [h.path for h in f.remaining()] == ["docs/z.md"]
    with pytest.raises(diff.SelectionError, match="not a line number"):
        diff.parse_items(["ab12:y.md"])     # an id's selection, mistyped: said so


def test_a_bad_selection_applies_nothing_and_says_which_and_why(tmp_path):
    f = Files(tmp_path, {"a": "1\n2\n", "b": "x\n"}, {"a": "one\n2\n", "b": "y\n", "c": "new\n"})
    before = f.index.write_tree(f.repo)
    ha, hb, _hc = f.remaining()
    with pytest.raises(diff.SelectionError, match=rf"hunk {ha.id} \(a\) has - lines 1-1, \+ lines 2-2; 3-4 are not"):
        f.take(hb.id, f"{ha.id}:1-4")
    assert f.index.write_tree(f.repo) == before and f.read("b") == "x\n"
    f.take(f"{ha.id}:1", ha.id)   # the whole hunk wins over a part of it: applied once
    assert f.read("a") == "one\n2\n"


def test_lines_of_a_rename_cannot_be_selected(tmp_path):
    body = "".join(f"line {i}\n" for i in range(20))
    f = Files(tmp_path, {"old.txt": body}, {"new.txt": body + "more\n"})
    [h] = f.remaining()
    assert h.kind == "rename"
    with pytest.raises(diff.SelectionError, match="take it whole"):
        f.take(f"{h.id}:1")
