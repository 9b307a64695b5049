"""The model can touch nothing outside the build worktree (promise 5)."""
from __future__ import annotations

import json
import os

import pytest

from testing.flow import SPEC, call, feature_repo, retcon, turn
from testing.sandboxes import worktrees


@pytest.fixture
def project(tmp_path):
    repo = feature_repo(tmp_path / "repo")
    (tmp_path / "spec.toml").write_text(SPEC)
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit").code == 0
    return repo


def results(log):
    """The tool results the model saw, as of its last turn."""
    return json.loads(log.read_text().splitlines()[-1])["results"]


def test_paths_outside_the_worktree_are_refused_to_the_model(project, scripted, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, project.path.parent / "link-target")
    attempts = [
        call("write_file", path="../escape.txt", content="x"),
        call("write_file", path=str(tmp_path / "abs.txt"), content="x"),
        call("write_file", path=".git/config", content="x"),
        call("write_file", path="sub/.GIT/hooks/pre-commit", content="x"),
        call("read_file", path="../../../../etc/passwd"),
        call("read_file", path="/etc/passwd"),
        call("delete_file", path="../repo/app.py"),
        call("write_file", path="", content="x"),
    ]
    log = scripted({"1/extract": [turn(*attempts), turn(call("stuck", summary="refused everywhere"))]})
    config = (project.path / ".git" / "config").read_bytes()
    res = retcon(project, "run", "-m", "scripted")
    assert res.code == 3
    out = results(log)
    assert len(out) == len(attempts)
    assert all(r.startswith("Error:") for r in out), out
    assert "absolute paths are refused" in out[1] and "under .git are refused" in out[2]
    assert not (tmp_path / "escape.txt").exists() and not (tmp_path / "abs.txt").exists()
    assert list(outside.iterdir()) == []
    assert (project.path / "app.py").exists()
    assert (project.path / ".git" / "config").read_bytes() == config
    worktree = worktrees(project.path) / "worktrees" / "feature-clean"
    assert (worktree / ".git").read_text().startswith("gitdir: ")
    assert not (worktree / "sub").exists()


def test_a_symlink_that_leaves_the_worktree_is_not_followed(tmp_path, scripted):
    repo = feature_repo(tmp_path / "repo")
    outside = tmp_path / "outside"
    outside.mkdir()
    repo.git("checkout", "-q", "feature")
    os.symlink(str(outside), repo.path / "escape")
    repo.commit("add a symlink that points out")
    repo.git("checkout", "-q", "main")
    (tmp_path / "spec.toml").write_text(
        SPEC.replace('paths = ["README", "notes/"]', 'paths = ["README", "notes/", "escape"]'))
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit").code == 0
    log = scripted({"1/extract": [turn(call("read_diff")), turn(call("apply_hunks", hunk_ids="$ids:")),
                                  turn(call("write_file", path="escape/pwned.txt", content="x"),
                                       call("read_file", path="escape"),
                                       call("delete_file", path="escape/whatever")),
                                  turn(call("stuck", summary="done probing"))]})
    assert retcon(repo, "run", "-m", "scripted").code == 3
    out = results(log)[1:]
    assert out[0].startswith("Applied")
    assert all(r.startswith("Error:") for r in out[1:4]), out
    assert "symlink" in out[1]
    assert list(outside.iterdir()) == []


def test_the_model_cannot_run_anything_but_the_configured_commands(project, scripted):
    log = scripted({"1/extract": [turn(call("run_shell", command="touch /tmp/pwned"),
                                       call("run_build", command="touch /tmp/pwned")),
                                  turn(call("stuck", summary="no shell"))]})
    assert retcon(project, "run", "-m", "scripted").code == 3
    out = results(log)
    assert out[0].startswith(("Error:", "Cancelled:")) and "run_shell" in out[0]
    assert out[1].startswith("Error:")
    assert not os.path.exists("/tmp/pwned")
