"""Judgement only where it is needed: what the spec already decides (a commit's `paths`, the hunks
`plan` assigned it; in a fix, the rework brief's candidates) is applied by plain code before the
model is asked, and the model confirms (create_commit) or adjusts with the same tools."""
from __future__ import annotations

from git_retcon.reconstruct.steps import PREPARED_LEAD
from testing.flow import SPEC, call, feature_repo, needs_fix_repo, retcon, turn
from testing.gitrepo import GitRepo
from tests.model.test_guards import HINTS_ONLY, _hunks, entries, note, only_util, planned


def test_the_hunks_under_a_commits_paths_are_applied_and_the_model_only_commits(tmp_path, scripted):
    repo = planned(tmp_path)
    log = scripted({"1/extract": [turn(call("create_commit"))], "2/extract": [turn(call("create_commit"))]})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    assert repo.log("main..feature-clean") == ["docs: explain main", "app: use two()", "util: add two()"]
    assert only_util(repo, "feature-clean~2")
    assert repo.tree("feature-clean") == repo.tree("feature")
    first = entries(log)[0]
    prompt = first["prompt"]
    assert "Applied for you: git-retcon took the hunks that the spec's paths and plan give this commit:" in prompt
    applied = prompt.split("Applied for you")[1].split("Check them")[0]
    assert "util.py modify +4 -0" in applied and "app.py" not in applied
    # What is left is not shown: the model confirms, it does not choose (read_diff shows it on demand).
    assert prompt.split("Remaining diff: ")[1].splitlines()[1] == PREPARED_LEAD and "app.py" not in prompt
    assert [len(entries(log))] == [2]


def test_retcon_paths_is_no_model_call(tmp_path):
    """The built-in model is plain code replaying the tools: its notes, the run's report and
    `status` count no model call (issue 38: status said "1 model calls" where the notes said 0)."""
    repo = planned(tmp_path)
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 0, res.text
    assert [note(repo, f"feature-clean~{i}")["model_calls"] for i in (2, 1)] == [0, 0]
    assert "model call" not in res.out and "model call" not in retcon(repo, "status").out


def test_the_model_puts_back_what_does_not_belong_and_takes_what_does(tmp_path, scripted):
    """paths too wide for the hints: the model puts app.py's hunk back ('-<id>'), and keeps the rest."""
    spec = SPEC.replace('hints = "Only util.py."\npaths = ["util.py"]', 'hints = "Only util.py."\npaths = ["*.py"]')
    repo = planned(tmp_path, spec)
    log = scripted({"1/extract": [turn(call("apply_hunks", hunk_ids="$back:app.py")), turn(call("create_commit"))],
                    "2/extract": [turn(call("create_commit"))]})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    assert only_util(repo, "feature-clean~2")
    answer = entries(log)[1]["results"][0]
    assert answer.startswith("Put back 1 hunk (app.py): they are in the remaining diff again.")
    # Commit 2 (paths app.py) found the hunk there again, and took it.
    assert repo.tree("feature-clean~1") != repo.tree("feature-clean~2")
    assert "app.py" in repo.git("diff", "--name-only", "feature-clean~2", "feature-clean~1")


def test_a_put_back_keeps_what_else_the_step_took_in_that_file(tmp_path, scripted):
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("base", {"a.py": "".join(f"line {i}\n" for i in range(30))})
    repo.git("checkout", "-q", "-b", "feature")
    lines = [f"line {i}\n" for i in range(30)]
    lines[2], lines[25] = "TOP\n", "BOTTOM\n"
    repo.commit("two edits", {"a.py": "".join(lines)})
    repo.git("checkout", "-q", "main")
    (tmp_path / "s.toml").write_text('source = "feature"\nremote = "main"\ncleaned = "c"\nowners = "conversation"\n\n'
                                      '[[commit]]\nmessage = "top"\npaths = ["a.py"]\n\n'
                                      '[[commit]]\nmessage = "bottom"\n')
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "s.toml"), "--no-edit").code == 0
    bottom = next(h for h in _hunks(repo) if b"BOTTOM" in h.added).id
    log = scripted({"1/extract": [turn(call("apply_hunks", hunk_ids=["-" + bottom[:6]])), turn(call("create_commit"))]})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    assert "TOP" in repo.git("show", "c~1:a.py") and "BOTTOM" not in repo.git("show", "c~1:a.py")
    assert "Applied again the other 1 hunks" in entries(log)[1]["results"][0]


