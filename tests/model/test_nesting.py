"""Arguments nested thousands of levels deep (a model that loops on brackets) end in a
clean answer to the model, never in a RecursionError (issue 23)."""
from __future__ import annotations

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
