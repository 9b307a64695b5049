"""`git retcon push` / `pull`: a run's state between two clones through a bare remote."""
from __future__ import annotations

import json

from testing.cleaned import (
    bare_remote,
    edit_spec,
    finished,
    git_push,
    remote_refs,
    stuck,
    unstick,
)
from testing.flow import retcon
from testing.gitrepo import GitRepo


def clone(remote: GitRepo, path) -> GitRepo:
    GitRepo(path.parent).git("clone", "-q", str(remote.path), str(path))
    return GitRepo(path)


def config(repo: GitRepo) -> str:
    return repo.git("config", "--local", "--list")


def test_finished_run_pushed_then_checked_in_another_clone(tmp_path):
    a = finished(tmp_path / "a")
    remote = bare_remote(a, tmp_path / "remote.git")
    assert git_push(a, "origin", "main", "feature").code == 0
    before = config(a)
    res = retcon(a, "push")
    assert res.code == 0, res.text
    assert "Pushed to origin:" in res.out and "refs/retcon/feature-clean" in res.out
    refs = remote_refs(remote)
    assert refs["refs/retcon/feature-clean"] == a.rev("refs/retcon/feature-clean")
    assert refs["refs/retcon-branches/feature-clean"] == a.rev("feature-clean")
    assert refs["refs/notes/retcon"] == a.rev("refs/notes/retcon")
    assert refs["refs/notes/retcon-tests"] == a.rev("refs/notes/retcon-tests")
    assert "refs/heads/feature-clean" not in refs  # state, not a published branch
    assert config(a) == before
    again = retcon(a, "push", "origin")
    assert again.code == 0 and "origin is up to date" in again.out

    b = clone(remote, tmp_path / "b")
    before = config(b)
    res = retcon(b, "pull")
    assert res.code == 0, res.text
    assert "spec 'feature-clean': created" in res.out and "branch 'feature-clean': created" in res.out
    assert "spec 'feature-clean' needs branch 'feature' here: git branch feature origin/feature" in res.out
    assert config(b) == before
    b.git("branch", "feature", "origin/feature")
    assert b.rev("feature-clean") == a.rev("feature-clean")
    assert b.git("notes", "--ref=retcon-tests", "show", b.tree("feature-clean")) == \
        a.git("notes", "--ref=retcon-tests", "show", a.tree("feature-clean"))
    res = retcon(b, "check")
    assert res.code == 0, res.text
    assert retcon(b, "pull").out.strip() == "Already up to date with origin."


def test_colleague_resumes_a_stuck_run(tmp_path):
    a = stuck(tmp_path / "a")
    remote = bare_remote(a, tmp_path / "remote.git")
    assert git_push(a, "origin", "main", "feature").code == 0
    assert retcon(a, "hooks", "install").code == 0  # state pushes pass the hook
    assert retcon(a, "push").code == 0

    b = clone(remote, tmp_path / "b")
    b.git("branch", "feature", "origin/feature")
    assert retcon(b, "pull").code == 0
    assert "feature-clean: stuck" in retcon(b, "status").out
    unstick(b)
    assert retcon(b, "check").code == 0
    assert retcon(b, "push").code == 0

    res = retcon(a, "pull", "origin")
    assert res.code == 0, res.text
    assert "spec 'feature-clean': fast-forwarded" in res.out
    assert "branch 'feature-clean': fast-forwarded" in res.out
    assert "refs/notes/retcon-tests: fast-forwarded" in res.out
    assert a.rev("feature-clean") == b.rev("feature-clean")
    assert retcon(a, "check").code == 0
    assert git_push(a, "origin", "feature-clean").code == 0


def test_diverged_spec_is_refused_and_says_how_to_pick_a_side(tmp_path):
    a = stuck(tmp_path / "a")
    remote = bare_remote(a, tmp_path / "remote.git")
    assert git_push(a, "origin", "main", "feature").code == 0
    assert retcon(a, "push").code == 0
    b = clone(remote, tmp_path / "b")
    b.git("branch", "feature", "origin/feature")
    assert retcon(b, "pull").code == 0
    # Both edit the spec, each in their own clone.
    edit_spec(a, lambda t: t.replace('hints = "Only util.py."', 'hints = "A says: only util.py."'))
    edit_spec(b, lambda t: t.replace('hints = "Only util.py."', 'hints = "B says: only util.py."'))
    assert retcon(a, "push").code == 0
    pushed = remote.rev("refs/retcon/feature-clean")
    res = retcon(b, "push")
    assert res.code == 1
    assert "origin has state this clone lacks (refs/retcon/feature-clean" in res.err
    assert "run `git retcon pull origin`, then push again" in res.err
    assert remote.rev("refs/retcon/feature-clean") == pushed
    mine = b.rev("refs/retcon/feature-clean")
    res = retcon(b, "pull")
    assert res.code == 1
    assert ("spec 'feature-clean' changed both here and on origin: keep theirs with "
            f"`git update-ref refs/retcon/feature-clean {pushed}`") in res.err
    assert "or yours with `git push origin +refs/retcon/feature-clean:refs/retcon/feature-clean`" in res.err
    assert b.rev("refs/retcon/feature-clean") == mine  # nothing changed
    assert "retcon-pull" not in b.git("for-each-ref")  # nor left behind
    b.git("update-ref", "refs/retcon/feature-clean", pushed)
    assert retcon(b, "pull").code == 0
    assert "A says" in retcon(b, "spec", "show").out


