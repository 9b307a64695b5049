"""`llm logs` shows what git-retcon sent (issue 11, part 3): each model exchange of run
and plan goes to llm's database when llm logging is on; `--no-log` and `llm logs off`
keep it out. LLM_USER_PATH is a temp directory (tests/conftest.py)."""
from __future__ import annotations

import json
import os
from pathlib import Path

from click.testing import CliRunner

from testing.fixcase import make
from testing.flow import call, retcon, take, turn


def llm_logs(*args: str) -> list[dict]:
    """`llm logs list --json -n 0`, as a user would run it (no database yet: nothing logged)."""
    from llm.cli import cli

    if not (Path(os.environ["LLM_USER_PATH"]) / "logs.db").exists():
        return []
    res = CliRunner().invoke(cli, ["logs", "list", "-n", "0", "--json", *args])
    assert res.exit_code == 0, res.output
    return json.loads(res.output or "[]")


# With make(extra=True): the brief's candidate alone fails, so the fix is the model's.
SCRIPT = {"1/extract": take("app.py"),
          "1/fix/1": [turn(call("apply_hunks", hunk_ids="$ids:extra.py")), turn(call("create_commit", message="x"))],
          "2/extract": take("")}


def test_run_logs_each_exchange_to_llms_database(tmp_path, scripted):
    repo = make(tmp_path, docs=0, extra=True)
    log = scripted(SCRIPT)
    assert retcon(repo, "run", "-m", "scripted").code == 0
    entries = llm_logs()
    calls = len(log.read_text().splitlines())
    # Commit 1: 3 extraction turns and 2 fix turns; commit 2 (the last) is plain code's: no call.
    assert len(entries) == calls == 5
    assert {e["model"] for e in entries} == {"scripted"}
    text = json.dumps(entries)
    assert "Commit 1/2: app: use two()" in text and "Step: fix (attempt 1)" in text
    assert "Commit 2/2" not in text
    assert "apply_hunks" in text                # the tool calls the model made


def test_the_built_in_model_is_not_logged(tmp_path):
    repo = make(tmp_path, docs=0)
    assert retcon(repo, "run", "-m", "retcon-paths").code == 0
    assert llm_logs() == []


def test_no_log_and_llm_logs_off_keep_exchanges_out(tmp_path, scripted):
    from llm.cli import cli

    repo = make(tmp_path, docs=0, extra=True)
    scripted(SCRIPT)
    assert retcon(repo, "run", "-m", "scripted", "--no-log").code == 0
    assert llm_logs() == []
    assert retcon(repo, "abort", "feature-clean").code == 0
    assert CliRunner().invoke(cli, ["logs", "off"]).exit_code == 0
    assert retcon(repo, "run", "-m", "scripted").code == 0
    assert llm_logs() == []


def test_plan_logs_its_questions(tmp_path, scripted):
    repo = make(tmp_path, docs=0)
    scripted({"*/plan": [{"json": {"commits": [{"message": "all of it", "hunks": "$match:^([0-9a-f]{10}) "}]}}]})
    args = ["plan", "--whole", "-m", "scripted", "--no-edit", "--source", "feature", "--onto", "main",
            "--cleaned", "planned"]
    assert retcon(repo, *args, "--no-log").code == 0
    assert llm_logs() == []
    assert retcon(repo, *args, "--force").code == 0, "plan"
    entries = llm_logs()
    assert len(entries) == 1 and "propose_plan" in json.dumps(entries)
