"""Guards a weak model cannot slip past: create_commit names hunks the spec gives elsewhere (planned
for a later commit, outside the commit's paths, or every remaining change in a commit that is not
the last), the model puts them back or confirms with a reason (kept in the note); a near-miss id
is answered with the id meant; no answer invites stuck for a state a call can change; a stuck
summary that only echoes an answer is sent back once."""
from __future__ import annotations

import json

import pytest
import tomli

from git_retcon.model.echo import says_done
from git_retcon.model.guards import a_reason, names_file
from testing.flow import SPEC, call, feature_repo, needs_fix_repo, retcon, turn
from testing.gitrepo import GitRepo


def planned(tmp_path, spec: str = SPEC) -> GitRepo:
    repo = feature_repo(tmp_path / "repo")
    (tmp_path / "spec.toml").write_text(spec)
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit").code == 0
    return repo


def only_util(repo: GitRepo, rev: str) -> bool:
    """Whether rev is main with feature's util.py: the first logical commit of SPEC."""
    return repo.git("diff", "--name-only", "main", rev).split() == ["util.py"] and \
        repo.git("show", f"{rev}:util.py") == repo.git("show", "feature:util.py")


def entries(log) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def note(repo: GitRepo, rev: str) -> dict:
    return json.loads(repo.git("notes", "--ref=retcon", "show", rev))


def _hunks(repo: GitRepo):
    import pygit2

    from git_retcon.diff.remaining import remaining
    r = pygit2.Repository(str(repo.path))
    return remaining(r, str(r.revparse_single("main").tree_id), str(r.revparse_single("feature").tree_id))


HINTS_ONLY = """\
source = "feature"
remote = "main"
cleaned = "feature-clean"
owners = "conversation"

[[commit]]
message = "util: add two()"
hints = "Only util.py."

[[commit]]
message = "app: use two()"

[[commit]]
message = "docs: explain main"
"""


def answers(log, key="1/extract/1") -> list[str]:
    return [e for e in entries(log) if e["keys"] == [key]][-1]["results"]


def test_hunks_the_plan_gives_a_later_commit_are_named_and_put_back(tmp_path, scripted):
    repo = feature_repo(tmp_path / "repo")
    ids = {h.path: h.id for h in _hunks(repo)}
    spec = SPEC.replace('hints = "Only util.py."\npaths = ["util.py"]', f'hunks = ["{ids["util.py"]}"]') \
        .replace('paths = ["app.py"]', f'hunks = ["{ids["app.py"]}"]')
    (tmp_path / "spec.toml").write_text(spec)
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit").code == 0
    log = scripted({"1/extract": [turn(call("read_diff")),
                                  turn(call("apply_hunks", hunk_ids="$ids:app.py|util.py")),
                                  turn(call("create_commit")),
                                  turn(call("apply_hunks", hunk_ids="$back:app.py")), turn(call("create_commit"))],
                    "2/extract": [turn(call("apply_hunks", hunk_ids="$ids:app.py")), turn(call("create_commit"))]})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    refused = answers(log)[2]
    app = ids["app.py"][:4]
    assert refused.startswith(f"Error: Not committed: this commit took 1 hunk that the plan gives to later commits "
                              f"(commit 2): {app} (app.py). Put back what belongs elsewhere with "
                              f'apply_hunks(["-{app}"])')
    assert 'create_commit(confirm="why they belong here")' in refused
    assert only_util(repo, "feature-clean~2")
    assert "confirmed" not in note(repo, "feature-clean~2")


