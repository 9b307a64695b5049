"""The pre-push hook: real `git push` to local bare remotes, installed raw or through
the real pre-commit framework."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from testing.cleaned import (
    NEEDS_PATHS,
    SPEC,
    bare_remote,
    edit_spec,
    finished,
    git_push,
    planned,
    remote_refs,
    stuck,
    unstick,
)
from testing.flow import ROOT, call, needs_fix_repo, retcon, take, turn


@pytest.fixture
def hooked_stuck(tmp_path):
    repo = stuck(tmp_path / "repo")
    remote = bare_remote(repo, tmp_path / "remote.git")
    res = retcon(repo, "hooks", "install")
    assert res.code == 0 and f"Installed the git-retcon pre-push hook in {repo.path / '.git/hooks'}" in res.out
    return repo, remote


def test_stuck_branch_is_refused_then_accepted_once_finished(hooked_stuck):
    repo, remote = hooked_stuck
    res = git_push(repo, "origin", "feature-clean")
    assert res.code == 1
    assert "git-retcon: refusing to push 'feature-clean' to origin: `git retcon check feature-clean` fails:" in res.err
    assert "✗ commit 2/3 is stuck: app: use two()" in res.err
    assert NEEDS_PATHS in res.err
    assert "Fix that and push again, or push anyway with `git push --no-verify`." in res.err
    assert "refs/heads/feature-clean" not in remote_refs(remote)
    unstick(repo)
    res = git_push(repo, "origin", "feature-clean")
    assert res.code == 0, res.text
    assert remote_refs(remote)["refs/heads/feature-clean"] == repo.rev("feature-clean")


def test_other_refs_and_deletions_pass_untouched(hooked_stuck):
    repo, remote = hooked_stuck
    assert git_push(repo, "origin", "main", "feature").code == 0
    assert git_push(repo, "origin", "main:refs/heads/other").code == 0
    assert git_push(repo, "origin", ":refs/heads/other").code == 0
    assert set(remote_refs(remote)) == {"refs/heads/main", "refs/heads/feature"}
    # The stuck branch mixed into a push refuses the whole push (git's rule for hooks).
    res = git_push(repo, "origin", "main:refs/heads/again", "feature-clean")
    assert res.code == 1 and "refusing to push 'feature-clean'" in res.err
    assert "refs/heads/again" not in remote_refs(remote)


def test_spec_that_cannot_be_checked_refuses_with_the_reason(hooked_stuck):
    repo, remote = hooked_stuck
    repo.git("branch", "-D", "-q", "feature")
    res = git_push(repo, "origin", "feature-clean")
    assert res.code == 1
    assert ("git-retcon: refusing to push 'feature-clean' to origin: source 'feature' does not exist: "
            "check the branch name (git branch -a)") in res.err
    assert "Traceback" not in res.err and remote_refs(remote) == {}


def test_cleaned_tip_pushed_under_another_name_is_checked(hooked_stuck):
    repo, remote = hooked_stuck
    res = git_push(repo, "origin", f"{repo.rev('feature-clean')}:refs/heads/review")
    assert res.code == 1 and "✗ commit 2/3 is stuck" in res.err
    res = git_push(repo, "origin", "feature-clean:refs/heads/review")
    assert res.code == 1 and "✗ commit 2/3 is stuck" in res.err
    assert remote_refs(remote) == {}


@pytest.mark.parametrize("how", ["never ran", "deleted after the run"])
def test_a_users_own_branch_named_like_a_spec_is_not_guarded(tmp_path, how):
    """A branch that git-retcon did not make (the spec never ran, or the user deleted the
    cleaned branch and made their own of that name) is not a cleaned branch: run refuses to
    touch it, and the hook lets it through, saying why it was not checked."""
    repo = planned(tmp_path / "repo") if how == "never ran" else finished(tmp_path / "repo")
    if how != "never ran":
        repo.git("branch", "-D", "-q", "feature-clean")
    repo.git("checkout", "-q", "-b", "feature-clean", "main")
    repo.commit("my own work", {"mine.txt": "mine\n"})
    remote = bare_remote(repo, tmp_path / "remote.git")
    assert retcon(repo, "hooks", "install").code == 0
    res = git_push(repo, "origin", "feature-clean")
    assert res.code == 0, res.text
    assert ("git-retcon: not checking 'feature-clean': branch 'feature-clean' already exists with commits "
            "git-retcon did not make for 'feature-clean'") in res.err
    assert remote_refs(remote)["refs/heads/feature-clean"] == repo.rev("feature-clean")


@pytest.mark.parametrize("damage, reason", [
    ("source moved", "✗ 'feature' has moved on since the run: 1 new commit not in 'feature-clean'"),
    ("untested", "(test never ran)"),
    ("spec reopened", "✗ commit 3/3 is in-progress"),
], ids=["source-moved", "untested", "reopened"])
def test_finished_then_damaged_branch_is_refused(tmp_path, damage, reason):
    repo = finished(tmp_path / "repo")
    remote = bare_remote(repo, tmp_path / "remote.git")
    assert retcon(repo, "hooks", "install").code == 0
    if damage == "source moved":
        repo.git("checkout", "-q", "feature")
        repo.commit("late", {"README": "late\n"})
        repo.git("checkout", "-q", "main")
    elif damage == "untested":
        edit_spec(repo, lambda t: t.replace("grep -q 'def two'", "grep -q 'def two()'"))
    else:
        edit_spec(repo, lambda t: t[: t.rindex('    "complete",')] + "]\n")
    res = git_push(repo, "origin", "feature-clean")
    assert res.code == 1 and reason in res.err, res.err
    assert remote_refs(remote) == {}


def test_wip_holding_branch_is_refused(tmp_path, scripted):
    repo = needs_fix_repo(tmp_path, SPEC)
    scripted({"1/extract": take("app.py"),
              "1/fix/1": [turn(call("apply_hunks", hunk_ids="$ids:util.py")),
                          turn(call("create_commit", message="add the helper"))],
              "2/extract": take("")})
    assert retcon(repo, "run", "-m", "scripted").code == 0
    remote = bare_remote(repo, tmp_path / "remote.git")
    assert retcon(repo, "hooks", "install").code == 0
    res = git_push(repo, "origin", "feature-clean")
    assert res.code == 1 and "✗ 1 WIP: commit left" in res.err
    assert remote_refs(remote) == {}


def test_existing_hook_still_runs_and_comes_back_on_uninstall(tmp_path):
    repo = stuck(tmp_path / "repo")
    remote = bare_remote(repo, tmp_path / "remote.git")
    log = tmp_path / "theirs.log"
    theirs = repo.path / ".git/hooks/pre-push"
    text = (f'#!/bin/sh\ninput=$(cat)\necho "args: $*" >> {log}\necho "$input" >> {log}\n'
            'case $input in *refs/heads/forbidden*) exit 1 ;; esac\n')
    theirs.write_text(text)
    theirs.chmod(0o755)
    res = retcon(repo, "hooks", "install")
    assert res.code == 0 and "Kept your pre-push hook as" in res.out
    assert git_push(repo, "origin", "main").code == 0
    seen = log.read_text()
    assert f"args: origin {tmp_path / 'remote.git'}" in seen
    assert f"refs/heads/main {repo.rev('main')} refs/heads/main {'0' * 40}" in seen
    # Theirs can still refuse a push, and ours still refuses the stuck branch.
    assert git_push(repo, "origin", "main:refs/heads/forbidden").code == 1
    assert "refusing to push 'feature-clean'" in git_push(repo, "origin", "feature-clean").err
    # Installing again updates ours and keeps theirs chained.
    again = retcon(repo, "hooks", "install")
    assert again.code == 0 and "Updated" in again.out and "Kept" not in again.out
    res = retcon(repo, "hooks", "uninstall")
    assert res.code == 0 and "Restored your previous pre-push hook" in res.out
    assert theirs.read_text() == text and os.access(theirs, os.X_OK)
    assert not (repo.path / ".git/hooks/pre-push.pre-retcon").exists()
    assert git_push(repo, "origin", "feature-clean").code == 0  # the check is gone
    assert "refs/heads/feature-clean" in remote_refs(remote)
    res = retcon(repo, "hooks", "uninstall")
    assert res.code == 1 and "no git-retcon pre-push hook" in res.err


def test_install_follows_core_hooks_path(tmp_path):
    repo = stuck(tmp_path / "repo")
    remote = bare_remote(repo, tmp_path / "remote.git")
    repo.git("config", "core.hooksPath", "team-hooks")
    # a folder of the work tree: shared, so nothing is written there without --force (issue 38)
    res = retcon(repo, "hooks", "install")
    assert res.code == 1 and "team-hooks/pre-push" in res.err and not (repo.path / "team-hooks").exists(), res.text
    res = retcon(repo, "hooks", "install", "--force")
    assert res.code == 0 and str(repo.path / "team-hooks") in res.out
    assert (repo.path / "team-hooks/pre-push").exists()
    assert not (repo.path / ".git/hooks/pre-push").exists()
    assert git_push(repo, "origin", "feature-clean").code == 1
    assert remote_refs(remote) == {}


def run_entry(repo, env: dict[str, str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    """The console script's code, as the pre-commit framework runs it (no stdin)."""
    return subprocess.run([sys.executable, "-m", "git_retcon.hooks"], cwd=repo.path, text=True,
                          capture_output=True, input=stdin,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "PRE_COMMIT": "1", **env})


