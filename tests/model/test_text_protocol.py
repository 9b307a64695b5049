"""`--tools text`: any model calls the tools through git-retcon's text protocol (one fenced JSON call a
reply, run by git-retcon, answered in the next message), the same tools and the same trees as with
llm's tool calling; `--tools native` refuses a model that has none (tests/cli/test_errors.py)."""
from __future__ import annotations

import json

from testing.flow import call, needs_fix_repo, retcon, turn
from tests.model.test_answers import small


def note(repo, rev: str) -> dict:
    return json.loads(repo.git("notes", "--ref=retcon", "show", rev))


def test_retcon_paths_extracts_and_fixes_through_the_text_protocol(tmp_path):
    native, text = needs_fix_repo(tmp_path / "a"), needs_fix_repo(tmp_path / "b")
    assert retcon(native, "run", "-m", "retcon-paths").code == 0
    res = retcon(text, "run", "-m", "retcon-paths", "--tools", "text")
    assert res.code == 0, res.text
    assert [text.tree(f"feature-clean~{i}") for i in range(3)] == [native.tree(f"feature-clean~{i}") for i in range(3)]
    assert note(text, "feature-clean~1")["kind"] == "wip"


def test_a_tool_calling_model_told_to_write_its_calls(tmp_path, scripted):
    repo = small(tmp_path)
    log = scripted({"1/extract": [turn(call("read_diff", path="util.py")),
                                  turn(call("apply_hunks", hunk_ids="$ids:util.py|.github/")),
                                  turn(call("create_commit"))]})
    res = retcon(repo, "run", "-m", "scripted", "--tools", "text")
    assert res.code == 0, res.text
    assert repo.tree("clean~1") == repo.tree("feature~1")
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    assert all(e["tools"] == [] for e in entries)
    assert "How to call a tool: you have no tool-calling interface here" in entries[0]["system"]
    assert entries[1]["results"][0].startswith('Result of read_diff({"path": "util.py"}):\nRemaining diff: 1 hunk')