def test_hunks_outside_the_paths_are_confirmed_with_a_reason_kept_in_the_note(tmp_path, scripted):
    repo = planned(tmp_path)
    log = scripted({"1/extract": [turn(call("read_diff")), turn(call("apply_hunks", hunk_ids="$ids:README|util.py")),
                                  # A confirmation before the guard named anything, or without words, is no reason.
                                  turn(call("create_commit", confirm="yes")),
                                  turn(call("create_commit", confirm="yes")),
                                  turn(call("create_commit", confirm="the README line documents two()"))],
                    "2/extract": [turn(call("apply_hunks", hunk_ids="$ids:app.py")), turn(call("create_commit"))]})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    first, weak = answers(log)[2:4]
    assert first.startswith("Error: Not committed: this commit took 1 hunk outside this commit's paths ['util.py']:")
    assert "no reason" not in first
    assert "Your confirm gives no reason: say in a sentence why these hunks belong to this commit" in weak
    assert repo.git("diff", "--name-only", "main", "feature-clean~2").split() == ["README", "util.py"]
    confirmed = note(repo, "feature-clean~2")["confirmed"]
    assert len(confirmed) == 1 and "outside this commit's paths" in confirmed[0]
    assert confirmed[0].endswith(": the README line documents two()")


def test_every_remaining_change_in_a_commit_that_is_not_the_last_is_refused(tmp_path, scripted):
    repo = planned(tmp_path, HINTS_ONLY)
    log = scripted({"1/extract": [turn(call("apply_hunks", hunk_ids=["."])), turn(call("create_commit")),
                                  turn(call("apply_hunks", hunk_ids="$back:app.py|README|notes/")),
                                  turn(call("create_commit"))],
                    "2/extract": [turn(call("apply_hunks", hunk_ids=["app.py"])), turn(call("create_commit"))]})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    assert "this commit took every remaining change (4 hunks), though this is commit 1 of 3: the commits after " \
           "it would have nothing left" in answers(log)[1]
    assert answers(log)[2].startswith("Put back 3 hunks (README, app.py, notes/todo.txt)")
    assert only_util(repo, "feature-clean~2")


def test_a_near_miss_id_is_answered_with_the_id_meant(tmp_path, scripted):
    repo = planned(tmp_path, HINTS_ONLY)
    log = scripted({"1/extract": [turn(call("apply_hunks", hunk_ids="$near:util.py")),
                                  turn(call("apply_hunks", hunk_ids="$ids:util.py")), turn(call("create_commit"))],
                    "2/extract": [turn(call("apply_hunks", hunk_ids=["app.py"])), turn(call("create_commit"))]})
    assert retcon(repo, "run", "-m", "scripted").code == 0
    util = next(h.id for h in _hunks(repo) if h.path == "util.py")[:4]
    assert f"'t{util}': did you mean {util} (util.py)?" in answers(log)[0]


def test_nothing_to_commit_names_the_call_to_make_and_never_invites_stuck(tmp_path, scripted):
    repo = planned(tmp_path, HINTS_ONLY.replace('hints = "Only util.py."', 'hints = "The helper."'))
    log = scripted({"1/extract": [turn(call("create_commit")), turn(call("stuck", summary="done"))]})
    retcon(repo, "run", "-m", "scripted")
    empty = answers(log)[0]
    assert empty.startswith("Error: nothing to commit: the worktree still equals the previous commit")
    assert "read_diff() shows the 4 remaining hunks; apply_hunks([...]) takes those that belong here" in empty
    assert "stuck" not in empty.split("Steering")[0]


def test_a_stuck_summary_that_echoes_an_answer_is_sent_back_once(tmp_path, scripted):
    repo = planned(tmp_path, HINTS_ONLY)
    echo = "nothing to commit: the worktree still equals the previous commit, nothing was applied"
    log = scripted({"1/extract": [turn(call("create_commit")), turn(call("stuck", summary=echo)),
                                  turn(call("stuck", summary=echo))]})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 3
    sent_back = answers(log)[1]
    assert sent_back.startswith("Error: Not recorded: your summary repeats git-retcon's own answer (Error: nothing "
                                "to commit")
    # The second time it is a stop, said in our words with the answer the model could not act on.
    stored = tomli.loads(repo.git("show", "refs/retcon/feature-clean:spec.toml"))
    stuck = stored["commit"][0]["history"][-1]["stuck"]
    assert stuck.startswith("the model gave up without saying why; git-retcon's answer to it, which it could not "
                            "act on: \"nothing to commit")
    # Said for a person: quoted as the model's answer, cut at a word's end, never mid-word.
    quoted = stuck.split('"', 1)[1].removesuffix('..."')
    answer = " ".join(answers(log)[0].removeprefix("Error: ").split())
    assert stuck.endswith('..."') and answer.startswith(quoted) and answer[len(quoted)] == " "


