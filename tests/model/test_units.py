"""The model room's pure parts, tested directly (no repository, no CLI run): the resolver, the
progress ledger, selections as values, and the guards' rules."""
from __future__ import annotations

import pytest

from git_retcon.diff import Hunk
from git_retcon.diff.select import Item
from git_retcon.model import guards, meaning, selection
from git_retcon.model.context import TOOL_NAMES
from git_retcon.model.ledger import Ledger
from git_retcon.state.spec import paths_match

# -- the resolver ------------------------------------------------------------------------------


@pytest.mark.parametrize(("written", "how", "meant"), [
    ("apply_hunks", "exact", "apply_hunks"),
    ("functions.apply_hunks", "read-as", "apply_hunks"),
    ("ApplyHunks", "read-as", "apply_hunks"),
    ("read-diff", "read-as", "read_diff"),
    ("apply_hunk", "read-as", "apply_hunks"),
    ("craete_commit", "read-as", "create_commit"),
    ("launch_rockets", "unknown", ""),
])
def test_a_tool_name_resolves_exact_read_as_or_unknown(written, how, meant):
    got = meaning.tool(written, TOOL_NAMES)
    assert (got.how, got.value) == (how, meant)


def test_a_tool_written_as_text_is_read_only_exact_or_namespaced():
    names = {"stuck": [], "read_diff": []}
    assert meaning.written_tool("default_api.read_diff", names).value == "read_diff"
    assert meaning.written_tool("stuck", names).how == "exact"
    assert not meaning.written_tool("Stuck", names).found          # prose is not a call
    assert not meaning.written_tool(3, names).found


def _path(raw: str, files: set[str], root: str = "/w") -> meaning.Resolved:
    return meaning.path(raw, root, root, files.__contains__, lambda: files, files.__contains__)


def test_a_path_resolves_relative_dotted_and_diff_header_forms():
    files = {"src/a.py", "src", "a.py"}
    assert _path("src/a.py", files) == meaning.Resolved("exact", "src/a.py")
    assert _path("./src/a.py", files).how == "read-as"
    assert _path("b/src/a.py", files).value == "src/a.py"
    assert _path("new/file.py", files) == meaning.Resolved("exact", "new/file.py")    # a path to write


def test_an_absolute_path_is_unknown_and_its_note_names_the_relative_one():
    inside = _path("/w/src/a.py", {"src/a.py"})
    assert inside.how == "unknown" and "call it 'src/a.py'" in inside.note
    outside = _path("/home/me/project/src/a.py", {"src/a.py"})
    assert outside.how == "unknown" and "did you mean 'src/a.py'?" in outside.note
    nothing = _path("/etc/passwd", {"src/a.py"})
    assert not nothing.found and "did you mean" not in nothing.note


def test_a_file_name_resolves_to_the_one_path_it_ends_or_all_it_may_mean():
    paths = {"invoicing/money.py", "invoicing/tax.py", "tests/test_tax.py", "docs/tax.md"}
    assert meaning.file_name("money.py", paths) == meaning.Resolved("read-as", "invoicing/money.py")
    assert meaning.file_name("invoicing/money", paths).value == "invoicing/money.py"
    both = meaning.file_name("tax", paths)
    assert both.how == "ambiguous" and set(both.options) == {"invoicing/tax.py", "docs/tax.md"}
    assert meaning.file_name("../x", paths).how == "unknown"


def test_a_hunk_id_near_miss_reads_as_the_one_id_it_is_one_edit_from():
    shown = {"8b03": "8b03aa", "3f2a": "3f2a11"}
    assert meaning.hunk_id("t8b03", shown).value == "8b03"      # a stray character
    assert meaning.hunk_id("8b30", shown).value == "8b03"       # two swapped
    assert meaning.hunk_id("8b0", shown).how == "unknown"        # too short to be sure
    two = meaning.hunk_id("3f2b", {"3f2a": "3f2a1", "3f2c": "3f2c1"})
    assert two.how == "ambiguous" and two.options == ("3f2a", "3f2c")


# -- the ledger ----------------------------------------------------------------------------------

def test_the_ledger_counts_what_moved_nothing_and_clears_on_a_restart():
    led = Ledger()
    assert [led.nothing_applied(), led.nothing_applied()] == [1, 2]
    assert led.read("read_diff", ("", 1), "tree1") == 1
    assert led.read("read_diff", ("", 1), "tree1") == 2
    assert led.read("read_diff", ("", 1), "tree2") == 1         # the worktree changed: a new read
    assert led.failed("apply_hunks", {"hunk_ids": ["zz"]}) == 1
    assert led.failed("apply_hunks", {"hunk_ids": ["zz"]}) == 2
    assert led.failed("apply_hunks", {"hunk_ids": ["yy"]}) == 1
    assert led.name_back({"a", "b"}) is False                  # named for the first time
    assert led.name_back({"a"}) is True                         # told before: a reason may answer it
    led.said.append("x")
    led.echoed = "y"
    led.clear()
    assert (led.idle, led.said, led.echoed, led.named) == (0, [], "", set())
    assert led.read("read_diff", ("", 1), "tree1") == 1


