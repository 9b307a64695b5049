"""`git retcon absorb`: review fixes on the source land in the logical commit they belong to,
by each placement rule, and every re-made commit is built and tested again."""
from __future__ import annotations

import json
import signal

import pytest

from testing.flow import SPEC, feature_repo, retcon, retcon_proc, turn


def status(repo):
    return json.loads(retcon(repo, "status", "--json").out)


def review(repo, files, message="review fixes"):
    """A commit of review fixes on the source branch."""
    repo.git("checkout", "-q", "feature")
    repo.commit(message, files)
    repo.git("checkout", "-q", "main")


def changed(repo, rev):
    return repo.git("diff", "--name-only", f"{rev}~1", rev).split()


UTIL_FIXED = "def one():\n    return 1\n\n\ndef two():\n    return 1 + 1\n"


@pytest.fixture
def done(tmp_path):
    repo = feature_repo(tmp_path / "repo")
    (tmp_path / "spec.toml").write_text(SPEC)
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit").code == 0
    assert retcon(repo, "run", "-m", "retcon-paths").code == 0
    return repo


def test_a_fix_of_lines_one_commit_introduced_goes_into_it(done):
    repo = done
    before = repo.log("main..feature-clean")
    review(repo, {"util.py": UTIL_FIXED})
    assert "'feature' has 1 change since the spec was complete: git retcon absorb feature-clean" in \
        retcon(repo, "status").out
    res = retcon(repo, "absorb")
    assert res.code == 0, res.text
    assert "util.py (modify) -> commit 1: its lines came from commit 1" in res.out
    assert repo.log("main..feature-clean") == before              # the same logical commits, re-made
    assert "1 + 1" in repo.git("show", "feature-clean~2:util.py")
    assert changed(repo, "feature-clean~2") == ["util.py"]
    assert repo.tree("feature-clean") == repo.tree("feature")
    doc = status(repo)
    assert [c["state"] for c in doc["commits"]] == ["complete"] * 3
    assert doc["to_absorb"] == 0 and doc["commits"][0]["absorbed"][0].startswith("1 change of 'feature' at ")
    assert "Commit 1 absorbed: 1 change of 'feature'" in retcon(repo, "status").out
    assert retcon(repo, "check").code == 0
    history = retcon(repo, "spec", "show").out
    assert "absorbed = \"1 change of 'feature' at" in history and "its lines came from commit 1" in history


def test_a_new_file_under_one_commits_paths_goes_into_it(done):
    repo = done
    review(repo, {"notes/more.txt": "more notes\n"})
    res = retcon(repo, "absorb")
    assert res.code == 0, res.text
    assert "notes/more.txt (add) -> commit 3: under commit 3's paths" in res.out
    assert changed(repo, "feature-clean") == ["README", "notes/more.txt", "notes/todo.txt"]
    assert len(repo.log("main..feature-clean")) == 3


def test_a_change_no_commit_takes_goes_into_a_new_one_at_the_end_saying_why(done):
    repo = done
    review(repo, {"LICENSE": "MIT\n"}, message="add a license")
    res = retcon(repo, "absorb")
    assert res.code == 0, res.text
    assert "LICENSE (add) -> a new commit at the end: no logical commit introduced its lines or names its path" \
        in res.out
    log = repo.log("main..feature-clean")
    assert log[0] == "Changes made after the clean history, that no logical commit takes" and len(log) == 4
    assert "- add a license" in repo.git("log", "-1", "--format=%b", "feature-clean")
    assert [c["state"] for c in status(repo)["commits"]] == ["complete"] * 4
    assert retcon(repo, "check").code == 0


def test_into_puts_changes_where_the_user_says(done):
    repo = done
    review(repo, {"extra.py": "X = 1\n", "docs/x.md": "x\n"})
    res = retcon(repo, "absorb", "--into", "docs/*=3", "--into", "2")
    assert res.code == 0, res.text
    assert "docs/x.md (add) -> commit 3: --into 3" in res.out and "extra.py (add) -> commit 2: --into 2" in res.out
    assert "extra.py" in changed(repo, "feature-clean~1")
    res = retcon(repo, "absorb", "--into", "9")
    assert res.code == 1 and "give a logical commit's number, 1 to 3" in res.err


def test_the_model_places_what_is_ambiguous(done, scripted):
    repo = done
    review(repo, {"helper_notes.txt": "about util\n"})
    scripted({"1/owner": [turn(text="1"), turn(text="1")]})
    res = retcon(repo, "absorb", "-m", "scripted")
    assert res.code == 0, res.text
    assert "helper_notes.txt (add) -> commit 1: scripted judged it commit 1's" in res.out
    assert "helper_notes.txt" in changed(repo, "feature-clean~2")