def test_a_stuck_summary_of_its_own_is_recorded_at_once(tmp_path, scripted):
    repo = planned(tmp_path, HINTS_ONLY)
    own = "The hints ask for util.py only, but two() is used by tests that the spec puts later: reorder them."
    scripted({"1/extract": [turn(call("create_commit")), turn(call("stuck", summary=own))]})
    assert retcon(repo, "run", "-m", "scripted").code == 3
    assert json.dumps(own) in repo.git("show", "refs/retcon/feature-clean:spec.toml")


def test_a_file_name_without_its_directory_is_read_as_the_path_it_names(tmp_path, scripted):
    """What the 1.5B model did: read_diff('money.py') for invoicing/money.py, and apply_hunks with a
    stem ('money'): the one path meant is shown, and a refusal names it."""
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("base", {"invoicing/money.py": "X = 1\n", "README": "r\n"})
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("f", {"invoicing/money.py": "X = 1\nY = 2\n", "README": "r\ns\n"})
    repo.git("checkout", "-q", "main")
    (tmp_path / "s.toml").write_text('source = "feature"\nremote = "main"\ncleaned = "c"\nowners = "conversation"\n\n'
                                      '[[commit]]\nmessage = "money"\n\n[[commit]]\nmessage = "readme"\n')
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "s.toml"), "--no-edit").code == 0
    log = scripted({"1/extract": [turn(call("read_diff", path="money.py")),
                                  turn(call("apply_hunks", hunk_ids=["money"])),
                                  turn(call("read_diff", path="money.py")),
                                  turn(call("apply_hunks", hunk_ids=["invoicing/money.py"])),
                                  turn(call("create_commit"))]})
    assert retcon(repo, "run", "-m", "scripted").code == 0
    shown, refused, again = answers(log, "1/extract/1")[:3]
    assert shown.startswith("(no hunks under 'money.py': showing 'invoicing/money.py', the remaining path it names)")
    assert "+Y = 2" in shown
    assert "'money': did you mean 'invoicing/money.py'?" in refused
    assert again.startswith("(You made this same read_diff call before, and nothing has changed since")
    assert repo.git("diff", "--name-only", "main", "c~1").split() == ["invoicing/money.py"]


def test_a_stuck_summary_that_echoes_the_steering_advice_is_sent_back_too(tmp_path, scripted):
    """What the 1.5B model wrote after two empty create_commit calls: the advice the second answer
    carried, as its stuck summary."""
    repo = planned(tmp_path, HINTS_ONLY)
    advice = ("The worktree still equals the previous commit. Apply_hunks takes this commit's hunks (read_diff "
              "lists them), edit_file and write_file write what the source does not have.")
    log = scripted({"1/extract": [turn(call("create_commit")), turn(call("create_commit")),
                                  turn(call("stuck", summary=advice)), turn(call("stuck", summary=advice))]})
    assert retcon(repo, "run", "-m", "scripted").code == 3
    assert answers(log)[2].startswith("Error: Not recorded: your summary repeats git-retcon's own answer")


