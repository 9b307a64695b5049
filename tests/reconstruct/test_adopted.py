"""A human's fix on the cleaned branch that a run adopted is the run's own from then on (its
note says `adopted`): the documented ways out of a stop work with it there, or without it
when the human took it away again."""
from __future__ import annotations

import json

import pytest

from testing.fixcase import make
from testing.flow import call, retcon, take, turn


def status(repo):
    return json.loads(retcon(repo, "status", "--json").out)


def commit_on(repo, branch, files, message):
    """A human's commit on the cleaned branch, made in a worktree of their own."""
    repo.git("switch", "-q", branch)
    repo.commit(message, files)
    repo.git("switch", "-q", "main")
    return repo.rev(branch)


@pytest.fixture
def adopted(tmp_path, scripted):
    """Commit 1 is stuck (the brief's candidate alone fails: the model is asked, and gives up); the
    human commits a fix that does not fix it; run adopts it and stops stuck again."""
    repo = make(tmp_path, docs=0, extra=True)
    scripted({"1/extract": take("app.py"), "1/fix": [turn(call("stuck", summary="app.py needs util.two()"))]})
    assert retcon(repo, "run", "-m", "scripted").code == 3
    mine = commit_on(repo, "feature-clean", {"NOTES.txt": "tried\n"}, "try a note")
    assert retcon(repo, "resolve", "-m", "tried a note").code == 0
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 3, res.text
    assert f"Adopting {mine[:9]} into commit 1/2" in res.out
    return repo, mine


def test_an_adopted_commit_is_noted_as_the_runs_own(adopted):
    repo, mine = adopted
    note = json.loads(repo.git("notes", "--ref=retcon", "show", mine))
    assert (note["spec"], note["index"], note["kind"], note["attempt"]) == ("feature-clean", 1, "adopted", 2)
    assert status(repo)["commits"][0]["commits"][-1] == mine


def test_redo_drops_an_adopted_commit_with_the_runs_own(adopted, tmp_path):
    repo, mine = adopted
    res = retcon(repo, "resolve", "--redo", "-m", "start over")
    assert res.code == 0, res.text
    assert "Dropped 2 commits of it" in res.out
    assert repo.rev("feature-clean") == repo.rev("main")
    assert status(repo)["commits"][0]["commits"] == []


def test_an_adopted_commit_dropped_by_hand_is_forgotten_by_redo(adopted):
    repo, mine = adopted
    repo.git("branch", "-f", "feature-clean", "feature-clean~1")     # the human takes their try back
    res = retcon(repo, "resolve", "--redo", "-m", "start over")
    assert res.code == 0, res.text
    assert "Dropped 1 commit of it" in res.out
    assert repo.rev("feature-clean") == repo.rev("main")


def test_an_adopted_commit_dropped_by_hand_is_forgotten_by_the_next_run(adopted):
    repo, mine = adopted
    repo.git("branch", "-f", "feature-clean", "feature-clean~1")
    assert retcon(repo, "resolve", "-m", "took my try back").code == 0
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert "no longer holds the recorded commits" not in res.err, res.text
    assert f"Forgetting {mine[:9]} of commit 1/2: it was dropped from 'feature-clean' by hand" in res.out
    assert mine not in status(repo)["commits"][0]["commits"]


def test_plan_force_and_check_agree_with_abort_that_the_branch_is_ours(adopted):
    repo, _ = adopted
    res = retcon(repo, "plan", "--from-commits", "--force", "--no-edit", "--source", "feature", "--onto", "main",
                 "--cleaned", "feature-clean")
    assert res.code == 0, res.text


def test_commits_to_adopt_wait_until_the_model_is_known_usable(tmp_path, scripted):
    """A complete spec that names no model, a human's commit on the cleaned branch: a run whose
    default model wants a key it does not have refuses before it adopts (records) anything."""
    repo = make(tmp_path, docs=0)
    scripted({"1/extract": take("app.py"), "1/fix": take("util.py")})
    assert retcon(repo, "run", "-m", "scripted").code == 0
    # (a note, then taken back: commits that change the tree are absorbed instead, test_day_two.py)
    commit_on(repo, "feature-clean", {"NOTES.txt": "more\n"}, "a note")
    commit_on(repo, "feature-clean", {"NOTES.txt": None}, "no note after all")
    spec = repo.rev("refs/retcon/feature-clean")
    res = retcon(repo, "run")
    assert res.code == 1, res.text
    assert "Adopting" not in res.out and "key" in res.err, res.text
    assert repo.rev("refs/retcon/feature-clean") == spec
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert "Adopting" in res.out, res.text
