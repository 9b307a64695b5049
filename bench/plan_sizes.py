"""Prompt sizes and model calls of `git retcon plan` on diffs of 1 MB and 10 MB.

The model is the scripted test model (testing/scripted_model.py) answering every
chunk with four groups and every combine with one commit, so what is measured is
git-retcon's own side: how the diff is cut, how big each prompt is against the
budget, how many calls it takes, and how long our own work lasts.

    python -m bench.plan_sizes [MB ...]
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

from testing.gitrepo import GitRepo, hermetic_env

LINES = 300
FILE_DIFF = 15_500           # bytes of diff each modified file contributes, roughly

CHUNK_ANSWER = {"groups": [
    {"message": f"pkg: change set {k}", "hints": "Takes the changes of this area that " + "belong together. " * 6,
     "files": [], "hunks": f"$match:^([{ids}][0-9a-f]{{9}}) "}
    for k, ids in enumerate(("0-3", "4-7", "89ab", "c-f"))]}
COMBINE_ANSWER = {"commits": [{"message": "feat: everything", "hints": "", "groups": "$match:^(g\\d+) "}]}


def build(root: Path, megabytes: float) -> GitRepo:
    """A branch whose `git diff` is about `megabytes`: many modified files in nested
    directories, some new files, and a lock file."""
    repo = GitRepo.init(root / "repo")
    files = max(1, int(megabytes * 1_000_000 * 0.9 / FILE_DIFF))
    paths = [f"src/area{i % 25}/part{i % 7}/mod{i}.py" for i in range(files)]
    for p in paths:
        repo.write(p, "".join(f"value_{n} = compute({n}, 'original text of line {n} here')\n" for n in range(LINES)))
    repo.write("package.json", '{"name": "bench"}\n')
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    for i, p in enumerate(paths):
        repo.write(p, "".join(
            (f"value_{n} = compute_better({n}, 'rewritten line {n} of module {i}')\n" if n % 15 < 3 else
             f"value_{n} = compute({n}, 'original text of line {n} here')\n") for n in range(LINES)))
    for i in range(max(1, files // 10)):
        repo.write(f"tests/test_new{i}.py", "".join(f"def test_{n}():\n    assert {n}\n" for n in range(60)))
    repo.write("package.json", '{"name": "bench", "dependencies": {"left-pad": "1"}}\n')
    repo.write("package-lock.json", "".join(f'"dep{n}": "1.0.{n}",\n' for n in range(int(megabytes * 5000))))
    repo.commit("everything at once")
    return repo


def measure(megabytes: float, budget: int = 32000) -> dict:
    from git_retcon.plan.propose import Limits
    from testing import scripted_model
    from testing.flow import retcon

    with tempfile.TemporaryDirectory(prefix="retcon-bench-") as tmp:
        root = Path(tmp)
        os.environ.update(hermetic_env(root / "home"))
        repo = build(root, megabytes)
        diff = len(repo.git("diff", "main", "feature").encode())
        script = root / "script.json"
        script.write_text(json.dumps({"*/plan-chunk": [{"json": CHUNK_ANSWER}],
                                      "*/plan-combine": [{"json": COMBINE_ANSWER}]}))
        log = root / "log.jsonl"
        os.environ.update(RETCON_SCRIPT=str(script), RETCON_SCRIPT_LOG=str(log))
        scripted_model.register()
        start = time.perf_counter()
        res = retcon(repo, "plan", "--whole", "-m", "scripted-schema", "--no-edit", "--budget", str(budget))
        seconds = time.perf_counter() - start
        if res.code != 0:
            raise SystemExit(res.text)
        calls = [json.loads(line) for line in log.read_text().splitlines()]
        kinds = [c["keys"][0].split("/")[1] for c in calls]
        sizes = [c["chars"] for c in calls]
        return {"diff_mb": diff / 1e6, "calls": len(calls),
                "chunk_calls": kinds.count("plan-chunk"), "combine_calls": kinds.count("plan-combine"),
                "max_chars": max(sizes), "mean_chars": sum(sizes) // len(sizes),
                "budget_chars": Limits(context_tokens=budget).prompt_chars, "seconds": seconds,
                "summary": [ln for ln in res.out.splitlines() if ln.startswith(("Remaining diff", "Model "))]}


def main(argv: list[str] | None = None) -> None:
    sizes = [float(a) for a in (argv if argv is not None else sys.argv[1:])] or [1.0, 10.0]
    print("git retcon plan, scripted model, default budget (32000 tokens):")
    print(f"{'diff MB':>8} {'calls':>6} {'chunks':>6} {'combine':>7} {'max prompt':>10} {'mean':>7} "
          f"{'budget':>7} {'seconds':>8}")
    for mb in sizes:
        r = measure(mb)
        print(f"{r['diff_mb']:>8.1f} {r['calls']:>6} {r['chunk_calls']:>6} {r['combine_calls']:>7} "
              f"{r['max_chars']:>10} {r['mean_chars']:>7} {r['budget_chars']:>7} {r['seconds']:>8.1f}")
        for line in r["summary"]:
            print("         " + line)


if __name__ == "__main__":
    main()
