"""Ordinary conditions of a machine or a repository get one line that names the file or
the cause and what to do, exit 1: never "internal error, please report it"."""
from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from testing.flow import SPEC, call, feature_repo, one_line_error, retcon, retcon_proc, turn
from testing.flow import plan_file as plan
from testing.gitrepo import GitRepo
from testing.sandboxes import worktrees

# -- a full disk -------------------------------------------------------------------------------

@pytest.fixture
def small_disk(tmp_path, monkeypatch):
    """A 2 MB file system (tmpfs) to fill up; mounting one needs root. The cache folder, where the
    build worktrees live, is on it too."""
    mnt = tmp_path / "disk"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mnt)],
                      capture_output=True).returncode != 0:
        pytest.skip("cannot mount a small file system here (needs root)")
    monkeypatch.setenv("XDG_CACHE_HOME", str(mnt / "cache"))
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], check=False)


def fill(disk: Path, leave: int = 0) -> None:
    """Fill the file system but for about `leave` bytes."""
    with contextlib.suppress(OSError), open(disk / "filler", "wb") as f:   # full: as intended
        f.write(b"\0" * max(shutil.disk_usage(disk).free - leave, 0))


def test_a_full_disk_when_the_spec_is_saved_is_one_line_naming_where(small_disk, tmp_path):
    repo = feature_repo(small_disk / "repo")
    fill(small_disk)
    line = one_line_error(plan(repo, tmp_path, SPEC), "No space left on device", "free some space")
    assert str(repo.path / ".git") in line, line


def test_a_full_disk_inside_a_tool_stops_the_run_naming_the_file(small_disk, tmp_path, scripted):
    repo = feature_repo(small_disk / "repo")
    assert plan(repo, tmp_path, SPEC.replace('build = "python3 -m py_compile app.py util.py"\n', "")
                .replace("test = \"python3 -c 'import app; app.main()'\"\n", "")).code == 0
    log = scripted({"1/extract": [turn(call("write_file", path="big.txt", content="x" * 400_000))]
                    + [turn(call("read_diff"))] * 12})
    assert retcon(repo, "run", "-m", "scripted", "--dry-run").code == 0
    fill(small_disk, leave=200_000)   # room for the worktree's checkout, not for big.txt

    res = retcon(repo, "run", "-m", "scripted")

    line = one_line_error(res, "big.txt: No space left on device", "free some space")
    assert line.startswith(f"error: {worktrees(repo.path)}/"), line     # the file, by its full path
    assert "stuck" not in res.text
    assert len(log.read_text().splitlines()) == 1       # the model is not asked to deal with it


@pytest.mark.parametrize("by", ["model", "plain code"])
def test_a_full_disk_while_hunks_are_applied_stops_the_run_and_leaves_the_worktree_as_it_was(
        by, small_disk, tmp_path, scripted):
    """By the model's apply_hunks (commit 1 of 2), or by plain code taking the last commit's."""
    repo = GitRepo.init(small_disk / "repo")
    repo.commit("base", {"a.txt": "one\n"})
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("big", {"a.txt": "two\n", "big.bin": bytes(range(256)) * 1200})   # 300 KB, stored compressed
    spec = ('source = "feature"\nremote = "main"\ncleaned = "clean"\n'
            'owners = "conversation"\n[[commit]]\nmessage = "all"\n')
    if by == "model":
        repo.commit("later", {"LATER.md": "later\n"})
        spec += '[[commit]]\nmessage = "later"\n'
    repo.git("checkout", "-q", "main")
    assert plan(repo, tmp_path, spec).code == 0
    log = scripted({"1/extract": [turn(call("apply_hunks", hunk_ids="$ids:a.txt|big.bin"))]
                    + [turn(call("read_diff"))] * 12})
    assert retcon(repo, "run", "-m", "scripted", "--dry-run").code == 0
    wt = worktrees(repo.path) / "worktrees" / "clean"
    fill(small_disk, leave=150_000)

    res = retcon(repo, "run", "-m", "scripted")

    line = one_line_error(res, f"{wt}/big.bin: No space left on device", "free some space")
    calls = log.read_text().splitlines() if log.exists() else []
    assert len(calls) == (1 if by == "model" else 0)
    assert (wt / "a.txt").read_text() == "one\n" and not (wt / "big.bin").exists()   # all or nothing
    assert line.endswith("free some space, then run the command again"), line
    assert repo.git("rev-list", "main..clean") == ""    # nothing was committed


# -- repositories and environments git-retcon cannot or must work with -------------------------