def test_notes_added_on_both_sides_are_merged(tmp_path):
    a = finished(tmp_path / "a")
    remote = bare_remote(a, tmp_path / "remote.git")
    assert git_push(a, "origin", "main", "feature").code == 0
    assert retcon(a, "push").code == 0
    b = clone(remote, tmp_path / "b")
    assert retcon(b, "pull").code == 0
    # Each side records something about the same commit, and B about one more.
    base, tip = a.rev("main"), a.rev("feature-clean")
    a.git("notes", "--ref=retcon", "add", "-m", json.dumps({"reviewed": "alice"}), base)
    b.git("notes", "--ref=retcon", "add", "-m", json.dumps({"benchmark": 1.5}), base)
    extra = json.loads(b.git("notes", "--ref=retcon", "show", tip)) | {"seen": True}
    b.git("notes", "--ref=retcon", "add", "-f", "-m", json.dumps(extra), tip)
    assert retcon(a, "push").code == 0
    assert retcon(b, "push").code == 1  # B must pull A's notes first
    b_notes = b.rev("refs/notes/retcon")
    res = retcon(b, "pull")
    assert res.code == 0, res.text
    assert "refs/notes/retcon: merged (1 notes changed on both sides, keys combined)" in res.out
    assert json.loads(b.git("notes", "--ref=retcon", "show", base)) == {"benchmark": 1.5, "reviewed": "alice"}
    assert json.loads(b.git("notes", "--ref=retcon", "show", tip))["seen"] is True
    merged = b.rev("refs/notes/retcon")
    for side in (a.rev("refs/notes/retcon"), b_notes):  # a merge: both histories kept
        b.git("merge-base", "--is-ancestor", side, merged)
    assert retcon(b, "push").code == 0
    assert retcon(a, "pull").code == 0
    assert json.loads(a.git("notes", "--ref=retcon", "show", base))["benchmark"] == 1.5
    assert retcon(a, "check").code == 0


def test_push_without_a_remote_or_specs_says_what_to_do(tmp_path):
    a = finished(tmp_path / "a")
    res = retcon(a, "push")
    assert res.code == 1 and "this repository has no remote: add one with `git remote add NAME URL`" in res.err
    bare_remote(a, tmp_path / "remote.git")
    res = retcon(a, "pull", "upstream")
    assert res.code == 1 and "no remote named 'upstream'" in res.err
    res = retcon(a, "pull")
    assert res.code == 0 and "origin has no git-retcon state" in res.out
    empty = GitRepo.init(tmp_path / "empty")
    bare_remote(empty, tmp_path / "remote2.git")
    res = retcon(empty, "push")
    assert res.code == 1 and "no specs to push" in res.err


def test_pull_creates_only_the_branches_of_the_specs_it_pulls(tmp_path):
    a = finished(tmp_path / "a")
    remote = bare_remote(a, tmp_path / "remote.git")
    assert git_push(a, "origin", "main", "feature").code == 0
    assert retcon(a, "push").code == 0
    # Something under refs/retcon-branches/ that no spec names (pushed by hand, or by a
    # spec deleted since): not git-retcon's to make into a branch here.
    assert git_push(a, "origin", "main:refs/retcon-branches/release").code == 0
    b = clone(remote, tmp_path / "b")
    res = retcon(b, "pull")
    assert res.code == 0, res.text
    assert "branch 'feature-clean': created" in res.out
    assert "release" not in res.out
    heads = b.git("for-each-ref", "--format=%(refname)", "refs/heads/")
    assert "refs/heads/release" not in heads and "refs/heads/feature-clean" in heads
    assert "retcon-pull" not in b.git("for-each-ref")


def test_pull_never_moves_a_branch_that_is_not_git_retcons_and_changes_nothing(tmp_path):
    a = finished(tmp_path / "a")
    remote = bare_remote(a, tmp_path / "remote.git")
    assert git_push(a, "origin", "main", "feature").code == 0
    assert retcon(a, "push").code == 0
    b = clone(remote, tmp_path / "b")
    b.git("branch", "feature", "origin/feature")
    # B has a branch of its own by that name, behind A's (so a fast-forward would do).
    b.git("branch", "feature-clean", "main")
    before = b.git("for-each-ref")
    res = retcon(b, "pull")
    assert res.code == 1, res.text
    assert "branch 'feature-clean' cannot be moved here" in res.err
    assert "git-retcon did not create it" in res.err
    assert b.git("for-each-ref") == before   # no spec, no notes, no scratch refs: nothing


def test_pull_does_not_create_a_branch_whose_name_is_taken_here(tmp_path):
    a = finished(tmp_path / "a")
    remote = bare_remote(a, tmp_path / "remote.git")
    assert git_push(a, "origin", "main", "feature").code == 0
    assert retcon(a, "push").code == 0
    b = clone(remote, tmp_path / "b")
    b.git("branch", "feature-clean/mine", "main")   # a directory of B's branches
    before = b.git("for-each-ref")
    res = retcon(b, "pull")
    assert res.code == 1, res.text
    assert "refs/heads/feature-clean/mine exists" in res.err and "Traceback" not in res.text
    assert b.git("for-each-ref") == before


def test_push_leaves_a_branch_git_retcon_did_not_make_at_home(tmp_path):
    from testing.cleaned import planned

    a = planned(tmp_path / "a")
    a.git("branch", "feature-clean", "feature~1")   # the user's own, made after the plan
    remote = bare_remote(a, tmp_path / "remote.git")
    res = retcon(a, "push")
    assert res.code == 0, res.text
    assert "Not pushed: branch 'feature-clean' is not git-retcon's" in res.out
    refs = remote_refs(remote)
    assert "refs/retcon/feature-clean" in refs and "refs/retcon-branches/feature-clean" not in refs
