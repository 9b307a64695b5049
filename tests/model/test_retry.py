"""When the backend fails (issue 11, part 3): one retry policy for run and plan; a
connection that cannot be made fails at once with its cause; every wait on a model
shows its elapsed time and retries on the live line."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from testing import flaky_model
from testing.fixcase import BRIEF_IDS, make
from testing.flow import ROOT, call, retcon, take, turn
from tests.test_ui import on_terminal


@pytest.fixture
def flaky(tmp_path, monkeypatch, scripted):
    flaky_model.register()
    monkeypatch.setenv("RETCON_FLAKY_COUNT", str(tmp_path / "flaky-count"))
    monkeypatch.setenv("RETCON_RETRY_DELAY", "0.001")
    yield scripted
    flaky_model.unregister()


def calls(tmp_path) -> int:
    return int((tmp_path / "flaky-count").read_text())


SCRIPT = {"1/extract": take("app.py"),
          "1/fix/1": [turn(call("apply_hunks", hunk_ids=BRIEF_IDS)), turn(call("create_commit", message="x"))],
          "2/extract": take("")}


@pytest.mark.parametrize("kind, cause", [("dns", "gaierror: [Errno -2] Name or service not known"),
                                         ("refused", "ConnectionRefusedError: [Errno 111] Connection refused")])
def test_run_fails_at_once_with_the_cause_when_the_backend_cannot_be_reached(tmp_path, flaky, monkeypatch,
                                                                            kind, cause):
    repo = make(tmp_path, docs=0)
    flaky(SCRIPT)
    monkeypatch.setenv("RETCON_FLAKY_FAIL", "1")
    monkeypatch.setenv("RETCON_FLAKY_CONNECT", kind)
    res = retcon(repo, "run", "-m", "scripted-flaky")
    assert res.code == 1, res.text
    assert calls(tmp_path) == 1                      # not retried: nothing would change
    assert "model 'scripted-flaky' cannot be reached: APIConnectionError: Connection error. " \
           f"(cause: {cause})" in res.err, res.err
    assert len(res.err.strip().splitlines()) == 1 and "Traceback" not in res.text
    assert repo.log("main..feature-clean") == []
    assert retcon(repo, "run", "-m", "scripted").code == 0      # nothing half-made to resume from


def test_a_dropped_connection_is_retried_and_said(tmp_path, flaky, monkeypatch):
    repo = make(tmp_path, docs=0)
    flaky(SCRIPT)
    monkeypatch.setenv("RETCON_FLAKY_FAIL", "1")
    monkeypatch.setenv("RETCON_FLAKY_CONNECT", "reset")
    res = retcon(repo, "run", "-m", "scripted-flaky")
    assert res.code == 0, res.text
    assert "Model error (APIConnectionError: Connection error. (cause: ConnectionResetError: [Errno 104] " \
           "Connection reset by peer)); retrying in" in res.out


def test_plan_uses_the_same_policy(tmp_path, flaky, monkeypatch):
    repo = make(tmp_path, docs=0)
    flaky({"*/plan": [{"json": {"commits": [{"message": "all", "hunks": "$match:^([0-9a-f]{10}) "}]}}]})
    monkeypatch.setenv("RETCON_FLAKY_FAIL", "1")
    monkeypatch.setenv("RETCON_FLAKY_CONNECT", "dns")
    res = retcon(repo, "plan", "--whole", "-m", "scripted-flaky", "--no-edit", "--cleaned", "planned",
                 "--source", "feature", "--onto", "main")
    assert res.code == 1 and calls(tmp_path) == 1, res.text
    assert "cannot be reached" in res.err and "Name or service not known" in res.err
    assert len(res.err.strip().splitlines()) == 1 and repo.git("for-each-ref", "refs/retcon/planned") == ""
    # A transient error is retried, and the retry is said.
    (tmp_path / "flaky-count").write_text("0")
    monkeypatch.setenv("RETCON_FLAKY_CONNECT", "reset")
    res = retcon(repo, "plan", "--whole", "-m", "scripted-flaky", "--no-edit", "--cleaned", "planned",
                 "--source", "feature", "--onto", "main")
    assert "Model error (APIConnectionError: Connection error. (cause: ConnectionResetError" in res.out, res.text
    assert calls(tmp_path) >= 2


def test_a_wait_on_the_model_shows_elapsed_time_and_retries_on_the_live_line(tmp_path, flaky, monkeypatch):
    repo = make(tmp_path, docs=0)
    slow = [{**t, "sleep": 0.6} if i == 0 else t for i, t in enumerate(take("app.py"))]
    log = flaky({**SCRIPT, "1/extract": slow})
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TERM": "xterm", "RETCON_FLAKY_FAIL": "1",
           "RETCON_RETRY_DELAY": "0.8"}
    code, out = on_terminal(repo.path, [sys.executable, "-m", "testing.run_retcon", "run", "-m", "scripted-flaky"],
                            env)
    assert code == 0, out
    assert re.search(r"\rWaiting for scripted-flaky\.\.\. 0\.\ds", out), out
    assert re.search(r"\rWaiting for scripted-flaky\.\.\. \d\.\ds  retry 2 in 0\.\ds after RateLimitError", out), out
    assert "Model error (RateLimitError: Error code: 429" in out
    assert log.exists()
    piped = subprocess.run([sys.executable, "-m", "testing.run_retcon", "status"], cwd=repo.path, env=env,
                           capture_output=True, text=True, timeout=60)
    assert "\r" not in piped.stdout


@pytest.mark.parametrize("value, wanted", [("nan", 2.0), ("inf", 2.0), ("-1", 0.0), ("soon", 2.0), ("0.5", 0.5)])
def test_a_retry_delay_that_is_not_a_finite_number_is_the_default(monkeypatch, value, wanted):
    """RETCON_RETRY_DELAY=nan made the first retry crash in time.sleep (an internal error)."""
    from git_retcon.model.retry import Retry

    monkeypatch.setenv("RETCON_RETRY_DELAY", value)
    assert Retry("m", "nothing was lost").base == wanted