def test_a_string_sent_in_a_list_is_read_as_the_string(tmp_path, scripted):
    """What the 1.5B model sent in the misordered bench's fix: read_diff(path=[...])."""
    repo = planned(tmp_path, HINTS_ONLY)
    log = scripted({"1/extract": [turn(call("read_diff", path=["util.py"])),
                                  turn(call("read_diff", path=["util.py", "app.py"])),
                                  turn(call("apply_hunks", hunk_ids="$ids:util.py")), turn(call("create_commit"))],
                    "2/extract": [turn(call("apply_hunks", hunk_ids=["app.py"])), turn(call("create_commit"))]})
    assert retcon(repo, "run", "-m", "scripted").code == 0
    one, two = answers(log)[:2]
    assert one.startswith("(read path as 'util.py': one string, not a list) Remaining diff: 1 hunk")
    assert two.startswith("Error: read_diff: path must be a string") and "one path a call: call read_diff once " \
        "for each" in two


def test_nothing_to_commit_names_the_files_the_hints_name(tmp_path, scripted):
    """A hints-only spec (the demo's, as the 1.5B model met it): the answer names the call for the
    files the hints name; the model still decides."""
    repo = planned(tmp_path, HINTS_ONLY.replace('hints = "Only util.py."', 'hints = "Only util.py, not README."'))
    log = scripted({"1/extract": [turn(call("create_commit")), turn(call("apply_hunks", hunk_ids=["util.py"])),
                                  turn(call("create_commit"))],
                    "2/extract": [turn(call("apply_hunks", hunk_ids=["app.py"])), turn(call("create_commit"))]})
    assert retcon(repo, "run", "-m", "scripted").code == 0
    assert "the hints name util.py: apply_hunks(['util.py']) takes their remaining hunks" in answers(log)[0]
    assert only_util(repo, "feature-clean~2")


def test_a_stuck_that_says_the_commit_is_complete_is_sent_back_to_create_commit(tmp_path, scripted):
    """What the 1.5B model did with the hunk applied for it: stuck("The 399983 hunk is already in the
    worktree, so this commit is complete. No further actions are required.")."""
    repo = planned(tmp_path)
    done = "The util.py hunk is already in the worktree, so this commit is complete. No further actions are required."
    log = scripted({"1/extract": [turn(call("stuck", summary=done)), turn(call("create_commit"))],
                    "2/extract": [turn(call("create_commit"))]})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    assert answers(log)[0].startswith("Error: Not recorded: your summary says this commit is complete, and the "
                                      "worktree holds changes: call create_commit() to make the commit.")
    assert only_util(repo, "feature-clean~2") and repo.tree("feature-clean") == repo.tree("feature")


def test_a_model_that_says_done_twice_without_committing_gave_no_judgement(tmp_path, scripted):
    """The 1.5B model, sent back to create_commit, said it again: "This commit is already complete,
    and the worktree holds changes, so you should call create_commit()". Where the paths decide,
    plain code commits their hunks; with hints only, it is a stop in our words."""
    done = "The worktree already contains the required hunks. This commit is already complete."
    repo = planned(tmp_path)
    scripted({"1/extract": [turn(call("stuck", summary=done)), turn(call("stuck", summary=done + " Call it."))],
              "2/extract": [turn(call("create_commit"))]})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    assert "The model ended without a judgement (the model said the commit is complete but did not make it (" \
           in res.out
    assert only_util(repo, "feature-clean~2")

    hinted = planned(tmp_path / "hints", HINTS_ONLY)
    scripted({"1/extract": [turn(call("apply_hunks", hunk_ids="$ids:util.py")), turn(call("stuck", summary=done)),
                            turn(call("stuck", summary=done))]})
    res = retcon(hinted, "run", "-m", "scripted")
    assert res.code == 3
    assert "commit 1/3 is stuck: the model said the commit is complete but did not make it (" in res.out + res.err


