"""Answers for calls a model repeats (issue 11, part 2): a failed call sent again says it is
the same call; hunks applied already in the step are named as in the worktree, with what
remains; a path written as a diff header writes it (`a/util.py`) means the path."""
from __future__ import annotations

from git_retcon.model.meaning import undiffed
from git_retcon.model.nearest import applied_already
from testing.flow import call, retcon, turn
from tests.model.test_answers import results, small

CI_ID, UTIL_ID, LATER_ID = "c5a46e", "e3c34d", "c6f3c8"   # the small repository's hunks (ids hash content)


def test_the_same_failing_call_again_is_told_so(tmp_path, scripted):
    repo = small(tmp_path)
    log = scripted({"1/extract": [
        turn(call("create_commit", message="x")),
        turn(call("create_commit", message="x")),
        turn(call("create_commit", message="y")),
        turn(call("apply_hunks", hunk_ids=[CI_ID, UTIL_ID])),
        turn(call("create_commit", message="x")),
    ]})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    out = results(log)
    assert "nothing to commit" in out[0] and "same call" not in out[0]
    assert "This is the same call, with the same arguments, as one that already failed in this step " \
           "(2 times now): it fails the same way each time. Change it as the error says" in out[1]
    assert "nothing to commit" in out[2] and "same call" not in out[2]
    assert repo.tree("clean~1") == repo.tree("feature~1")


def test_hunks_applied_already_are_said_to_be_in_the_worktree_with_what_remains(tmp_path, scripted):
    repo = small(tmp_path)
    log = scripted({"1/extract": [
        turn(call("apply_hunks", hunk_ids=[CI_ID])),
        turn(call("apply_hunks", hunk_ids=[CI_ID, UTIL_ID])),
        turn(call("apply_hunks", hunk_ids=["a/util.py"])),
        turn(call("apply_hunks", hunk_ids=["util.py"])),
        turn(call("read_file", path="b/util.py")),
        turn(call("create_commit", message="x")),
    ]})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    out = results(log)
    # An id applied in this step is in the worktree already: no error, the rest applies.
    assert out[1] == (f"Applied 1 hunks to 1 files: util.py. 1 hunks remain. Already in the worktree (applied in "
                      f"this step): {CI_ID[:4]} (.github/workflows/ci.yml).")
    assert "Applied already in this step: a/util.py (its hunks)" in out[2]
    assert f"1 hunks remain: {LATER_ID[:4]} (LATER.md)" in out[2]
    # The path itself, all of whose hunks the step applied, is left out like an id sent again.
    assert out[3] == ("Nothing to apply: util.py (its hunks) is in the worktree already (applied in this step). "
                      "1 hunks remain. If this commit is complete, call create_commit().")
    assert out[4].startswith("def one():")
    assert repo.tree("clean~1") == repo.tree("feature~1")


def test_a_diff_header_prefix_is_dropped_only_when_the_repository_has_no_such_directory():
    files = {"util.py", "a/x.py", "a"}
    assert undiffed("b/util.py", files.__contains__) == "util.py"
    assert undiffed("a/util.py", files.__contains__) == "a/util.py"      # a/ is a directory of its own
    assert undiffed("b/new.py", files.__contains__) == "b/new.py"        # nothing named new.py: a new path
    assert undiffed("util.py", files.__contains__) == "util.py"
    assert undiffed("b/../util.py", lambda p: True) == "b/../util.py"  # no existence is probed outside


def test_nothing_is_said_of_ids_never_applied():
    assert applied_already(["9999aa", "src/"], {"c5a46e0000": "ci.yml"}, {"e3c34d": "util.py"}) == ""