def test_hunks_the_plan_assigned_are_applied_too(tmp_path, scripted):
    repo = feature_repo(tmp_path / "repo")
    util = next(h.id for h in _hunks(repo) if h.path == "util.py")
    spec = SPEC.replace('hints = "Only util.py."\npaths = ["util.py"]', f'hunks = ["{util}"]')
    (tmp_path / "spec.toml").write_text(spec)
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit").code == 0
    scripted({"1/extract": [turn(call("create_commit"))], "2/extract": [turn(call("create_commit"))]})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    assert only_util(repo, "feature-clean~2")


def test_a_fix_starts_with_the_briefs_defining_candidates_applied(tmp_path, scripted):
    repo = needs_fix_repo(tmp_path)
    log = scripted({"1/extract": [turn(call("create_commit"))]})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    assert repo.log("main..feature-clean")[1] == "WIP: take the definition of `two` from util.py"
    assert repo.git("diff", "--name-only", "feature-clean~2", "feature-clean~1").split() == ["util.py"]
    # Plain code ran the tests on them, and they pass: it commits them, and the model is not asked.
    assert "Trying the candidate hunks...\nBuilding... PASS" in res.out
    assert "The candidate hunks pass: committing them as the fix (no model needed)..." in res.out
    assert [e["keys"] for e in entries(log)] == [["1/extract/1"]]
    assert note(repo, "feature-clean~1")["model_calls"] == 0


def test_a_fix_whose_candidates_do_not_pass_is_told_so(tmp_path, scripted):
    # Passes on the base (no two() used yet); after commit 1, two() is missing, and with it main() is 3, not 4.
    spec = SPEC.replace("test = \"python3 -c 'import app; app.main()'\"",
                        "test = \"sh -c 'grep -q two app.py || exit 0; python3 -c \\\"import app; assert app.main() == "
                        "4\\\"'\"")
    repo = needs_fix_repo(tmp_path, spec)
    log = scripted({"1/extract": [turn(call("create_commit"))],
                    "1/fix/1": [turn(call("stuck", summary="the test imports a module no commit adds"))]})
    assert retcon(repo, "run", "-m", "scripted").code == 3
    fix = next(e for e in entries(log) if e["keys"] == ["1/fix/1"])
    assert "Applied for you: git-retcon took the rework brief's candidate hunks:" in fix["prompt"]
    assert "util.py modify" in fix["prompt"].split("Applied for you")[1]
    assert "With them applied, it still fails (test: FAIL" in fix["prompt"]


def test_retcon_paths_fixes_with_no_model_call(tmp_path):
    """util.py's helper, the brief's candidate, needs extra.py too: retcon-paths commits the
    candidate; the next round's candidate (extra.py) passes, and plain code commits it. Neither
    is a model call."""
    repo = needs_fix_repo(tmp_path, extra=True)
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 0, res.text
    assert repo.log("main..feature-clean") == ["docs: explain main", "WIP: take the missing pieces from extra.py",
                                               "WIP: take the definition of `two` from util.py", "app: use two()"]
    assert [(note(repo, f"feature-clean~{i}")["kind"], note(repo, f"feature-clean~{i}")["model_calls"])
            for i in (2, 1)] == [("wip", 0), ("wip", 0)]
    assert "model call" not in retcon(repo, "status").out
    assert repo.tree("feature-clean") == repo.tree("feature")


def test_applying_what_was_applied_for_it_tells_the_model_to_commit(tmp_path, scripted):
    """A weak model sends the listed ids again: nothing fails, and the answer names the next call."""
    repo = planned(tmp_path)
    log = scripted({"1/extract": [turn(call("apply_hunks", hunk_ids="$ids:util.py")), turn(call("create_commit"))],
                    "2/extract": [turn(call("create_commit"))]})
    assert retcon(repo, "run", "-m", "scripted").code == 0
    answer = entries(log)[1]["results"][0]
    assert answer.startswith("Nothing to apply: ") and "(util.py) is in the worktree already (applied in this " \
        "step). 3 hunks remain for the commits after this one. If this commit is complete, call create_commit()." \
        in answer
    assert only_util(repo, "feature-clean~2")


def test_excluding_and_selecting_what_was_applied_for_it_changes_nothing(tmp_path, scripted):
    """What the 1.5B model sent for the hunks applied for it, beside the same ids: ["-399983", "4e21",
    "-399983:25", "399983:25"]. The call was refused whole, as unknown ids, and the model echoed the
    refusal into stuck; it is in the worktree already, and the answer says how a put-back is made."""
    repo = planned(tmp_path)
    log = scripted({"1/extract": [turn(call("apply_hunks", hunk_ids=["$back:util.py", "$ids:util.py"])),
                                  turn(call("create_commit"))],
                    "2/extract": [turn(call("create_commit"))]})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    answer = entries(log)[1]["results"][0]
    assert answer.startswith("Nothing to apply: ") and "(util.py) is in the worktree already" in answer
    assert answer.endswith("with nothing else.") and "To put one back, call apply_hunks(['-" in answer
    assert only_util(repo, "feature-clean~2") and repo.tree("feature-clean") == repo.tree("feature")


