"""`stack --push` never drops a colleague's commit: after a fetch the lease still protects every
commit git-retcon did not push, and the way out keeps the colleague's work (taken into the source,
absorbed, then pushed). A real bare remote, a colleague's clone, the real git binary."""
from __future__ import annotations

import subprocess

import pytest

from testing.flow import SPEC, feature_repo, retcon
from testing.gitrepo import GitRepo


@pytest.fixture
def pushed(tmp_path):
    repo = feature_repo(tmp_path / "repo")
    (tmp_path / "spec.toml").write_text(SPEC)
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit").code == 0
    assert retcon(repo, "run", "-m", "retcon-paths").code == 0
    remote = tmp_path / "remote.git"
    repo.git("init", "-q", "--bare", str(remote))
    repo.git("remote", "add", "origin", str(remote))
    res = retcon(repo, "stack", "--push", "origin")
    assert res.code == 0, res.text
    # A colleague pushes a review fix to the second stack branch.
    other = GitRepo.init(tmp_path / "other")
    other.git("remote", "add", "origin", str(remote))
    other.git("fetch", "-q", "origin")
    other.git("checkout", "-q", "-b", "feature-clean-2", "origin/feature-clean-2")
    theirs = other.commit("review: say what two() is for", {"NOTES.md": "two() returns 2\n"})
    other.git("push", "-q", "origin", "feature-clean-2")
    return repo, remote, theirs


def on_remote(remote, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", str(remote), *args], capture_output=True, text=True,
                          check=True).stdout.strip()


def test_after_a_fetch_the_lease_still_protects_a_colleagues_commit(pushed):
    repo, remote, theirs = pushed
    res = retcon(repo, "stack", "--push", "origin")
    assert res.code == 1, res.text                                   # refused: the lease works
    assert on_remote(remote, "rev-parse", "feature-clean-2") == theirs
    repo.git("fetch", "-q", "origin")                                 # the advice of old
    res = retcon(repo, "stack", "--push", "origin")
    assert res.code == 1, res.text
    assert on_remote(remote, "rev-parse", "feature-clean-2") == theirs            # never dropped
    assert theirs[:9] in res.err and "git-retcon did not push" in res.err, res.err
    assert "git cherry-pick" in res.err and "git retcon absorb feature-clean" in res.err


def test_the_way_out_keeps_the_colleagues_work(pushed):
    repo, remote, theirs = pushed
    repo.git("fetch", "-q", "origin")
    # The advice: take the commit into the source, absorb it, push the stack again.
    repo.git("checkout", "-q", "feature")
    repo.git("cherry-pick", theirs)
    repo.git("checkout", "-q", "main")
    res = retcon(repo, "absorb")
    assert res.code == 0, res.text
    res = retcon(repo, "stack", "--push", "origin")
    assert res.code == 0, res.text
    # absorb placed it in a new logical commit at the end: the stack's top branch carries it.
    assert "feature-clean-4 -> " in res.out and "Pushed feature-clean-2" in res.out
    assert on_remote(remote, "show", "feature-clean-4:NOTES.md") == "two() returns 2"


def test_undo_of_a_pushed_stack_says_the_branches_are_still_on_the_remote(tmp_path):
    repo = feature_repo(tmp_path / "repo")
    (tmp_path / "spec.toml").write_text(SPEC)
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit").code == 0
    assert retcon(repo, "run", "-m", "retcon-paths").code == 0
    remote = tmp_path / "remote.git"
    repo.git("init", "-q", "--bare", str(remote))
    repo.git("remote", "add", "origin", str(remote))
    assert retcon(repo, "stack", "--push", "origin").code == 0
    res = retcon(repo, "undo")
    assert res.code == 0 and res.out.startswith("Undid `stack`"), res.text
    assert "Still on origin (undo moves local branches only): feature-clean-1, feature-clean-2, " \
           "feature-clean-3; `git push origin --delete feature-clean-1 feature-clean-2 feature-clean-3`" in res.out
    assert on_remote(remote, "rev-parse", "feature-clean-1")           # indeed still there
