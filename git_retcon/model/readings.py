"""Every reading of what a model meant, one row each: its name, the function that reads it, and a
real example of what a model wrote with what it is read as. The vocabularies the readers share
(the keys of a call written as JSON, the dress of an id, the words that say "done") are
model/meaning.py's; this table is where a new quirk is added and its example kept, and
`tests/model/test_readings.py` reads every example with its reader.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from git_retcon.model import meaning
from git_retcon.model.args import plain_item
from git_retcon.model.context import TOOL_NAMES
from git_retcon.model.echo import says_done
from git_retcon.model.textcalls import read_calls

# The tools' parameters as the examples use them.
_PARAMS = {"apply_hunks": ["hunk_ids"], "read_diff": ["path", "page"], "read_file": ["path"],
           "create_commit": ["message"], "stuck": ["summary"], "write_file": ["path", "content"]}


@dataclass(frozen=True)
class Reading:
    """One row: what a model wrote (example), and what it is read as (meant), by read."""

    name: str
    read: Callable[[str], str]
    example: str
    meant: str


def _tool(text: str) -> str:
    return meaning.tool(text, TOOL_NAMES).value


def _written(text: str) -> str:
    calls = read_calls(text, _PARAMS)
    return "; ".join(f"{c.name} {json.dumps(c.arguments, sort_keys=True)}" for c in calls if c.ok)


def _parameter(text: str) -> str:
    return meaning.parameter([text], ["hunk_ids"], [text], ["hunk_ids"]).value


def _path(text: str) -> str:
    known = {"src/a.py"}
    return meaning.path(text, "/wt", "/wt", lambda p: p in known or p == "src", lambda: known,
                        lambda p: p in known).value


def _file(text: str) -> str:
    return meaning.file_name(text, {"invoicing/money.py", "tests/test_money.py"}).value


def _hunk_id(text: str) -> str:
    return meaning.hunk_id(text, {"3f2a9c": "3f2a9c41d0"}).value


def _undressed(text: str) -> str:
    return str(plain_item(text))


def _done(text: str) -> str:
    return "done" if says_done(text) else "not done"


READINGS: list[Reading] = [
    Reading("a tool's name, near", _tool, "functions.ApplyHunks", "apply_hunks"),
    Reading("a tool's name, plural dropped", _tool, "apply_hunk", "apply_hunks"),
    Reading("a call written as fenced JSON", _written,
            '```json\n{"name": "read_file", "arguments": {"path": "a.py"}}\n```', 'read_file {"path": "a.py"}'),
    Reading("the name under another key, the arguments under another", _written,
            '{"tool": "stuck", "parameters": {"summary": "why"}}', 'stuck {"summary": "why"}'),
    Reading("the arguments beside the name", _written,
            '{"name": "create_commit", "message": "Add tax"}', 'create_commit {"message": "Add tax"}'),
    Reading("a call in a <tool_call> block", _written,
            '<tool_call>{"name": "read_diff", "arguments": {}}</tool_call>', "read_diff {}"),
    Reading("a call written as Python", _written, 'create_commit(message="Add tax")',
            'create_commit {"message": "Add tax"}'),
    Reading("one unknown parameter for the one missing", _parameter, "ids", "hunk_ids"),
    Reading("a path with ./", _path, "./src/a.py", "src/a.py"),
    Reading("a path as a diff header names it", _path, "b/src/a.py", "src/a.py"),
    Reading("a file by its name alone", _file, "money", "invoicing/money.py"),
    Reading("a hunk id with a character doubled", _hunk_id, "3f2aa9c", "3f2a9c"),
    Reading("an id dressed in backticks and its path", _undressed, "`3f2a9c` (src/a.py)", "3f2a9c"),
    Reading("an id and its lines in brackets", _undressed, "3f2a9c[1-4]", "3f2a9c:1-4"),
    Reading("an id with the words 'lines'", _undressed, "3f2a9c lines 1..4", "3f2a9c:1-4"),
    Reading("a line of the prompt's hunk list copied whole", _undressed, "e8aa invoicing/tax.py add +27 -0", "e8aa"),
    Reading("a stuck that says the commit is done", _done,
            "All hunks are applied, so this commit is complete. No further actions are required.", "done"),
]
