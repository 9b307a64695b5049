"""Every hunk gets an owner (issue 30): on histories whose commits change the same files, from a spec
with hints only (a message and the files each commit touches, as a new user writes it).

"before" is today's conversation (owners = "conversation"): the `imperfect` model chooses in each
commit's step. "after" is the questions: the hunks are placed before commit 1 by the evidence and
small questions, answered by `owners-last` (always the last choice offered, the 1.5B model's bias)
or `owners-erring` (right for 70% of the hunks, else the last choice), then the same `imperfect`
model extracts (testing/owners_model.py, testing/imperfect_model.py). Scored against the authors'
commits: hunks placed in their author's commit (planned: by the spec's saved hunks; made: by the
commits the run made), logical commits complete with a commit of their own, wrong trees accepted
(a run that says complete on another tree: must be 0), questions asked. Four histories are built
here from scratch; the others are real projects' commits (bench/real_histories.py: Python, Go,
JavaScript, Rust, TypeScript, squashed into one "wip" commit, the spec naming the authors' commits
and their files), skipped where their commits cannot be fetched.

    python -m bench.owners
"""
from __future__ import annotations

import functools
import json
import os
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench import real_histories
from testing.gitrepo import GitRepo, hermetic_env

Files = dict[str, str]


@dataclass
class History:
    name: str
    base: Files
    commits: list[tuple[str, str, Files]]   # (author's subject, the user's message, files after it)


def _funcs(bodies: dict[str, str]) -> str:
    return "\n\n".join(f"def {n}(x):\n{b}" for n, b in bodies.items())


_KW = {"parse": "    return x.split()\n", "render": "    return str(x)\n", "check": "    return bool(x)\n",
       "load": "    return open(x).read()\n", "store": "    return len(x)\n"}


def keyword() -> History:
    """Five commits, each adds `strict` handling to a different function of one file."""
    state = dict(_KW)
    commits = []
    for name in _KW:
        state = dict(state)
        state[name] = f"    if x is None:\n        raise ValueError('{name}: no input')\n" + state[name]
        commits.append((f"{name}: refuse None", f"Make {name} refuse a missing input", {"core.py": _funcs(state)}))
    return History("keyword", {"core.py": _funcs(_KW)}, commits)


def parser() -> History:
    """Three commits, each changes one function of parser.py and its test in the one test file."""
    code = {"tokens": "    return s.split()\n", "lines": "    return s.splitlines()\n",
            "words": "    return [w for w in s.split() if w.isalpha()]\n"}
    test = {"tokens": "    assert tokens('a b') == ['a', 'b']\n", "lines": "    assert lines('a\\nb') == ['a', 'b']\n",
            "words": "    assert words('a 1') == ['a']\n"}

    def files(c: dict[str, str], t: dict[str, str]) -> Files:
        return {"parser.py": "\n\n".join(f"def {n}(s):\n{b}" for n, b in c.items()),
                "test_parser.py": "from parser import lines, tokens, words\n\n\n"
                + "\n\n".join(f"def test_{n}():\n{b}" for n, b in t.items())}

    base = files(code, test)
    commits = []
    for name, subject in (("tokens", "tokens: strip first"), ("lines", "lines: drop empty lines"),
                          ("words", "words: keep apostrophes")):
        code = dict(code)
        test = dict(test)
        code[name] = "    s = s.strip()\n" + code[name]
        test[name] = test[name] + f"    assert {name}('') == []\n"
        commits.append((subject, f"Let {name} handle blank input", files(code, test)))
    return History("parser", base, commits)