def test_a_sha256_repository_is_refused_as_unsupported(tmp_path):
    path = tmp_path / "sha"
    subprocess.run(["git", "init", "-q", "-b", "main", "--object-format=sha256", str(path)], check=True)
    repo = GitRepo(path)
    repo.commit("base", {"a": "1\n"})
    for args in (["list"], ["plan", "--from-commits", "--source", "main", "--onto", "main", "--no-edit"]):
        one_line_error(retcon(repo, *args), "a SHA-256 repository", "does not support", str(path))


def test_a_sha256_repository_named_by_git_dir_is_refused_as_unsupported(tmp_path, monkeypatch):
    path = tmp_path / "sha"
    subprocess.run(["git", "init", "-q", "-b", "main", "--object-format=sha256", str(path)], check=True)
    elsewhere = GitRepo.init(tmp_path / "other")
    monkeypatch.setenv("GIT_DIR", str(path / ".git"))
    one_line_error(retcon(elsewhere, "list"), "a SHA-256 repository", "does not support", str(path))


def upstream(tmp_path) -> Path:
    repo = feature_repo(tmp_path / "upstream")
    repo.git("config", "uploadpack.allowFilter", "true")
    return repo.path


@pytest.mark.parametrize("older_git", [False, True])
def test_a_partial_clone_lacking_blobs_is_planned_and_run(tmp_path, older_git):
    up = GitRepo(upstream(tmp_path))
    up.git("checkout", "-q", "feature")
    up.commit("more", {"util.py": "def one():\n    return 1\n\n\ndef two():\n    return 2\n\n\ndef three():\n"
                               "    return 3\n"})
    up.commit("less", {"util.py": "def one():\n    return 1\n\n\ndef two():\n    return 2\n"})
    up.git("checkout", "-q", "main")
    clone = tmp_path / "partial"
    subprocess.run(["git", "clone", "-q", "--no-local", "--filter=blob:none", "--no-single-branch",
                    f"file://{up.path}", str(clone)], check=True)
    repo = GitRepo(clone)
    repo.git("checkout", "-q", "feature")
    if older_git:   # the extension gits before 2.30-ish wrote for a partial clone, which libgit2 refuses
        repo.git("config", "extensions.partialClone", "origin")
    assert "?" in repo.git("rev-list", "--objects", "--missing=print", "--all")   # blobs are missing

    res = retcon(repo, "plan", "--from-commits", "--onto", "origin/main", "--no-edit")
    assert res.code == 0, res.text
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 0, res.text
    assert repo.tree("feature-clean") == repo.tree("feature")


def test_a_repository_extension_libgit2_lacks_is_named(tmp_path):
    repo = feature_repo(tmp_path / "repo")
    repo.git("config", "core.repositoryFormatVersion", "1")
    repo.git("config", "extensions.refStorage", "reftable")    # as git 2.45 makes with --ref-format=reftable
    one_line_error(retcon(repo, "list"), "extensions.refstorage", "does not support")


def test_a_shallow_clone_missing_the_merge_base_says_to_unshallow(tmp_path):
    clone = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", "--no-single-branch", f"file://{upstream(tmp_path)}",
                    str(clone)], check=True)
    repo = GitRepo(clone)
    repo.git("checkout", "-q", "feature")
    res = retcon(repo, "plan", "--from-commits", "--onto", "origin/main", "--no-edit")
    one_line_error(res, "shallow clone", "git fetch --unshallow")


def test_llm_load_plugins_naming_git_retcon_loads_it_once(tmp_path):
    repo = feature_repo(tmp_path / "repo")
    assert plan(repo, tmp_path, SPEC).code == 0
    res = retcon_proc(repo, "run", "-m", "no-such-model", env={"LLM_LOAD_PLUGINS": "git-retcon"})
    one_line_error(res, "unknown model 'no-such-model'")
    res = retcon_proc(repo, "run", "-m", "retcon-paths", env={"LLM_LOAD_PLUGINS": "git-retcon"})
    assert res.code == 0, res.text
    assert repo.tree("feature-clean") == repo.tree("feature")


# -- spec values -------------------------------------------------------------------------------

@pytest.mark.parametrize("value, words", [
    ("9223372036854775807", ["s.toml line 3", "'timeout'", "at most 604800"]),
    ("604801", ["'timeout'", "at most 604800"]),
    ("-5", ["'timeout'", "positive integer"]),
    ("0", ["'timeout'", "positive integer"]),
])
def test_a_timeout_out_of_range_is_refused_when_the_spec_is_saved(tmp_path, value, words):
    repo = feature_repo(tmp_path / "repo")
    before = repo.git("for-each-ref")
    one_line_error(plan(repo, tmp_path, SPEC.replace('remote = "main"', f'remote = "main"\ntimeout = {value}')),
                   *words)
    assert repo.git("for-each-ref") == before


