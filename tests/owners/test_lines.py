"""Lines, not hunks: where one hunk of the branch's diff holds lines of two commits (an entry of a
list each, a function changed twice, an import block), the default mode places each line with
its commit and rebuilds the authors' trees exactly, with no WIP and no tool conversation.

The model is `owners-truth` (testing/truth_model.py): it answers every question as the authors
did, so what these tests check is that plain code asks the right questions and builds the right
trees from the answers (and, with the branch's own history, that the rules need no question)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import tomli

from testing.flow import retcon
from testing.gitrepo import GitRepo

TEST = "for t in test_*.py; do python3 $t || exit 1; done"

XFAIL_BLOCK = """\
from grammar import parse


def check(name):
    if name in {
        "alpha",
        "beta",
    }:
        return "xfail"
    return parse(name)


for name, want in [("alpha", 1), ("beta", 2)]:
    got = check(name)
    assert got in ("xfail", want), (name, got)
    if got == "xfail":
        try:
            parse(name)
        except KeyError:
            continue
        raise SystemExit(f"{name} parses: take it out of the expected failures")
"""

# Each history: the base's files, then the authors' commits (message, files).
HISTORIES: dict[str, tuple[dict[str, str], list[tuple[str, dict[str, str]]]]] = {
    # One list of cases, an entry each commit, each naming the data file its commit adds.
    "a list": (
        {"test_cases.py": 'import pathlib\nCASES = [\n    "cases/one.txt",\n]\n'
                          'for c in CASES:\n    assert pathlib.Path(c).read_text().startswith("ok"), c\n',
         "cases/one.txt": "ok one\n"},
        [("Add the two case", {"cases/two.txt": "ok two\n", "test_cases.py":
                               'import pathlib\nCASES = [\n    "cases/one.txt",\n    "cases/two.txt",\n]\n'
                               'for c in CASES:\n    assert pathlib.Path(c).read_text().startswith("ok"), c\n'}),
         ("Add the three case", {"cases/three.txt": "ok three\n", "test_cases.py":
                                 'import pathlib\nCASES = [\n    "cases/one.txt",\n    "cases/two.txt",\n'
                                 '    "cases/three.txt",\n]\n'
                                 'for c in CASES:\n    assert pathlib.Path(c).read_text().startswith("ok"), c\n'})]),
    # A function two commits change, on adjacent lines.
    "a function changed twice": (
        {"calc.py": "def total(items):\n    subtotal = sum(items)\n    tax = 0\n    return subtotal + tax\n",
         "test_calc.py": "from calc import total\nassert total([]) == 0\n"},
        [("Add a tax of ten percent",
          {"calc.py": "def total(items):\n    subtotal = sum(items)\n    tax = subtotal // 10\n"
                      "    return subtotal + tax\n",
           "test_tax.py": "from calc import total\nassert total([100]) == 110\n"}),
         ("Round totals down to fives",
          {"calc.py": "def total(items):\n    subtotal = sum(items)\n    tax = subtotal // 10\n"
                      "    return (subtotal + tax) // 5 * 5\n",
           "test_round.py": "from calc import total\nassert total([7]) == 5\n"})]),
    # A block of expected failures (tomli's): each commit takes its name out, the last the block.
    "a block of expected failures": (
        {"grammar.py": "KNOWN = {\n}\n\n\ndef parse(s):\n    return KNOWN[s]\n",
         "test_check.py": XFAIL_BLOCK},
        [("Parse alpha", {"grammar.py": 'KNOWN = {\n    "alpha": 1,\n}\n\n\ndef parse(s):\n    return KNOWN[s]\n',
                          "test_check.py": XFAIL_BLOCK.replace('        "alpha",\n', "")}),
         ("Parse beta", {"grammar.py": 'KNOWN = {\n    "alpha": 1,\n    "beta": 2,\n}\n\n\ndef parse(s):\n'
                                       '    return KNOWN[s]\n',
                         "test_check.py": XFAIL_BLOCK.split("    if name in {")[0] + "    return parse(name)\n"
                                          + XFAIL_BLOCK.split("    return parse(name)\n")[1]})]),
    # One import block, an import each commit.
    "an import block": (
        {"app.py": "import os\nimport sys\n\n\ndef where():\n    return os.getcwd()\n",
         "test_app.py": "import app\nassert app.where()\n"},
        [("Dump settings as JSON",
          {"app.py": "import os\nimport json\nimport sys\n\n\ndef where():\n    return os.getcwd()\n\n\n"
                     "def dump(d):\n    return json.dumps(d)\n",
           "test_dump.py": "import app\nassert app.dump({}) == '{}'\n"}),
         ("Find words with a pattern",
          {"app.py": "import os\nimport json\nimport re\nimport sys\n\n\ndef where():\n    return os.getcwd()\n\n\n"
                     "def dump(d):\n    return json.dumps(d)\n\n\ndef words(s):\n    return re.findall(r'\\w+', s)\n",
           "test_words.py": "import app\nassert app.words('a b') == ['a', 'b']\n"})]),
}


def _build(tmp_path: Path, name: str, squash: bool) -> tuple[GitRepo, list[str], list[str]]:
    """The history on `feature` (squashed into one commit on `wip` when asked); the authors'
    messages and trees."""
    base, commits = HISTORIES[name]
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("base", base)
    repo.git("checkout", "-q", "-b", "feature")
    for message, files in commits:
        repo.commit(message, files)
    trees = [repo.tree(f"feature~{i}") for i in range(len(commits) - 1, -1, -1)]
    source = "feature"
    if squash:
        repo.git("checkout", "-q", "-b", "wip", "main")
        repo.git("checkout", "-q", "feature", "--", ".")
        repo.commit("wip")
        source = "wip"
    repo.git("checkout", "-q", "main")
    spec = (f'source = "{source}"\nremote = "main"\ncleaned = "clean"\ntest = "{TEST}"\n'
            + "".join(f'[[commit]]\nmessage = "{m}"\n' for m, _ in commits))
    (tmp_path / "spec.toml").write_text(spec)
    assert retcon(repo, "spec", "import", str(tmp_path / "spec.toml")).code == 0
    return repo, [m for m, _ in commits], trees


def _truth(tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each line added or removed, the commit its authors did it in, for owners-truth."""
    base, commits = HISTORIES[name]
    truth: dict[str, int] = {}
    before = dict(base)
    for number, (_, files) in enumerate(commits, start=1):
        for path, text in files.items():
            old, new = before.get(path, "").splitlines(), text.splitlines()
            for line in [*(x for x in new if x not in old), *(x for x in old if x not in new)]:
                if line.strip():
                    truth.setdefault(line.strip(), number)
        before.update(files)
    (tmp_path / "truth.json").write_text(json.dumps(truth))
    monkeypatch.setenv("RETCON_OWNERS_LINES", str(tmp_path / "truth.json"))