def test_a_stuck_that_says_done_with_nothing_applied_is_recorded(tmp_path, scripted):
    """With nothing in the worktree, 'complete' is a claim a human must check: no steering."""
    repo = planned(tmp_path, HINTS_ONLY)
    done = "This commit is complete: the changes it describes are in main already."
    scripted({"1/extract": [turn(call("stuck", summary=done))]})
    assert retcon(repo, "run", "-m", "scripted").code == 3
    assert json.dumps(done) in repo.git("show", "refs/retcon/feature-clean:spec.toml")


def test_a_path_whose_changes_an_earlier_fix_took_is_no_reason_to_refuse_the_call(tmp_path, scripted):
    """The misordered bench: commit 1's fix took the money helper, and the 1.5B model, at the money
    commit, named invoicing/money.py beside the hunks applied for it. The whole call was refused
    ('no remaining hunk is under ...') and the model ended stuck."""
    spec = SPEC.replace('message = "util: add two()"\nhints = "Only util.py."\npaths = ["util.py"]\n\n[[commit]]\n'
                        'message = "app: use two()"\npaths = ["app.py"]\n',
                        'message = "app: use two()"\npaths = ["app.py"]\n\n[[commit]]\n'
                        'message = "util: add two(), and say so"\npaths = ["util.py", "README"]\n'
                        ).replace('paths = ["README", "notes/"]', 'paths = ["notes/"]')
    repo = planned(tmp_path, spec)
    log = scripted({"1/extract": [turn(call("create_commit"))],
                    "2/extract": [turn(call("apply_hunks", hunk_ids=["util.py", "README"])),
                                  turn(call("create_commit"))]})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    answer = answers(log, "2/extract/1")[0]
    assert answer == ("Nothing to apply: README (its hunks) is in the worktree already (applied in this step). "
                      "Nothing is left under util.py: the commits before this one took its changes. 1 hunks "
                      "remain for the commits after this one. If this commit is complete, call create_commit().")
    assert repo.git("diff", "--name-only", "feature-clean~2", "feature-clean~1").split() == ["README"]
    assert repo.tree("feature-clean") == repo.tree("feature")


@pytest.mark.parametrize("summary", [
    "The 399983 (invoicing/discounts.py) hunk is already in the worktree, so this commit is complete. "
    "No further actions are required.",
    "The worktree already contains the hunks for the tax module and the test module. No changes are needed.",
    "All hunks for this commit are applied; nothing else is needed.",
])
def test_the_ways_the_local_model_said_it_was_done_are_read_as_done(summary):
    assert says_done(summary)


@pytest.mark.parametrize("summary", [
    "The hints ask for util.py only, but two() is used by tests that the spec puts later: reorder them.",
    "need to take changes from invoicing/money.py and tests/test_money.py first",
])
def test_a_summary_of_a_real_problem_is_not_read_as_done(summary):
    assert not says_done(summary)


@pytest.mark.parametrize(("confirm", "reason"), [
    ("yes", False), ("why they belong here", False), ("Why they belong here.", False),
    ("the README line documents two()", True)])
def test_a_reason_is_words_of_the_models_own(confirm, reason):
    assert a_reason(confirm) is reason


def test_the_answers_placeholder_sent_back_as_a_confirm_is_no_reason(tmp_path, scripted):
    """The 1.5B model confirmed hunks outside its paths with create_commit(confirm="why they belong
    here"), the answer's own words, and the commit was accepted with them as its reason."""
    repo = planned(tmp_path)
    log = scripted({"1/extract": [turn(call("read_diff")), turn(call("apply_hunks", hunk_ids="$ids:README|util.py")),
                                  turn(call("create_commit")),
                                  turn(call("create_commit", confirm="why they belong here")),
                                  turn(call("apply_hunks", hunk_ids="$back:README")),
                                  turn(call("create_commit"))],
                    "2/extract": [turn(call("create_commit"))]})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    assert "Your confirm gives no reason" in answers(log)[3]
    assert only_util(repo, "feature-clean~2") and "confirmed" not in note(repo, "feature-clean~2")


