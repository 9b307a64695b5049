"""The notes a run writes keep their public shape (DESIGN.md "Machine-readable formats"):
other tools read them, so a key may not appear, vanish or change type unnoticed."""
from __future__ import annotations

import json

from testing.flow import SPEC, call, feature_repo, retcon, take, turn


def show(repo, ref, target):
    return json.loads(repo.git("notes", f"--ref={ref}", "show", target))


def test_a_run_with_a_fix_writes_each_note_in_its_contract_shape(tmp_path, scripted):
    repo = feature_repo(tmp_path / "repo")
    spec = SPEC.replace('message = "util: add two()"\nhints = "Only util.py."\npaths = ["util.py"]\n\n[[commit]]\n', "")
    (tmp_path / "s.toml").write_text(spec)
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "s.toml"), "--no-edit").code == 0
    scripted({
        "1/extract": take("app.py"),
        "1/fix/1": [turn(call("apply_hunks", hunk_ids="$ids:util.py")),
                    turn(call("create_commit", message="add the missing helper"))],
        "2/extract": take(""),
    })
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text

    initial = show(repo, "refs/notes/retcon", repo.rev("feature-clean~2"))
    assert sorted(initial) == ["attempt", "build", "index", "kind", "model_calls", "spec", "test", "tokens"]
    assert [initial[k] for k in ("spec", "index", "kind", "attempt")] == ["feature-clean", 1, "initial", 1]
    assert initial["test"] == "fail" and sorted(initial["tokens"]) == ["input", "output"]

    wip = show(repo, "refs/notes/retcon", repo.rev("feature-clean~1"))
    assert sorted(wip) == ["attempt", "build", "diagnosis", "index", "kind", "model_calls", "rework", "spec", "test",
                           "tokens"]
    assert (wip["kind"], wip["attempt"], wip["test"]) == ("wip", 2, "pass")
    assert "AttributeError" in wip["diagnosis"] and isinstance(wip["rework"]["candidates"], list)

    tested = show(repo, "refs/notes/retcon-tests", repo.tree("feature-clean~1"))
    assert sorted(tested) == ["build", "test"]
    assert sorted(tested["test"]) == ["command", "exit_code", "output", "result", "seconds"]
    assert tested["test"]["result"] == "pass" and tested["test"]["exit_code"] == 0

    # The run's totals are noted on the spec chain's commit current when it ended.
    spec_note = show(repo, "refs/notes/retcon", repo.rev("refs/retcon/feature-clean"))
    assert sorted(spec_note) == ["runs"]
    (run,) = spec_note["runs"]
    assert sorted(run) == ["commits", "model", "stop", "tokens"]
    assert (run["model"], run["stop"]) == ("scripted", "complete")
    assert sorted(run["tokens"]) == ["calls", "input", "output"] and sorted(run["commits"]) == ["1", "2"]
    assert run["tokens"]["input"] == sum(c["input"] for c in run["commits"].values())
