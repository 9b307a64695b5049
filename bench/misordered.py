"""`retcon-paths` on misordered specs: how many logical commits it completes with no human step.

Each case is a small Python project whose feature branch is rebuilt from a spec that puts the
commits in the wrong order (a helper used before the commit that defines it, a module imported
before it is added, a chain of three), plus a case in the right order and cases no hunk can fix.
"before" is retcon-paths as it was: stuck on the first failure (`retcon-paths-nofix`, in
bench/_retcon.py); "after" is retcon-paths taking the rework brief's candidate hunks in WIP fix
commits. The build is `python3 -m compileall -q app`, the test `python3 -m unittest -q`.

    python -m bench.misordered
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from testing.gitrepo import GitRepo, hermetic_env

ROOT = str(Path(__file__).resolve().parent.parent)
Files = dict[str, str | bytes | None]


@dataclass
class Case:
    name: str
    base: Files
    history: list[tuple[str, Files]]   # the feature branch, in the order it was written
    spec: list[tuple[str, list[str]]]  # (message, paths) in the order the spec asks for


def _test(module: str, *lines: str) -> str:
    """A unittest module for app.<module>, its body given line by line (indented here)."""
    body = "".join(f"    {line}\n" for line in lines)
    return f"import unittest\n\nfrom app import {module}\n\n\nclass T(unittest.TestCase):\n{body}"


BASE: Files = {
    "app/__init__.py": "",
    "app/text.py": "def shout(s):\n    return s.upper() + '!'\n",
    "app/core.py": "from app import text\n\n\ndef title(s):\n    return text.shout(s)\n",
    "tests/__init__.py": "",
    "tests/test_core.py": _test("core", "def test_title(self):", "    self.assertEqual(core.title('a'), 'A!')"),
}
SLUGIFY = ("app/text.py", "import re\n\n\ndef shout(s):\n    return s.upper() + '!'\n\n\n"
           "def slugify(s):\n    return re.sub(r'\\W+', '-', s.lower()).strip('-')\n")
PERMALINK = ("app/core.py", "from app import text\n\n\ndef title(s):\n    return text.shout(s)\n\n\n"
             "def permalink(s):\n    return '/posts/' + text.slugify(s)\n")
TEST_SLUG = ("tests/test_text.py",
             _test("text", "def test_slugify(self):", "    self.assertEqual(text.slugify('A b'), 'a-b')"))
TEST_LINK = ("tests/test_core.py", _test("core", "def test_title(self):", "    self.assertEqual(core.title('a'), 'A!')",
                                         "", "def test_permalink(self):",
                                         "    self.assertEqual(core.permalink('A b'), '/posts/a-b')"))
FMT = ("app/fmt.py", "def money(cents):\n    return f'{cents // 100}.{cents % 100:02d}'\n")
TEST_FMT = ("tests/test_fmt.py", _test("fmt", "def test_money(self):", "    self.assertEqual(fmt.money(105), '1.05')"))
REPORT = ("app/report.py",
          "from app.fmt import money\n\n\ndef line(name, cents):\n    return f'{name}: {money(cents)}'\n")
TEST_REPORT = ("tests/test_report.py",
               _test("report", "def test_line(self):", "    self.assertEqual(report.line('x', 250), 'x: 2.50')"))
DOCS = ("README.md", "# app\n\nTitles, permalinks and money.\n")


def cases() -> list[Case]:
    helper = [("text: slugify", dict([SLUGIFY, TEST_SLUG])), ("core: permalinks", dict([PERMALINK, TEST_LINK]))]
    module = [("fmt: money", dict([FMT, TEST_FMT])), ("report: lines", dict([REPORT, TEST_REPORT]))]
    chain_c = ("app/page.py",
               "from app import core\n\n\ndef head(s):\n    return '<h1>' + core.permalink(s) + '</h1>'\n")
    test_page = ("tests/test_page.py",
                 _test("page", "def test_head(self):", "    self.assertEqual(page.head('A b'), '<h1>/posts/a-b</h1>')"))
    # A behaviour change whose test comes first: no hunk defines anything, the brief has no candidate.
    loud = ("app/text.py", "def shout(s):\n    return s.upper() + '!!'\n")
    test_loud = ("tests/test_core.py",
                 _test("core", "def test_title(self):", "    self.assertEqual(core.title('a'), 'A!!')"))
    return [
        Case("in order", BASE, helper + [("docs", dict([DOCS]))],
             [("text: slugify", ["app/text.py", "tests/test_text.py"]),
              ("core: permalinks", ["app/core.py", "tests/test_core.py"]), ("docs", ["README.md"])]),
        Case("helper used before its definition", BASE, helper + [("docs", dict([DOCS]))],
             [("core: permalinks", ["app/core.py", "tests/test_core.py"]),
              ("text: slugify", ["app/text.py", "tests/test_text.py"]), ("docs", ["README.md"])]),
        Case("module imported before it is added", BASE, module,
             [("report: lines", ["app/report.py", "tests/test_report.py"]),
              ("fmt: money", ["app/fmt.py", "tests/test_fmt.py"])]),
        Case("a chain of three, reversed", BASE,
             helper + [("page: headings", dict([chain_c, test_page]))],
             [("page: headings", ["app/page.py", "tests/test_page.py"]),
              ("core: permalinks", ["app/core.py", "tests/test_core.py"]),
              ("text: slugify", ["app/text.py", "tests/test_text.py"])]),
        Case("helper commit with nothing else", BASE, [("text: slugify", dict([SLUGIFY])),
                                                       ("core: permalinks", dict([PERMALINK, TEST_LINK]))],
             [("core: permalinks", ["app/core.py", "tests/test_core.py"]), ("text: slugify", ["app/text.py"])]),
        Case("test before the behaviour it tests", BASE, [("text: louder", dict([loud])),
                                                         ("core: test louder titles", dict([test_loud]))],
             [("core: test louder titles", ["tests/test_core.py"]), ("text: louder", ["app/text.py"])]),
    ]


def build(root: Path, case: Case) -> GitRepo:
    repo = GitRepo.init(root)
    repo.commit("base", case.base)
    repo.git("checkout", "-q", "-b", "feature")
    for message, files in case.history:
        repo.commit(message, files)
    repo.git("checkout", "-q", "main")
    spec = ('source = "feature"\nremote = "main"\ncleaned = "clean"\nbuild = "python3 -m compileall -q app"\n'
            'test = "python3 -m unittest -q"\n')
    for message, paths in case.spec:
        spec += f"\n[[commit]]\nmessage = {json.dumps(message)}\npaths = {json.dumps(paths)}\n"
    (root.parent / f"{root.name}.toml").write_text(spec)
    _retcon(repo, "plan", "--from-file", str(root.parent / f"{root.name}.toml"), "--no-edit")
    return repo


def _retcon(repo: GitRepo, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bench._retcon", *args], cwd=repo.path, text=True,
                          capture_output=True, env={**os.environ, "PYTHONPATH": ROOT})


def complete(repo: GitRepo, model: str) -> tuple[int, str]:
    """(logical commits complete with a commit of their own when the run stopped (an empty one is not
    done), the first line of why it stopped, if stuck)."""
    run = _retcon(repo, "run", "-m", model)
    if run.returncode not in (0, 3):
        raise SystemExit(f"run -m {model} failed ({run.returncode}):\n{run.stdout[-2000:]}\n{run.stderr[-2000:]}")
    doc = json.loads(_retcon(repo, "status", "--json").stdout)
    done = sum(1 for c in doc["commits"] if c["state"] == "complete" and c["commits"])
    why = ""
    if run.returncode == 3:
        stuck = next(c for c in doc["commits"] if c["state"] == "stuck")
        why = f"commit {stuck['index']} ({stuck['message']}) stuck"
    return done, why


def main(argv: list[str] | None = None) -> None:
    rows = []
    with tempfile.TemporaryDirectory(prefix="retcon-bench-misordered-") as tmp:
        root = Path(tmp)
        os.environ.update(hermetic_env(root / "home"))
        for i, case in enumerate(cases()):
            counts = []
            for model in ("retcon-paths-nofix", "retcon-paths"):
                repo = build(root / f"{i}-{model}", case)
                counts.append(complete(repo, model))
            rows.append((case, counts))
    total = sum(len(c.spec) for c, _ in rows)
    before = sum(n[0][0] for _, n in rows)
    after = sum(n[1][0] for _, n in rows)
    print("retcon-paths on misordered specs: logical commits completed with no human step")
    print(f"{'case':<40}{'commits':>8}{'before':>8}{'after':>8}  still stops at")
    for case, ((b, _), (a, why)) in rows:
        print(f"{case.name:<40}{len(case.spec):>8}{b:>8}{a:>8}  {why}")
    print(f"{'total':<40}{total:>8}{before:>8}{after:>8}  ({before / total:.0%} before, {after / total:.0%} after)")


if __name__ == "__main__":
    main(sys.argv[1:])
