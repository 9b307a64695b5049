"""What confinement adds to each command git-retcon runs (issue 31: at most 50 ms a command).

A build worktree of a small repository; each command runs through the runner (`run_command`, as
setup, build and test run) unconfined (`--sandbox off`, the yardstick) and under each mechanism
that works here, the kinds alternating round by round so that the machine's drift falls on all
alike. Commands: `true` (the sandbox's cost alone) and `git describe --always` (a command that
reads the repository). Figures are medians in milliseconds; "added" is against `off` in the same run.

    python -m bench.sandbox_overhead [--repeat N]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pygit2

from git_retcon.sandbox import choice
from git_retcon.sandbox.confine import FORCE_ENV, Sandbox
from git_retcon.sandbox.probe import probe
from git_retcon.sandbox.runner import run_command
from git_retcon.sandbox.worktree import Worktree
from testing.gitrepo import GitRepo, hermetic_env

GOAL_MS = 50.0
COMMANDS = ("true", "git describe --always")


def _boxes() -> list[tuple[str, Sandbox]]:
    boxes = [("off", choice.choose(None, "off"))]
    works, _ = probe()
    for mech in works:
        os.environ[FORCE_ENV] = mech
        boxes.append((f"{mech}, network off", choice.choose(None, "require")))
        boxes.append((f"{mech}, network on", choice.choose(None, "require", network=True)))
    os.environ.pop(FORCE_ENV, None)
    return boxes


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.sandbox_overhead")
    ap.add_argument("--repeat", type=int, default=int(os.environ.get("BENCH_REPEAT", "30")))
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="retcon-bench-sandbox-") as tmp:
        root = Path(tmp)
        os.environ.update(hermetic_env(root / "home"))
        (root / "home").mkdir()
        repo = GitRepo.init(root / "repo")
        repo.commit("base", {f"src/f{i}.py": f"x = {i}\n" for i in range(200)})
        wt = Worktree.ensure(pygit2.Repository(str(repo.path)), "bench", repo.rev("HEAD"))
        boxes = _boxes()
        times: dict[tuple[str, str], list[float]] = {(b, c): [] for b, _ in boxes for c in COMMANDS}
        for r in range(args.repeat):
            order = boxes if r % 2 == 0 else boxes[::-1]
            for command in COMMANDS:
                for label, box in order:
                    start = time.perf_counter()
                    res = run_command("test", command, wt.path, 60, sandbox=box)
                    times[(label, command)].append((time.perf_counter() - start) * 1000)
                    if not res.passed:
                        raise SystemExit(f"{label}: `{command}` failed: {res.output}")
    print(f"sandbox overhead per command: median ms of {args.repeat} (goal: at most {GOAL_MS:.0f} ms added)")
    print(f"{'':<28}" + "".join(f"{c:>24}" for c in COMMANDS) + f"{'added (max)':>14}")
    base = {c: statistics.median(times[("off", c)]) for c in COMMANDS}
    for label, _ in boxes:
        meds = {c: statistics.median(times[(label, c)]) for c in COMMANDS}
        added = max(meds[c] - base[c] for c in COMMANDS)
        cells = "".join(f"{meds[c]:>16.1f} ({meds[c] - base[c]:+5.1f})" for c in COMMANDS)
        verdict = "" if label == "off" else ("  ok" if added <= GOAL_MS else "  OVER")
        print(f"{label:<28}{cells}{added:>12.1f}{verdict}")


if __name__ == "__main__":
    main(sys.argv[1:])