# -- selections ------------------------------------------------------------------------------------

def test_taking_and_putting_back_make_new_selections_and_leave_the_old():
    empty = selection.EMPTY
    one = selection.took(empty, [("aaaa11", "a.py")], [Item("aaaa11", None)], {"aaaa11": "a.py"})
    assert empty.empty and not one.empty
    two = selection.took(one, [("bbbb22", "b.py")],
                         [Item("bbbb22", frozenset({1, 2})), Item("bbbb22", frozenset({4}))], {"bbbb22": "b.py"})
    assert dict(two.taken) == {"a.py": ("aaaa11",), "b.py": ("bbbb22:1-2,4",)}
    assert two.ids() == {"aaaa11", "bbbb22"}
    assert selection.matching(two, "bbbb") == {"bbbb22:1-2,4"}
    back = selection.without(two, ["a.py"])
    assert dict(back.taken) == {"b.py": ("bbbb22:1-2,4",)} and "aaaa11" not in back.applied
    assert dict(two.taken)["a.py"] == ("aaaa11",)              # the value it came from is unchanged
    hand = selection.wrote(back, "c.py")
    assert hand.hand_written(["b.py", "c.py"]) == ["c.py"] and not back.by_hand
    with pytest.raises(TypeError):
        two.taken["z"] = ("x",)      # type: ignore[index]


# -- the guards' rules --------------------------------------------------------------------------

def _h(hid: str, path: str) -> Hunk:
    return Hunk(id=hid, path=path, kind="modify")


def test_the_paths_rule_takes_globs_and_what_lies_under_a_plain_name():
    assert paths_match("src/a/b.py", ["src"]) and paths_match("src/a/b.py", ["src/"])
    assert paths_match("src/a/b.py", ["*.py"]) and paths_match("src/a/b.py", ["./src/*"])
    assert not paths_match("srcs/b.py", ["src"])


def test_a_later_commit_claims_by_plan_paths_and_hints():
    later2, later3 = guards.Later(2, "Add tax"), guards.Later(3, "Docs")
    rules = guards.SpecRules(number=1, n=3, hints="money.py", later={"p1": later2},
                             later_paths=[(later3, ["docs/"])], later_hints=[(later2, "tax.py and its tests")])
    paths = {"a/money.py", "a/tax.py", "docs/x.md", "a/other.py"}
    assert guards.claimant(rules, _h("p1", "a/money.py"), paths) == (later2, "that the plan gives to later commits")
    assert guards.claimant(rules, _h("d1", "docs/x.md"), paths)[1] == "under the paths of later commits"
    assert guards.claimant(rules, _h("t1", "a/tax.py"), paths)[1] == "in files that the hints of later commits name"
    assert guards.claimant(rules, _h("m1", "a/money.py"), paths) is None    # this commit's hints name it
    assert guards.claimant(rules, _h("o1", "a/other.py"), paths) is None


def test_the_guards_name_what_was_taken_from_later_commits_and_everything_left():
    rules = guards.SpecRules(number=1, n=2, later_hints=[(guards.Later(2, "Tax"), "tax.py")])
    start = [_h("aaaa", "money.py"), _h("bbbb", "tax.py")]
    found, back = guards.problems(rules, start, [], {"aaaa": "aaaa", "bbbb": "bbbb"})
    assert [h.id for h in back] == ["bbbb"]
    assert "1 hunk in files that the hints of later commits name (commit 2): bbbb (tax.py)" in found[0]
    assert "every remaining change (2 hunks), though this is commit 1 of 2" in found[1]
    # A fix may take what the rework brief named.
    assert guards.problems(rules, start, [], {}, fix=True, prepared=frozenset({"aaaa", "bbbb"})) == ([], [])
    # Nothing taken: nothing to name.
    assert guards.problems(rules, start, start, {}) == ([], [])


@pytest.mark.parametrize(("confirm", "ok"), [
    ("yes", False), ("ok ok", False), ("why they belong here", False), ("Why they belong.", False),
    ("the tax tests need the rounding helper", True),
])
def test_a_confirmation_is_a_reason_only_in_words_of_its_own(confirm, ok):
    assert guards.a_reason(confirm) is ok


def test_an_argument_name_reads_as_the_one_parameter_it_can_mean():
    params = ["path", "content"]
    got = meaning.parameter(["file"], params, ["file", "content"], ["path"])
    assert (got.how, got.value, got.note) == ("read-as", "path", "(read 'file' as 'path')")
    assert meaning.parameter(["ids"], ["hunk_ids"], ["ids"], []).value == "hunk_ids"   # the only one
    assert not meaning.parameter(["a", "b"], params, ["a", "b"], ["path", "content"]).found
    assert not meaning.parameter(["x"], params, ["x", "path", "content"], []).found