@pytest.mark.parametrize("squash", [False, True], ids=["history", "squashed"])
@pytest.mark.parametrize("name", list(HISTORIES))
def test_one_hunk_of_two_commits_is_rebuilt_as_the_authors_made_it(tmp_path, monkeypatch, truth_model, name,
                                                                    squash):
    _truth(tmp_path, name, monkeypatch)
    repo, messages, trees = _build(tmp_path, name, squash)
    res = retcon(repo, "run", "-m", "owners-truth")
    assert res.code == 0, res.text
    assert repo.log("main..clean")[::-1] == messages, res.out          # no WIP, nothing else
    assert [repo.tree(f"clean~{i}") for i in range(len(messages) - 1, -1, -1)] == trees
    asked = [json.loads(x) for x in truth_model.read_text().splitlines()] if truth_model.exists() else []
    assert not [e for e in asked if e.get("step") == "conversation"], "a tool conversation was started"
    spec = tomli.loads(repo.git("show", "refs/retcon/clean:spec.toml"))
    split = [h for c in spec["commit"] for h in c.get("hunks", []) if ":" in h]
    assert split, "no hunk was split into lines"
    # `git retcon hunks` lists the atoms under their hunk, each with its commit and who placed it.
    listed = {r["id"]: r for r in json.loads(retcon(repo, "hunks", "--json").out)}
    for atom in split:
        number = next(k for k, c in enumerate(spec["commit"], start=1) if atom in c.get("hunks", []))
        assert listed[atom]["commit"] == number and listed[atom]["who"] in ("rule", "model"), listed[atom]
    # Who placed each is data on the save that placed them, not only words in its message.
    saves = repo.git("rev-list", "refs/retcon/clean").split()
    kept = [json.loads(n)["placed"] for n in (repo.git("notes", "--ref=retcon", "show", s, check=False) for s in saves)
            if n.startswith("{") and "placed" in json.loads(n)]
    assert kept and all(kept[0][a]["who"] == listed[a]["who"] for a in split)