def test_two_answers_that_differ_are_said_and_checked(done, tmp_path, monkeypatch):
    """Absorb asks the owners' question, again in the other order, and says when the answers
    differ: `owners-last` answers the last choice offered, a small model's bias."""
    from testing import owners_model

    repo = done
    review(repo, {"helper_notes.txt": "about util\n"})
    monkeypatch.setenv("RETCON_SCRIPT_LOG", str(tmp_path / "log.jsonl"))
    owners_model.register()
    try:
        res = retcon(repo, "absorb", "-m", "owners-last")
    finally:
        owners_model.unregister()
    assert res.code == 0, res.text
    asked = [json.loads(x) for x in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert len(asked) == 2 and all("Step: owner" in a["prompt"] and a["schema"] for a in asked)
    assert asked[0]["choices"] == list(reversed(asked[1]["choices"]))
    first, then = asked[0]["choices"][-1], asked[1]["choices"][-1]
    assert f"helper_notes.txt (add) -> commit {first}: owners-last was unsure (answered {first} then {then}): " \
        "check it" in res.out


def test_absorb_is_undone(done):
    repo = done
    tip, spec = repo.rev("feature-clean"), repo.rev("refs/retcon/feature-clean")
    review(repo, {"util.py": UTIL_FIXED})
    assert retcon(repo, "absorb").code == 0
    res = retcon(repo, "undo")
    assert res.code == 0 and res.out.startswith("Undid `absorb`"), res.text
    assert (repo.rev("feature-clean"), repo.rev("refs/retcon/feature-clean")) == (tip, spec)


def test_a_run_after_the_source_moved_absorbs(done):
    repo = done
    review(repo, {"util.py": UTIL_FIXED})
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 0, res.text
    assert "util.py (modify) -> commit 1" in res.out
    assert repo.tree("feature-clean") == repo.tree("feature") and len(repo.log("main..feature-clean")) == 3


def test_a_re_made_commit_that_fails_stops_and_the_run_fixes_it(done):
    """util.py's fix needs a new module that no commit takes: commit 1 fails its test with
    the fix alone; the next run's fix loop takes the module, and the rest is built again."""
    repo = done
    review(repo, {"util.py": UTIL_FIXED.replace("1 + 1", "helpers.TWO").replace("def one", "import helpers\n\n\n"
                                                                                 "def one"),
                  "helpers.py": "TWO = 2\n"})
    res = retcon(repo, "absorb")
    assert res.code == 3, res.text
    assert "commit 1/3 does not pass with the absorbed changes" in res.err
    assert [c["state"] for c in status(repo)["commits"]] == ["in-progress", "pending", "pending"]
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 0, res.text
    assert repo.tree("feature-clean") == repo.tree("feature")
    assert [c["state"] for c in status(repo)["commits"]] == ["complete"] * 3


def test_an_absorb_killed_before_the_branch_moved_is_finished_by_the_next_run(done):
    repo = done
    tip = repo.rev("feature-clean")
    review(repo, {"util.py": UTIL_FIXED})
    killed = retcon_proc(repo, "absorb", env={"RETCON_FAILPOINT": "absorb-spec-saved"})
    assert killed.code == -signal.SIGKILL
    assert repo.rev("feature-clean") == tip       # the spec is saved, the branch not moved yet
    res = retcon_proc(repo, "run", "-m", "retcon-paths")
    assert res.code == 0, res.text
    assert "Finished an interrupted absorb" in res.out
    assert repo.tree("feature-clean") == repo.tree("feature") and len(repo.log("main..feature-clean")) == 3
    assert retcon(repo, "check").code == 0


# -- stack -------------------------------------------------------------------------------------

def test_a_stack_is_made_moved_after_an_absorb_and_pushed_with_a_lease(done, tmp_path):
    repo = done
    remote = tmp_path / "remote.git"
    repo.git("init", "-q", "--bare", str(remote))
    repo.git("remote", "add", "origin", str(remote))
    res = retcon(repo, "stack", "--push", "origin")
    assert res.code == 0, res.text
    shas = [repo.rev(f"feature-clean~{n}") for n in (2, 1, 0)]
    assert [repo.rev(f"feature-clean-{k}") for k in (1, 2, 3)] == shas
    assert "feature-clean-1 -> " in res.out and "(made)" in res.out
    assert [repo.git("--git-dir", str(remote), "rev-parse", f"feature-clean-{k}") for k in (1, 2, 3)] == shas
    # A review fix absorbed into commit 1: the same command moves every branch to the re-made commits.
    review(repo, {"util.py": UTIL_FIXED})
    assert retcon(repo, "absorb").code == 0
    res = retcon(repo, "stack", "--push", "origin")
    assert res.code == 0, res.text
    new = [repo.rev(f"feature-clean~{n}") for n in (2, 1, 0)]
    assert [repo.rev(f"feature-clean-{k}") for k in (1, 2, 3)] == new and new != shas
    assert [repo.git("--git-dir", str(remote), "rev-parse", f"feature-clean-{k}") for k in (1, 2, 3)] == new
    assert res.out.count("moved from") == 3


def test_a_stack_branch_someone_added_to_is_left_as_it_is(done):
    repo = done
    assert retcon(repo, "stack").code == 0
    repo.git("switch", "-q", "feature-clean-2")
    repo.commit("a reviewer's fix", {"REVIEW.md": "fixed\n"})
    repo.git("switch", "-q", "main")
    mine = repo.rev("feature-clean-2")
    review(repo, {"util.py": UTIL_FIXED})
    assert retcon(repo, "absorb").code == 0
    res = retcon(repo, "stack")
    assert res.code == 0, res.text
    assert repo.rev("feature-clean-2") == mine and "feature-clean-2 -> " in res.out and "not moved" in res.out
    assert repo.rev("feature-clean-1") == repo.rev("feature-clean~2")


def test_a_change_forced_where_it_does_not_merge_goes_to_the_end(done):
    """--into 1 for a change of lines commit 2 introduced: commit 1's tree does not have them,
    so the three-way merge conflicts there; the change goes to a new commit at the end instead."""
    repo = done
    review(repo, {"app.py": "import util\n\n\ndef main():\n    return util.one() + util.two()  # three\n"})
    res = retcon(repo, "absorb", "--into", "1")
    assert res.code == 0, res.text
    assert "Changes do not merge onto the commits of commit 1: 1 change goes into a new commit" in res.out
    log = repo.log("main..feature-clean")
    assert len(log) == 4 and log[0].startswith("Changes made after the clean history")
    assert repo.tree("feature-clean") == repo.tree("feature")
