"""Bad input: one clear line, a non-zero exit, no traceback, nothing changed (promise 6)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from testing.flow import (
    ROOT,
    SPEC,
    call,
    feature_repo,
    one_line_error,
    retcon,
    retcon_proc,
    spec_with,
    take,
    turn,
)
from testing.flow import plan_file as plan


@pytest.fixture
def repo(tmp_path):
    return feature_repo(tmp_path / "repo")


def snapshot(repo):
    return (repo.git("for-each-ref"), repo.status(), repo.git("worktree", "list"))




@pytest.mark.parametrize("text, words", [
    (SPEC.replace('remote = "main"', 'remote = "main'), ["line 2", "TOML syntax error"]),
    (SPEC.replace('remote = "main"\n', ""), ["'remote' is missing"]),
    (SPEC.replace('hints = "Only util.py."', 'hint = "Only util.py."'), ["line 10", "hint", "did you mean 'hints'"]),
    (SPEC.split("[[commit]]")[0], ["no [[commit]] entries"]),
    (SPEC.replace('source = "feature"', 'source = "nope"'), ["source 'nope' does not exist"]),
    (SPEC.replace('remote = "main"', 'remote = "origin/main"'), ["remote 'origin/main' does not exist"]),
])
def test_bad_specs_are_refused_with_one_line(repo, tmp_path, text, words):
    before = snapshot(repo)
    one_line_error(plan(repo, tmp_path, text), *words)
    assert snapshot(repo) == before


def test_no_merge_base(repo, tmp_path):
    repo.git("checkout", "-q", "--orphan", "island")
    repo.commit("unrelated", {"x": "1\n"})
    repo.git("checkout", "-q", "main")
    before = snapshot(repo)
    one_line_error(plan(repo, tmp_path, SPEC.replace('remote = "main"', 'remote = "island"')), "no merge base")
    assert snapshot(repo) == before


@pytest.fixture
def planned(repo, tmp_path):
    assert plan(repo, tmp_path, SPEC).code == 0
    return repo


@pytest.mark.parametrize("model, words", [
    ("no-such-model", ["unknown model 'no-such-model'", "llm models"]),
    ("scripted-notools --tools native", ["does not support tool calling", "--tools native", "text protocol"]),
    ("scripted-key", ["needs an API key", "llm keys set scripted", "SCRIPTED_API_KEY"]),
])
def test_unusable_models_are_refused_before_anything_is_touched(planned, scripted, model, words):
    before = snapshot(planned)
    one_line_error(retcon(planned, "run", "-m", *model.split()), *words)
    assert snapshot(planned) == before


def test_resolve_with_nothing_stuck(planned):
    before = snapshot(planned)
    one_line_error(retcon(planned, "resolve", "-m", "x"), "nothing is stuck")
    assert snapshot(planned) == before


def test_unknown_spec_name(planned):
    one_line_error(retcon(planned, "status", "nope"), "no spec named 'nope'", "feature-clean")


def test_build_command_not_found_is_refused_up_front(repo, tmp_path, scripted):
    assert plan(repo, tmp_path, SPEC.replace("python3 -m py_compile", "no-such-compiler")).code == 0
    before = snapshot(repo)
    one_line_error(retcon(repo, "run", "-m", "scripted"), "no-such-compiler", "not found")
    assert snapshot(repo) == before


def test_build_command_missing_in_the_worktree(repo, tmp_path, scripted):
    assert plan(repo, tmp_path, SPEC.replace("python3 -m py_compile app.py util.py", "./build.sh")).code == 0
    scripted({"1/extract": take("util.py")})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 1 and "Traceback" not in res.text
    first, *output = res.err.splitlines()
    assert "the build command `./build.sh` is not found on the base" in first and "(exit 127)" in first
    assert "the worktree has no `./build.sh`" in first and "spec edit" in first
    assert len(output) == 1 and "sh: " in output[0] and "./build.sh" in output[0]   # what the shell said


def test_hanging_command_is_killed_at_the_timeout(repo, tmp_path, scripted):
    # Hangs once util.py has two(): on commit 1, not on the base.
    text = SPEC.replace("python3 -m py_compile app.py util.py", "! grep -q two util.py || sleep 30").replace(
        'remote = "main"', 'remote = "main"\ntimeout = 1')
    assert plan(repo, tmp_path, text).code == 0
    scripted({"1/extract": take("util.py")})
    start = time.monotonic()
    res = retcon(repo, "run", "-m", "scripted")
    assert time.monotonic() - start < 20
    assert res.code == 3 and "timed out after 1s" in res.err and "timeout" in res.err


def test_second_run_on_the_same_spec_is_refused(planned, tmp_path):
    spec = retcon(planned, "spec", "show").out.replace(
        "python3 -m py_compile app.py util.py", f"touch {tmp_path}/started && sleep 30")
    spec = spec_with(spec, writable=[tmp_path])
    (tmp_path / "slow.toml").write_text(spec)
    assert retcon(planned, "spec", "import", str(tmp_path / "slow.toml")).code == 0
    (tmp_path / "script.json").write_text(json.dumps({"*/extract": take("")}))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RETCON_SCRIPT": str(tmp_path / "script.json")}
    first = subprocess.Popen([sys.executable, "-m", "testing.run_retcon", "run", "-m", "scripted"],
                             cwd=planned.path, env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "started").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        res = retcon_proc(planned, "run", "-m", "scripted", env={"RETCON_SCRIPT": str(tmp_path / "script.json")})
        one_line_error(res, f"pid {first.pid}", "is working on 'feature-clean'")
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()


def test_cleaned_branch_rewritten_by_hand(planned, scripted):
    scripted({"1/extract": take("util.py"), "2/extract": [turn(call("stuck", summary="pause"))]})
    assert retcon(planned, "run", "-m", "scripted").code == 3
    planned.git("branch", "-f", "feature-clean", "main")
    assert retcon(planned, "resolve", "-m", "x").code == 0
    before = snapshot(planned)
    one_line_error(retcon(planned, "run", "-m", "scripted"), "no longer holds the recorded commits",
                   "git branch -f feature-clean")
    assert snapshot(planned) == before


def test_cleaned_branch_checked_out_by_the_user(planned, scripted):
    planned.git("branch", "feature-clean", "main")
    planned.git("checkout", "-q", "feature-clean")
    before = snapshot(planned)
    one_line_error(retcon(planned, "run", "-m", "scripted"), "is checked out in")
    assert snapshot(planned) == before


def test_malformed_tool_calls_come_back_as_errors_and_the_model_recovers(planned, scripted):
    bad = [
        {"name": "apply_hunks", "raw_arguments": "not a dict"},
        call("apply_hunks", hunk_ids=[1, 2]),
        call("apply_hunks", hunk_ids=["deadbeef00"]),
        call("apply_hunks", hunk_ids=[]),
        call("read_diff", page="two"),
        call("write_file", path="x.py"),
        call("create_commit", message=""),
        call("create_commit", message="nothing applied yet"),
        call("no_such_tool"),
    ]
    # util.py's hunk, applied for the model (the spec's paths), is put back first: nothing to commit.
    put_back = call("apply_hunks", hunk_ids="$back:util.py")
    log = scripted({"1/extract": [turn(put_back, *bad), *take("util.py")[1:]],
                    "2/extract": take("app.py"), "3/extract": take("")})
    res = retcon(planned, "run", "-m", "scripted")
    assert res.code == 0, res.text
    back, *first = [json.loads(ln) for ln in log.read_text().splitlines()][1]["results"]
    assert back.startswith("Put back 1 hunk (util.py)")
    assert len(first) == len(bad) and all(r.startswith(("Error:", "Cancelled:")) for r in first), first
    assert "no_such_tool" in first[-1]
    assert "unknown hunk ids: deadbeef00" in first[2] and "nothing to commit" in first[7]
    assert planned.tree("feature-clean") == planned.tree("feature")


def test_endless_bad_calls_end_as_stuck(repo, tmp_path, scripted):
    """With hints only: where the spec's paths decide, plain code commits them instead."""
    assert plan(repo, tmp_path, SPEC.replace('paths = ["util.py"]\n', "")).code == 0
    scripted({"1/extract": [turn(call("apply_hunks", hunk_ids=["0000000000"])) for _ in range(30)]})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 3 and "tool calls kept failing" in res.err