def test_a_hunk_of_one_commit_is_not_split(tmp_path, truth_model):
    """Lines with one source commit's evidence stay one hunk: the spec names it whole."""
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("base", {"a.py": "x = 1\n", "test_a.py": "import a\n"})
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("Add y and z", {"a.py": "x = 1\ny = 2\nz = 3\n"})
    repo.commit("Add w", {"b.py": "w = 4\n"})
    repo.git("checkout", "-q", "main")
    (tmp_path / "spec.toml").write_text(f'source = "feature"\nremote = "main"\ncleaned = "clean"\ntest = "{TEST}"\n'
                                        '[[commit]]\nmessage = "Add y and z"\n[[commit]]\nmessage = "Add w"\n')
    assert retcon(repo, "spec", "import", str(tmp_path / "spec.toml")).code == 0
    res = retcon(repo, "run", "-m", "owners-truth")
    assert res.code == 0, res.text
    spec = tomli.loads(repo.git("show", "refs/retcon/clean:spec.toml"))
    assert not [h for c in spec["commit"] for h in c.get("hunks", []) if ":" in h]


def test_the_demo_with_a_model_that_knows_is_complete_with_no_wip_and_no_conversation(tmp_path, truth_model):
    """The demo's spec gives each commit its paths: the rules decide every line, no question is
    needed, and plain code makes every commit."""
    from git_retcon import demo

    root = tmp_path / "demo"
    root.mkdir()
    demo.build_repo(root)
    (tmp_path / "spec.toml").write_text(demo.spec_text())
    repo = GitRepo(root)
    assert retcon(repo, "spec", "import", str(tmp_path / "spec.toml")).code == 0
    res = retcon(repo, "run", "-m", "owners-truth")
    assert res.code == 0, res.text
    made = repo.log(f"{demo.REMOTE}..{demo.CLEANED}")
    assert made and not [s for s in made if s.startswith(("WIP", "fixup!"))], made
    asked = [json.loads(x) for x in truth_model.read_text().splitlines()] if truth_model.exists() else []
    assert not [e for e in asked if e.get("step") == "conversation"]
    assert repo.tree(demo.CLEANED) == repo.tree(demo.SOURCE)


def test_an_atom_is_asked_as_a_unified_diff_with_the_rest_of_its_hunk_as_context(tmp_path, monkeypatch,
                                                                                  truth_model):
    _truth(tmp_path, "a list", monkeypatch)
    repo, _, _ = _build(tmp_path, "a list", squash=True)
    assert retcon(repo, "run", "-m", "owners-truth").code == 0
    asked = [json.loads(x)["prompt"] for x in truth_model.read_text().splitlines()]
    about = next(p for p in asked if '+    "cases/two.txt",' in p)
    change = about.split("The change, in test_cases.py:\n", 1)[1]
    assert '+    "cases/two.txt",' in change and '\n     "cases/three.txt",' in change   # context


