"""The undo log is read as untrusted: a refs/retcon-undo/NAME that is not a record, or a record
with the wrong types, is one clear error for undo (naming the ref and how to clear it), while
the commands that only append to it go on; a record that names a ref git-retcon does not own
(the source branch, a tag) puts nothing back."""
from __future__ import annotations

import json

import pytest

from testing.fixcase import make
from testing.flow import retcon, take

LOG = "refs/retcon-undo/feature-clean"
CLEAR = f"git update-ref -d {LOG}"


@pytest.fixture
def done(tmp_path, scripted):
    """A complete run: app.py's commit, the fix plain code committed, the docs."""
    repo = make(tmp_path, docs=0)
    scripted({"1/extract": take("app.py")})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    return repo


def record(repo, doc: object, parents: list[str] = ()) -> str:
    """A commit whose op.json is doc, as the undo log's tip."""
    blob = repo.git("hash-object", "-w", "--stdin", input=json.dumps(doc))
    tree = repo.git("mktree", input=f"100644 blob {blob}\top.json\n")
    args = [a for p in parents for a in ("-p", p)]
    commit = repo.git("commit-tree", tree, *args, "-m", "retcon run")
    repo.git("update-ref", LOG, commit)
    return commit


def blob_log(repo) -> None:
    repo.git("update-ref", LOG, repo.git("hash-object", "-w", "--stdin", input="not a record\n"))


def damaged(res) -> None:
    assert res.code == 1, res.text
    assert "internal error" not in res.err and "Traceback" not in res.err
    assert LOG in res.err and CLEAR in res.err, res.err
    assert len(res.err.strip().splitlines()) == 1, res.err


def test_a_log_that_is_a_blob_is_one_clear_error_and_appending_commands_go_on(done):
    repo = done
    blob_log(repo)
    branch = repo.rev("feature-clean")
    damaged(retcon(repo, "undo"))
    assert repo.rev("feature-clean") == branch
    res = retcon(repo, "stack")
    assert res.code == 0, res.text
    assert repo.rev("feature-clean-2") == branch
    # The stack was recorded afresh, and undo takes it back.
    res = retcon(repo, "undo")
    assert res.code == 0 and "Undid `stack`" in res.out, res.text
    assert repo.git("rev-parse", "-q", "--verify", "feature-clean-2", check=False) == ""
    for args in (["absorb"], ["abort", "feature-clean"]):
        blob_log(repo)
        res = retcon(repo, *args)
        assert res.code == 0 and "internal error" not in res.err, (args, res.text)
    blob_log(repo)
    res = retcon(repo, "spec", "rm", "feature-clean")
    assert res.code == 0, res.text
    assert retcon(repo, "undo", "feature-clean").code == 0           # the spec is back
    assert retcon(repo, "status").code == 0


@pytest.mark.parametrize("doc", [
    {"op": 5, "at": "yesterday", "before": ["refs/heads/feature-clean"], "after": None, "previous": 7},
    {"op": "run", "at": 1.0, "before": {"refs/heads/feature-clean": 12}, "after": None, "previous": None},
    {"op": "run", "at": 1.0, "before": {"refs/heads/feature-clean": "not-a-sha"}, "after": {}, "previous": None},
    ["not", "an", "object"],
])
def test_a_record_with_the_wrong_types_is_one_clear_error(done, doc):
    repo = done
    bad = record(repo, doc)
    branch = repo.rev("feature-clean")
    damaged(retcon(repo, "undo"))
    assert repo.rev("feature-clean") == branch and repo.rev(LOG) == bad
    # Appending goes on, on top of it: the new operation is undone, then the damage is said again.
    res = retcon(repo, "abort", "feature-clean")
    assert res.code == 0, res.text
    res = retcon(repo, "undo")
    assert res.code == 0 and repo.rev("feature-clean") == branch, res.text
    damaged(retcon(repo, "undo"))


def test_a_record_naming_the_source_branch_or_a_tag_puts_nothing_back(done):
    repo = done
    repo.git("tag", "v1", "feature")
    feature, main, spec = repo.rev("feature"), repo.rev("main"), repo.rev("refs/retcon/feature-clean")
    record(repo, {"op": "run", "at": 1.0, "previous": None,
                  "before": {"refs/heads/feature": main, "refs/tags/v1": None, "refs/retcon/feature-clean": spec},
                  "after": {"refs/heads/feature": feature, "refs/tags/v1": feature,
                            "refs/retcon/feature-clean": spec}}, [main, feature])
    res = retcon(repo, "undo")
    damaged(res)
    assert "refs/heads/feature" in res.err and "refs/tags/v1" in res.err
    assert repo.rev("feature") == feature and repo.rev("v1") == feature