def test_hook_reads_the_pre_commit_push_variables(tmp_path):
    repo = stuck(tmp_path / "repo")
    tip = repo.rev("feature-clean")
    res = run_entry(repo, {"PRE_COMMIT_LOCAL_BRANCH": "refs/heads/feature-clean", "PRE_COMMIT_TO_REF": tip,
                           "PRE_COMMIT_FROM_REF": repo.rev("main"), "PRE_COMMIT_REMOTE_NAME": "origin",
                           "PRE_COMMIT_REMOTE_BRANCH": "refs/heads/feature-clean"})
    assert res.returncode == 1 and "refusing to push 'feature-clean' to origin" in res.stderr
    other = run_entry(repo, {"PRE_COMMIT_LOCAL_BRANCH": "refs/heads/main", "PRE_COMMIT_TO_REF": repo.rev("main"),
                             "PRE_COMMIT_REMOTE_BRANCH": "refs/heads/main"})
    assert other.returncode == 0 and other.stderr == ""
    # Run by hand with no push variables: the current branch is what a push would send.
    assert run_entry(repo, {}).returncode == 0  # on main
    repo.git("checkout", "-q", "feature-clean")
    assert run_entry(repo, {}).returncode == 1


# Taken before the hermetic fixture moves HOME: the user's pip cache, so that the
# framework test downloads each wheel once per machine, not once per run.
PIP_CACHE = os.environ.get("PIP_CACHE_DIR") or str(Path.home() / ".cache" / "pip")


