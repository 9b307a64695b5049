"""Repair as a search (reconstruct/repair.py): the brief's candidates are tried one at a time,
smallest first, and the first that passes and leaves every later logical commit something of its
own is the fix, committed by plain code; what each tried alone failed with is said. Real
repository, real commands, the scripted model (never asked here)."""
from __future__ import annotations

import json

import tomli

from testing.flow import retcon, take
from testing.gitrepo import GitRepo

SPEC = """\
source = "feature"
remote = "main"
cleaned = "feature-clean"
test = "python3 -c 'import app; app.main()'"

[[commit]]
message = "app: use two()"
paths = ["app.py"]

[[commit]]
message = "helpers: a two of their own"
paths = ["helpers.py"]

[[commit]]
message = "util: two, and say what it is"
paths = ["util.py"]
"""


def make(tmp_path) -> GitRepo:
    """app.py's commit calls util.two(). Two candidates define a `two`: helpers.py's (smaller, and
    the whole of commit 2: taking it would leave commit 2 empty) and util.py's (one of util.py's
    two hunks: the other, its docstring, stays for commit 3)."""
    repo = GitRepo.init(tmp_path / "repo")
    util = "\n".join(f"# line {i}" for i in range(12)) + "\n\n\ndef one():\n    return 1\n"
    repo.commit("base", {"app.py": "import util\n\n\ndef main():\n    return util.one()\n", "util.py": util})
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("all", {"app.py": "import util\n\n\ndef main():\n    assert util.two() == 2\n",
                        "util.py": '"""Small numbers."""\n' + util + "\n\ndef two():\n    x = 2\n    return x\n",
                        "helpers.py": "def two():\n    return 'b'\n"})
    repo.git("checkout", "-q", "main")
    (tmp_path / "spec.toml").write_text(SPEC)
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit").code == 0
    return repo


def test_the_smallest_candidate_that_passes_and_empties_nothing_is_the_fix(tmp_path, scripted):
    repo = make(tmp_path)
    log = scripted({"1/extract": take("app.py")})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    assert "Trying the candidate util.py alone" in res.out, res.out
    subjects = repo.log("main..feature-clean")[::-1]
    assert subjects[0] == "app: use two()" and subjects[1].startswith("WIP:") and len(subjects) == 4, subjects
    wip = repo.git("show", "--name-only", "--format=", "feature-clean~2").split()
    assert wip == ["util.py"]                                   # util's two(), not helpers.py's
    assert repo.git("show", "--name-only", "--format=", "feature-clean~1").split() == ["helpers.py"]
    assert repo.git("show", "feature-clean~2:util.py").startswith("# line 0")   # the docstring stays for 3
    assert not log.exists() or "1/fix" not in log.read_text()   # no model was asked to fix


GRAMMAR = "KNOWN = {\n}\n\n\ndef parse(s):\n    if s in KNOWN:\n        return KNOWN[s]\n    raise ValueError(s)\n"
XFAIL_TEST = """\
import unittest

from grammar import parse

XFAIL = {
    "alpha",
    "beta",
}


class Cases(unittest.TestCase):
    def test_cases(self):
        for case in ["alpha", "beta"]:
            with self.subTest(msg=case):
                if case in XFAIL:
                    with self.assertRaises(ValueError):
                        parse(case)
                else:
                    parse(case)
"""


def _atoms_misplaced(tmp_path, first: str = "{known}:1", second: str = "{known}:2 {xfail}:1 {xfail}:2") -> GitRepo:
    """tomli's case, small: two features each add an entry to KNOWN and take their name out of the
    test's expected failures. The spec, as a model that erred placed them, gives each commit the
    items first and second name (by default: commit 1 alpha's entry, but commit 2 the line that
    takes "alpha" out of the expected failures)."""
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("base", {"grammar.py": GRAMMAR, "test_grammar.py": XFAIL_TEST})
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("wip", {"grammar.py": GRAMMAR.replace("{\n}", '{\n    "alpha": 1,\n    "beta": 2,\n}'),
                        "test_grammar.py": XFAIL_TEST.replace('    "alpha",\n    "beta",\n', "")})
    repo.git("checkout", "-q", "main")
    head = ('source = "feature"\nremote = "main"\ncleaned = "feature-clean"\n'
            'test = "python3 -m unittest -q test_grammar"\n')
    (tmp_path / "spec.toml").write_text(head + '[[commit]]\nmessage = "Parse alpha"\n'
                                        '[[commit]]\nmessage = "Parse beta"\n')
    assert retcon(repo, "spec", "import", str(tmp_path / "spec.toml")).code == 0
    ids = {r["path"]: r["id"] for r in json.loads(retcon(repo, "hunks", "--json").out)}
    known, xfail = ids["grammar.py"], ids["test_grammar.py"]
    # KNOWN's hunk adds two lines (1, 2); the test's removes two (1: "alpha", 2: "beta").
    def items(which: str) -> str:
        return ", ".join(f'"{i}"' for i in which.format(known=known, xfail=xfail).split())
    (tmp_path / "spec.toml").write_text(head + f'[[commit]]\nmessage = "Parse alpha"\nhunks = [{items(first)}]\n'
                                        f'[[commit]]\nmessage = "Parse beta"\nhunks = [{items(second)}]\n')
    assert retcon(repo, "spec", "import", str(tmp_path / "spec.toml")).code == 0
    return repo


