"""`git retcon squash` and `run --squash-wip`: WIP commits folded into their logical
commit, trees and tree-keyed test records unchanged, provenance in the note, the
spec's history consistent for resume and `check`."""
from __future__ import annotations

import json
import signal

from testing.fixcase import BRIEF_IDS, SPEC, make
from testing.flow import call, retcon, retcon_proc, take, turn

# No fix turns: commit 1's fix, the brief's candidate, passes, and plain code commits it.
SCRIPT = {"1/extract": take("app.py")}
WIP = "WIP: take the definition of `two` from util.py"


def note(repo, rev, ref="refs/notes/retcon"):
    return json.loads(repo.git("notes", f"--ref={ref}", "show", rev))


def test_squash_folds_the_wip_keeps_trees_and_test_records(tmp_path, scripted):
    repo = make(tmp_path, docs=1)
    scripted(SCRIPT)
    assert retcon(repo, "run", "-m", "scripted").code == 0
    initial, wip, docs = repo.git("rev-list", "--reverse", "main..feature-clean").split()
    trees = [repo.tree(wip), repo.tree(docs)]
    before = [note(repo, s) for s in (initial, wip)]
    tests_ref = repo.rev("refs/notes/retcon-tests")
    assert retcon(repo, "check").code == 1                      # a WIP commit is left

    res = retcon(repo, "squash")
    assert res.code == 0, res.text
    assert "Squashed 1 WIP commit into 1 logical commit" in res.out
    assert repo.log("main..feature-clean") == ["docs: explain main", "app: use two()"]
    squashed, docs2 = repo.git("rev-list", "--reverse", "main..feature-clean").split()
    assert [repo.tree(squashed), repo.tree(docs2)] == trees
    assert repo.git("log", "-1", "--format=%an <%ae>%n%B", squashed) == \
        repo.git("log", "-1", "--format=%an <%ae>%n%B", initial)
    # Nothing was built or tested again: the records keyed by tree hold as they are.
    assert repo.rev("refs/notes/retcon-tests") == tests_ref
    records = note(repo, trees[0], "refs/notes/retcon-tests")["commands"].values()
    assert [rec["result"] for rec in records if rec["kind"] == "test"] == ["pass"]

    prov = note(repo, squashed)
    assert prov["spec"] == "feature-clean" and prov["index"] == 1 and prov["kind"] == "initial"
    assert prov["test"] == "pass"
    assert prov["tokens"]["input"] == before[0]["tokens"]["input"] + before[1]["tokens"]["input"]
    sq = prov["squashed"]
    assert sq["from"] == [initial, wip] and sq["attempts"] == 2
    fix = sq["fixes"][0]
    # The brief's candidate passed, and plain code committed it: no model made this fix.
    assert fix["commit"] == wip and fix["by"] == "plain code" and fix["message"] == WIP
    assert fix["diagnosis"].startswith("Test failed:") and fix["candidates"] == before[1]["rework"]["candidates"]
    assert sq["resolved_by"] == f"plain code: {WIP}"
    assert note(repo, docs2)["rewritten_from"] == docs

    spec = retcon(repo, "spec", "show").out
    assert f'{{ squashed = "{squashed}" }},\n    "complete",' in spec
    doc = json.loads(retcon(repo, "status", "--json").out)
    assert [c["commits"] for c in doc["commits"]] == [[squashed], [docs2]]
    assert [c["wip"] for c in doc["commits"]] == [0, 0]
    assert doc["commits"][0]["tokens"]["input"] >= prov["tokens"]["input"]
    chk = retcon(repo, "check")
    assert chk.code == 0, chk.out
    # Resume sees the squashed branch as its own: nothing to adopt, nothing to do.
    again = retcon(repo, "run", "-m", "scripted")
    assert again.code == 0 and "Nothing to do" in again.out and "Adopting" not in again.out
    assert retcon(repo, "squash").out.startswith("Nothing to squash")


def test_a_fix_the_model_made_is_the_models_in_the_squashed_note(tmp_path, scripted):
    repo = make(tmp_path, docs=1, extra=True)    # the candidate alone fails: the model takes extra.py
    scripted({**SCRIPT, "1/fix/1": [turn(call("apply_hunks", hunk_ids=["extra.py"])),
                                    turn(call("create_commit", message="take extra.py"))]})
    assert retcon(repo, "run", "-m", "scripted").code == 0
    assert retcon(repo, "squash").code == 0
    sq = note(repo, "feature-clean~1")["squashed"]
    assert [f["by"] for f in sq["fixes"]] == ["model"] and sq["resolved_by"] == "model: WIP: take extra.py"


def test_run_with_squash_wip_squashes_at_the_end(tmp_path, scripted):
    repo = make(tmp_path, docs=1)
    scripted(SCRIPT)
    res = retcon(repo, "run", "-m", "scripted", "--squash-wip")
    assert res.code == 0, res.text
    # The step said it made a WIP; the report says where it went, not "0 WIP fix commits".
    assert "Commit created (1 WIP)" in res.out
    assert "1 WIP fix commit squashed into their logical commits" in res.out
    assert "0 WIP fix commits left" in res.out and "\n0 WIP fix commits\n" not in res.out
    assert repo.log("main..feature-clean") == ["docs: explain main", "app: use two()"]
    assert retcon(repo, "check").code == 0


