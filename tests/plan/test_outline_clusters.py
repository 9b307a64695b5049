"""`plan --outline -m MODEL`: plain code proposes the commits from the diff (plan/clusters.py), the
model only names them; what no tie settles is placed by the owners' questions."""
from __future__ import annotations

import json

import pytest

from testing.flow import retcon
from testing.gitrepo import GitRepo
from testing.owners_model import plan_outline, questions

NAMES = json.dumps(["Add hex escapes to strings", "Allow newlines in inline tables"])
XFAIL = 'XFAIL = {\n    "inline-newline",\n    "escape-hex",\n    "other-thing",\n}\n'


def two_features(path) -> GitRepo:
    """tomli's shape, squashed into one "wip" commit: two features, each a parser function, a pair
    of data files in a folder of its own, and its name taken out of one list of expected failures."""
    repo = GitRepo.init(path)
    repo.commit("base", {"src/tables.py": "def parse_table(src):\n    return {}\n",
                         "src/strings.py": "def parse_string(src):\n    return src\n",
                         "tests/test_data.py": XFAIL,
                         "tests/data/other/other-thing.toml": "x = 1\n"})
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("wip", {
        "src/tables.py": "def parse_table(src):\n    return {}\n\n\ndef parse_inline_table(src):\n"
                         "    return dict(x.split('=') for x in src.strip('{}').split(','))\n",
        "src/strings.py": "def parse_string(src):\n    return src\n\n\ndef parse_hex_escape(src):\n"
                          "    return chr(int(src[2:], 16))\n",
        "tests/data/inline-table/inline-newline.toml": "t = {\n  a = 1 }\n",
        "tests/data/inline-table/inline-newline.json": '{"t": {"a": 1}}\n',
        "tests/data/escape/escape-hex.toml": 's = "\\x41"\n',
        "tests/data/escape/escape-hex.json": '{"s": "A"}\n',
        "tests/test_data.py": XFAIL.replace('    "inline-newline",\n    "escape-hex",\n', "")})
    repo.git("checkout", "-q", "main")
    return repo


def test_plain_code_proposes_the_commits_and_the_model_names_them(tmp_path, owners_models, monkeypatch):
    """Each feature's code, its data files and the entry of the list that names them make one commit;
    the model is asked only for the messages."""
    monkeypatch.setenv("RETCON_OWNERS_NAMES", NAMES)
    repo = two_features(tmp_path / "r")
    out = plan_outline(repo)
    assert out.code == 0, out.text
    assert "Plain code proposed 2 logical commits from the diff, owners-last named them" in out.out
    assert questions(owners_models, "outline") == []
    asked = questions(owners_models, "name")[0]
    assert "Commit 1 (+6 -1): src/strings.py, tests/data/escape/ (2 data files), tests/test_data.py" in asked["prompt"]
    assert "    adds: parse_hex_escape" in asked["prompt"]
    spec = json.loads(retcon(repo, "status", "--json").out)
    assert [c["message"] for c in spec["commits"]] == ["Add hex escapes to strings", "Allow newlines in inline tables"]
    rows = json.loads(retcon(repo, "hunks", "--json").out)
    placed = {(r["path"], r["lines"]): r["commit"] for r in rows}
    assert placed[("src/strings.py", "-2,0 +3,4")] == 1 and placed[("src/tables.py", "-2,0 +3,4")] == 2
    assert {p: c for (p, _), c in placed.items() if p.startswith("tests/data/")} == {
        "tests/data/escape/escape-hex.toml": 1, "tests/data/escape/escape-hex.json": 1,
        "tests/data/inline-table/inline-newline.toml": 2, "tests/data/inline-table/inline-newline.json": 2}
    entries = {r["lines"]: r["commit"] for r in rows if r["path"] == "tests/test_data.py"}
    assert entries == {"-2,1 +1,0": 2, "-3,1 +1,0": 1}      # "inline-newline", "escape-hex"
    assert all(r["who"] == "rule" and "plain code's cluster" in r["why"] for r in rows)
    assert 'hints = "Files: src/strings.py, tests/data/escape/escape-hex.json' in retcon(repo, "spec", "export").out