def test_naming_the_files_and_ids_applied_for_it_changes_nothing(tmp_path, scripted):
    """What the 1.5B model sent first on the spec plan -m proposed: the "Applied for you" list's
    files and ids, all applied already. It was refused whole (no remaining hunk under the paths)."""
    repo = planned(tmp_path)
    log = scripted({"1/extract": [turn(call("apply_hunks", hunk_ids=["util.py", "$ids:util.py"])),
                                  turn(call("create_commit"))],
                    "2/extract": [turn(call("create_commit"))]})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    answer = entries(log)[1]["results"][0]
    assert answer.startswith("Nothing to apply: util.py (its hunks), ") and answer.endswith(
        "If this commit is complete, call create_commit().")
    assert only_util(repo, "feature-clean~2") and repo.tree("feature-clean") == repo.tree("feature")


def test_a_call_that_changes_nothing_again_and_again_ends_the_step(tmp_path, scripted):
    """The 1.5B model sent apply_hunks of the hunks applied for it, with and without '-', 38 times,
    each answered 'Nothing to apply', until the chain limit (40 calls, 218,748 prompt tokens). From
    the second such call each counts as a failed one, and the step ends after a dozen: with hints
    only, as stuck."""
    repo = planned(tmp_path, HINTS_ONLY)
    log = scripted({"1/extract": [turn(call("apply_hunks", hunk_ids="$ids:util.py"))] * 30})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 3, res.text
    # Each turn's answer to the call before it, from the first that changed nothing.
    said = [e["results"][-1] for e in entries(log)[2:]]
    assert len(said) == 12 and said[0].endswith("call create_commit().")
    assert said[1].endswith("(This call changed nothing, like the one before it: 11 more failed calls end this "
                            "step as stuck.)")
    assert "commit 1/3 is stuck: the model's tool calls kept failing (12 errors); last: apply_hunks: nothing to " \
           "apply, again" in res.err + res.out


def test_where_the_spec_decides_a_model_that_gives_no_judgement_leaves_its_hunks_committed(tmp_path, scripted):
    """The same model on a commit with paths: the hunks they give were applied for it, and it never
    confirmed them. Its step ends as before, and plain code commits what the spec gives the commit,
    as retcon-paths would (the build and tests judge it); the note says the model did not."""
    repo = planned(tmp_path)
    log = scripted({"1/extract": [turn(call("apply_hunks", hunk_ids="$ids:util.py"))] * 30,
                    "2/extract": [turn(call("create_commit"))]})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    assert len([e for e in entries(log) if e["keys"] == ["1/extract/1"]]) == 13
    assert "The model ended without a judgement (the model's tool calls kept failing (12 errors); last: " \
           "apply_hunks: nothing to apply, again): committing the hunks the spec gives this commit (no model " \
           "needed)...\nCreating commit..." in res.out
    assert repo.log("main..feature-clean") == ["docs: explain main", "app: use two()", "util: add two()"]
    assert only_util(repo, "feature-clean~2") and repo.tree("feature-clean") == repo.tree("feature")
    assert note(repo, "feature-clean~2")["instead"].startswith(
        "the model ended without a judgement (the model's tool calls kept failing (12 errors)")
    assert "instead" not in note(repo, "feature-clean~1")


def test_a_model_that_echoes_our_answers_into_stuck_twice_leaves_the_spec_s_hunks(tmp_path, scripted):
    """The 1.5B model on the demo with paths: told the hunks it named were applied already, it called
    stuck with that answer, twice. A stuck that says nothing of the model's own is no judgement."""
    repo = planned(tmp_path)
    echo = "Nothing to apply: the hunks are in the worktree already (applied in this step)"
    scripted({"1/extract": [turn(call("apply_hunks", hunk_ids="$ids:util.py")), turn(call("stuck", summary=echo)),
                            turn(call("stuck", summary=echo))],
              "2/extract": [turn(call("create_commit"))]})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    assert "The model ended without a judgement (the model gave up without saying why; git-retcon's answer to " \
           "it, which it could not act on: \"Nothing to apply: " in res.out
    assert only_util(repo, "feature-clean~2")


def test_a_stuck_in_the_models_own_words_stays_a_stuck_where_the_spec_decides(tmp_path, scripted):
    repo = planned(tmp_path)
    scripted({"1/extract": [turn(call("stuck", summary="util.py's two() is also in app.py: split by hand"))]})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 3, res.text
    assert "without a judgement" not in res.out
    assert "commit 1/3 is stuck: util.py's two() is also in app.py: split by hand" in res.out + res.err
