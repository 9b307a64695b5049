"""git-retcon's own cost per commit and at start-up, against `git rebase --force-rebase -x true`.

A repository of 2,400 files (24,000 with --big); a feature branch of 200 commits, each changing
three files and adding one. Branches f10, f50 and f200 are its first 10, 50 and 200 commits. For
each K the yardstick replays fK with `git rebase --force-rebase -x true` on a SETTLED checkout
(the index refreshed after a pause, so git does not re-hash racily clean entries), and git-retcon
rebuilds the same commits with the offline retcon-paths model and `build = test = "true"`: what is
measured is git-retcon's own work. The two alternate which goes first, K by K and round by round,
and the figures are ratios taken in the same run (medians over --repeat rounds).

Marginal cost per commit: (T(50) - T(10)) / 40 and (T(200) - T(50)) / 150, for both, with the
commands unconfined (--sandbox off) and confined (--sandbox require: the mechanism auto picks here),
in the tool conversation (retcon.owners = conversation: a model step per commit) unless --owners
says otherwise. Goal: at most 2x rebase -x's. Linear means the second within 1.2x of the first.
Fixed cost: T(10) less 10 commits at the first marginal cost. Start-up: from spawning
`git retcon run` to its first model call, on a warm worktree (a second run), and on a first run
(creating the worktree).

    python -m bench.run_overhead [--repeat N] [--big] [--ks 10,50,200]
"""
from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from git_retcon.sandbox import choice
from testing.gitrepo import GitRepo, hermetic_env

LINES = 40
ROOT = str(Path(__file__).resolve().parent.parent)   # so `-m bench._retcon` imports from any cwd
GOAL_MARGINAL = 2.0      # x rebase -x's marginal cost per commit
GOAL_LINEAR = 1.2        # marginal at K=200 over marginal at K=50
GOAL_STARTUP = 0.8       # seconds to the first model call, 2,400 files


def _content(i: int) -> str:
    return "".join(f"line {j} of module {i}\n" for j in range(LINES))