def test_a_plan_whose_questions_split_a_hunk_warns_of_nothing(tmp_path, monkeypatch, truth_model):
    """`plan --from-file -m` places atoms as `run` does; its report counts a hunk named in atoms as
    assigned (it warned "1 hunks are assigned to no commit" and "11 assigned hunk ids are not in
    the remaining diff" on tomli's block of expected failures)."""
    _truth(tmp_path, "a list", monkeypatch)
    repo, messages, trees = _build(tmp_path, "a list", squash=True)
    assert retcon(repo, "spec", "rm", "clean").code == 0
    res = retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "-m", "owners-truth", "--no-edit")
    assert res.code == 0, res.text
    spec = tomli.loads(repo.git("show", "refs/retcon/clean:spec.toml"))
    assert [h for c in spec["commit"] for h in c.get("hunks", []) if ":" in h], res.out
    assert "Warning" not in res.out, res.out
    ran = retcon(repo, "run")
    assert ran.code == 0, ran.text
    assert [repo.tree(f"clean~{i}") for i in range(len(messages) - 1, -1, -1)] == trees
    # The run finds every hunk placed (some in atoms): it asks nothing again, and who placed each
    # stays the plan's (it said "the spec" for every one, the rules' and the model's alike).
    assert "Which commit each hunk belongs to" not in ran.out, ran.out
    listed = json.loads(retcon(repo, "hunks", "--json").out)
    assert {r["who"] for r in listed if ":" in r["id"]} <= {"rule", "model"}, listed


def test_a_plan_that_leaves_lines_of_a_hunk_in_no_commit_says_which(tmp_path, monkeypatch, truth_model):
    _truth(tmp_path, "a list", monkeypatch)
    repo, _, _ = _build(tmp_path, "a list", squash=True)
    assert retcon(repo, "spec", "rm", "clean").code == 0
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "-m", "owners-truth", "--no-edit").code == 0
    text = repo.git("show", "refs/retcon/clean:spec.toml")
    atom = next(h for c in tomli.loads(text)["commit"] for h in c.get("hunks", []) if ":" in h)
    (tmp_path / "edited.toml").write_text(text.replace(f'"{atom}"', '"deadbeef00"'))
    assert retcon(repo, "spec", "rm", "clean").code == 0
    res = retcon(repo, "plan", "--from-file", str(tmp_path / "edited.toml"), "--no-edit")
    out = res.out + res.err
    assert f"lines {atom.split(':')[1]} of hunk {atom.split(':')[0]}" in out and "in no commit" in out, out
    assert "1 assigned hunk ids are not in the remaining diff: deadbeef00" in out, out


def test_a_repair_never_empties_a_later_commit_with_a_whole_hunk(tmp_path, monkeypatch, truth_model):
    """The block's frame misplaced in commit 1 (as a model that erred placed it): the lines search
    takes "beta"'s entry forward, and then only grammar.py's hunk, the whole of commit 2, would
    pass. It is not committed: commit 2 would have nothing of its own."""
    _truth(tmp_path, "a block of expected failures", monkeypatch)
    repo, _, _ = _build(tmp_path, "a block of expected failures", squash=True)
    listed = json.loads(retcon(repo, "hunks", "--json").out)
    ids = {r["path"]: r["id"] for r in listed}
    known, block = ids["grammar.py"], ids["test_check.py"]
    text = (tmp_path / "spec.toml").read_text().replace(
        'message = "Parse alpha"\n', f'message = "Parse alpha"\nhunks = ["{known}:1", "{block}:1-2,4-5"]\n').replace(
        'message = "Parse beta"\n', f'message = "Parse beta"\nhunks = ["{known}:2", "{block}:3"]\n')
    (tmp_path / "spec.toml").write_text(text)
    assert retcon(repo, "spec", "import", str(tmp_path / "spec.toml")).code == 0
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert "it will have no commit of its own" not in res.out and "Empty" not in res.out, res.out
    assert res.code == 3, res.text
    assert "Parse beta" not in repo.log("main..clean")


