"""`git retcon run` end to end: real repositories, the scripted model making tool calls."""
from __future__ import annotations

import json

import pytest

from testing.flow import SPEC, call, feature_repo, needs_fix_repo, retcon, take, turn


@pytest.fixture
def project(tmp_path):
    repo = feature_repo(tmp_path / "repo")
    (tmp_path / "spec.toml").write_text(SPEC)
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit").code == 0
    return repo


def notes(repo, sha, ref="refs/notes/retcon"):
    return json.loads(repo.git("notes", f"--ref={ref}", "show", sha))


def test_happy_path_builds_every_commit_and_ends_on_the_source_tree(project, scripted):
    log = scripted({"1/extract": take("util.py"), "2/extract": take("app.py"), "3/extract": take("")})
    res = retcon(project, "run", "-m", "scripted")
    assert res.code == 0, res.text
    assert "Commit 2/3: app: use two()" in res.out
    assert "Building... PASS" in res.out and "Tests... PASS" in res.out
    assert "Branch: feature-clean" in res.out
    assert project.log("main..feature-clean") == ["docs: explain main", "app: use two()", "util: add two()"]
    assert project.tree("feature-clean") == project.tree("feature")
    # Each logical commit holds only its own files.
    assert project.git("diff", "--name-only", "feature-clean~3", "feature-clean~2") == "util.py"
    assert project.git("diff", "--name-only", "feature-clean~2", "feature-clean~1") == "app.py"
    # Every prompt names the commit it is for.
    prompts = [json.loads(ln)["prompt"] for ln in log.read_text().splitlines()]
    assert any(p.startswith("Commit 1/3: util: add two()") for p in prompts)
    assert all("Commit " in p for p in prompts)
    note = notes(project, project.rev("feature-clean~2"))
    assert note["spec"] == "feature-clean" and note["index"] == 1 and note["kind"] == "initial"
    assert note["build"] == "pass" and note["test"] == "pass" and note["tokens"]["input"] > 0
    tested = notes(project, project.tree("feature-clean~2"), "refs/notes/retcon-tests")["commands"]
    test = tested["python3 -c 'import app; app.main()'"]
    assert test["result"] == "pass" and "seconds" in test
    status = json.loads(retcon(project, "status", "--json").out)
    assert status["state"] == "complete"
    assert [c["state"] for c in status["commits"]] == ["complete"] * 3
    assert retcon(project, "check").code == 0


def test_run_never_touches_the_users_tree_index_or_branches(project, scripted):
    project.write("app.py", "local edit, not committed\n")
    project.write("scratch.txt", "untracked\n")
    project.git("add", "scratch.txt")
    before = (project.status(), project.git("diff", "--cached"), project.rev("HEAD"),
              project.rev("feature"), project.git("symbolic-ref", "HEAD"))
    scripted({"1/extract": take("util.py"), "2/extract": take("app.py"), "3/extract": take("")})
    assert retcon(project, "run", "-m", "scripted").code == 0
    after = (project.status(), project.git("diff", "--cached"), project.rev("HEAD"),
             project.rev("feature"), project.git("symbolic-ref", "HEAD"))
    assert after == before
    assert (project.path / "app.py").read_text() == "local edit, not committed\n"


