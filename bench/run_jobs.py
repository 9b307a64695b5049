"""`run --jobs 2` against `run --jobs 1`: tests overlapped with the model's next extraction.

10 commits, a test that takes 2 s (`sleep 2`), and a model step of about 1 s (retcon-paths-slow:
retcon-paths waiting 0.25 s per turn, four turns a step). Every commit passes, so --jobs 2 must
not spend a single extra model call. The two alternate which goes first, round by round.

    python -m bench.run_jobs [--repeat N]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

from bench.run_overhead import Bench, byte_compiled, settle
from testing.gitrepo import GitRepo, hermetic_env

COMMITS = 10
GOAL = 0.6   # wall time of --jobs 2 over --jobs 1


def build_repo(root: Path) -> GitRepo:
    repo = GitRepo.init(root / "repo")
    for i in range(200):
        repo.write(f"lib{i % 10}/m{i}.py", f"value = {i}\n")
    repo.commit("base")
    repo.git("checkout", "-q", "-b", f"f{COMMITS}")
    for c in range(COMMITS):
        files: dict[str, str | bytes | None] = {f"area{c}/part{j}.py": f"part = {j}\n" for j in range(3)}
        files[f"lib{c}/m{c}.py"] = f"value = {c}  # changed\n"
        repo.commit(f"step {c}", files)
    repo.git("checkout", "-q", "main")
    settle(repo)
    return repo


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.run_jobs")
    ap.add_argument("--repeat", type=int, default=int(os.environ.get("BENCH_REPEAT", "1")))
    args = ap.parse_args(argv)
    byte_compiled()
    with tempfile.TemporaryDirectory(prefix="retcon-bench-jobs-") as tmp:
        root = Path(tmp)
        os.environ.update(hermetic_env(root / "home"))
        bench = Bench(root, build_repo(root))
        if "--jobs" not in bench.retcon("run", "--help").stdout:
            print("run --jobs: not available yet (nothing measured)")
            return
        bench.plan(COMMITS, test="sleep 2")
        env = {"RETCON_BENCH_TURN": "0.25"}
        bench.run(COMMITS, "retcon-paths-slow", ("--jobs", "1"), env)   # creates the worktree
        times: dict[int, list[float]] = {1: [], 2: []}
        calls: dict[int, list[int]] = {1: [], 2: []}
        for r in range(args.repeat):
            for jobs in ((1, 2) if r % 2 == 0 else (2, 1)):
                before = len(list(root.glob("marks-*")))
                t, _ = bench.run(COMMITS, "retcon-paths-slow", ("--jobs", str(jobs)), env)
                marks = sorted(root.glob("marks-*"), key=lambda p: p.stat().st_mtime)[before:]
                times[jobs].append(t)
                calls[jobs].append(sum(len(p.read_text().split()) for p in marks))
        t1, t2 = statistics.median(times[1]), statistics.median(times[2])
        print(f"run --jobs: {COMMITS} commits, test = sleep 2, model step ~1 s; median of {args.repeat}")
        print(f"{'':<12}{'wall s':>8}{'model calls':>13}")
        print(f"{'--jobs 1':<12}{t1:>8.2f}{statistics.median(calls[1]):>13.0f}")
        print(f"{'--jobs 2':<12}{t2:>8.2f}{statistics.median(calls[2]):>13.0f}")
        print(f"ratio --jobs 2 / --jobs 1: {t2 / t1:.2f} (goal <= {GOAL}); extra model calls with --jobs 2: "
              f"{statistics.median(calls[2]) - statistics.median(calls[1]):.0f} (goal 0)")


if __name__ == "__main__":
    main(sys.argv[1:])
