"""read_step reads back what the step templates write: a change of their wording that the
built-in model or the test models would misread fails here, not in a run."""
from __future__ import annotations

import json

from git_retcon.model.prompt import read_step, template

VALUES = {
    "number": "2", "n": "5", "summary": "parser: accept trailing commas", "message": "parser: accept trailing commas\n",
    "hints": "Only the grammar.", "paths": json.dumps(["src/parser/", "tests/test parser.py"]),
    "assigned": "3f2a 8e01 (1 of the 3 planned are no longer in the remaining diff)", "resolution": "",
    "stat": "4 hunks in 3 files (+10 -2)", "index": "(empty)", "applied": "",
}


def test_an_extraction_prompt_reads_back_as_written():
    fields = read_step(template("extract.md").substitute(VALUES))
    assert (fields.number, fields.n, fields.summary, fields.step, fields.attempt) == (
        2, 5, "parser: accept trailing commas", "extract", 1)
    assert fields.paths == ["src/parser/", "tests/test parser.py"]
    assert fields.assigned == VALUES["assigned"]
    assert fields.brief == ""


def test_a_fix_prompt_reads_back_with_its_attempt_and_brief():
    brief = "Test failed: `pytest` (exit 1)\n\nCandidate hunks in the remaining diff:\n  3f2a src/x.py modify +1 -0: y"
    fields = read_step(template("fix.md").substitute(VALUES, attempt="3", brief=brief))
    assert (fields.number, fields.n, fields.step, fields.attempt) == (2, 5, "fix", 3)
    assert fields.brief == brief
    assert fields.paths == ["src/parser/", "tests/test parser.py"]


def test_the_hunks_applied_for_the_model_read_back_by_their_ids():
    """What plain code applied before the model (steps.applied_text writes applied.md): retcon-paths
    reads it to know there is nothing left to choose."""
    lines = "  3f2a src/parser/x.py modify +3 -1\n  8e01 tests/test parser.py add +9 -0"
    applied = template("applied.md").substitute(why="the hunks under its paths", lines=lines, advice="Check them.")
    fields = read_step(template("extract.md").substitute(VALUES, applied=applied))
    assert fields.applied == ["3f2a", "8e01"]
    assert fields.paths == ["src/parser/", "tests/test parser.py"]
    assert read_step(template("extract.md").substitute(VALUES)).applied == []


def test_a_prompt_without_the_fields_reads_as_empty():
    fields = read_step("Write a haiku.")
    assert (fields.number, fields.step, fields.paths, fields.assigned, fields.brief) == (0, "extract", [], "", "")
    assert read_step("Paths: (none given)").paths == []