def test_a_squash_killed_before_the_spec_was_written_is_finished_by_running_it_again(tmp_path, scripted):
    repo = make(tmp_path, docs=1)
    scripted(SCRIPT)
    assert retcon(repo, "run", "-m", "scripted").code == 0
    killed = retcon_proc(repo, "squash", env={"RETCON_FAILPOINT": "squash-after-branch"})
    assert killed.code == -signal.SIGKILL
    assert repo.log("main..feature-clean") == ["docs: explain main", "app: use two()"]
    assert retcon(repo, "check").code == 1          # the spec still records the old commits
    res = retcon(repo, "squash")
    assert res.code == 0 and "Finished an interrupted squash" in res.out, res.text
    assert retcon(repo, "check").code == 0


def test_a_squash_killed_before_the_spec_was_written_is_finished_by_the_next_run(tmp_path, scripted):
    """`run --squash-wip` killed there: a plain `run` resumes instead of refusing the branch."""
    repo = make(tmp_path, docs=1)
    scripted(SCRIPT)
    killed = retcon_proc(repo, "run", "-m", "scripted", "--squash-wip",
                         env={"RETCON_FAILPOINT": "squash-after-branch"})
    assert killed.code == -signal.SIGKILL
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0 and "Finished an interrupted squash" in res.out, res.text
    assert repo.log("main..feature-clean") == ["docs: explain main", "app: use two()"]
    assert retcon(repo, "check").code == 0

def test_squash_refuses_a_wip_of_an_unfinished_commit_and_a_checked_out_branch(tmp_path, scripted):
    # Commit 2 is not the last (plain code takes that one whole, so its tree leaves nothing to fix):
    # its extraction breaks app.py's build and util.py's (the brief's candidate, app.py's hunk, fails
    # alone on util.py: the model is asked), and its one fix (the notes) leaves it failing: stuck with a WIP.
    repo = make(tmp_path, spec=SPEC.replace('paths = ["README", "notes/", "docs/"]', 'paths = ["README", "notes/"]')
                + '\n[[commit]]\nmessage = "docs: pages"\npaths = ["docs/"]\n', docs=1)
    scripted({**SCRIPT,
              "2/extract": [turn(call("apply_hunks", hunk_ids="$ids:README")),
                            turn(call("write_file", path="app.py", content="def main(:\n")),
                            turn(call("write_file", path="util.py", content="def one(:\n")),
                            turn(call("create_commit", message="docs"))],
              "2/fix/1": [turn(call("apply_hunks", hunk_ids="$back:app.py")),   # the candidate applied for it
                          turn(call("write_file", path="NOTES.txt", content="app.py is broken\n")),
                          turn(call("create_commit", message="notes"))]})
    res = retcon(repo, "run", "-m", "scripted", "--max-fix", "1")
    assert res.code == 3, res.text
    assert repo.log("main..feature-clean") == ["WIP: notes", "docs: explain main", WIP, "app: use two()"]
    tip, spec = repo.rev("feature-clean"), repo.rev("refs/retcon/feature-clean")
    res = retcon(repo, "squash")
    assert res.code == 1 and "commit 2/3 is stuck with 2 commits: squash when it is complete" in res.err
    assert (repo.rev("feature-clean"), repo.rev("refs/retcon/feature-clean")) == (tip, spec)
    repo.git("checkout", "-q", "feature-clean")
    res = retcon(repo, "squash")
    assert res.code == 1 and "is checked out" in res.err
    assert repo.rev("feature-clean") == tip


def test_a_squash_whose_first_fold_is_not_commit_1_keeps_the_commits_before_it(tmp_path, scripted):
    spec = SPEC_THREE
    repo = make(tmp_path, spec=spec, docs=1)
    scripted({"1/extract": take("notes/"), "2/extract": take("app.py"), "3/extract": take(""),
              "2/fix/1": [turn(call("apply_hunks", hunk_ids=BRIEF_IDS)), turn(call("create_commit", message="two"))]})
    assert retcon(repo, "run", "-m", "scripted").code == 0
    notes_c, app, wip, docs = repo.git("rev-list", "--reverse", "main..feature-clean").split()
    trees = [repo.tree(s) for s in (notes_c, wip, docs)]

    res = retcon(repo, "squash")
    assert res.code == 0, res.text
    assert "Squashed 1 WIP commit into 1 logical commit" in res.out
    assert repo.log("main..feature-clean") == ["docs: explain main", "app: use two()", "notes: add the todo"]
    first, squashed, docs2 = repo.git("rev-list", "--reverse", "main..feature-clean").split()
    assert first == notes_c                          # before the first fold, nothing is rewritten
    assert [repo.tree(s) for s in (first, squashed, docs2)] == trees
    assert repo.rev(f"{squashed}^") == notes_c
    assert note(repo, squashed)["squashed"]["from"] == [app, wip]
    assert note(repo, docs2)["rewritten_from"] == docs
    doc = json.loads(retcon(repo, "status", "--json").out)
    assert [c["commits"] for c in doc["commits"]] == [[notes_c], [squashed], [docs2]]
    assert [c["state"] for c in doc["commits"]] == ["complete"] * 3
    assert "squashed" not in retcon(repo, "spec", "show").out.split("[[commit]]")[1]
    assert retcon(repo, "check").code == 0


SPEC_THREE = """\
source = "feature"
remote = "main"
cleaned = "feature-clean"
owners = "conversation"
build = "python3 -m py_compile app.py util.py"
test = "python3 -c 'import app; app.main()'"

[[commit]]
message = "notes: add the todo"
paths = ["notes/"]

[[commit]]
message = "app: use two()"
paths = ["app.py"]

[[commit]]
message = "docs: explain main"
paths = ["README", "docs/"]
"""
