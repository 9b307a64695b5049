"""Several specs in one repository: which one a command without NAME means,
`spec rm`, and `abort` of a spec that never ran."""
from __future__ import annotations

import json

from testing.flow import SPEC, feature_repo, retcon
from testing.gitrepo import GitRepo


def plan(repo: GitRepo, spec: str, name: str) -> None:
    path = repo.path.parent / f"{name}.toml"
    path.write_text(spec)
    res = retcon(repo, "plan", "--from-file", str(path), "--no-edit")
    assert res.code == 0, res.text


def two_specs(tmp_path) -> GitRepo:
    """feature-clean (source feature) and other-clean (source other)."""
    repo = feature_repo(tmp_path / "repo")
    repo.git("branch", "other", "feature")
    plan(repo, SPEC, "a")
    plan(repo, SPEC.replace('source = "feature"', 'source = "other"')
         .replace('cleaned = "feature-clean"', 'cleaned = "other-clean"'), "b")
    return repo


def status_name(repo: GitRepo) -> str:
    res = retcon(repo, "status", "--json")
    assert res.code == 0, res.text
    return json.loads(res.out)["name"]


def test_without_name_the_spec_of_the_current_branch(tmp_path):
    repo = two_specs(tmp_path)
    repo.git("checkout", "-q", "other")
    assert status_name(repo) == "other-clean"
    repo.git("checkout", "-q", "feature")
    assert status_name(repo) == "feature-clean"
    assert retcon(repo, "spec", "show").out.startswith('source = "feature"')


def test_on_a_cleaned_branch_its_spec(tmp_path):
    repo = two_specs(tmp_path)
    repo.git("branch", "other-clean", "main")
    repo.git("checkout", "-q", "other-clean")
    assert status_name(repo) == "other-clean"


def test_otherwise_a_usage_error_that_lists_the_specs(tmp_path):
    repo = two_specs(tmp_path)
    res = retcon(repo, "status")      # on main: the source of neither
    assert res.code == 2
    assert "feature-clean" in res.err and "other-clean" in res.err and "Traceback" not in res.err
    # Two specs of the same source: still ambiguous, and said so.
    plan(repo, SPEC.replace('cleaned = "feature-clean"', 'cleaned = "feature-tidy"'), "c")
    repo.git("checkout", "-q", "feature")
    res = retcon(repo, "status")
    assert res.code == 2 and "feature-clean, feature-tidy" in res.err and "other-clean" not in res.err, res.err


def test_spec_rm_deletes_the_spec_and_says_what_it_kept(tmp_path):
    repo = two_specs(tmp_path)
    repo.git("checkout", "-q", "feature")
    assert retcon(repo, "run", "-m", "retcon-paths", "feature-clean").code == 0
    tip = repo.rev("feature-clean")
    res = retcon(repo, "spec", "rm", "feature-clean")
    assert res.code == 0, res.text
    assert "Deleted spec 'feature-clean'" in res.out and "kept" in res.out
    assert repo.git("for-each-ref", "--format=%(refname)", "refs/retcon/") == "refs/retcon/other-clean"
    assert repo.rev("feature-clean") == tip          # the branch is the user's now
    assert "feature-clean" not in retcon(repo, "list").out
    assert status_name(repo) == "other-clean"        # the only spec left
    res = retcon(repo, "spec", "rm", "feature-clean")
    assert res.code == 1 and "no spec named 'feature-clean'" in res.err


def test_spec_rm_refuses_while_a_run_holds_the_lock(tmp_path):
    from git_retcon.git.plumbing import open_repo
    from git_retcon.state.store import Store

    repo = two_specs(tmp_path)
    store = Store(open_repo(str(repo.path)))
    with store.lock("other-clean"):
        res = retcon(repo, "spec", "rm", "other-clean")
    assert res.code == 1 and "is working on 'other-clean'" in res.err, res.text
    assert repo.rev("refs/retcon/other-clean")


def test_abort_of_a_spec_that_never_ran_says_so(tmp_path):
    repo = two_specs(tmp_path)
    before = repo.rev("refs/retcon/other-clean")
    res = retcon(repo, "abort", "other-clean")
    assert res.code == 0
    assert "Nothing to abort" in res.out and "never ran" in res.out, res.text
    assert repo.rev("refs/retcon/other-clean") == before
