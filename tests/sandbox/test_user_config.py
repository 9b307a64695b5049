"""The user's repository config is never changed by a command git-retcon runs, with or without the
sandbox (issue 38): husky's `prepare` runs `git config core.hooksPath .husky`, which in a linked
worktree writes the user's own .git/config."""
from __future__ import annotations

import pytest

from testing.flow import SPEC, feature_repo, retcon, spec_with
from testing.gitrepo import GitRepo
from testing.sandboxes import WORKS


def planned(tmp_path, **fields: object) -> GitRepo:
    repo = feature_repo(tmp_path / "repo")
    (tmp_path / "s.toml").write_text(spec_with(SPEC, **fields))
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "s.toml"), "--no-edit").code == 0
    return repo


def hooks_path(repo: GitRepo) -> str:
    return repo.git("config", "--get", "core.hooksPath", check=False)


def test_a_setup_that_sets_core_hookspath_unconfined_leaves_the_users_config_as_it_was(tmp_path):
    repo = planned(tmp_path, setup="git config core.hooksPath .husky")
    before = (repo.path / ".git" / "config").read_bytes()
    res = retcon(repo, "run", "--sandbox", "off", "-m", "retcon-paths")
    assert res.code == 0, res.text
    assert hooks_path(repo) == ""
    assert (repo.path / ".git" / "config").read_bytes() == before
    assert "it changed your repository's config (core.hookspath=.husky): put back as it was" in res.out.lower()
    # and git in the user's checkout still runs its hooks from .git/hooks
    repo.commit("after", {"x.txt": "x\n"})


def test_a_test_that_rewires_the_config_in_check_rerun_is_put_back(tmp_path):
    repo = planned(tmp_path)
    assert retcon(repo, "run", "-m", "retcon-paths").code == 0
    export = tmp_path / "e.toml"
    assert retcon(repo, "spec", "export", "-o", str(export)).code == 0
    rewire = 'test = "git config core.hooksPath x && git config user.name Mallory"'
    export.write_text(export.read_text().replace("test = \"python3 -c 'import app; app.main()'\"", rewire))
    assert retcon(repo, "spec", "import", str(export)).code == 0
    res = retcon(repo, "check", "--rerun", "--sandbox", "off")
    assert hooks_path(repo) == "" and repo.git("config", "--local", "--get", "user.name", check=False) == "", res.text
    assert "put back as it was" in res.out, res.out


@pytest.mark.skipif(not WORKS, reason="no sandbox mechanism works here")
def test_confined_the_config_is_read_only_and_stays_as_it_was(tmp_path):
    repo = planned(tmp_path, setup="git config core.hooksPath .husky || true")
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 0, res.text
    assert hooks_path(repo) == ""
