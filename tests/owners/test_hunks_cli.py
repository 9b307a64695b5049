"""`git retcon hunks`: every hunk of a spec's diff, offline, with its commit and who decided."""
from __future__ import annotations

import json

from testing.flow import call, retcon
from testing.histories import KEYWORD_SPEC, keyword_repo

PLAIN = 'owners = "questions"\n' + (
    KEYWORD_SPEC.replace("add: accept strings", "First").replace("scale: accept a float factor", "Second")
         .replace("clamp: swap bounds given in the wrong order", "Third"))


def _imported(tmp_path, text):
    repo = keyword_repo(tmp_path / "r")
    (tmp_path / "spec.toml").write_text(text)
    assert retcon(repo, "spec", "import", str(tmp_path / "spec.toml")).code == 0
    return repo


def _listed(repo):
    out = retcon(repo, "hunks", "--json")
    assert out.code == 0, out.text
    return json.loads(out.out)


def test_the_listing_says_user_rule_or_none_without_a_model(tmp_path):
    text = (PLAIN.replace('message = "First"', 'message = "First"\npaths = ["test_calc.py"]')
            .replace('message = "Third"', 'message = "Clamp: swap bounds"'))
    repo = _imported(tmp_path, text)
    rows = _listed(repo)
    assert [(r["path"], r["commit"], r["who"]) for r in rows] == [
        ("calc.py", None, "none"), ("calc.py", None, "none"), ("calc.py", 3, "rule"), ("test_calc.py", 1, "user")]
    assert rows[0]["lines"] == "-1,0 +2,1" and rows[0]["added"] == 1 and rows[0]["removed"] == 0
    text_out = retcon(repo, "hunks").out.splitlines()
    assert text_out[0].split() == ["id", "path", "lines", "+/-", "commit", "who"]
    assert rows[3]["id"] in text_out[4] and "user: commit 1's paths" in text_out[4]
    assert "-" in text_out[1].split()


def test_after_run_the_listing_says_what_the_questions_decided(tmp_path, scripted):
    scripted({"1/owner": [{"text": "1"}], "2/owner": [{"text": "2"}], "3/owner": [{"text": "3"}],
              "4/owner": [{"text": "3"}], "*/extract": [{"calls": [call("create_commit")]}]})
    repo = _imported(tmp_path, PLAIN)
    assert retcon(repo, "run", "-m", "scripted").code == 0
    rows = _listed(repo)
    assert [(r["commit"], r["who"]) for r in rows] == [(1, "model"), (2, "model"), (3, "model"), (3, "model")]


def test_plan_from_a_file_with_a_model_places_the_hunks_by_questions(tmp_path, scripted):
    log = scripted({"1/owner": [{"text": "1"}], "2/owner": [{"text": "2"}], "3/owner": [{"text": "3"}],
                    "4/owner": [{"text": "3"}]})
    repo = keyword_repo(tmp_path / "r")
    (tmp_path / "spec.toml").write_text(PLAIN.replace('owners = "questions"\n', ""))
    out = retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "-m", "scripted", "--no-edit")
    assert out.code == 0, out.text
    assert "by questions to scripted" in out.out
    assert len([line for line in log.read_text().splitlines() if '"/owner' in line or "/owner/" in line]) == 8
    assert [(r["commit"], r["who"]) for r in _listed(repo)] == [(1, "model"), (2, "model"), (3, "model"),
                                                                (3, "model")]
    assert retcon(repo, "undo").code == 0
    assert retcon(repo, "hunks").code == 1      # the plan was the spec's first save: undo removed it


def test_after_a_placement_a_rules_row_names_the_rule(tmp_path, scripted):
    """Who decided is data kept with the placement: a hunk a rule placed says which rule, not
    'the last placement by questions' (issue 37: every hunk said that, the model's and the rules')."""
    scripted({"*/owner": [{"text": "1"}]})
    repo = keyword_repo(tmp_path / "r")
    (tmp_path / "spec.toml").write_text(PLAIN.replace('owners = "questions"\n', "")
                                        .replace('message = "Third"', 'message = "Clamp: swap bounds"'))
    out = retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "-m", "scripted", "--no-edit")
    assert out.code == 0, out.text
    rows = _listed(repo)
    ruled = [r for r in rows if r["who"] == "rule"]
    assert ruled and all("last placement" not in r["why"] for r in ruled), rows
    assert any("commit 3's message names what it changes (clamp)" in r["why"] for r in ruled), rows
    assert "rule: commit 3's message names" in retcon(repo, "hunks").out
