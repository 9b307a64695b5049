"""git's environment decides the repository, as for git itself: $GIT_DIR and
$GIT_WORK_TREE (set by `git --git-dir`, hooks and scripts) win over the cwd."""
from __future__ import annotations

import shutil

from testing.cleaned import planned
from testing.flow import retcon
from testing.gitrepo import GitRepo


def other_repo(path) -> GitRepo:
    other = GitRepo.init(path)
    other.commit("unrelated", {"x": "1\n"})
    return other


def test_git_dir_names_the_repository_whatever_the_cwd(tmp_path, monkeypatch):
    repo = planned(tmp_path / "repo")
    other = other_repo(tmp_path / "other")
    before = other.git("for-each-ref")
    monkeypatch.setenv("GIT_DIR", str(repo.path / ".git"))
    res = retcon(other, "list")
    assert res.code == 0 and "feature-clean" in res.out, res.text
    res = retcon(other, "run", "-m", "retcon-paths")
    assert res.code == 0, res.text
    assert retcon(other, "check").code == 0
    monkeypatch.delenv("GIT_DIR")
    assert repo.tree("feature-clean") == repo.tree("feature")
    assert other.git("for-each-ref") == before and other.status() == ""
    assert not (other.path / ".git" / "retcon").exists()


def test_a_git_dir_kept_apart_from_its_work_tree(tmp_path, monkeypatch):
    repo = planned(tmp_path / "repo")
    store = tmp_path / "store.git"
    shutil.move(str(repo.path / ".git"), store)
    other = other_repo(tmp_path / "other")
    before = other.git("for-each-ref")
    monkeypatch.setenv("GIT_DIR", str(store))
    monkeypatch.setenv("GIT_WORK_TREE", str(repo.path))
    res = retcon(other, "run", "-m", "retcon-paths")
    assert res.code == 0, res.text
    res = retcon(other, "status")
    assert res.code == 0 and "feature-clean: complete" in res.out, res.text
    monkeypatch.setenv("GIT_WORK_TREE", str(tmp_path / "nowhere"))
    res = retcon(other, "list")
    assert res.code == 1 and "GIT_WORK_TREE" in res.err and "Traceback" not in res.text
    monkeypatch.delenv("GIT_DIR")
    monkeypatch.delenv("GIT_WORK_TREE")
    assert other.git("for-each-ref") == before
    assert GitRepo(tmp_path).git("--git-dir", str(store), "rev-parse", "feature-clean^{tree}") == \
        GitRepo(tmp_path).git("--git-dir", str(store), "rev-parse", "feature^{tree}")
