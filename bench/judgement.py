"""Judgement only where it is needed (issue 21): model calls and prompt tokens per logical commit,
before (git-retcon at main, MAIN, where the model reads and applies what the spec already
decides) and after (this tree: plain code applies a commit's `paths` and planned hunks, and a
fix's candidate hunks, before the model is called; the model confirms).

The model is `retcon-paths-counted` (bench/_counted.py): retcon-paths as built in, reporting as
its input tokens the characters of everything a request sends (system prompt, tool definitions,
messages) over 4, as a backend would count them, so that the prompts' sizes show. The cases: the
demo (`git retcon demo`'s history and spec, `paths` per commit), the same with each commit's hunks
assigned as `plan` writes them (`hunks`), and bench/misordered.py's misordered specs, which need
fix commits. Every run's trees are compared before and after: the saving must cost no tree.

    python -m bench.judgement
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from bench import misordered
from bench._old import old_tree
from testing.gitrepo import hermetic_env

ROOT = Path(__file__).resolve().parent.parent
MAIN = "868f4b0"   # main before issue 21: the model chose every hunk itself
_STEP = re.compile(r"model: (\d+) calls, (\d+) tokens in")
_HEAD = re.compile(r"^Commit (\d+)/(\d+): ", re.M)


@dataclass
class Result:
    complete: int = 0
    calls: int = 0
    tokens: int = 0
    steps: int = 0                 # model steps (extractions and fixes) that called the model
    trees: list[str] = field(default_factory=list)


def _retcon(repo: Path, code: Path | None, *args: str) -> subprocess.CompletedProcess[str]:
    path = f"{code}:{ROOT}" if code else str(ROOT)
    # The earlier code registers its built-in model itself: the installed entry point names this
    # tree's module, which that code may not have (git_retcon.model.paths before it was builtin).
    plugins = {"LLM_LOAD_PLUGINS": ""} if code else {}
    return subprocess.run([sys.executable, "-m", "bench._counted", *args], cwd=repo, text=True, capture_output=True,
                          env={**os.environ, "PYTHONPATH": path, **plugins}, timeout=1800)


def measure(repo: Path, code: Path | None) -> Result:
    run = _retcon(repo, code, "run", "-v", "-m", "retcon-paths-counted")
    if run.returncode not in (0, 3):
        raise SystemExit(f"run failed ({run.returncode}):\n{run.stdout[-2000:]}\n{run.stderr[-2000:]}")
    out = Result()
    for line in run.stdout.splitlines():
        if m := _STEP.search(line):
            out.steps += 1
            out.calls += int(m[1])
            out.tokens += int(m[2])
    doc = json.loads(_retcon(repo, code, "status", "--json").stdout)
    out.complete = sum(1 for c in doc["commits"] if c["state"] == "complete" and c["commits"])
    for c in doc["commits"]:
        if c["commits"]:
            out.trees.append(subprocess.run(["git", "rev-parse", f"{c['commits'][-1]}^{{tree}}"], cwd=repo,
                                            text=True, capture_output=True).stdout.strip())
    return out


def demo_case(root: Path, hunks: bool) -> Path:
    from git_retcon import demo
    repo = root
    repo.mkdir(parents=True)
    demo.build_repo(repo)
    subprocess.run(["git", "checkout", "-q", "main"], cwd=repo, check=True)
    spec = demo.spec_text()
    if hunks:   # the hunks under each commit's paths, assigned as `plan` writes them
        import pygit2
        import tomli

        from git_retcon.diff.remaining import remaining
        from git_retcon.state.spec import paths_match as matches
        r = pygit2.Repository(str(repo))
        all_hunks = remaining(r, str(r.revparse_single("main").tree_id), str(r.revparse_single("feature").tree_id))
        for c in tomli.loads(spec)["commit"]:
            ids = [h.id for h in all_hunks if matches(h.path, c["paths"])]
            spec = spec.replace(f"paths = {json.dumps(c['paths'])}", f"hunks = {json.dumps(ids)}", 1)
    (root.parent / f"{root.name}.toml").write_text(spec)
    _retcon(repo, None, "plan", "--from-file", str(root.parent / f"{root.name}.toml"), "--no-edit")
    return repo


def cases(root: Path) -> list[tuple[str, Path]]:
    out = [("demo, paths", demo_case(root / "demo-paths", False)),
           ("demo, planned hunks", demo_case(root / "demo-hunks", True))]
    for i, case in enumerate(misordered.cases()):
        out.append((f"misordered: {case.name}", misordered.build(root / f"mis{i}", case).path))
    return out


def main(argv: list[str] | None = None) -> None:
    rows = []
    with tempfile.TemporaryDirectory(prefix="retcon-bench-judgement-") as tmp:
        base = Path(tmp)
        os.environ.update(hermetic_env(base / "home"))
        old = old_tree(MAIN, base / "main")
        for where, code in (("before", old), ("after", None)):
            for name, repo in cases(base / where):
                rows.append((name, where, measure(repo, code)))
    by = {(n, w): r for n, w, r in rows}
    names = list(dict.fromkeys(n for n, _, _ in rows))
    print(f"Judgement only where needed: retcon-paths-counted, main ({MAIN}) before, this tree after")
    print(f"{'case':<52}{'done':>9}{'calls':>12}{'tokens in':>18}{'tokens/step':>14}  trees")
    totals = {"before": Result(), "after": Result()}
    for n in names:
        b, a = by[n, "before"], by[n, "after"]
        for w, r in (("before", b), ("after", a)):
            t = totals[w]
            t.complete, t.calls, t.tokens, t.steps = (t.complete + r.complete, t.calls + r.calls,
                                                      t.tokens + r.tokens, t.steps + r.steps)
        same = "same" if b.trees == a.trees[:len(b.trees)] else "DIFFER"
        print(f"{n[:51]:<52}{b.complete:>4}->{a.complete:<3}{b.calls:>5}->{a.calls:<5}{b.tokens:>8}->{a.tokens:<8}"
              f"{b.tokens // max(b.steps, 1):>6}->{a.tokens // max(a.steps, 1):<6}  {same}")
    b, a = totals["before"], totals["after"]
    print(f"{'total':<52}{b.complete:>4}->{a.complete:<3}{b.calls:>5}->{a.calls:<5}{b.tokens:>8}->{a.tokens:<8}"
          f"{b.tokens // max(b.steps, 1):>6}->{a.tokens // max(a.steps, 1):<6}")
    print(f"calls {1 - a.calls / max(b.calls, 1):.0%} fewer, input tokens {1 - a.tokens / max(b.tokens, 1):.0%} fewer")


if __name__ == "__main__":
    main(sys.argv[1:])