def test_a_line_a_later_commit_names_that_the_failure_quotes_is_the_fix(tmp_path, scripted):
    repo = _atoms_misplaced(tmp_path)
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 0, res.text
    assert "The 1 lines commit 2 names in test_grammar.py: they pass; committing them as the fix (no model needed)" \
        in res.out, res.out
    assert repo.log("main..feature-clean")[::-1] == [
        "Parse alpha", "WIP: take the 1 lines commit 2 names in test_grammar.py", "Parse beta"]
    assert repo.tree("feature-clean") == repo.tree("feature")
    fixed = [ln for ln in repo.git("show", "--format=", "feature-clean~1").splitlines() if ln[:1] in "+-"]
    assert fixed == ["--- a/test_grammar.py", "+++ b/test_grammar.py", '-    "alpha",']
    # The tests decided where the line belongs: the spec's hunks say so.
    assert "Moved in the spec's hunks: " in res.out and "from commit 2 to commit 1" in res.out
    spec = tomli.loads(repo.git("show", "refs/retcon/feature-clean:spec.toml"))
    assert len(spec["commit"][0]["hunks"]) == 2 and len(spec["commit"][1]["hunks"]) == 2


def test_lines_a_commit_took_that_name_the_failure_are_given_back(tmp_path, scripted):
    """Commit 1 took "beta" out of the expected failures and commit 2 took "alpha" out: the first
    attempt takes "alpha"'s line forward (it fails for the better: beta is now the failure), the
    second gives "beta"'s line back to commit 2, and the spec says so."""
    repo = _atoms_misplaced(tmp_path, "{known}:1 {xfail}:2", "{known}:2 {xfail}:1")
    ids = {r["path"]: r["id"].split(":")[0] for r in json.loads(retcon(repo, "hunks", "--json").out)}
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 0, res.text
    assert "they fail for the better; committing them, and going on from there (no model needed)" in res.out, res.out
    assert "given back: they pass; committing them as the fix (no model needed)" in res.out, res.out
    made = repo.log("main..feature-clean")[::-1]
    assert made[0] == "Parse alpha" and made[-1] == "Parse beta" and len(made) == 4, made
    assert made[1:3] == ["WIP: take the 1 lines commit 2 names in test_grammar.py",
                         "WIP: the 1 lines of test_grammar.py it took that name the failure, given back"], made
    assert repo.tree("feature-clean") == repo.tree("feature")
    spec = tomli.loads(repo.git("show", "refs/retcon/feature-clean:spec.toml"))
    assert f"{ids['test_grammar.py']}:2" in spec["commit"][1]["hunks"]
    assert f"{ids['test_grammar.py']}:2" not in spec["commit"][0]["hunks"]
    # Squashed, commit 1 is alpha's feature alone: its entry and its line out of the expected failures.
    assert retcon(repo, "squash").code == 0
    shown = [ln for ln in repo.git("show", "--format=", "feature-clean~1").splitlines() if ln[:2] in ("+ ", "- ")]
    assert shown == ['+    "alpha": 1,', '-    "alpha",'], shown


def test_lines_the_evidence_put_in_the_failing_commit_are_taken_back_together(tmp_path, scripted):
    """The model overruled the evidence for two hunks commit 1 needs together (its function and
    the helper it calls): neither alone mends commit 1, both together do, and the failure names
    neither. The placement's note kept the evidence's first choice: the repair takes them back."""
    repo = GitRepo.init(tmp_path / "repo")
    app = "import os\n\n\ndef where():\n    return os.getcwd()\n"
    repo.commit("base", {"app.py": app, "test_base.py": "import app\nassert app.where()\n"})
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("wip", {
        "app.py": "def helper():\n    return 2\n\n\n" + app + "\n\ndef alpha():\n    return helper() * 2\n\n\n"
                  "def beta():\n    return 3\n",
        "test_alpha.py": "import app\nassert app.alpha() == 4\n",
        "test_beta.py": "import app\nassert app.beta() == 3\n"})
    repo.git("checkout", "-q", "main")
    head = ('source = "feature"\nremote = "main"\ncleaned = "feature-clean"\n'
            'test = "for t in test_*.py; do python3 $t || exit 1; done"\n')
    (tmp_path / "spec.toml").write_text(head + '[[commit]]\nmessage = "Alpha"\n[[commit]]\nmessage = "Beta"\n')
    assert retcon(repo, "spec", "import", str(tmp_path / "spec.toml")).code == 0
    rows = json.loads(retcon(repo, "hunks", "--json").out)
    by = {(r["path"], r["lines"]): r["id"] for r in rows}
    helper, tail = by[("app.py", "-0,0 +1,4")], by[("app.py", "-5,0 +10,8")]
    alpha, beta = next(r["id"] for r in rows if r["path"] == "test_alpha.py"), \
        next(r["id"] for r in rows if r["path"] == "test_beta.py")
    # tail holds alpha() (its + lines 1-4) and beta() (5-8); the model put helper and alpha() in 2.
    (tmp_path / "spec.toml").write_text(
        head + f'[[commit]]\nmessage = "Alpha"\nhunks = ["{alpha}"]\n'
        f'[[commit]]\nmessage = "Beta"\nhunks = ["{helper}", "{tail}:1-4", "{tail}:5-8", "{beta}"]\n')
    assert retcon(repo, "spec", "import", str(tmp_path / "spec.toml")).code == 0
    spec_commit = repo.git("rev-parse", "refs/retcon/feature-clean")
    overruled = {"commit": 2, "who": "model", "first": 1}
    placed = {helper: overruled, f"{tail}:1-4": overruled}
    repo.git("notes", "--ref=retcon", "add", "-f", "-m", json.dumps({"placed": placed}), spec_commit)
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 0, res.text
    assert "The 8 lines commit 2 names in app.py: they pass; committing them as the fix (no model needed)" \
        in res.out, res.out
    spec = tomli.loads(repo.git("show", "refs/retcon/feature-clean:spec.toml"))
    assert sorted(spec["commit"][0]["hunks"]) == sorted([alpha, helper, f"{tail}:1-4"])
    assert repo.tree("feature-clean") == repo.tree("feature")