def test_fix_loop_makes_a_wip_commit_from_the_remaining_diff(tmp_path, scripted):
    repo = needs_fix_repo(tmp_path)
    # No fix turns: util.py's helper, the brief's candidate, passes, and plain code commits it.
    log = scripted({"1/extract": take("app.py")})
    planned = repo.rev("refs/retcon/feature-clean")
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    assert "Tests... FAIL" in res.out and "Fix attempt 1:" in res.out and "(1 WIP)" in res.out
    # A created commit's entry is saved with its verdict: one spec save per logical commit here,
    # the first carrying both commits the fix loop made.
    saves = repo.log(f"{planned}..refs/retcon/feature-clean")
    assert len(saves) == 2 and saves[1].count("created") == 2 and saves[1].endswith("commit 1 complete"), saves
    assert repo.log("main..feature-clean") == ["docs: explain main", "WIP: take the definition of `two` from util.py",
                                               "app: use two()"]
    assert [json.loads(ln)["keys"] for ln in log.read_text().splitlines()] == [["1/extract/1"]] * 3   # no fix call
    spec_text = retcon(repo, "spec", "show").out
    assert spec_text.count("commit_created") == 3 and spec_text.count('"complete"') == 2

    # Each note keeps its public shape (ARCHITECTURE.md, "Where state lives"): other tools
    # read them, so no key may appear, vanish or change unnoticed.
    initial = notes(repo, repo.rev("feature-clean~2"))
    assert sorted(initial) == ["attempt", "build", "index", "invented", "kind", "model_calls", "model_seconds",
                               "sandbox", "spec", "test", "tokens"]
    assert isinstance(initial["model_seconds"], float)      # the step's wall time (status shows it)
    assert initial["invented"] == {"count": 0, "lines": []}     # hunks taken: nothing invented
    assert [initial[k] for k in ("spec", "index", "kind", "attempt")] == ["feature-clean", 1, "initial", 1]
    assert initial["test"] == "fail" and sorted(initial["tokens"]) == ["input", "output"]
    wip = notes(repo, repo.rev("feature-clean~1"))
    assert sorted(wip) == sorted([*initial, "diagnosis", "rework"])
    assert (wip["kind"], wip["attempt"], wip["test"]) == ("wip", 2, "pass")
    assert wip["model_calls"] == 0 and wip["tokens"] == {"input": 0, "output": 0}
    assert "AttributeError" in wip["diagnosis"] and isinstance(wip["rework"]["candidates"], list)
    tested = notes(repo, repo.tree("feature-clean~1"), "refs/notes/retcon-tests")
    assert sorted(tested) == ["commands"]
    by_kind = {rec["kind"]: rec for rec in tested["commands"].values()}
    assert sorted(by_kind) == ["build", "test"]
    assert sorted(by_kind["test"]) == ["command", "depends", "exit_code", "kind", "network", "output", "result",
                                       "sandbox", "seconds"]
    assert by_kind["test"]["result"] == "pass" and by_kind["test"]["exit_code"] == 0
    assert tested["commands"][by_kind["test"]["command"]] == by_kind["test"]
    # The run's totals are noted on the spec chain's commit current when it ended.
    (run,) = notes(repo, repo.rev("refs/retcon/feature-clean"))["runs"]
    assert sorted(run) == ["commits", "model", "stop", "tokens"]
    assert (run["model"], run["stop"]) == ("scripted", "complete")
    assert sorted(run["tokens"]) == ["calls", "input", "output"] and sorted(run["commits"]) == ["1", "2"]
    assert run["tokens"]["input"] == sum(c["input"] for c in run["commits"].values())
    # One note write per created commit (the commit before it gets its verdicts and what its step
    # spent in the same notes commit), the last verdicts when the run ends, and the run's totals:
    # three commits cost 5 notes commits, not 7 (nor 10).
    assert repo.git("rev-list", "--count", "refs/notes/retcon") == "5"


def test_stuck_then_resolve_then_resume(project, scripted):
    scripted({"1/extract": [turn(call("stuck", summary="util.py and app.py depend on each other"))]})
    res = retcon(project, "run", "-m", "scripted")
    assert res.code == 3
    assert "depend on each other" in res.err and "git retcon resolve" in res.err
    # Running again without a resolution refuses and changes nothing.
    spec_before = project.rev("refs/retcon/feature-clean")
    again = retcon(project, "run", "-m", "scripted")
    assert again.code == 3 and "is stuck" in again.err
    assert project.rev("refs/retcon/feature-clean") == spec_before
    assert retcon(project, "resolve", "-m", "split util first").code == 0
    log = scripted({"1/extract": take("util.py"), "2/extract": take("app.py"), "3/extract": take("")})
    log.write_text("")
    res = retcon(project, "run", "-m", "scripted")
    assert res.code == 0, res.text
    first = json.loads(log.read_text().splitlines()[0])
    assert "Resolution from a human: split util first" in first["prompt"]
    assert "depend on each other" in first["prompt"]
    assert project.tree("feature-clean") == project.tree("feature")


def test_a_model_that_keeps_talking_is_steered_every_turn_then_stopped(project, scripted):
    """Its step ends with no judgement of its own: commit 2 has paths, so plain code commits the
    hunks they give it in the model's place (the note says why)."""
    log = scripted({"1/extract": [turn(call("read_diff")), turn(text="I think this looks fine."),
                                  turn(text="Yes, it is util.py."),
                                  turn(call("apply_hunks", hunk_ids="$ids:util.py")),
                                  turn(call("create_commit", message="x"))],
                    "2/extract": [turn(text="hmm"), turn(text="still thinking")]})
    res = retcon(project, "run", "-m", "scripted")
    assert res.code == 0, res.text
    assert "The model ended without a judgement (the model ended its turn without create_commit or stuck (12 " \
           "failed calls and turns" in res.out
    instead = json.loads(project.git("notes", "--ref=retcon", "show", "feature-clean~1"))["instead"]
    assert "its last words: I have nothing more to do." in instead
    assert project.log("main..feature-clean") == ["docs: explain main", "app: use two()", "util: add two()"]
    entries = [json.loads(ln) for ln in log.read_text().splitlines()]
    # Steered after every turn, until the step's error budget of 12 was spent.
    assert [e["turn"] for e in entries if e["keys"] == ["2/extract/1"]] == list(range(12))


