"""A full disk is said as such: a run that cannot write for want of space (pygit2's "GitError: no
error", OSError ENOSPC, git's own failures) ends with one line naming the filesystem, the space
left and how to go on, exits 1, loses nothing, and the same `run` resumes once space is freed.

On a real 64 MB tmpfs (mounting needs root: skipped where it is refused), filled with a file to
the point under test, with the repository on it, and with the cache (the build worktrees) on it.
"""
from __future__ import annotations

import hashlib
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pygit2
import pytest

from git_retcon.space import full
from testing.flow import SPEC, feature_repo, retcon, retcon_proc
from testing.gitrepo import GitRepo

# Ten logical commits, each a region of one big file that hardly compresses, and a file of its own:
# every step writes a new blob of the big file (pygit2 says "GitError: no error" when that fails for
# want of space, or the blob is missing when read back) and adds a file to the build worktree.
COMMITS = 10


def _big(changed: int) -> str:
    return "".join((f"changed by commit {i // 100}\n" if i % 100 == 0 and i // 100 < changed else
                    hashlib.sha256(str(i).encode()).hexdigest() + "\n") for i in range(5000))


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    where = tmp_path / "fs"
    where.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(where)],
                             capture_output=True, text=True, check=False)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip() or mounted.returncode}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def _fill(fs: Path, leave_kb: int) -> Path:
    """A file that leaves leave_kb KB free on fs."""
    filler = fs / f"filler-{len(list(fs.glob('filler-*')))}"
    free = os.statvfs(fs).f_bavail * os.statvfs(fs).f_frsize
    with open(filler, "wb") as f:
        os.posix_fallocate(f.fileno(), 0, max(free - leave_kb * 1024, 4096))
    return filler


def _repo(path: Path) -> GitRepo:
    repo = GitRepo.init(path)
    repo.commit("base", {"big.txt": _big(0)})
    repo.git("checkout", "-q", "-b", "feature")
    for c in range(COMMITS):
        # and 40 KB of its own, which the build worktree (in the cache) gains at each step
        part = "".join(hashlib.sha256(f"{c}.{i}".encode()).hexdigest() + "\n" for i in range(600))
        repo.commit(f"step {c}", {"big.txt": _big(c + 1), f"part{c}.txt": part})
    repo.git("checkout", "-q", "main")
    repo.git("config", "retcon.owners", "conversation")
    res = retcon(repo, "plan", "--from-commits", "--source", "feature", "--onto", "main", "--cleaned", "clean",
                 "--build", "true", "--test", "true", "--no-edit")
    assert res.code == 0, res.text
    return repo


def _complete(repo: GitRepo, env: dict[str, str]) -> None:
    res = retcon_proc(repo, "run", "-m", "retcon-paths", env=env)
    assert res.code == 0, res.text
    assert repo.tree("clean") == repo.tree("feature")
    assert retcon_proc(repo, "check", env=env).code == 0
    repo.git("fsck", "--no-progress", "--strict")   # no object a failed write left half made, or referenced
    assert len(repo.git("rev-list", "main..clean").split()) == COMMITS


def _out_of_space(repo: GitRepo, fs: Path, done: int, leave_kb: int, env: dict[str, str]) -> None:
    """`run` made `done` logical commits; then the disk has leave_kb KB free: one line, exit 1;
    the space freed, the same run completes."""
    if done:
        killed = retcon_proc(repo, "run", "-m", "retcon-paths",
                             env={**env, "RETCON_FAILPOINT": f"after-complete@{done}"})
        assert killed.code == -9, killed.text
    made = repo.git("rev-list", "--reverse", "main..clean").split() if done else []
    assert len(made) == done
    filler = _fill(fs, leave_kb)
    res = retcon_proc(repo, "run", "-m", "retcon-paths", env=env)
    assert res.code == 1, res.text
    assert "Traceback" not in res.err and "internal error" not in res.err, res.err
    (line,) = [ln for ln in res.err.splitlines() if ln.strip()]
    m = re.fullmatch(r"error: (?:.*No space left on device.*: )?no space left on the filesystem at (\S+) \(tmpfs\): "
                     r"(\d+) KB free \(writing under (\S+)\); the same command resumes where it stopped: free some "
                     r"space, then run the command again", line)
    assert m, line
    assert m.group(1) == str(fs) and int(m.group(2)) <= 256 and m.group(3).startswith(str(fs)), line
    # Nothing lost: what was made is still there, in order.
    if done:
        assert repo.git("rev-list", "--reverse", "main..clean").split()[:done] == made
    filler.unlink()
    _complete(repo, env)


@pytest.mark.parametrize(("done", "leave_kb"), [(0, 256), (1, 64), (2, 64), (3, 64)])
def test_the_repository_on_a_full_disk(tmp_path, small_fs, done, leave_kb):
    repo = _repo(small_fs / "repo")
    _out_of_space(repo, small_fs, done, leave_kb, {})


@pytest.mark.parametrize(("done", "leave_kb"), [(0, 256), (1, 64), (3, 64)])
def test_the_cache_on_a_full_disk(tmp_path, small_fs, done, leave_kb):
    """The build worktrees live in the cache ($XDG_CACHE_HOME): the checkout of a worktree, the
    files a step writes there, its index."""
    repo = _repo(tmp_path / "repo")
    env = {"XDG_CACHE_HOME": str(small_fs / "cache")}
    _out_of_space(repo, small_fs, done, leave_kb, env)


def test_git_s_own_words_for_a_full_disk_are_the_same_line(tmp_path, small_fs):
    """git itself (worktree add, update-index) failing for want of space: the same line, not git's
    error text as a RetconError."""
    repo = feature_repo(small_fs / "repo")
    (tmp_path / "spec.toml").write_text(SPEC)
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit").code == 0
    env = {"XDG_CACHE_HOME": str(small_fs / "cache")}
    filler = _fill(small_fs, 8)
    res = retcon_proc(repo, "run", "-m", "retcon-paths", env=env)
    assert res.code == 1 and "no space left on the filesystem at " in res.err, res.text
    assert len([ln for ln in res.err.splitlines() if ln.strip()]) == 1, res.err
    filler.unlink()
    res = retcon_proc(repo, "run", "-m", "retcon-paths", env=env)
    assert res.code == 0, res.text
    assert repo.tree("feature-clean") == repo.tree("feature")


def test_a_failure_that_names_no_cause_is_a_full_disk_only_where_one_is_full(tmp_path, small_fs):
    """What pygit2 raises when libgit2 lost the cause of a failed write, and a failure that is no
    error of ours (an internal error), are said as a full disk when a filesystem written to is all
    but full, and as themselves when none is; a failure that names another cause never is."""
    roomy = tmp_path / "roomy"
    roomy.mkdir()
    filler = _fill(small_fs, 64)
    line = full(pygit2.GitError("no error"), [roomy, small_fs / "repo" / ".git"])
    assert line is not None and str(line).startswith(f"no space left on the filesystem at {small_fs} (tmpfs): ")
    assert "GitError" not in str(line) and "no error" not in str(line)
    assert f"(writing under {small_fs / 'repo' / '.git'})" in str(line)
    assert full(KeyError("k"), [small_fs], unexplained=True) is not None
    assert full(KeyError("k"), [small_fs]) is None          # an error of ours says what it says
    assert full(OSError(13, "Permission denied"), [small_fs]) is None
    filler.unlink()
    assert full(pygit2.GitError("no error"), [roomy, small_fs]) is None
    assert full(OSError(28, "No space left on device"), [small_fs]) is not None   # it says so
