"""A source rebased onto a moved remote: `run` (or `absorb`) restacks the clean history on the
new merge base with the same placements, verifies it, and `undo` takes it back; `status`,
`check` and the pre-push hook name the same next command before."""
from __future__ import annotations

import io
import json
import signal

import pytest

from git_retcon.hooks import pre_push
from testing.flow import SPEC, feature_repo, retcon, retcon_proc

MESSAGES = ["docs: explain main", "app: use two()", "util: add two()"]
NEXT = "'feature' was rebased onto a new base: git retcon run feature-clean restacks the clean history on it"


def status(repo):
    return json.loads(retcon(repo, "status", "--json").out)


def upstream(repo, files, message="upstream change"):
    """main moves on, and the user rebases feature onto it."""
    repo.git("checkout", "-q", "main")
    repo.commit(message, files)
    repo.git("rebase", "-q", "main", "feature")
    repo.git("checkout", "-q", "main")


@pytest.fixture
def placed(tmp_path):
    """A complete clean history, with an --into placement absorbed into commit 2."""
    repo = feature_repo(tmp_path / "repo")
    (tmp_path / "spec.toml").write_text(SPEC)
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit").code == 0
    assert retcon(repo, "run", "-m", "retcon-paths").code == 0
    repo.git("checkout", "-q", "feature")
    repo.commit("review", {"extra.py": "X = 1\n"})
    repo.git("checkout", "-q", "main")
    res = retcon(repo, "absorb", "--into", "2")
    assert res.code == 0, res.text
    assert "extra.py" in repo.git("show", "--name-only", "--format=", "feature-clean~1").split()
    return repo


def assert_restacked(repo):
    assert repo.log("main..feature-clean") == MESSAGES               # every message kept
    assert repo.git("merge-base", "main", "feature-clean") == repo.rev("main")
    assert repo.rev("feature-clean~3") == repo.rev("main")            # the parent chain on the new base
    assert repo.tree("feature-clean") == repo.tree("feature")
    assert "extra.py" in repo.git("show", "--name-only", "--format=", "feature-clean~1").split()   # --into 2 kept
    assert [c["state"] for c in status(repo)["commits"]] == ["complete"] * 3


def test_status_check_and_the_pre_push_hook_name_the_restack(placed, monkeypatch, capsys):
    repo = placed
    upstream(repo, {"LICENSE": "MIT\n"})
    out = retcon(repo, "status")
    assert NEXT in out.out and "git retcon absorb" not in out.out, out.text
    assert status(repo)["branch"] == "rebased" and status(repo)["to_absorb"] == 0
    res = retcon(repo, "check")
    assert res.code != 0 and NEXT in res.out and "abort" not in res.out, res.text
    monkeypatch.chdir(repo.path)
    tip = repo.rev("feature-clean")
    line = f"refs/heads/feature-clean {tip} refs/heads/feature-clean {'0' * 40}\n"
    assert pre_push(["origin"], io.StringIO(line), {}) == 1
    assert NEXT in capsys.readouterr().err


def test_a_run_restacks_onto_a_file_the_feature_does_not_touch(placed):
    repo = placed
    old_tip, old_spec = repo.rev("feature-clean"), repo.rev("refs/retcon/feature-clean")
    upstream(repo, {"LICENSE": "MIT\n"})
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 0, res.text
    assert "was rebased onto a new base: restacking 'feature-clean'" in res.out
    assert "Changes made after the clean history" not in repo.git("log", "main..feature-clean")
    assert_restacked(repo)
    assert res.out.count("building and testing") == 3 and "(recorded)" not in res.out   # new trees: all run
    assert retcon(repo, "check").code == 0
    note = json.loads(repo.git("notes", "--ref", "retcon", "show", "feature-clean"))
    assert note["rewritten_from"] == old_tip
    # undo puts the old branch and spec back; a second restack finds every tree tested already
    res = retcon(repo, "undo")
    assert res.code == 0, res.text
    assert (repo.rev("feature-clean"), repo.rev("refs/retcon/feature-clean")) == (old_tip, old_spec)
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 0, res.text
    assert res.out.count("(recorded)") == 6   # build and test of 3 commits: no command ran again
    assert_restacked(repo)