# Two commits in other languages' shapes, each adding its part of the same places: a Rust enum's
# variant with its doc comment, an arm of its match, a change-log line, a JS test block.
SHAPES_BASE = {
    "error.rs": "pub enum Error {\n    /// Bad name.\n    BadName,\n}\n\nfn say(e: Error) -> &'static str {\n"
                "    match e {\n        Error::BadName => {\n            \"bad name\"\n        }\n    }\n}\n",
    "CHANGELOG.md": "# Changes\n\n## Unreleased\n- Nothing yet.\n",
    "test.js": "test('bad name', () => {\n\tcheck(1);\n});\n",
}
SHAPES = [
    ("Add a bad quote error", {
        "error.rs": "pub enum Error {\n    /// Bad name.\n    BadName,\n\n    /// Bad quote.\n"
                    "    BadQuote(char),\n}\n\nfn say(e: Error) -> &'static str {\n    match e {\n"
                    "        Error::BadName => {\n"
                    "            \"bad name\"\n        }\n        Error::BadQuote(c) => {\n            \"bad quote\"\n"
                    "        }\n    }\n}\n",
        "CHANGELOG.md": "# Changes\n\n## Unreleased\n- Nothing yet.\n- `BadQuote`.\n",
        "test.js": "test('bad name', () => {\n\tcheck(1);\n});\n\ntest('bad quote', () => {\n\tcheck(2);\n});\n"}),
    ("Add a bad space error", {
        "error.rs": "pub enum Error {\n    /// Bad name.\n    BadName,\n\n    /// Bad quote.\n    BadQuote(char),\n\n"
                    "    /// Bad space.\n    BadSpace(char, usize),\n}\n\n"
                    "fn say(e: Error) -> &'static str {\n    match e {\n        Error::BadName => {\n"
                    "            \"bad name\"\n        }\n        Error::BadQuote(c) => {\n            \"bad quote\"\n"
                    "        }\n        Error::BadSpace(c, n) => {\n            \"bad space\"\n        }\n    }\n}\n",
        "CHANGELOG.md": "# Changes\n\n## Unreleased\n- Nothing yet.\n- `BadQuote`.\n- `BadSpace`.\n",
        "test.js": "test('bad name', () => {\n\tcheck(1);\n});\n\ntest('bad quote', () => {\n\tcheck(2);\n});\n\n"
                   "test('bad space', () => {\n\tcheck(3);\n});\n"}),
]


def test_variants_arms_change_log_lines_and_test_blocks_are_atoms(tmp_path, monkeypatch, truth_model):
    """Squashed, each of these hunks holds lines of both commits (xmlparser's, sindresorhus/is'):
    each is split where its commits' lines meet, and a model that knows places each part."""
    _split_and_rebuilt(tmp_path, monkeypatch, "shapes", (SHAPES_BASE, SHAPES), {"error.rs", "CHANGELOG.md", "test.js"})


def _split_and_rebuilt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str,
                       history: tuple[dict[str, str], list[tuple[str, dict[str, str]]]], split: set[str]) -> None:
    """The history squashed, planned by owners-truth with no test command: the hunks of exactly the
    paths `split` are split into atoms, and the run rebuilds each commit's tree."""
    monkeypatch.setitem(HISTORIES, name, history)
    _truth(tmp_path, name, monkeypatch)
    repo, messages, trees = _build(tmp_path, name, squash=True)
    assert retcon(repo, "spec", "rm", "clean").code == 0
    text = (tmp_path / "spec.toml").read_text().replace(f'test = "{TEST}"\n', "")
    (tmp_path / "spec.toml").write_text(text)
    res = retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "-m", "owners-truth", "--no-edit")
    assert res.code == 0, res.text
    rows = json.loads(retcon(repo, "hunks", "--json").out)
    assert {r["path"] for r in rows if ":" in r["id"]} == split, rows
    assert retcon(repo, "run").code == 0
    assert [repo.tree(f"clean~{i}") for i in range(len(messages) - 1, -1, -1)] == trees


