"""`git retcon undo`: the last operation that changed a spec or its branch is taken back,
refs compare-and-swapped to their values before it, only when nothing else moved them."""
from __future__ import annotations

import json

import pytest

from testing.fixcase import make
from testing.flow import call, retcon, take, turn


def refs(repo):
    return repo.rev("refs/retcon/feature-clean"), repo.git("rev-parse", "-q", "--verify", "feature-clean", check=False)


def state(repo):
    return [c["state"] for c in json.loads(retcon(repo, "status", "--json").out)["commits"]]


@pytest.fixture
def stuck(tmp_path, scripted):
    """Commit 1 stuck in its fix loop (the brief's candidate alone fails: the model is asked, and
    gives up), its commit on the cleaned branch."""
    repo = make(tmp_path, docs=0, extra=True)
    scripted({"1/extract": take("app.py"), "1/fix": [turn(call("stuck", summary="app.py needs util.two()"))],
              "2/extract": take("README")})
    planned = refs(repo)
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 3, res.text
    return repo, planned


def test_undo_takes_back_a_run(stuck):
    repo, planned = stuck
    res = retcon(repo, "undo")
    assert res.code == 0, res.text
    assert res.out.startswith("Undid `run` of ") and "branch feature-clean deleted" in res.out
    assert len(res.out.strip().splitlines()) == 1
    assert refs(repo) == (planned[0], "")
    assert state(repo) == ["pending", "pending"]
    # Nothing of the run is left in the way: the next run starts afresh.
    assert retcon(repo, "run", "-m", "scripted").code == 3
    assert state(repo) == ["stuck", "pending"]


def test_undo_takes_back_a_resolve_and_a_redo(stuck):
    repo, _ = stuck
    before = refs(repo)
    assert retcon(repo, "resolve", "--redo", "-m", "again").code == 0
    assert refs(repo)[1] == repo.rev("main")
    res = retcon(repo, "undo")
    assert res.code == 0, res.text
    assert refs(repo) == before and state(repo) == ["stuck", "pending"]
    assert retcon(repo, "resolve", "-m", "fixed by hand").code == 0
    assert retcon(repo, "undo").code == 0
    assert refs(repo) == before


def test_undo_again_takes_back_the_operation_before(stuck):
    repo, planned = stuck
    assert retcon(repo, "resolve", "-m", "x").code == 0
    assert retcon(repo, "undo").code == 0
    assert state(repo) == ["stuck", "pending"]
    assert retcon(repo, "undo").code == 0         # the run
    assert refs(repo) == (planned[0], "")
    assert retcon(repo, "undo").code == 0         # the plan: the spec is gone
    assert "no specs yet" in retcon(repo, "status").err
    res = retcon(repo, "undo", "feature-clean")
    assert res.code == 1 and "nothing to undo for 'feature-clean'" in res.err


def test_undo_refuses_what_something_else_moved_since(stuck, tmp_path):
    repo, _ = stuck
    repo.git("switch", "-q", "feature-clean")
    repo.commit("mine", {"NOTES.txt": "mine\n"})
    repo.git("switch", "-q", "main")
    before = refs(repo)
    res = retcon(repo, "undo")
    assert res.code == 1, res.text
    assert "branch feature-clean moved since `run`" in res.err and "nothing was changed" in res.err
    assert refs(repo) == before


def test_undo_refuses_a_branch_checked_out(stuck, tmp_path):
    repo, _ = stuck
    repo.git("worktree", "add", "-q", str(tmp_path / "there"), "feature-clean")
    before = refs(repo)
    res = retcon(repo, "undo")
    assert res.code == 1 and "is checked out in" in res.err, res.text
    assert refs(repo) == before


def test_undo_takes_back_abort_import_edit_and_spec_rm(stuck, tmp_path):
    repo, _ = stuck
    before = refs(repo)
    assert retcon(repo, "abort", "feature-clean").code == 0
    assert refs(repo)[1] == ""
    assert retcon(repo, "undo").code == 0
    assert refs(repo) == before and state(repo) == ["stuck", "pending"]

    exported = tmp_path / "s.toml"
    assert retcon(repo, "spec", "export", "-o", str(exported)).code == 0
    exported.write_text(exported.read_text().replace('message = "docs: explain main"', 'message = "docs"'))
    assert retcon(repo, "spec", "import", str(exported)).code == 0
    assert retcon(repo, "undo").code == 0
    assert refs(repo) == before

    assert retcon(repo, "spec", "rm", "feature-clean").code == 0
    res = retcon(repo, "undo", "feature-clean")
    assert res.code == 0, res.text
    assert refs(repo) == before


def test_an_operation_that_changes_nothing_leaves_nothing_to_undo(stuck):
    repo, _ = stuck
    assert retcon(repo, "resolve", "-m", "x").code == 0
    assert retcon(repo, "run", "--dry-run").code == 0
    res = retcon(repo, "resolve", "-m", "again")      # refused: nothing is stuck
    assert res.code == 1
    res = retcon(repo, "undo")
    assert res.out.startswith("Undid `resolve`"), res.text


def test_squash_is_undone(tmp_path, scripted):
    repo = make(tmp_path, docs=0)
    scripted({"1/extract": take("app.py"), "1/fix": take("util.py"), "2/extract": take("README")})
    assert retcon(repo, "run", "-m", "scripted").code == 0
    before = refs(repo)
    assert retcon(repo, "squash").code == 0
    assert refs(repo)[1] != before[1]
    assert retcon(repo, "undo").code == 0
    assert refs(repo) == before
    assert retcon(repo, "check").code == 1     # the WIP commit is back