HINTED = HINTS_ONLY.replace('message = "app: use two()"\n', 'message = "app: use two()"\nhints = "Only app.py."\n')


def test_hunks_in_a_file_a_later_commits_hints_name_are_named_back(tmp_path, scripted):
    """The hints-only demo: the 1.5B model took nine files into the money commit, the tax commit's
    (its hints name invoicing/tax.py) among them, and the tests passed all the same."""
    repo = planned(tmp_path, HINTED)
    log = scripted({"1/extract": [turn(call("apply_hunks", hunk_ids=["util.py", "app.py"])),
                                  turn(call("create_commit")),
                                  turn(call("apply_hunks", hunk_ids="$back:app.py")), turn(call("create_commit"))],
                    "2/extract": [turn(call("apply_hunks", hunk_ids=["app.py"])), turn(call("create_commit"))]})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    app = next(h.id for h in _hunks(repo) if h.path == "app.py")[:4]
    assert answers(log)[1].startswith(f"Error: Not committed: this commit took 1 hunk in files that the hints of "
                                      f"later commits name (commit 2): {app} (app.py). Put back")
    assert only_util(repo, "feature-clean~2")


def test_a_file_the_commits_own_hints_name_too_is_not_named_back(tmp_path, scripted):
    repo = planned(tmp_path, HINTED.replace('hints = "Only util.py."', 'hints = "util.py, and its first use in '
                                                                        'app.py."'))
    scripted({"1/extract": [turn(call("apply_hunks", hunk_ids=["util.py", "app.py"])), turn(call("create_commit"))],
              "2/extract": [turn(call("stuck", summary="commit 1 took app.py whole: drop this commit"))]})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 3, res.text
    assert "commit 2/3 is stuck: commit 1 took app.py whole" in res.out + res.err
    assert repo.git("diff", "--name-only", "main", "feature-clean").split() == ["app.py", "util.py"]


@pytest.mark.parametrize(("hints", "path", "named"), [
    ("Only invoicing/tax.py and tests/test_tax.py.", "invoicing/tax.py", True),
    ("Only tax.py and its tests.", "invoicing/tax.py", True),          # the one changed path with that name
    ("Only tax.py and its tests.", "tests/tax.py", False),             # two paths have it: which is meant?
    ("Everything but tax.py.", "invoicing/tax.py", False),
    ("The tax module.", "invoicing/tax.py", False),
])
def test_hints_name_a_file_by_its_path_or_its_unique_file_name(hints, path, named):
    assert names_file(hints, path, {"invoicing/tax.py", "tests/test_tax.py", "tests/tax.py"} - (
        {"tests/tax.py"} if path == "invoicing/tax.py" else set())) is named


def test_a_fix_that_takes_a_later_commits_hunks_beyond_the_briefs_candidates_puts_them_back(tmp_path, scripted):
    """What the 1.5B model did in a fix of the planned demo: beside the candidates (applied for it),
    it took two later commits' test files, and the tests passed; the commit was accepted."""
    repo = needs_fix_repo(tmp_path, extra=True)
    log = scripted({"1/extract": [turn(call("create_commit"))],
                    "1/fix/1": [turn(call("apply_hunks", hunk_ids=["extra.py", "README"])),
                                turn(call("create_commit", confirm="yes")),
                                turn(call("apply_hunks", hunk_ids="$back:README")), turn(call("create_commit"))]})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    readme = next(h.id for h in _hunks(repo) if h.path == "README")[:4]
    refused = answers(log, "1/fix/1")[1]
    assert refused.startswith(f"Error: Not committed: this commit took 1 hunk under the paths of later commits "
                              f"(commit 2): {readme} (README).")
    # The candidates plain code applied (util.py) and what is missing (extra.py) are the fix's to take.
    assert repo.git("diff", "--name-only", "feature-clean~2", "feature-clean~1").split() == ["extra.py", "util.py"]
    assert repo.tree("feature-clean") == repo.tree("feature")