# Two commits that each add their part to the same documents: a Markdown section each (is'
# readme), a member each of a TypeScript type (is' `Assert`), an entry each of a doc comment's list
# (xmlparser's "# Errors"), a change log whose new "### Added" list opens with the first
# commit's line and closes with a blank line (xmlparser's CHANGELOG.md), and a variant's doc
# comment the first rewords and the second adds lines to (xmlparser's `InvalidChar`).
DOCS_BASE = {
    "error.rs": "pub enum E {\n    /// A bad character in the stream.\n    BadChar(char),\n}\n",
    "readme.md": "# Checks\n\n##### .name(value)\n\nCheck a name.\n\n## Related\n",
    "assert.ts": "type Assert = {\n\tname: (value: unknown) => asserts value is string;\n};\n",
    "lib.rs": "/// Reads a name.\n///\n/// # Errors\n///\n/// - `BadName`\npub fn read() {}\n",
    "CHANGELOG.md": "# Changes\n\n## Unreleased\n### Changed\n- Nothing.\n",
}
DOCS = [
    ("Add the quote check", {
        "error.rs": "pub enum E {\n    /// A bad character.\n    BadChar(char),\n}\n",
        "readme.md": "# Checks\n\n##### .name(value)\n\nCheck a name.\n\n##### .quote(value)\n\nCheck a quote.\n\n"
                     "## Related\n",
        "assert.ts": "type Assert = {\n\tname: (value: unknown) => asserts value is string;\n"
                     "\tquote: (value: unknown) => asserts value is string;\n};\n",
        "lib.rs": "/// Reads a name.\n///\n/// # Errors\n///\n/// - `BadName`\n/// - `BadQuote`\npub fn read() {}\n",
        "CHANGELOG.md": "# Changes\n\n## Unreleased\n### Added\n- `quote`.\n\n### Changed\n- Nothing.\n"}),
    ("Add the space check", {
        "error.rs": "pub enum E {\n    /// A bad character.\n    ///\n    /// Values: actual.\n    BadChar(char),\n}\n",
        "readme.md": "# Checks\n\n##### .name(value)\n\nCheck a name.\n\n##### .quote(value)\n\nCheck a quote.\n\n"
                     "##### .space(value)\n\nCheck a space.\n\n## Related\n",
        "assert.ts": "type Assert = {\n\tname: (value: unknown) => asserts value is string;\n"
                     "\tquote: (value: unknown) => asserts value is string;\n"
                     "\tspace: (value: unknown) => asserts value is string;\n};\n",
        "lib.rs": "/// Reads a name.\n///\n/// # Errors\n///\n/// - `BadName`\n/// - `BadQuote`\n/// - `BadSpace`\n"
                  "pub fn read() {}\n",
        "CHANGELOG.md": "# Changes\n\n## Unreleased\n### Added\n- `quote`.\n- `space`.\n\n### Changed\n- Nothing.\n"}),
]


def test_sections_type_members_doc_lists_and_a_new_change_log_list_are_atoms(tmp_path, monkeypatch, truth_model):
    """Squashed, each document's one hunk holds lines of both commits: each is split where its
    commits' lines meet (a change log's new list keeps its heading and closing blank line with the
    first entry), and a model that knows rebuilds both commits' trees."""
    _split_and_rebuilt(tmp_path, monkeypatch, "docs", (DOCS_BASE, DOCS),
                       {"readme.md", "assert.ts", "lib.rs", "CHANGELOG.md", "error.rs"})