def test_last_commit_must_reach_the_source_tree(tmp_path, scripted):
    """Plain code takes every remaining change for the last commit, so only its fix loop can
    leave the source's tree: a WIP there that passes the test but drops a file is failed for
    the tree, and the next fix round is told which paths remain."""
    repo = feature_repo(tmp_path / "repo")
    # The source's own tree fails the test (it has the todo note): commit 3 goes to the fix loop.
    spec = SPEC.replace("test = \"python3", "test = \"test ! -e notes/todo.txt && python3")
    (tmp_path / "spec.toml").write_text(spec)
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit").code == 0
    log = scripted({"1/extract": take("util.py"), "2/extract": take("app.py"),
                    "3/fix/1": [turn(call("delete_file", path="notes/todo.txt")),
                                turn(call("create_commit", message="drop the todo note"))],
                    "3/fix/2": [turn(call("stuck", summary="cannot place notes/todo.txt"))]})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 3
    assert "Final tree differs" in res.out
    assert "notes/todo.txt" in res.err
    prompts = {json.loads(ln)["keys"][0]: json.loads(ln)["prompt"] for ln in log.read_text().splitlines()}
    assert "3/extract/1" not in prompts
    assert "This is the last logical commit, and its tree must equal the source branch tip, but 1 hunks " \
           "in 1 files remain: notes/todo.txt." in prompts["3/fix/2"]
    status = json.loads(retcon(repo, "status", "--json").out)
    assert status["commits"][2]["state"] == "stuck"
    chk = retcon(repo, "check")
    assert chk.code == 1 and "notes/todo.txt" in chk.out


def test_dry_run_changes_nothing(project, scripted):
    refs = project.git("for-each-ref")
    res = retcon(project, "run", "--dry-run")
    assert res.code == 0 and "Dry run: nothing was changed" in res.out and "[pending]" in res.out
    assert project.git("for-each-ref") == refs


def test_abort_drops_branch_and_worktree_but_keeps_spec_history(project, scripted):
    scripted({"1/extract": take("util.py"), "2/extract": take("app.py"), "3/extract": take("")})
    assert retcon(project, "run", "-m", "scripted").code == 0
    old_spec = project.rev("refs/retcon/feature-clean")
    res = retcon(project, "abort", "feature-clean")
    assert res.code == 0 and "Deleted branch feature-clean" in res.out
    assert project.git("branch", "--list", "feature-clean") == ""
    assert "retcon" not in project.git("worktree", "list")
    assert "commit_created" not in retcon(project, "spec", "show").out
    assert old_spec in project.git("log", "--format=%H", "refs/retcon/feature-clean")
    # And it can run again from scratch.
    assert retcon(project, "run", "-m", "scripted").code == 0


def test_user_fix_on_the_cleaned_branch_is_adopted(project, scripted, tmp_path):
    scripted({"1/extract": [turn(call("stuck", summary="need a human"))]})
    assert retcon(project, "run", "-m", "scripted").code == 3
    # The human makes commit 1 by hand in a worktree of their own, then resolves.
    wt = tmp_path / "mine"
    project.git("worktree", "add", "-q", str(wt), "feature-clean")
    (wt / "util.py").write_text((project.path / "util.py").read_text() + "\n\ndef two():\n    return 2\n")
    from testing.gitrepo import GitRepo
    GitRepo(wt).commit("util: add two()")
    project.git("worktree", "remove", str(wt))
    assert retcon(project, "resolve", "-m", "committed util.py myself").code == 0
    scripted({"2/extract": take("app.py"), "3/extract": take("")})
    res = retcon(project, "run", "-m", "scripted")
    assert res.code == 0, res.text
    assert "Adopting" in res.out
    assert project.tree("feature-clean") == project.tree("feature")


def test_commits_added_after_the_run_finished_reopen_the_last_commit(project, scripted, tmp_path):
    scripted({"1/extract": take("util.py"), "2/extract": take("app.py"), "3/extract": take("")})
    assert retcon(project, "run", "-m", "scripted").code == 0
    wt = tmp_path / "mine"
    project.git("worktree", "add", "-q", str(wt), "feature-clean")
    from testing.gitrepo import GitRepo
    mine = GitRepo(wt)
    mine.commit("tweak readme", {"README": "tweaked\n"})
    mine.git("revert", "--no-edit", "HEAD")
    project.git("worktree", "remove", str(wt))
    res = retcon(project, "run", "-m", "scripted")
    assert res.code == 0, res.text
    assert res.out.count("Adopting") == 2
    status = json.loads(retcon(project, "status", "--json").out)
    assert status["commits"][2]["state"] == "complete" and len(status["commits"][2]["commits"]) == 3
    assert retcon(project, "spec", "show").out.count('"complete"') == 3
