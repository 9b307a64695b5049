"""The model takes part of a hunk (`apply_hunks(["id:1-4"])`) or edits a few lines
(`edit_file`), so an intermediate commit costs lines, not a whole file."""
from __future__ import annotations

import json

import pygit2
import pytest

from git_retcon import diff
from testing.flow import call, retcon, turn
from testing.gitrepo import GitRepo

ONE = "def one():\n    return 1\n"
TWO = "\n\ndef two():\n    return 2\n"
THREE = "\n\ndef three():\n    return 3\n"

SPEC = """\
source = "feature"
remote = "main"
cleaned = "feature-clean"
owners = "conversation"

[[commit]]
message = "util: add two()"

[[commit]]
message = "util: add three()"
"""


@pytest.fixture
def appended(tmp_path):
    """Two functions appended to util.py by two commits: one insertion hunk in the remaining diff."""
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("base", {"util.py": ONE, "list.txt": "a\nb\nc\n"})
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("two", {"util.py": ONE + TWO})
    repo.commit("three", {"util.py": ONE + TWO + THREE})
    repo.git("checkout", "-q", "main")
    (tmp_path / "spec.toml").write_text(SPEC)
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit").code == 0
    return repo


def hunk_ids(repo: GitRepo, old: str, new: str) -> list[str]:
    pr = pygit2.Repository(str(repo.path))
    return [h.id for h in diff.remaining(pr, repo.tree(old), repo.tree(new))]


def last_results(log) -> list[str]:
    return json.loads(log.read_text().splitlines()[-1])["results"]


def test_a_selection_takes_one_of_two_functions_appended_in_one_hunk(appended, scripted):
    [hid] = hunk_ids(appended, "main", "feature")
    log = scripted({
        "1/extract": [turn(call("read_diff", path="util.py")),
                      turn(call("apply_hunks", hunk_ids=[f"{hid}:1-4"])),
                      turn(call("create_commit", message="util: add two()"))],
        "2/extract": [turn(call("read_diff")),
                      turn(call("apply_hunks", hunk_ids="$ids:")),
                      turn(call("create_commit", message="util: add three()"))],
    })
    res = retcon(appended, "run", "-m", "scripted")
    assert res.code == 0, res.text
    assert appended.git("show", "feature-clean~1:util.py") + "\n" == ONE + TWO
    assert appended.tree("feature-clean") == appended.tree("feature")
    entries = [json.loads(ln) for ln in log.read_text().splitlines()]
    first = next(e for e in entries if e["keys"] == ["1/extract/1"] and len(e["results"]) == 2)
    shown, applied = first["results"]
    assert "apply_hunks(['<id>:1-3,7'])" in shown and "1 +" in shown and "8 +    return 3" in shown
    [rest] = hunk_ids(appended, "feature-clean~1", "feature")
    assert applied.startswith("Applied 1 hunks (1 of them in part) to 1 files: util.py.")
    # Named as read_diff will show it: the only hunk left, abbreviated.
    assert f"What is left of the hunks taken in part: {diff.short_ids([rest])[rest]} (util.py)" in applied


def test_a_bad_selection_is_refused_with_the_numbering_and_nothing_applied(appended, scripted):
    [hid] = hunk_ids(appended, "main", "feature")
    log = scripted({"1/extract": [turn(call("apply_hunks", hunk_ids=f"{hid}:1-4,12")),
                                  turn(call("apply_hunks", hunk_ids=f"{hid}:4-1")),
                                  turn(call("apply_hunks", hunk_ids=f"{hid}:1-0")),
                                  turn(call("read_file", path="util.py")),
                                  turn(call("stuck", summary="gave up"))]})
    assert retcon(appended, "run", "-m", "scripted").code == 3
    bad_range, backwards, zero, util = last_results(log)
    shown = diff.short_ids([hid])[hid]
    assert bad_range.startswith(f"Error: hunk {shown} (util.py) has lines 1-8; 12 is not among them; "
                                "nothing was applied")
    assert "runs backwards (write 1-4)" in backwards
    # Turned round, 1-0 would be 0-1, no better: the answer says where the numbering starts.
    assert "names line 0, and read_diff numbers each hunk's lines from 1" in zero and "runs backwards" not in zero
    assert util == ONE