def build_repo(root: Path, files: int, commits: int, ks: list[int]) -> GitRepo:
    """main: `files` files; branch f{k} for each k: the first k commits of the feature, each
    changing three files no other commit touches and adding one (so paths alone place them)."""
    repo = GitRepo.init(root / "repo")
    stream: list[bytes] = []

    def blob_cmd(path: str, text: str) -> None:
        data = text.encode()
        stream.append(f"M 100644 inline {path}\ndata {len(data)}\n".encode() + data + b"\n")

    def commit(ref: str, mark: int, message: str, parent: int | None) -> None:
        msg = message.encode()
        stream.append(f"commit {ref}\nmark :{mark}\ncommitter Bench <b@example.com> 1700000000 +0000\n"
                      f"data {len(msg)}\n".encode() + msg + b"\n")
        if parent is not None:
            stream.append(f"from :{parent}\n".encode())

    commit("refs/heads/main", 1, "base", None)
    for i in range(files):
        blob_cmd(f"pkg{i % 60}/mod{i}.py", _content(i))
    stride = max(1, files // (commits * 3))
    for c in range(commits):
        commit("refs/heads/feature", c + 2, f"feature step {c}", c + 1)
        for f in range(3):
            i = ((c * 3 + f) * stride) % files
            lines = _content(i).splitlines(keepends=True)
            lines[5 + c % 20] = f"changed by commit {c}\n"
            lines.append(f"# appended by commit {c}\n")
            blob_cmd(f"pkg{i % 60}/mod{i}.py", "".join(lines))
        blob_cmd(f"new/file{c}.py", f"x = {c}\n")
    for k in ks:
        stream.append(f"reset refs/heads/f{k}\nfrom :{k + 1}\n\n".encode())
    subprocess.run(["git", "fast-import", "--quiet"], cwd=repo.path, input=b"".join(stream), check=True)
    repo.git("checkout", "-q", "main")
    settle(repo)
    return repo


def settle(repo: GitRepo) -> None:
    """After a pause, refresh the index: no entry is racily clean any more, as in a checkout
    that has been sitting for a while (what a user's repository looks like)."""
    time.sleep(1.1)
    repo.git("update-index", "-q", "--refresh")


def byte_compiled() -> None:
    """The package's modules compiled, as `pip install` leaves them: a run spawned from the source
    tree with PYTHONDONTWRITEBYTECODE set (as some shells are) would compile every module at each
    start-up, a cost no installed git-retcon pays."""
    compileall.compile_dir(str(Path(ROOT) / "git_retcon"), quiet=1)


def flushed() -> None:
    """What the last command wrote is flushed to disk, so that the next timed command does not
    pay for the writeback of the one before it (a rebase of 200 commits leaves megabytes dirty,
    and whichever ran second paid for it: the linearity figures swung by +-30% from run to run)."""
    os.sync()


def timed(fn) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


class Bench:
    def __init__(self, root: Path, repo: GitRepo):
        self.root = root
        self.repo = repo
        self.exe = [sys.executable, "-m", "bench._retcon"]
        self.planned: dict[int, str] = {}

    def retcon(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([*self.exe, *args], cwd=self.repo.path, text=True, capture_output=True,
                              env={**os.environ, "PYTHONPATH": ROOT, **(env or {})})
        if proc.returncode != 0:
            raise SystemExit(f"git retcon {' '.join(args)} failed ({proc.returncode}):\n"
                             f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
        return proc

    def plan(self, k: int, test: str = "true") -> None:
        self.retcon("plan", "--from-commits", "--source", f"f{k}", "--onto", "main", "--cleaned", f"c{k}",
                    "--build", "true", "--test", test, "--no-edit")

    def rebase(self, k: int) -> float:
        self.repo.git("branch", "-f", f"ys{k}", f"f{k}")
        flushed()
        t = timed(lambda: self.repo.git("rebase", "-q", "--force-rebase", "-x", "true", "main", f"ys{k}"))
        self.repo.git("checkout", "-q", "main")
        self.repo.git("branch", "-D", f"ys{k}")
        settle(self.repo)
        return t

    def run(self, k: int, model: str = "retcon-paths", extra: tuple[str, ...] = (),
            env: dict[str, str] | None = None) -> tuple[float, float]:
        """(seconds of a run of spec c{k} from its start, seconds from its spawn to the first model call).

        A run that completes its spec removes the build worktree, so each such run creates it
        (see warm_startup for a run that finds it). Each starts from the spec as planned, with
        no cleaned branch and no notes (so no test result is cached)."""
        spec_ref = f"refs/retcon/c{k}"
        planned = self.planned.setdefault(k, self.repo.git("rev-parse", spec_ref))
        marks = self.root / f"marks-{k}-{time.monotonic_ns()}"
        flushed()
        spawned = time.time()
        t = timed(lambda: self.retcon("run", f"c{k}", "-m", model, *extra,
                                      env={"RETCON_BENCH_MARKS": str(marks), **(env or {})}))
        first = float(marks.read_text().split()[0])
        tree = self.repo.git("rev-parse", f"c{k}^{{tree}}")
        if tree != self.repo.git("rev-parse", f"f{k}^{{tree}}"):
            raise SystemExit(f"c{k}: the rebuilt tree differs from f{k}'s")
        # Back to the spec as planned; the bench owns this repository, so plumbing does it.
        self.repo.git("update-ref", spec_ref, planned)
        self.repo.git("branch", "-q", "-D", f"c{k}")
        for ref in ("refs/notes/retcon", "refs/notes/retcon-tests"):
            self.repo.git("update-ref", "-d", ref)
        return t, first - spawned


    def warm_startup(self, k: int) -> float:
        """Seconds from spawning a run to its first model call on a warm worktree: a run of c{k}
        killed at its first commit (as an interrupted or stuck run leaves things: the worktree
        kept, the base tested) is run again, as the user's next run does."""
        proc = subprocess.run([*self.exe, "run", f"c{k}", "-m", "retcon-paths"], cwd=self.repo.path, text=True,
                              capture_output=True, env={**os.environ, "PYTHONPATH": ROOT,
                                                        "RETCON_FAILPOINT": "after-commit-object"})
        if proc.returncode != -9:
            raise SystemExit(f"c{k}: the run to be killed at its first commit ended {proc.returncode}:\n"
                             f"{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
        return self.run(k)[1]


SANDBOXES = ("off", "require")   # the commands unconfined, and confined as `auto` confines them here


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.run_overhead")
    ap.add_argument("--repeat", type=int, default=int(os.environ.get("BENCH_REPEAT", "1")))
    ap.add_argument("--big", action="store_true", help="24,000 files instead of 2,400 (slow)")
    ap.add_argument("--ks", default="10,50,200")
    ap.add_argument("--owners", default="conversation", help="retcon.owners for the runs (default: the tool "
                    "conversation, a model step per commit, as a user who chose it runs)")
    args = ap.parse_args(argv)
    ks = sorted(int(k) for k in args.ks.split(","))
    files = 24_000 if args.big else 2_400
    byte_compiled()
    with tempfile.TemporaryDirectory(prefix="retcon-bench-") as tmp:
        root = Path(tmp)
        os.environ.update(hermetic_env(root / "home"))
        repo = build_repo(root, files, max(ks), ks)
        repo.git("config", "retcon.owners", args.owners)
        bench = Bench(root, repo)
        for k in ks:
            bench.plan(k)
        mechanism = choice.choose(None, "auto").mechanism
        boxes = [b for b in SANDBOXES if b == "off" or mechanism is not None]
        rebase: dict[int, list[float]] = {k: [] for k in ks}
        retcon: dict[tuple[str, int], list[float]] = {(b, k): [] for b in boxes for k in ks}
        startup: list[float] = []      # warm: a run again after one killed at its first commit
        llm_import: list[float] = []   # a python that imports llm and exits: the floor under start-up
        cold: list[float] = []         # a run that creates the worktree (every timed run)
        bench.run(ks[0])               # a first run of the lot: caches (the OS's, git's) settle
        turn = 0
        for _ in range(args.repeat):
            for k in ks:
                turn += 1
                order = ["rebase", *boxes]
                for what in order if turn % 2 else order[::-1]:
                    if what == "rebase":
                        rebase[k].append(bench.rebase(k))
                    else:
                        t, s = bench.run(k, extra=("--sandbox", what))
                        retcon[what, k].append(t)
                        cold.append(s)
                startup.append(bench.warm_startup(k))
                llm_import.append(timed(lambda: subprocess.run([sys.executable, "-c", "import llm"], check=True)))
        reb = {k: statistics.median(rebase[k]) for k in ks}
        print(f"run overhead: {files} files, K commits of 4 files each, build = test = true, model retcon-paths, "
              f"owners = {args.owners}; median of {args.repeat}; sandbox off, and on (require: "
              f"{mechanism or 'none works here, not measured'})")
        for box in boxes:
            _table(box, ks, reb, {k: statistics.median(retcon[box, k]) for k in ks})
        s = statistics.median(startup)
        print(f"start-up to the first model call, warm worktree (a run again after one killed at its first "
              f"commit): {s:.2f} s (median of {len(startup)}; goal <= {GOAL_STARTUP} s on 2,400 files); "
              f"rebase -x of {ks[0]} commits: {reb[ks[0]]:.2f} s")
        floor = statistics.median(llm_import)
        print(f"  of which a python that only imports llm takes {floor:.2f} s (median of {len(llm_import)}, same "
              f"run; git-retcon's model is an llm.Model): git-retcon's own start-up is {s - floor:.2f} s")
        print(f"  a run that creates the worktree (git worktree add of {files} files; a complete run removes it): "
              f"{statistics.median(cold):.2f} s")


def _table(box: str, ks: list[int], reb: dict[int, float], ret: dict[int, float]) -> None:
    """One sandbox's rows: each K against rebase -x, the marginal cost per commit between Ks, and
    the fixed cost (a run's time less its commits at the first marginal cost)."""
    print(f"--sandbox {box}")
    print(f"{'K':>5}{'rebase -x s':>13}{'retcon s':>10}{'rebase ms/c':>13}{'retcon ms/c':>13}{'ratio':>8}")
    for k in ks:
        r, g = reb[k], ret[k]
        print(f"{k:>5}{r:>13.2f}{g:>10.2f}{r / k * 1000:>13.1f}{g / k * 1000:>13.1f}{g / r:>8.2f}")
    margins = [(a, b, (reb[b] - reb[a]) / (b - a), (ret[b] - ret[a]) / (b - a))
               for a, b in zip(ks, ks[1:], strict=False)]
    print(f"{'marginal cost per commit':<28}{'rebase -x ms':>13}{'retcon ms':>11}{'ratio':>8}  goal")
    for a, b, mr, mg in margins:
        ratio = mg / mr if mr > 0 else float("inf")
        print(f"  K {a:>3} -> {b:<3}{'':<14}{mr * 1000:>13.1f}{mg * 1000:>11.1f}{ratio:>8.2f}  <= {GOAL_MARGINAL}")
    if margins:
        fixed = ret[ks[0]] - ks[0] * margins[0][3]
        print(f"  fixed cost (K {ks[0]} less {ks[0]} commits at the K {ks[0]} -> {ks[1]} marginal): {fixed:.2f} s"
              f"  (goal <= {GOAL_STARTUP} s)")
    if len(margins) >= 2:
        lin = margins[-1][3] / margins[-2][3] if margins[-2][3] > 0 else float("inf")
        print(f"linear: retcon marginal K {margins[-1][0]}->{margins[-1][1]} over K {margins[-2][0]}->"
              f"{margins[-2][1]}: {lin:.2f}  (goal <= {GOAL_LINEAR}; rebase -x: "
              f"{margins[-1][2] / margins[-2][2]:.2f})")
        # The machine's speed drifts within a run, and both commands' linearity moves with it
        # (rebase -x's own from 0.8 to 1.4 between runs): the ratio of the two is the steadier.
        if margins[-1][2] > 0 and margins[-2][2] > 0:
            rel = (margins[-1][3] / margins[-1][2]) / (margins[-2][3] / margins[-2][2])
            print(f"  the same against rebase -x's (ratio at K {margins[-1][0]}->{margins[-1][1]} over ratio at "
                  f"K {margins[-2][0]}->{margins[-2][1]}): {rel:.2f}")


if __name__ == "__main__":
    main(sys.argv[1:])
