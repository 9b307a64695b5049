"""`hooks install` beside husky (issue 38): core.hooksPath points into the work tree, so nothing is
installed there; the line it offers for husky's own .husky/pre-push runs the check on a real push.
Real husky, from npm: skipped where npm or its registry is not reachable."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

from testing.cleaned import bare_remote, remote_refs, stuck, unstick
from testing.flow import retcon
from testing.gitrepo import GitRepo


def with_husky(repo: GitRepo) -> None:
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed here")
    (repo.path / "package.json").write_text('{"name": "demo", "version": "1.0.0", "private": true}\n')
    got = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "husky@9"], cwd=repo.path,
                         capture_output=True, text=True, timeout=300)
    if got.returncode != 0:
        pytest.skip(f"npm could not install husky: {got.stderr[-300:]}")
    subprocess.run(["npx", "husky"], cwd=repo.path, check=True, capture_output=True, timeout=120)
    assert repo.git("config", "core.hooksPath") == ".husky/_"


def push(repo: GitRepo, *args: str) -> subprocess.CompletedProcess[str]:
    """A real `git push`, with git-retcon's console scripts on PATH as an install puts them."""
    path = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
    return subprocess.run(["git", "push", *args], cwd=repo.path, text=True, capture_output=True, timeout=300,
                          env={**os.environ, "PATH": path})


def test_install_beside_husky_writes_nothing_and_its_line_runs_the_check(tmp_path):
    repo = stuck(tmp_path / "repo")
    remote = bare_remote(repo, tmp_path / "remote.git")
    with_husky(repo)
    stub = (repo.path / ".husky/_/pre-push").read_text()
    before = repo.status()
    res = retcon(repo, "hooks", "install")
    assert res.code == 1, res.text
    assert "core.hooksPath is .husky/_, inside your work tree" in res.err and "--force" in res.err
    assert (repo.path / ".husky/_/pre-push").read_text() == stub and not (repo.path / ".husky/pre-push").exists()
    assert repo.status() == before
    assert sys.executable not in res.err   # the line a project shares names no interpreter of this machine
    (line,) = [ln.strip() for ln in res.err.splitlines() if re.match(r"^  echo .* >> \.husky/pre-push$", ln)]
    subprocess.run(line, shell=True, cwd=repo.path, check=True)
    got = push(repo, "origin", "feature-clean")
    assert got.returncode == 1 and "refusing to push 'feature-clean'" in got.stderr, got.stderr
    assert remote_refs(remote) == {}
    unstick(repo)
    got = push(repo, "origin", "feature-clean")
    assert got.returncode == 0, got.stderr
    assert "refs/heads/feature-clean" in remote_refs(remote)