def test_each_commit_is_named_by_a_question_of_its_own(tmp_path, owners_models, monkeypatch):
    """The 1.5B model, asked for every message in one list, wrote one about the task and named the
    rest one commit off: each commit is asked for alone, the whole list shown."""
    monkeypatch.setenv("RETCON_OWNERS_NAMES", NAMES)
    repo = two_features(tmp_path / "r")
    assert plan_outline(repo).code == 0
    first, second = questions(owners_models, "name")
    assert "Write the message of commit 1 only" in first["prompt"]
    assert "Write the message of commit 2 only" in second["prompt"]
    assert first["prompt"].split("Write the message")[0] == second["prompt"].split("Write the message")[0]


def test_a_commit_left_unnamed_is_named_by_its_files(tmp_path, owners_models, monkeypatch):
    """A model that names one commit of two, and not the other when asked again, leaves that one
    named by its files."""
    monkeypatch.setenv("RETCON_OWNERS_NAMES", json.dumps(["Add hex escapes to strings"]))
    repo = two_features(tmp_path / "r")
    out = plan_outline(repo)
    assert out.code == 0, out.text
    asked = questions(owners_models, "name")
    assert len(asked) == 3 and "Your last reply could not be used" in asked[2]["prompt"]
    messages = [c["message"] for c in json.loads(retcon(repo, "status", "--json").out)["commits"]]
    assert messages[0] == "Add hex escapes to strings"
    assert messages[1].startswith("Change src/tables.py, tests/data/inline-table/")
    assert ("Commit 2: owners-last gave no usable name, asked twice; it is named by its files "
            "(`git retcon spec edit feature-clean` renames it)") in out.out


@pytest.mark.parametrize("names", [[None, None], ["", "wip"]])
def test_a_model_that_names_nothing_is_refused_saving_nothing(tmp_path, owners_models, monkeypatch, names):
    monkeypatch.setenv("RETCON_OWNERS_NAMES", json.dumps(names))
    repo = two_features(tmp_path / "r")
    out = plan_outline(repo)
    assert out.code == 1
    assert "named none of the 2 commits plain code proposed" in out.err
    assert "git retcon plan --from-file FILE -m MODEL" in out.err
    assert len(questions(owners_models, "name")) == 4       # each asked twice
    assert repo.git("for-each-ref", "refs/retcon") == ""


def test_more_commits_than_max_commits_are_proposed_by_the_model(tmp_path, owners_models, monkeypatch):
    """Plain code's two commits are more than --max-commits 1 allows: the model proposes them, as
    before plain code did."""
    monkeypatch.setenv("RETCON_OWNERS_OUTLINE", json.dumps({"commits": [{"message": "Parse more", "holds": "src"}]}))
    repo = two_features(tmp_path / "r")
    out = plan_outline(repo, "--max-commits", "1")
    assert out.code == 0, out.text
    assert questions(owners_models, "name") == [] and len(questions(owners_models, "outline")) == 1
    assert [c["message"] for c in json.loads(retcon(repo, "status", "--json").out)["commits"]] == ["Parse more"]


def test_a_name_that_repeats_the_question_is_not_used(tmp_path, owners_models, monkeypatch):
    """The 1.5B model named p-map's second commit with the question's own words ("Grouped changes
    into 5 commits, each holding what belongs together..."): asked again, then named by its files."""
    echo = "Grouped changes into 2 commits, each holding what belongs together (a definition and its"
    monkeypatch.setenv("RETCON_OWNERS_NAMES", json.dumps(["Add hex escapes to strings", echo]))
    repo = two_features(tmp_path / "r")
    out = plan_outline(repo)
    assert out.code == 0, out.text
    asked = questions(owners_models, "name")
    assert len(asked) == 3 and "Your last reply could not be used" in asked[2]["prompt"]
    messages = [c["message"] for c in json.loads(retcon(repo, "status", "--json").out)["commits"]]
    assert messages[0] == "Add hex escapes to strings"
    assert messages[1].startswith("Change src/tables.py, tests/data/inline-table/"), messages
