"""`git retcon resolve --redo`: a commit stuck because the spec was wrong is extracted
afresh after the spec is fixed, instead of stopping again at the same cached failure."""
from __future__ import annotations

import json

import pytest

from testing.fixcase import make
from testing.flow import call, retcon, take, turn


def status(repo):
    return json.loads(retcon(repo, "status", "--json").out)


@pytest.fixture
def stuck(tmp_path, scripted):
    """Commit 1 takes app.py, which needs util.two() (and extra.py, which it imports) from the
    remaining diff; the brief's candidate alone fails, the model gives up in the fix loop, with
    commit 1's commit on the cleaned branch."""
    repo = make(tmp_path, docs=0, extra=True)
    scripted({"1/extract": take("app.py"), "1/fix/1": [turn(call("stuck", summary="app.py needs util.two()"))]})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 3, res.text
    assert len(repo.log("main..feature-clean")) == 1
    return repo, res


def fix_spec(repo, tmp_path):
    """The human's spec edit: commit 1 takes util.py and extra.py too."""
    exported = tmp_path / "fixed.toml"
    assert retcon(repo, "spec", "export", "-o", str(exported)).code == 0
    text = exported.read_text()
    assert 'paths = ["app.py"]' in text
    exported.write_text(text.replace('paths = ["app.py"]', 'paths = ["app.py", "util.py", "extra.py"]'))
    res = retcon(repo, "spec", "import", str(exported))
    assert res.code == 0, res.text


def test_the_stuck_message_offers_redo_and_repeats_the_model(stuck):
    repo, res = stuck
    assert 'git retcon resolve --redo -m "what you changed" feature-clean' in res.err
    assert "git retcon run feature-clean -m scripted" in res.err
    # Running again without -m refuses with the same way out, the run's model repeated.
    again = retcon(repo, "run")
    assert again.code == 3 and "git retcon run feature-clean -m scripted" in again.err


def test_redo_drops_the_commits_and_the_next_run_extracts_afresh(stuck, tmp_path):
    repo, _ = stuck
    made = repo.rev("feature-clean")
    fix_spec(repo, tmp_path)
    res = retcon(repo, "resolve", "--redo", "-m", "commit 1 takes util.py and extra.py too")
    assert res.code == 0, res.text
    assert f"Dropped 1 commit of it from 'feature-clean' ({made[:7]}" in res.out
    assert "Next: git retcon run feature-clean -m scripted" in res.out
    assert repo.rev("feature-clean") == repo.rev("main")
    first = status(repo)["commits"][0]
    assert first["state"] == "resolved" and first["commits"] == []
    history = retcon(repo, "spec", "show").out
    assert made not in history and 'resolved = "commit 1 takes util.py and extra.py too"' in history
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 0, res.text
    assert repo.tree("feature-clean") == repo.tree("feature")
    assert repo.log("main..feature-clean") == ["docs: explain main", "app: use two()"]
    assert repo.git("diff", "--name-only", "main", "feature-clean~1").split() == ["app.py", "extra.py", "util.py"]


def test_redo_refuses_while_the_branch_is_checked_out_or_moved(stuck, tmp_path):
    repo, _ = stuck
    spec = repo.rev("refs/retcon/feature-clean")
    made = repo.rev("feature-clean")
    repo.git("worktree", "add", "-q", str(tmp_path / "there"), "feature-clean")
    res = retcon(repo, "resolve", "--redo", "-m", "x")
    assert res.code == 1 and "is checked out in" in res.err
    assert repo.rev("refs/retcon/feature-clean") == spec and repo.rev("feature-clean") == made
    # A commit of the user's on top: redo drops only what git-retcon recorded at the tip.
    repo.git("-C", str(tmp_path / "there"), "commit", "-q", "--allow-empty", "-m", "mine")
    repo.git("worktree", "remove", str(tmp_path / "there"))
    res = retcon(repo, "resolve", "--redo", "-m", "x")
    assert res.code == 1 and "moved since the run stopped" in res.err and "nothing was changed" in res.err
    assert repo.rev("refs/retcon/feature-clean") == spec and repo.log("main..feature-clean")[0] == "mine"


def test_redo_of_a_commit_stuck_before_it_made_any(tmp_path, scripted):
    repo = make(tmp_path, docs=0)
    scripted({"1/extract": [turn(call("stuck", summary="app.py needs util.two()"))]})
    assert retcon(repo, "run", "-m", "scripted").code == 3
    res = retcon(repo, "resolve", "--redo", "-m", "nothing to drop")
    assert res.code == 0, res.text
    assert "it had none; the next run extracts it afresh" in res.out
    assert "Next: git retcon run feature-clean -m scripted" in res.out
    assert status(repo)["commits"][0]["state"] == "resolved"
