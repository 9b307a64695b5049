"""`git retcon status`: per logical commit, how long its build, its tests and its model
steps took (issue 13), in the table and in --json; recorded in the notes, so a later
`status` (another process) still knows."""
from __future__ import annotations

import json

from testing.cleaned import SPEC
from testing.flow import call, feature_repo, retcon, take, turn

TIMED = SPEC.replace('build = "', 'build = "sleep 0.3 && ').replace('test = "', 'test = "sleep 0.2 && ')


def test_status_shows_build_test_and_model_seconds_per_commit(tmp_path, scripted):
    repo = feature_repo(tmp_path / "repo")
    (tmp_path / "spec.toml").write_text(TIMED)
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit").code == 0
    slow = [{**t, "sleep": 0.4} if i == 0 else t for i, t in enumerate(take("util.py"))]   # the model thinks
    scripted({"1/extract": slow, "2/extract": take("app.py"), "3/extract": [turn(call("read_diff")),
              turn(call("apply_hunks", hunk_ids="$ids:")), turn(call("create_commit", message=""))]})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    doc = json.loads(retcon(repo, "status", "--json").out)
    secs = [c["seconds"] for c in doc["commits"]]
    assert all(s["build"] >= 0.3 and s["test"] >= 0.2 for s in secs), secs
    assert secs[0]["model"] >= 0.4 > secs[1]["model"], secs
    text = retcon(repo, "status").out
    assert "time b/t/model" in text.splitlines()[1]
    row = text.splitlines()[2]
    assert row.startswith("  1  complete") and f"{secs[0]['build']:.1f}s/{secs[0]['test']:.1f}s/" in row, text


def test_a_stuck_steps_model_seconds_count_for_its_commit(tmp_path, scripted):
    """A step that made no commit (stuck) spent model time too: it is noted on the spec chain."""
    repo = feature_repo(tmp_path / "repo")
    (tmp_path / "spec.toml").write_text(TIMED)
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit").code == 0
    scripted({"1/extract": [{**turn(call("stuck", summary="cannot tell")), "sleep": 0.3}]})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 3, res.text
    doc = json.loads(retcon(repo, "status", "--json").out)
    assert doc["commits"][0]["state"] == "stuck"
    assert doc["commits"][0]["seconds"]["model"] >= 0.3
    assert doc["commits"][0]["seconds"]["build"] == 0
