"""Arguments and replies nested thousands of levels deep (a model that loops on brackets) end in a
clean answer to the model, never in a RecursionError (issue 23)."""
from __future__ import annotations

import json

from testing.flow import call, retcon, turn
from tests.model.test_answers import MINE, results, small


def test_deeply_nested_arguments_are_a_clean_tool_error(tmp_path, scripted):
    repo = small(tmp_path)
    log = scripted({"1/extract": [{"calls": [{"name": "apply_hunks", "arguments": {"hunk_ids": "x"}, "deep": 5000}]},
                                  turn(call("apply_hunks", hunk_ids=MINE)), turn(call("create_commit"))]})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    assert results(log)[0].startswith("Error: apply_hunks: the argument 'hunk_ids' holds lists or objects nested "
                                      "more than 16 levels deep; nothing was done")
    assert repo.tree("clean~1") == repo.tree("feature~1")
    assert "RecursionError" not in res.text and "internal error" not in res.text


def test_a_reply_too_deep_for_the_client_to_read_starts_the_step_again(tmp_path, scripted):
    """llm's OpenAI client json.loads a tool call's arguments: thousands of levels raise RecursionError
    there, and the conversation loses the reply; the step goes on from its prompt."""
    repo = small(tmp_path)
    log = scripted({"1/extract": [{"calls": [call("apply_hunks", hunk_ids=MINE)], "unreadable": 1},
                                  turn(call("create_commit"))]})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    assert repo.tree("clean~1") == repo.tree("feature~1")
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    again = [e for e in entries if e["keys"] == ["1/extract/1"] and not e.get("unreadable")][0]
    assert again["prompt"].startswith("Commit 1/2: util: two() and CI")
    assert "Your last reply could not be read: its tool call nests lists or objects too deeply" in json.dumps(again)