ERRORS = ('class BadChar(Exception):\n    def __init__(self, c, expected):\n'
          '        super().__init__(f"expected {expected!r} not {c!r}")\n')
QUOTE = ('class BadQuote(Exception):\n    def __init__(self, c):\n'
         '        super().__init__(f"expected a quote mark not {c}")\n')
READER = ("from errors import BadChar\n\n\ndef quote(s):\n    if s[0] not in \"'\\\"\":\n"
          "        raise BadChar(s[0], \"quote\")\n    return s[0]\n")
CHECK = "import reader\n\ntry:\n    reader.quote(\"x\")\nexcept Exception as e:\n    assert str(e) == {!r}, e\n"


def test_the_lines_that_make_what_the_failing_commit_writes_are_taken_with_its_tests(tmp_path, scripted):
    """xmlparser's commit 2, small: it adds an error whose message its test expects, but the model
    put the line that raises the new error (and its import), and another test's line expecting the
    message, in a later commit. The failure shows the expected text, a format of the commit's own
    error writes: the later lines that use that new error, and the later test lines that the
    format writes, are taken forward together, with no model call."""
    repo = GitRepo.init(tmp_path / "repo")
    old = CHECK.format("expected 'quote' not 'x'")
    repo.commit("base", {"errors.py": ERRORS, "reader.py": READER, "test_reader.py": old, "test_quote.py": old,
                         "notes.md": "# Notes\n"})
    repo.git("checkout", "-q", "-b", "feature")
    new = CHECK.format("expected a quote mark not x")
    repo.commit("wip", {"errors.py": ERRORS + "\n\n" + QUOTE, "test_reader.py": new, "test_quote.py": new,
                        "reader.py": READER.replace("import BadChar", "import BadChar, BadQuote").replace(
                            'raise BadChar(s[0], "quote")', "raise BadQuote(s[0])"),
                        "notes.md": "# Notes\n\nQuotes have an error of their own.\n"})
    repo.git("checkout", "-q", "main")
    head = ('source = "feature"\nremote = "main"\ncleaned = "feature-clean"\n'
            'test = "python3 test_reader.py && python3 test_quote.py"\n')
    (tmp_path / "spec.toml").write_text(head + '[[commit]]\nmessage = "Add a quote error"\n'
                                        '[[commit]]\nmessage = "Say so in the notes"\n')
    assert retcon(repo, "spec", "import", str(tmp_path / "spec.toml")).code == 0
    rows = json.loads(retcon(repo, "hunks", "--json").out)
    ids = {p: [r["id"] for r in rows if r["path"] == p] for p in {r["path"] for r in rows}}
    mine = [*ids["errors.py"], f"{ids['test_reader.py'][0]}:1-2"]
    theirs = [*ids["reader.py"], f"{ids['test_quote.py'][0]}:1-2", *ids["notes.md"]]
    (tmp_path / "spec.toml").write_text(
        head + '[[commit]]\nmessage = "Add a quote error"\nhunks = [' + ", ".join(f'"{i}"' for i in mine) + "]\n"
        '[[commit]]\nmessage = "Say so in the notes"\nhunks = [' + ", ".join(f'"{i}"' for i in theirs) + "]\n")
    assert retcon(repo, "spec", "import", str(tmp_path / "spec.toml")).code == 0
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 0, res.text
    assert "The 6 lines commit 2 names in reader.py, test_quote.py: they pass; committing them as the fix " \
           "(no model needed)" in res.out, res.out
    made = repo.git("show", "--format=", "--name-only", "feature-clean~1").split()
    assert made == ["reader.py", "test_quote.py"], made
    assert repo.git("show", "--name-only", "--format=", "feature-clean").split() == ["notes.md"]
    assert repo.tree("feature-clean") == repo.tree("feature")