def test_edit_file_replaces_the_one_occurrence_and_says_when_there_is_not_one(appended, scripted):
    log = scripted({
        "1/extract": [turn(call("edit_file", path="list.txt", old="b\n", new="B\nb2\n"),
                           call("edit_file", path="util.py", old="    return", new="    return 0 +"),
                           call("edit_file", path="util.py", old="return 7", new="x"),
                           call("edit_file", path="util.py", old="", new="x"),
                           call("edit_file", path="../outside.py", old="a", new="b"),
                           call("edit_file", path="nope.py", old="a", new="b"),
                           call("edit_file", path="util.py", old=ONE, new=ONE + TWO),
                           call("edit_file", path="util.py", old="def one():\n  return 0 + 1\n", new="x")),
                      turn(call("create_commit", message="util: add two()"))],
        "2/extract": [turn(call("apply_hunks", hunk_ids="$ids:")),
                      turn(call("read_diff")),
                      turn(call("create_commit", message="util: add three()"))],
    })
    res = retcon(appended, "run", "-m", "scripted")
    assert res.code == 0, res.text
    entries = [json.loads(ln) for ln in log.read_text().splitlines()]
    results = next(e for e in entries if e["keys"] == ["1/extract/1"] and e["turn"] == 1)["results"]
    assert results[0] == "Edited list.txt: 1 line replaced by 2 lines."
    assert results[1] == "Edited util.py: 1 line replaced by 1 line."
    assert results[2].startswith("Error: old does not occur in util.py; nothing was changed")
    assert results[3].startswith("Error: old is empty")
    assert results[4].startswith("Error: ../outside.py: '..' is refused")
    assert results[5].startswith("Error: nope.py: no such file")
    # ONE no longer occurs (its return was edited): the model is told, nothing changes.
    assert results[6].startswith("Error: old does not occur")
    # The answer quotes the file's nearest lines, to copy exactly without reading it all again.
    assert ("old is nearest to these lines of the file, from line 1:\ndef one():\n"
            "    return 0 + 1\n") in results[6], results[6]
    assert "old differs from it only in whitespace (indentation, tabs, trailing spaces); the file has, " \
           "from line 1:\ndef one():\n    return 0 + 1\n" in results[7], results[7]
    assert appended.git("show", "feature-clean~1:list.txt") == "a\nB\nb2\nc"
    # The remaining diff undoes what the source does not have: commit 2 took it back.
    assert appended.tree("feature-clean") == appended.tree("feature")


def test_edit_file_counts_occurrences_and_keeps_a_crlf_files_endings(tmp_path, scripted):
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("base", {"w.txt": b"x = 1\r\nx = 1\r\ny = 2\r\nz = 3\r\n\r\n\r\n"})
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("edit", {"w.txt": b"x = 1\r\nx = 1\r\ny = 20\r\nz = 3\r\n\r\n\r\n"})
    repo.commit("later", {"LATER.md": "later\n"})   # the last commit's (plain code takes it)
    repo.git("checkout", "-q", "main")
    (tmp_path / "spec.toml").write_text(SPEC)
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit").code == 0
    log = scripted({"1/extract": [turn(call("edit_file", path="w.txt", old="x = 1", new="x = 2"),
                                       call("edit_file", path="w.txt", old="\r\n\r\n", new="\r\n"),
                                       call("edit_file", path="w.txt", old="y = 2\nz", new="y = 20\nz")),
                                  turn(call("create_commit", message="w"))]})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    occurs, overlapping, edited = last_results(log)
    assert occurs.startswith("Error: old occurs 2 times in w.txt; nothing was changed: include more")
    # The file ends in three line endings: "\r\n\r\n" occurs twice there (overlapping), not once.
    assert overlapping.startswith("Error: old occurs 2 times in w.txt")
    assert edited == "Edited w.txt: 2 lines replaced by 2 lines."
    assert repo.tree("feature-clean~1") == repo.tree("feature~1")
