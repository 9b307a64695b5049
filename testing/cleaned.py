"""Cleaned branches in the states `check` and the pre-push hook judge, each made by
the real flow (plan --from-file, run -m retcon-paths), and local bare remotes."""
from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

from testing import flow
from testing.flow import Outcome, feature_repo, retcon
from testing.gitrepo import GitRepo

# The flow's spec, with a build and a test that cost a fork rather than a Python
# start-up each (a run makes six of them). The test still fails where it should:
# an app.py that calls util.two() without a util.py that defines it.
TEST = "! grep -q util.two app.py || grep -q 'def two' util.py"
SPEC = (flow.SPEC.replace('build = "python3 -m py_compile app.py util.py"', 'build = "test -f app.py -a -f util.py"')
        .replace("test = \"python3 -c 'import app; app.main()'\"", f'test = "{TEST}"'))
assert TEST in SPEC and "python3" not in SPEC

# Commit 2 with hints but no paths: retcon-paths, which reads no hints, stops stuck there.
HINTS_SPEC = SPEC.replace('paths = ["app.py"]', 'hints = "The app change."')
NEEDS_PATHS = "retcon-paths needs `paths` globs or assigned `hunks` for this commit"


def planned(path: Path, spec: str = SPEC) -> GitRepo:
    repo = feature_repo(path)
    spec_file = path.parent / f"{path.name}-spec.toml"
    spec_file.write_text(spec)
    res = retcon(repo, "plan", "--from-file", str(spec_file), "--no-edit")
    assert res.code == 0, res.text
    return repo


def finished(path: Path, spec: str = SPEC) -> GitRepo:
    repo = planned(path, spec)
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 0, res.text
    return repo


def stuck(path: Path) -> GitRepo:
    repo = planned(path, HINTS_SPEC)
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 3 and NEEDS_PATHS in res.err, res.text
    return repo


def edit_spec(repo: GitRepo, change: Callable[[str], str]) -> None:
    """`spec export`, change the text, `spec import`: what a user does by hand."""
    path = repo.path.parent / "edited-spec.toml"
    assert retcon(repo, "spec", "export", "-o", str(path)).code == 0
    path.write_text(change(path.read_text()))
    res = retcon(repo, "spec", "import", str(path))
    assert res.code == 0, res.text


def give_paths(text: str) -> str:
    return text.replace('hints = "The app change."', 'hints = "The app change."\npaths = ["app.py"]')


def unstick(repo: GitRepo) -> None:
    """Give commit 2 its paths, record the resolution, finish the run."""
    edit_spec(repo, give_paths)
    assert retcon(repo, "resolve", "-m", "fixed the paths of commit 2").code == 0
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 0, res.text


def bare_remote(repo: GitRepo, path: Path, name: str = "origin") -> GitRepo:
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(path)], check=True)
    repo.git("remote", "add", name, str(path))
    return GitRepo(path)


def git_push(repo: GitRepo, *args: str) -> Outcome:
    """The real `git push`, hooks and all."""
    proc = subprocess.run(["git", "push", *args], cwd=repo.path, text=True, capture_output=True, timeout=300)
    return Outcome(proc.returncode, proc.stdout, proc.stderr)


def remote_refs(remote: GitRepo) -> dict[str, str]:
    out = remote.git("for-each-ref", "--format=%(refname) %(objectname)")
    return dict(line.split(" ", 1) for line in out.splitlines()) if out else {}