def test_absorb_restacks_too_onto_a_change_to_a_file_the_feature_changes(placed):
    repo = placed
    # main changes util.py's first function; the feature adds two() after it: a clean merge
    upstream(repo, {"util.py": "def one():  # the first\n    return 1\n"})
    res = retcon(repo, "absorb")
    assert res.code == 0, res.text
    assert "restacking" in res.out and "Nothing to absorb" in res.out
    assert_restacked(repo)
    assert "# the first" in repo.git("show", "feature-clean~2:util.py")
    assert retcon(repo, "check").code == 0


def test_a_commit_that_does_not_merge_on_the_new_base_is_built_again(placed):
    repo = placed
    # main rewrites app.py's line that commit 2 changes; the user resolves the rebase by hand
    repo.commit("upstream app", {"app.py": "import util\n\n\ndef main():\n    return util.one() * 1\n"})
    repo.git("rebase", "-q", "main", "feature", check=False)
    repo.write("app.py", "import util\n\n\ndef main():\n    return util.one() * 1 + util.two()\n")
    repo.git("add", "app.py")
    repo.git("commit", "-q", "--no-edit")
    repo.git("rebase", "--continue")
    repo.git("checkout", "-q", "main")
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 0, res.text
    assert "Commit 2/3 (app: use two()) does not apply on the new base" in res.out
    assert "app.py" in res.out and "will be built afresh from 'feature' as rebased" in res.out
    assert repo.log("main..feature-clean") == MESSAGES
    assert repo.rev("feature-clean~3") == repo.rev("main")
    assert repo.tree("feature-clean") == repo.tree("feature")
    assert [c["state"] for c in status(repo)["commits"]] == ["complete"] * 3
    assert retcon(repo, "check").code == 0


def test_a_restack_killed_before_the_branch_moved_is_finished(placed):
    repo = placed
    tip = repo.rev("feature-clean")
    upstream(repo, {"LICENSE": "MIT\n"})
    killed = retcon_proc(repo, "run", "-m", "retcon-paths", env={"RETCON_FAILPOINT": "restack-spec-saved"})
    assert killed.code == -signal.SIGKILL
    assert repo.rev("feature-clean") == tip
    res = retcon_proc(repo, "run", "-m", "retcon-paths")
    assert res.code == 0, res.text
    assert "Finished an interrupted absorb" in res.out
    assert_restacked(repo)


def test_a_branch_checked_out_in_a_worktree_is_not_moved(placed):
    repo = placed
    tip = repo.rev("feature-clean")
    upstream(repo, {"LICENSE": "MIT\n"})
    repo.git("worktree", "add", "-q", str(repo.path.parent / "wt"), "feature-clean")
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 1 and "is checked out in" in res.err, res.text
    res = retcon(repo, "absorb")
    assert res.code == 1 and "is checked out in" in res.err, res.text
    assert repo.rev("feature-clean") == tip


def test_a_re_made_commit_that_fails_on_the_new_base_is_left_to_the_run(placed):
    """main refuses util.two() in app.py: on the new base commit 1 (which adds it) fails."""
    repo = placed
    upstream(repo, {"app.py": "import util\n\nassert not hasattr(util, 'two'), 'no two()'\n\n\ndef main():\n"
                              "    return util.one()\n"})
    res = retcon(repo, "absorb")
    assert res.code == 3, res.text
    assert "Commit 1/3 does not pass on the new base" in res.out and "no two()" in res.out
    assert "the restack left commit 1/3 to build again on the new base" in res.err
    assert [c["state"] for c in status(repo)["commits"]] == ["in-progress", "pending", "pending"]
    assert repo.rev("feature-clean~1") == repo.rev("main")
    assert "git retcon run feature-clean" in retcon(repo, "check").out


def test_review_fixes_made_with_the_rebase_are_absorbed_after_the_restack(placed):
    repo = placed
    upstream(repo, {"LICENSE": "MIT\n"})
    repo.git("checkout", "-q", "feature")
    repo.commit("review", {"util.py": "def one():\n    return 1\n\n\ndef two():\n    return 1 + 1\n"})
    repo.git("checkout", "-q", "main")
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 0, res.text
    assert "restacking" in res.out and "util.py (modify) -> commit 1: its lines came from commit 1" in res.out
    assert_restacked(repo)
    assert "1 + 1" in repo.git("show", "feature-clean~2:util.py")
