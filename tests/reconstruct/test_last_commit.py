"""The last logical commit's tree is the source tip's: there is nothing to judge, so plain code
takes every remaining change and no model is called for its extraction."""
from __future__ import annotations

import json

import pytest

from testing.flow import SPEC, call, feature_repo, retcon, take, turn


@pytest.fixture
def project(tmp_path):
    repo = feature_repo(tmp_path / "repo")
    (tmp_path / "spec.toml").write_text(SPEC)
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit").code == 0
    return repo


def test_the_last_commit_is_taken_by_plain_code_without_a_model_call(project, scripted):
    # No script for commit 3: a model call for it would find no turn to play and stop stuck.
    log = scripted({"1/extract": take("util.py"), "2/extract": take("app.py")})
    res = retcon(project, "run", "-m", "scripted")
    assert res.code == 0, res.text
    assert "Taking every remaining change: the last commit ends at the source's tree" in res.out
    prompts = [json.loads(ln)["prompt"] for ln in log.read_text().splitlines()]
    assert prompts and not any(p.startswith("Commit 3/3") for p in prompts)
    assert project.log("main..feature-clean") == ["docs: explain main", "app: use two()", "util: add two()"]
    assert project.tree("feature-clean") == project.tree("feature")
    last = project.git("diff", "--name-only", "feature-clean~1", "feature-clean").split()
    assert last == ["README", "notes/todo.txt"]
    note = json.loads(project.git("notes", "--ref=retcon", "show", project.rev("feature-clean")))
    assert (note["index"], note["kind"], note["test"]) == (3, "initial", "pass")
    assert note["tokens"] == {"input": 0, "output": 0} and note["model_calls"] == 0
    rows = json.loads(retcon(project, "status", "--json").out)["commits"]
    assert rows[2]["tokens"] == {"input": 0, "output": 0} and rows[0]["tokens"]["input"] > 0


def test_a_last_commit_left_with_nothing_is_complete_with_no_commit(project, scripted):
    # Commit 2 takes everything left, and confirms it when create_commit's guard names that.
    scripted({"1/extract": take("util.py"),
              "2/extract": [*take(""), turn(call("create_commit", confirm="the docs commit is all that is left"))]})
    res = retcon(project, "run", "-m", "scripted")
    assert res.code == 0, res.text
    assert "Nothing left for it: no change of the source is left" in res.out
    assert project.tree("feature-clean") == project.tree("feature")
    assert project.log("main..feature-clean") == ["app: use two()", "util: add two()"]
    rows = json.loads(retcon(project, "status", "--json").out)["commits"]
    assert [(r["state"], len(r["commits"])) for r in rows] == [("complete", 1), ("complete", 1), ("complete", 0)]
    assert retcon(project, "check").code == 0
