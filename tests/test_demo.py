"""`git retcon demo`: the first command a newcomer runs, run the way they run it.

git dispatches to the console script installed next to this Python, on a machine
where git has no identity yet and the user's global config signs commits and
has a failing commit hook: the demo must still build its repository, really
build and test every logical commit, and leave a repository that checks.
"""
from __future__ import annotations

import fnmatch
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from git_retcon import demo
from testing.gitrepo import GitRepo

BIN = Path(sys.executable).parent
SPEC_MESSAGES = re.findall(r'^message = "(.*)"$', demo.spec_template(), re.M)
SPEC_PATHS = [json.loads(p) for p in re.findall(r"^paths = (\[.*\])$", demo.spec_template(), re.M)]


def user_env(home: Path) -> dict[str, str]:
    """The hermetic environment minus the test identity: a fresh machine's git."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_AUTHOR_", "GIT_COMMITTER_"))}
    env["PATH"] = f"{BIN}{os.pathsep}{env['PATH']}"
    return env


def git_retcon(cwd: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "retcon", *args], cwd=cwd, env=env, text=True,
                          capture_output=True, timeout=300)


@pytest.fixture
def hostile_home(hermetic: Path) -> Path:
    """Global config that would break naive `git commit` calls."""
    hooks = hermetic / "hooks"
    hooks.mkdir()
    for name in ("pre-commit", "commit-msg"):
        (hooks / name).write_text("#!/bin/sh\necho 'global hook says no' >&2\nexit 1\n")
        (hooks / name).chmod(0o755)
    (hermetic / ".gitconfig").write_text(
        f"[commit]\n\tgpgsign = true\n[gpg]\n\tprogram = false\n[core]\n\thooksPath = {hooks}\n")
    return hermetic


def test_demo_cleans_up_a_messy_branch_for_real(tmp_path, hostile_home):
    target = tmp_path / "demo"
    env = user_env(hostile_home)
    start = time.monotonic()
    res = git_retcon(tmp_path, "demo", str(target), env=env)
    seconds = time.monotonic() - start
    assert res.returncode == 0, res.stdout + res.stderr
    out = res.stdout
    assert "Traceback" not in out + res.stderr
    print(f"\ndemo took {seconds:.1f}s")
    assert seconds < 90, f"the demo should take seconds, it took {seconds:.0f}s"

    # The story, in order, with the commands a user would type.
    steps = ["1. A project with a messy feature branch", "$ git log --oneline --stat=60 main..feature",
             "2. The history you want", "$ git retcon plan --from-file spec.toml --no-edit",
             "3. Rebuild it", "$ git retcon run", "4. The result",
             "$ git log --oneline --graph --decorate feature feature-clean", "$ git retcon check",
             "Done in", f"cd {target}"]
    positions = [out.index(s) for s in steps]
    assert positions == sorted(positions), out
    assert out.count("Tests... PASS") == len(SPEC_MESSAGES) + 1   # and the base, before commit 1
    assert "✓ final tree equals 'feature'" in out and "✗" not in out
    graph = out[out.index("$ git log --oneline --graph"):out.index("$ git retcon check")]
    assert "(feature-clean)" in graph and "(HEAD -> feature)" in graph and "(main)" in graph

    repo = GitRepo(target)
    messy = repo.log("main..feature")
    assert {"wip", "fix", "more wip"} <= set(messy)
    assert repo.log("main..feature-clean") == SPEC_MESSAGES[::-1]
    assert repo.tree("feature-clean") == repo.tree("feature")
    # The local identity made the commits; the user's global hooks and signing had no say.
    assert set(repo.log("main..feature", "%an <%ae>")) == {"Demo Developer <dev@example.com>"}
    # Each logical commit holds exactly its own files.
    shas = repo.log("main..feature-clean", "%H")[::-1]
    for sha, patterns in zip(shas, SPEC_PATHS, strict=True):
        files = repo.git("diff-tree", "--no-commit-id", "--name-only", "-r", sha).splitlines()
        assert files and all(any(fnmatch.fnmatch(f, p) for p in patterns) for f in files), (sha, files)
    # The tests really ran on each commit's tree, and the suite grew with the branch.
    counts = []
    for sha in shas:
        note = json.loads(repo.git("notes", "--ref=refs/notes/retcon-tests", "show", repo.tree(sha)))
        record = {rec["kind"]: rec for rec in note["commands"].values()}
        assert record["build"]["result"] == "pass" and record["test"]["result"] == "pass"
        assert sys.executable in record["test"]["command"]
        counts.append(int(re.search(r"(\d+) passed", record["test"]["output"]).group(1)))
    assert counts == sorted(counts) and counts[0] < counts[-1], counts
    # Left for the user: on the messy branch, only the spec file added, and it checks.
    assert repo.git("rev-parse", "--abbrev-ref", "HEAD") == "feature"
    assert repo.status() == "?? spec.toml"
    check = git_retcon(target, "check", env=env)
    assert check.returncode == 0, check.stdout + check.stderr
    status = json.loads(git_retcon(target, "status", "--json", env=env).stdout)
    assert status["state"] == "complete" and len(status["commits"]) == len(SPEC_MESSAGES)


def test_a_non_empty_directory_is_refused_and_left_alone(tmp_path, hermetic):
    target = tmp_path / "busy"
    target.mkdir()
    (target / "notes.txt").write_text("mine\n")
    res = git_retcon(tmp_path, "demo", str(target), env=user_env(hermetic))
    assert res.returncode == 1
    assert res.stdout == ""
    assert res.stderr.strip().splitlines() == [
        f"error: {target} exists and is not an empty directory: give a new or empty directory for the demo"]
    assert [p.name for p in target.iterdir()] == ["notes.txt"]


def test_a_file_is_a_usage_error(tmp_path, hermetic):
    (tmp_path / "file").write_text("x")
    res = git_retcon(tmp_path, "demo", "file", env=user_env(hermetic))
    assert res.returncode == 2 and "is a file" in res.stderr
    assert (tmp_path / "file").read_text() == "x"


def test_without_dir_a_new_temporary_directory_is_used(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    made = demo.target_dir(None)
    assert made.parent == tmp_path and made.name.startswith("retcon-demo-") and not any(made.iterdir())
    assert demo.target_dir(str(tmp_path / "new" / "dir")) == tmp_path / "new" / "dir"
    assert (tmp_path / "new" / "dir").is_dir()