# -- a repository owned by another user ---------------------------------------------------------

def test_a_repository_owned_by_another_user_is_refused_with_gits_advice(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("giving a directory to another user needs root")
    repo = feature_repo(tmp_path / "repo")
    subprocess.run(["chown", "-R", "nobody", str(repo.path)], check=True)
    res = retcon(repo, "status")
    line = one_line_error(res, "is owned by another user", "dubious ownership")
    advice = re.search(r"run `(git config --global --add safe.directory \S+)`", line)
    assert advice, line
    subprocess.run(shlex.split(advice.group(1)), check=True)     # the advice, followed
    res = retcon_proc(repo, "status")     # a new process: libgit2 reads the global config once per process
    assert "internal error" not in res.text and "owned by another user" not in res.text, res.text


def test_a_disk_filling_at_any_point_of_a_run_says_so_and_the_run_resumes_after(tmp_path):
    """The space left swept over a run's writes (objects, notes, refs and their logs, the
    worktree): each stop is one line that names the condition and what to do, never an
    internal error nor a ref "moved" that nothing moved; with space again, the run finishes."""
    for leave in (14_000, 44_000, 56_000, 86_000, 146_000):
        mnt = tmp_path / f"disk{leave}"
        mnt.mkdir()
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mnt)],
                          capture_output=True).returncode != 0:
            pytest.skip("cannot mount a small file system here (needs root)")
        try:
            repo = feature_repo(mnt / "repo")
            assert plan(repo, tmp_path, SPEC).code == 0
            fill(mnt, leave)
            res = retcon_proc(repo, "run", "-m", "retcon-paths")
            if res.code != 0:
                line = one_line_error(res)
                assert "moved while" not in line, (leave, line)
                assert line.endswith("then run the command again"), (leave, line)
            (mnt / "filler").unlink()
            res = retcon_proc(repo, "run", "-m", "retcon-paths")
            assert res.code == 0, (leave, res.text)
            assert repo.tree("feature-clean") == repo.tree("feature")
        finally:
            subprocess.run(["umount", "-l", str(mnt)], check=False)


# -- a spec naming commits this repository does not have ------------------------------------------

def test_a_spec_naming_commits_this_repository_lacks_is_read_and_named(tmp_path):
    """A spec in the seed's format, its history's commits (abbreviated) made elsewhere."""
    repo = feature_repo(tmp_path / "repo")
    spec = SPEC.replace('paths = ["util.py"]', 'paths = ["util.py"]\nhistory = [{ commit_created = "d3adb33f" }, '
                        '"complete"]')
    assert plan(repo, tmp_path, spec).code == 0
    for args in (("status",), ("status", "--json"), ("check",), ("list",), ("run", "--dry-run")):
        res = retcon(repo, *args)
        assert "internal error" not in res.text and "Traceback" not in res.text, (args, res.text)
    assert "d3adb33f" in retcon(repo, "status").out
    line = one_line_error(retcon(repo, "run", "-m", "retcon-paths"), "d3adb33f is not in this repository")
    assert "git retcon pull" in line and "git retcon abort feature-clean" in line
    assert "1 commit on it" in line
    assert retcon(repo, "abort", "feature-clean").code == 0        # the way out it names works
    assert retcon(repo, "run", "-m", "retcon-paths").code == 0


# -- a file name that is not UTF-8 --------------------------------------------------------------

def test_a_file_name_that_is_not_utf8_is_rebuilt_exactly_and_shown_by_its_bytes(tmp_path):
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("base", {"a.txt": "a\n"})
    repo.git("checkout", "-q", "-b", "feature")
    (repo.path / os.fsdecode(b"caf\xe9.txt")).write_bytes(b"latin-1 name\n")   # as a Latin-1 system names it
    repo.write("b.txt", "b\n")
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "wip")
    repo.git("checkout", "-q", "main")
    spec = ('source = "feature"\nremote = "main"\ncleaned = "clean"\nowners = "conversation"\n'
            '[[commit]]\nmessage = "b"\npaths = ["b.txt"]\n[[commit]]\nmessage = "the rest"\n')
    assert plan(repo, tmp_path, spec).code == 0
    res = retcon_proc(repo, "run", "-m", "retcon-paths")
    assert res.code == 0, res.text
    assert repo.tree("clean") == repo.tree("feature")
    for args in (("status",), ("check",), ("spec", "show")):
        res = retcon_proc(repo, *args)
        assert res.code == 0 and "Error" not in res.text and "internal error" not in res.text, (args, res.text)