def stylecheck() -> History:
    """A feature, a style pass over the same files, a typo fix, and a second feature."""
    a = "def area(w, h):\n    return w*h\n"
    b = "# Shapes: squre and circle\ndef side(a):\n    return a\n"
    a1 = a + "\n\ndef perimeter(w, h):\n    return 2*(w+h)\n"
    a2 = a1.replace("w*h", "w * h").replace("2*(w+h)", "2 * (w + h)")
    b2 = b.replace("return a\n", "return  a\n").replace("return  a", "return a")
    b2 = b.replace("def side(a):", "def side(a) :").replace("def side(a) :", "def side(a):") + ""
    b3 = b2.replace("squre", "square")
    a4 = a2 + "\n\ndef diagonal(w, h):\n    return (w * w + h * h) ** 0.5\n"
    return History("stylecheck", {"shapes.py": a, "sides.py": b}, [
        ("Add perimeter", "Compute the perimeter", {"shapes.py": a1}),
        ("Stylecheck", "Style: spaces around operators", {"shapes.py": a2}),
        ("Fix typo", "Fix the typo in the sides comment", {"sides.py": b3}),
        ("Add diagonal", "Compute the diagonal", {"shapes.py": a4}),
    ])


def vague() -> History:
    """Four commits whose messages name nothing their hunks say: only questions can place them."""
    body = {"alpha": "    return x + 1\n", "beta": "    return x - 1\n", "gamma": "    return x * 2\n",
            "delta": "    return x // 2\n"}
    state = dict(body)
    commits = []
    for name, subject, message, line in (
            ("alpha", "Handle edge cases", "Zero for nothing", "    x = x or 0\n"),
            ("beta", "Clearer errors", "Say what went wrong", "    assert x is not None, 'x is missing'\n"),
            ("gamma", "Faster path", "Shortcut", "    if x == 0:\n        return 0\n"),
            ("delta", "Trace calls", "Debug output", "    print('delta', x)\n")):
        state = dict(state)
        state[name] = line + state[name]
        commits.append((subject, message, {"ops.py": _funcs(state)}))
    return History("vague", {"ops.py": _funcs(body)}, commits)


def build(h: History, where: Path) -> GitRepo:
    repo = GitRepo.init(where)
    repo.commit("base", dict(h.base))
    repo.git("checkout", "-q", "-b", "feature")
    for subject, _, files in h.commits:
        repo.commit(subject, dict(files))
    return repo


def spec_text(h: History, repo: GitRepo, owners: str) -> str:
    lines = ['source = "feature"', 'remote = "main"', 'cleaned = "feature-clean"', f'owners = "{owners}"']
    shas = repo.git("rev-list", "--reverse", "main..feature").split()
    for (_, message, _), sha in zip(h.commits, shas, strict=True):
        files = repo.git("show", "--name-only", "--format=", sha).split()
        hints = json.dumps("Files: " + ", ".join(files))
        lines += ["", "[[commit]]", f"message = {json.dumps(message)}", f"hints = {hints}"]
    return "\n".join(lines) + "\n"


def truth(repo: GitRepo, authors: str = "feature") -> tuple[dict[str, int], dict[str, str]]:
    """Each hunk of the whole diff: its author's commit (0-based; the commits main..authors), and its
    text as a question shows it."""
    import pygit2

    from git_retcon import diff
    from git_retcon.owners.question import hunk_text
    from git_retcon.owners.source import written_by

    r = pygit2.Repository(str(repo.path))
    base, tip = repo.rev("main"), repo.rev(authors)
    hunks = diff.remaining(r, repo.tree("main"), repo.tree(authors))
    _, wrote = written_by(r, base, tip, hunks)
    owner = {h.id: wrote[h.id].most_common(1)[0][0] for h in hunks if wrote[h.id]}
    return owner, {h.id: hunk_text(h) for h in hunks}


@dataclass
class Score:
    right: int = 0
    planned: int | None = None      # hunks the spec's saved `hunks` put in their author's commit
    hunks: int = 0
    complete: int = 0
    commits: int = 0
    wrong_trees: int = 0
    questions: int = 0


