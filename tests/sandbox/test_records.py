"""Build/test records are kept per (tree, command): specs with other commands on the same
trees never erase each other's records (ARCHITECTURE.md, "Where state lives")."""
from __future__ import annotations

import json

from testing.flow import SPEC, feature_repo, retcon
from testing.gitrepo import GitRepo

TEST = "python3 -c 'import app; app.main()'"
OTHER_TEST = "python3 -c 'import app, util; app.main()'"


def plan(repo: GitRepo, spec: str, name: str) -> None:
    path = repo.path.parent / f"{name}.toml"
    path.write_text(spec)
    res = retcon(repo, "plan", "--from-file", str(path), "--no-edit")
    assert res.code == 0, res.text


def two_specs_run(tmp_path) -> GitRepo:
    """feature-clean and feature-tidy: the same source, so the same final tree, tested
    with different commands; both run to the end."""
    repo = feature_repo(tmp_path / "repo")
    plan(repo, SPEC, "clean")
    plan(repo, SPEC.replace('cleaned = "feature-clean"', 'cleaned = "feature-tidy"')
         .replace(TEST, OTHER_TEST), "tidy")
    for name in ("feature-clean", "feature-tidy"):
        res = retcon(repo, "run", "-m", "retcon-paths", name)
        assert res.code == 0, res.text
    assert repo.tree("feature-clean") == repo.tree("feature-tidy") == repo.tree("feature")
    return repo


def records(repo: GitRepo, rev: str) -> dict:
    return json.loads(repo.git("notes", "--ref=retcon-tests", "show", repo.tree(rev)))


def test_two_specs_on_the_same_final_tree_keep_both_records(tmp_path):
    repo = two_specs_run(tmp_path)
    commands = records(repo, "feature-clean")["commands"]
    assert commands[TEST]["result"] == "pass" and commands[OTHER_TEST]["result"] == "pass"
    for name in ("feature-clean", "feature-tidy"):
        res = retcon(repo, "check", name)
        assert res.code == 0, res.text
    status = json.loads(retcon(repo, "status", "--json", "feature-clean").out)
    assert [(c["build"], c["test"]) for c in status["commits"]] == [("pass", "pass")] * 3


def test_check_rerun_of_one_spec_keeps_the_others_records(tmp_path):
    repo = two_specs_run(tmp_path)
    res = retcon(repo, "check", "--rerun", "feature-tidy")
    assert res.code == 0, res.text
    res = retcon(repo, "check", "feature-clean")
    assert res.code == 0, res.text
    assert TEST in records(repo, "feature-clean")["commands"]


def test_records_of_the_older_one_per_kind_shape_are_read_and_kept(tmp_path):
    repo = feature_repo(tmp_path / "repo")
    plan(repo, SPEC, "clean")
    assert retcon(repo, "run", "-m", "retcon-paths").code == 0
    # Rewrite every record as an older version wrote it: {"build": {...}, "test": {...}}.
    for sha in repo.log("main..feature-clean", "%H"):
        by_kind = {rec["kind"]: rec for rec in records(repo, sha)["commands"].values()}
        old = {kind: {k: v for k, v in rec.items() if k != "kind"} for kind, rec in by_kind.items()}
        repo.git("notes", "--ref=retcon-tests", "add", "-f", "-m", json.dumps(old), repo.tree(sha))
    assert "commands" not in records(repo, "feature-clean")
    res = retcon(repo, "check")
    assert res.code == 0, res.text
    # A spec with another test command on the same trees adds its record beside them.
    plan(repo, SPEC.replace('cleaned = "feature-clean"', 'cleaned = "feature-tidy"')
         .replace(TEST, OTHER_TEST), "tidy")
    res = retcon(repo, "run", "-m", "retcon-paths", "feature-tidy")
    assert res.code == 0, res.text
    assert sorted(records(repo, "feature-clean")["commands"]) == sorted(
        ["python3 -m py_compile app.py util.py", TEST, OTHER_TEST])
    for name in ("feature-clean", "feature-tidy"):
        res = retcon(repo, "check", name)
        assert res.code == 0, res.text
