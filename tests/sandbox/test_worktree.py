"""The build worktree is git-retcon's own: made without the user's hooks, robust to a
kill at any instant of its making, removed by its own admin dir (never a prune)."""
from __future__ import annotations

import fcntl
import os
import signal
from pathlib import Path

import pytest

from testing.flow import SPEC, feature_repo, retcon_proc, spec_with, take, write_script
from testing.gitrepo import GitRepo
from testing.sandboxes import worktrees

SCRIPT = {"1/extract": take("util.py"), "2/extract": take("app.py"), "3/extract": take("")}


@pytest.fixture
def project(tmp_path, monkeypatch):
    repo = feature_repo(tmp_path / "repo")
    (tmp_path / "spec.toml").write_text(SPEC)
    assert retcon_proc(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit").code == 0
    monkeypatch.setenv("RETCON_SCRIPT", str(write_script(tmp_path / "script.json", SCRIPT)))
    repo.git("config", "retcon.model", "scripted")
    return repo


def location(repo: GitRepo) -> Path:
    return worktrees(repo.path) / "worktrees" / "feature-clean"


def listed(repo: GitRepo) -> list[str]:
    out = repo.git("worktree", "list", "--porcelain")
    return [ln[len("worktree "):] for ln in out.splitlines() if ln.startswith("worktree ")]


def admin_dirs(repo: GitRepo) -> list[str]:
    root = repo.path / ".git" / "worktrees"
    return sorted(p.name for p in root.iterdir()) if root.exists() else []


def assert_done(repo: GitRepo) -> None:
    assert repo.log("main..feature-clean") == ["docs: explain main", "app: use two()", "util: add two()"]
    assert repo.tree("feature-clean") == repo.tree("feature")
    assert retcon_proc(repo, "check").code == 0


def test_a_users_worktree_whose_directory_is_away_keeps_its_metadata(project, tmp_path):
    """`git worktree prune` would drop the staged work of a linked worktree whose
    directory is on an unmounted disk (here: renamed) while git-retcon runs."""
    mine = tmp_path / "mine"
    project.git("worktree", "add", "-q", "-b", "other", str(mine), "main")
    (mine / "staged.txt").write_text("staged work\n")
    GitRepo(mine).git("add", "staged.txt")
    away = tmp_path / "away"
    mine.rename(away)
    res = retcon_proc(project, "run")
    assert res.code == 0, res.text
    assert retcon_proc(project, "abort", "feature-clean").code == 0
    assert str(location(project)) not in listed(project)
    away.rename(mine)
    assert str(mine) in listed(project)
    assert GitRepo(mine).git("status", "--porcelain") == "A  staged.txt"


def test_the_users_post_checkout_hook_does_not_run(project, tmp_path):
    marker = tmp_path / "hook-ran"
    hook = project.path / ".git" / "hooks" / "post-checkout"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    hook.chmod(0o755)
    res = retcon_proc(project, "run")
    assert res.code == 0, res.text
    assert not marker.exists()
    assert_done(project)


@pytest.mark.parametrize("point", ["worktree-added", "worktree-checked-out"])
def test_killed_while_the_worktree_is_made_then_rerun(project, point):
    killed = retcon_proc(project, "run", env={"RETCON_FAILPOINT": point})
    assert killed.code == -signal.SIGKILL
    res = retcon_proc(project, "run")
    assert res.code == 0, res.text
    assert_done(project)
    # Made again, used, and removed once the spec completed: nothing of it is left.
    assert listed(project) == [str(project.path)]
    assert admin_dirs(project) == []


@pytest.mark.parametrize("point", ["worktree-added", "worktree-checked-out"])
def test_abort_removes_a_half_made_worktree(project, point):
    killed = retcon_proc(project, "run", env={"RETCON_FAILPOINT": point})
    assert killed.code == -signal.SIGKILL
    res = retcon_proc(project, "abort", "feature-clean")
    assert res.code == 0, res.text
    assert "Removed the build worktree." in res.out
    assert listed(project) == [str(project.path)]
    assert admin_dirs(project) == []
    assert not location(project).exists()
    res = retcon_proc(project, "run")
    assert res.code == 0, res.text
    assert_done(project)


def make_initializing(repo: GitRepo) -> None:
    """What a kill inside `git worktree add` leaves: the admin dir locked "initializing"."""
    location(repo).parent.mkdir(parents=True, exist_ok=True)
    repo.git("worktree", "add", "-q", "--no-checkout", "--detach", str(location(repo)), "main")
    (repo.path / ".git" / "worktrees" / "feature-clean" / "locked").write_text("initializing")


def test_abort_unlocks_and_removes_a_worktree_killed_inside_git_worktree_add(project):
    make_initializing(project)
    res = retcon_proc(project, "abort", "feature-clean")
    assert res.code == 0, res.text
    assert "Removed the build worktree." in res.out
    assert listed(project) == [str(project.path)]
    assert admin_dirs(project) == []
    res = retcon_proc(project, "run")
    assert res.code == 0, res.text
    assert_done(project)


def test_run_replaces_a_worktree_killed_inside_git_worktree_add(project):
    make_initializing(project)
    (location(project) / ".git").unlink()  # killed before the .git file was written
    res = retcon_proc(project, "run")
    assert res.code == 0, res.text
    assert_done(project)
    assert admin_dirs(project) == []


def test_fresh_lock_files_of_its_own_are_cleared_at_once(project):
    """A kill leaves git's lock files; the rerun holds the run lock, so they are stale
    however new they are."""
    killed = retcon_proc(project, "run", env={"RETCON_FAILPOINT": "spec-entry-held"})
    assert killed.code == -signal.SIGKILL
    git_dir = project.path / ".git"
    admin = git_dir / "worktrees" / "feature-clean"
    stale = [git_dir / "refs/heads/feature-clean.lock", git_dir / "refs/retcon/feature-clean.lock",
             git_dir / "refs/notes/retcon-tests.lock", admin / "index.lock", admin / "HEAD.lock"]
    for path in stale:
        path.write_text("")
    res = retcon_proc(project, "run")
    assert res.code == 0, res.text
    assert not any(p.exists() for p in stale)
    assert_done(project)


def test_a_notes_lock_of_another_running_git_retcon_is_kept_and_named(project):
    """Another spec's run may be writing a note: its lock stays, and the error names it."""
    locks = project.path / ".git" / "retcon" / "locks"
    locks.mkdir(parents=True, exist_ok=True)
    fd = os.open(locks / "other.lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    lock = project.path / ".git" / "refs" / "notes" / "retcon-tests.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text("")
    try:
        res = retcon_proc(project, "run")
    finally:
        os.close(fd)
    assert res.code == 1, res.text
    assert lock.exists()
    assert str(lock) in res.err
    assert "Traceback" not in res.err


def test_a_users_worktree_of_the_same_name_is_not_touched(project, tmp_path):
    """The user's own linked worktree `feature-clean` (admin dir .git/worktrees/feature-clean):
    ours gets another admin dir, and abort removes only ours."""
    mine = tmp_path / "elsewhere" / "feature-clean"
    project.git("worktree", "add", "-q", "--detach", str(mine), "main")
    (mine / "untracked.txt").write_text("mine\n")
    killed = retcon_proc(project, "run", env={"RETCON_FAILPOINT": "spec-entry-held"})
    assert killed.code == -signal.SIGKILL
    assert sorted(listed(project)) == sorted([str(project.path), str(mine), str(location(project))])
    res = retcon_proc(project, "abort", "feature-clean")
    assert res.code == 0, res.text
    assert sorted(listed(project)) == sorted([str(project.path), str(mine)])
    assert admin_dirs(project) == ["feature-clean"]
    assert (mine / "untracked.txt").read_text() == "mine\n"
    # A run to the end removes its own worktree on completion, and only its own.
    res = retcon_proc(project, "run")
    assert res.code == 0, res.text
    assert "Removed the build worktree" in res.out
    assert sorted(listed(project)) == sorted([str(project.path), str(mine)])
    assert admin_dirs(project) == ["feature-clean"]
    assert (mine / "untracked.txt").read_text() == "mine\n"


def test_killed_while_abort_removes_the_worktree(project):
    stopped = retcon_proc(project, "run", env={"RETCON_FAILPOINT": "spec-entry-held"})
    assert stopped.code == -signal.SIGKILL and location(project).exists()
    killed = retcon_proc(project, "abort", "feature-clean", env={"RETCON_FAILPOINT": "worktree-discarding"})
    assert killed.code == -signal.SIGKILL
    # git sees no worktree of ours, broken or not.
    assert listed(project) == [str(project.path)]
    assert "prunable" not in project.git("worktree", "list", "--porcelain")
    res = retcon_proc(project, "abort", "feature-clean")
    assert res.code == 0, res.text
    assert "Removed the build worktree." in res.out
    assert not location(project).exists()
    assert not (project.path / ".git" / "retcon" / "trash").exists()
    assert not (worktrees(project.path) / "trash").exists()
    res = retcon_proc(project, "run")
    assert res.code == 0, res.text
    assert_done(project)


@pytest.mark.parametrize("leaves", ["an untracked file", "a changed tracked file", "a staged change"])
def test_what_a_command_leaves_never_reaches_the_next_build(tmp_path, leaves):
    """Each build starts on exactly its commit's tree (promise 3): a build that finds what an
    earlier command left fails here. Whether the worktree needs its reset and clean is asked
    of git status; whatever it reports gets them."""
    from testing.cleaned import SPEC as CLEANED_SPEC
    from testing.cleaned import planned

    mess = {"an untracked file": "touch stray.txt", "a changed tracked file": "echo junk >> README",
            "a staged change": "echo junk >> README && git add README"}[leaves]
    spec = CLEANED_SPEC.replace('build = "', f'build = "test ! -e stray.txt && git diff --quiet HEAD && {mess} && ')
    if leaves == "a staged change":   # the index is the repository's: only an unconfined build stages
        spec = spec_with(spec, sandbox="off")
    repo = planned(tmp_path / "repo", spec)
    res = retcon_proc(repo, "run", "-m", "retcon-paths")
    assert res.code == 0, res.text
    assert "Building... PASS" in res.out and "FAIL" not in res.out
    assert repo.tree("feature-clean") == repo.tree("feature")