def score(repo: GitRepo, owner: dict[str, int], log: Path) -> Score:
    import pygit2
    import tomli

    from git_retcon import diff

    r = pygit2.Repository(str(repo.path))
    out = Score(hunks=len(owner))
    spec = tomli.loads(repo.git("show", "refs/retcon/feature-clean:spec.toml"))
    out.commits = len(spec["commit"])
    if any(c.get("hunks") for c in spec["commit"]):
        out.planned = sum(1 for k, c in enumerate(spec["commit"]) for i in c.get("hunks", []) if owner.get(i) == k)
    prev = repo.tree("main")
    tip_tree = repo.tree("feature")
    for k, c in enumerate(spec["commit"]):
        created = [e["commit_created"] for e in c.get("history", []) if isinstance(e, dict) and "commit_created" in e]
        if not created:
            continue
        after = repo.tree(created[-1])
        took = {h.id for h in diff.remaining(r, prev, after)}
        # A hunk whose whole change this commit made, by id (ids are content hashes).
        whole = {h.id for h in diff.remaining(r, repo.tree("main"), tip_tree)}
        out.right += sum(1 for i in took & whole if owner.get(i) == k)
        if c.get("history", [])[-1:] == ["complete"] and took:
            out.complete += 1
        prev = after
    last = spec["commit"][-1].get("history", [])
    if last[-1:] == ["complete"] and prev != tip_tree:
        out.wrong_trees += 1
    if log.exists():
        out.questions = len({json.loads(x)["prompt"].split("Step: owner")[0] for x in log.read_text().splitlines()
                             if "Step: owner" in json.loads(x).get("prompt", "")})
    return out


SETTINGS = (("before: conversation, imperfect", "imperfect", "conversation"),
            ("after: questions, last choice", "imperfect-owners-last", "questions"),
            ("after: questions, 70% right", "imperfect-owners-erring", "questions"))


def main(argv: list[str]) -> None:
    from testing import imperfect_model, owners_model
    from testing.flow import retcon

    home = Path(tempfile.mkdtemp(prefix="retcon-bench-owners-"))
    os.environ.update({**real_histories.toolchains(), **hermetic_env(home / "home")})
    imperfect_model.register()
    owners_model.register()
    print("Every hunk gets an owner: hints-only specs of histories whose commits share files\n")
    print(f"{'history':<11} {'setting':<34} {'planned right':>13} {'made right':>11} {'complete, own':>13} "
          f"{'wrong trees':>11} {'questions':>9}")
    cases: list[tuple[str, Callable[[Path], GitRepo], Callable[[GitRepo, str], str], str]] = [
        (h.name, functools.partial(build, h), functools.partial(spec_text, h), "feature")
        for h in (keyword(), parser(), stylecheck(), vague())]
    for real in real_histories.HISTORIES:
        cases.append((real.name, functools.partial(real_histories.build, real),
                      functools.partial(real_histories.spec_text, real), real_histories.AUTHORS))
    for name, make, spec_of, authors in cases:
        for label, model, owners in SETTINGS:
            where = home / f"{name}-{model}"
            try:
                repo = make(where / "repo")
            except real_histories.Unavailable as e:
                print(f"{name:<11} skipped: {e}")
                break
            owner, texts = truth(repo, authors)
            (where / "truth.json").write_text(json.dumps({texts[i]: k + 1 for i, k in owner.items()}))
            (where / "spec.toml").write_text(spec_of(repo, owners))
            os.environ["RETCON_OWNERS_TRUTH"] = str(where / "truth.json")
            os.environ["RETCON_SCRIPT_LOG"] = str(where / "log.jsonl")
            if retcon(repo, "spec", "import", str(where / "spec.toml")).code != 0:
                raise SystemExit(f"{name}: the spec was refused")
            out = retcon(repo, "run", "-m", model)
            s = score(repo, owner, where / "log.jsonl")
            planned = "-" if s.planned is None else f"{s.planned}/{s.hunks} ({100 * s.planned // max(s.hunks, 1)}%)"
            print(f"{name:<11} {label:<34} {planned:>13} {f'{s.right}/{s.hunks}':>11} "
                  f"{f'{s.complete}/{s.commits}':>13} {s.wrong_trees:>11} {s.questions:>9}"
                  + ("" if out.code == 0 else f"   (exit {out.code})"), flush=True)
    sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