# Slow: pre-commit builds its own virtualenv and pip-installs this package and its
# dependencies from PyPI (or the pip cache) for `language: python`. One install, two pushes.
@pytest.mark.slow
def test_pre_commit_framework_refuses_and_accepts_the_same_pushes(tmp_path):
    if not (ROOT / ".git").exists():
        pytest.skip("the hook repository must be a git checkout of git-retcon")
    rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, text=True, capture_output=True,
                         check=True).stdout.strip()
    repo = stuck(tmp_path / "repo")
    remote = bare_remote(repo, tmp_path / "remote.git")
    (repo.path / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {ROOT}\n  rev: {rev}\n  hooks:\n  - id: retcon-check\n")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
           "PIP_CACHE_DIR": PIP_CACHE, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    pre_commit = [sys.executable, "-m", "pre_commit"]
    subprocess.run([*pre_commit, "install", "--hook-type", "pre-push"], cwd=repo.path, env=env,
                   check=True, capture_output=True)

    def push(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["git", "push", *args], cwd=repo.path, env=env, text=True,
                              capture_output=True, timeout=900)

    res = push("origin", "feature-clean")
    assert res.returncode == 1, res.stdout + res.stderr
    out = res.stdout + res.stderr
    assert "git-retcon check" in out and "Failed" in out
    assert "✗ commit 2/3 is stuck: app: use two()" in out
    assert remote_refs(remote) == {}
    res = push("origin", "main")
    assert res.returncode == 0, res.stdout + res.stderr
    assert set(remote_refs(remote)) == {"refs/heads/main"}

