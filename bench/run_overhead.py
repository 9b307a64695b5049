"""Deterministic overhead of `git retcon run` per commit, against `git rebase -x true`.

A repository of a few thousand files; a feature branch of N commits touching a
few files each. The yardstick replays the same commits with `git rebase
--force-rebase -x true`; git-retcon rebuilds them with the offline retcon-paths
model and `test = "true"`, so what is measured is git-retcon's own work (diff,
hunk application, commits, notes, spec saves, worktree resets, the command runs).
Both are timed in the same process run, so the ratio is what matters.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from testing.gitrepo import GitRepo, hermetic_env

FILES = 3000
COMMITS = 20


def build_repo(root: Path) -> GitRepo:
    repo = GitRepo.init(root / "repo")
    for i in range(FILES):
        repo.write(f"pkg{i % 30}/mod{i}.py", "".join(f"line {j} of module {i}\n" for j in range(40)))
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    for c in range(COMMITS):
        for f in range(3):
            i = (c * 97 + f * 13) % FILES
            p = repo.path / f"pkg{i % 30}/mod{i}.py"
            lines = p.read_text().splitlines(keepends=True)
            lines[5 + c % 20] = f"changed by commit {c}\n"
            lines.append(f"# appended by commit {c}\n")
            p.write_text("".join(lines))
        repo.write(f"new/file{c}.py", f"x = {c}\n")
        repo.commit(f"feature step {c}")
    repo.git("checkout", "-q", "main")
    return repo


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="retcon-bench-") as tmp:
        root = Path(tmp)
        os.environ.update(hermetic_env(root / "home"))
        repo = build_repo(root)
        exe = [sys.executable, "-m", "git_retcon.cli"]

        def rebase() -> None:
            repo.git("checkout", "-q", "-b", "yardstick", "feature")
            repo.git("rebase", "-q", "--force-rebase", "-x", "true", "main")
            repo.git("checkout", "-q", "main")

        def plan() -> None:
            subprocess.run([*exe, "plan", "--from-commits", "--source", "feature", "--onto", "main",
                            "--test", "true", "--no-edit"], cwd=repo.path, check=True,
                           capture_output=True)

        def run() -> None:
            subprocess.run([*exe, "run", "-m", "retcon-paths"], cwd=repo.path, check=True,
                           capture_output=True)

        def startup() -> None:
            subprocess.run([*exe, "list"], cwd=repo.path, check=True, capture_output=True)

        def worktree() -> None:
            # The one-time cost of run's first call: checking out a build worktree.
            repo.git("worktree", "add", "-q", "--detach", str(root / "wt"), "main")
            repo.git("worktree", "remove", "--force", str(root / "wt"))

        t_rebase = timed(rebase)
        t_start = timed(startup)
        t_wt = timed(worktree)
        t_plan = timed(plan)
        t_run = timed(run)
        assert repo.tree("feature-clean") == repo.tree("feature"), "the rebuilt tree differs"
        n = COMMITS
        per_rebase = t_rebase / n
        steady = t_run - t_start - t_wt
        rows = [
            ("git rebase --force-rebase -x true", t_rebase),
            ("git retcon plan --from-commits", t_plan),
            ("git retcon run (retcon-paths)", t_run),
            ("  run minus start-up, worktree checkout", steady),
        ]
        print(f"run overhead: {FILES} files, {n} commits of 4 files each; test = true")
        print(f"{'what':<42}{'total s':>9}{'per commit ms':>15}{'ratio':>8}")
        for what, t in rows:
            print(f"{what:<42}{t:>9.2f}{t / n * 1000:>15.1f}{t / n / per_rebase:>8.2f}")
        print(f"(one process start-up {t_start:.2f}s, worktree checkout of {FILES} files {t_wt:.2f}s)")

if __name__ == "__main__":
    main()
