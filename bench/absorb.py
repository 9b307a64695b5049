"""`git retcon absorb`: K small review fixes into a complete 20-commit spec build and test only
the trees that changed, the re-made commits from the first one a fix lands in; the commits
below it are not run again. The yardstick is the full run that made the spec, in the same run.

20 logical commits, one module each (`paths`), a build and a test that append a line to a
counter file before they run, so every command actually run is counted (a recorded result
runs nothing). Each case starts from a copy of the complete repository.

    python -m bench.absorb
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from testing.gitrepo import GitRepo, hermetic_env

COMMITS = 20
CASES = (1, 3, 5)        # review fixes per case, in the last K modules but one, so K commits are affected


def build(root: Path) -> tuple[GitRepo, Path]:
    repo = GitRepo.init(root / "repo")
    repo.commit("base", {"src/__init__.py": "", "README": "bench\n"})
    repo.git("checkout", "-q", "-b", "feature")
    for i in range(COMMITS):
        module = f"def f{i}():\n    return {i}\n\n\ndef g{i}():\n    return {i} * 2\n"
        repo.commit(f"wip {i}", {f"src/m{i:02d}.py": module})
    repo.git("checkout", "-q", "main")
    counter = root / "count"
    spec = (f'source = "feature"\nremote = "main"\ncleaned = "clean"\n'
            f'build = "echo build >> {counter} && python3 -m compileall -q src"\n'
            f'test = "echo test >> {counter} && python3 -c \'import src\'"\n')
    for i in range(COMMITS):
        spec += f'\n[[commit]]\nmessage = "m{i:02d}: add f{i} and g{i}"\npaths = ["src/m{i:02d}.py"]\n'
    (root / "spec.toml").write_text(spec)
    retcon(repo, "plan", "--from-file", str(root / "spec.toml"), "--no-edit")
    return repo, counter


def retcon(repo: GitRepo, *args: str) -> float:
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "git_retcon.cli", *args], cwd=repo.path, capture_output=True,
                          text=True)
    if proc.returncode != 0:
        raise SystemExit(f"git retcon {' '.join(args)} failed:\n{proc.stdout}{proc.stderr}")
    return time.monotonic() - start


def runs(counter: Path) -> tuple[int, int]:
    lines = counter.read_text().split() if counter.exists() else []
    return lines.count("build"), lines.count("test")


def main(argv: list[str] | None = None) -> None:
    with tempfile.TemporaryDirectory(prefix="retcon-bench-absorb-") as tmp:
        root = Path(tmp)
        os.environ.update(hermetic_env(root / "home"))
        repo, counter = build(root)
        full = retcon(repo, "run", "-m", "retcon-paths")
        full_builds, full_tests = runs(counter)
        print(f"absorb: {COMMITS} logical commits; a full run took {full:.1f} s "
              f"({full_builds} builds, {full_tests} tests, the base's included)")
        print(f"{'fixes':>5} {'first':>5} {'re-made':>7} {'builds':>6} {'tests':>5} {'trees changed':>13} "
              f"{'absorb s':>8} {'/ full run':>10}")
        for k in CASES:
            case = root / f"case{k}"
            shutil.copytree(root / "repo", case / "repo", symlinks=True)
            copy = GitRepo(case / "repo")
            counter.unlink(missing_ok=True)
            copy.git("checkout", "-q", "feature")
            fixed = [COMMITS - 1 - j for j in range(1, k + 1)]    # spread over the top, the last left alone
            copy.commit("review fixes", {f"src/m{i:02d}.py": f"def f{i}():\n    return {i}  # reviewed\n\n\n"
                                         f"def g{i}():\n    return {i} * 2\n" for i in fixed})
            copy.git("checkout", "-q", "main")
            took = retcon(copy, "absorb", "clean")
            builds, tests = runs(counter)
            first = min(fixed)
            changed = COMMITS - first
            print(f"{k:>5} {first + 1:>5} {changed:>7} {builds:>6} {tests:>5} {changed:>13} {took:>8.1f} "
                  f"{took / full:>10.2f}")
            counter.unlink(missing_ok=True)
            again = retcon(copy, "absorb", "clean")
            assert runs(counter) == (0, 0), "a second absorb with nothing new ran commands"
            print(f"{'':>5} a second absorb, nothing new: 0 builds, 0 tests, {again:.1f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
