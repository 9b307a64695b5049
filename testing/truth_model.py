"""`owners-truth`: a model that answers every owner question (prompts/owner.md) as a history's
authors did, registered through llm's plugin manager like the scripted model.

$RETCON_OWNERS_LINES is JSON: a changed line's text, stripped -> the number of the commit its
authors put it in. Each `+` and `-` line of the change asked about is looked up; the answer is
the commit most of them belong to, among the choices offered (none known: the first offered).
$RETCON_OWNERS_ROWS, if set, is JSON too: each hunk of the branch's diff, by its path and header
as a question shows it ("src/error.rs\n@@ -66,0 +69,13 @@"), -> its lines in the order a question
shows them, each [sign, text, commit]. A line shown is then known by its place in its hunk, so
a text two commits wrote (xmlparser's doc line "Values: actual, expected, pos.", p-map's
`pendingPromisesCount--;`) is known too; a question whose hunk is not there falls back to text.
Any other prompt (an extraction, a fix: a tool conversation) is logged to $RETCON_SCRIPT_LOG with
`"step": "conversation"` and answered with no tool call, so a test or bench that wants no tool
conversation finds one in the log.

It imports nothing of git-retcon's but the prompt reader, so a bench can run it beside git-retcon
as it was at an earlier commit (bench/truth.py's "before").
"""
from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import llm

from testing.scripted_model import ModelPlugin, _log

_CHOICES = re.compile(r"^Choose one of: ([\d, ]+)\.$", re.M)
_CHANGE = re.compile(r"^The change, in .*?:\n(.*)\Z", re.M | re.S)


_PATH = re.compile(r"^The change, in (.*?):$", re.M)

Row = tuple[str, str, int]      # sign, text, commit


def answer(prompt: str, truth: dict[str, int], rows: dict[str, list[Row]] | None = None) -> int:
    m = _CHOICES.search(prompt)
    offered = [int(x) for x in m.group(1).split(",")] if m else [1]
    found = _CHANGE.search(prompt)
    lines = found.group(1).splitlines() if found else []
    said = by_place(prompt, rows) if rows else None
    if said is None:
        said = [_known(ln[1:].strip(), truth) for ln in lines
                if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]
    known = [k for k in said if k is not None and k in offered]
    return max(set(known), key=known.count) if known else offered[0]


def by_place(prompt: str, rows: dict[str, list[Row]]) -> list[int | None] | None:
    """The commits of the lines asked about, each found at its place in its hunk's rows; None when
    a hunk shown is not among the rows."""
    path, found = _PATH.search(prompt), _CHANGE.search(prompt)
    if not path or not found:
        return None
    out: list[int | None] = []
    for part in found.group(1).strip("\n").split("\n\n"):
        head, *shown = part.splitlines()
        got = rows.get(f"{path.group(1)}\n{head}")
        if got is None:
            return None
        if not any(line[:1] in "+-" for line in shown):     # a rename, shown with no lines: all of it
            out += [row[2] for row in got]
            continue
        piece: list[str] = []
        for line in [*shown, "... end ..."]:     # a long hunk is shown by its head and its tail
            if line.startswith("... ") and line.endswith(" ..."):
                out += _owners(piece, got)
                piece = []
            else:
                piece.append(line)
    return out


def _owners(shown: list[str], rows: list[Row]) -> list[int | None]:
    """The commits of shown's `-` and `+` lines: where shown is a run of the rows (an atom with
    its context), read at that place; else (a whole hunk, all `-` lines first) each line is the
    first row not yet taken with its sign and text."""
    def same(line: str, row: Row) -> bool:
        return line[1:] == row[1][:199] and (line[:1] == " " or line[:1] == row[0])

    for at in range(len(rows) - len(shown) + 1):
        if all(same(line, rows[at + i]) for i, line in enumerate(shown)):
            return [rows[at + i][2] for i, line in enumerate(shown) if line[:1] in "+-"]
    taken: set[int] = set()
    out: list[int | None] = []
    for line in shown:
        if line[:1] not in "+-":
            continue
        i = next((i for i, row in enumerate(rows) if i not in taken and same(line, row)), None)
        out.append(None if i is None else rows[i][2])
        taken |= {i} if i is not None else set()
    return out


def _known(line: str, truth: dict[str, int]) -> int | None:
    """The commit of a line as the question shows it: whole, or clipped (a long line is cut short
    in a question, as p-map's readme lines are), when one commit's lines start so."""
    if line in truth:
        return truth[line]
    found = {k for text, k in truth.items() if len(line) >= 40 and text.startswith(line)}
    return found.pop() if len(found) == 1 else None


class OwnersTruth(llm.Model):
    model_id = "owners-truth"
    supports_schema = True
    can_stream = False

    def execute(self, prompt: llm.Prompt, stream: bool, response: llm.Response,
                conversation: llm.Conversation | None) -> Iterator[str]:
        text = prompt.prompt or ""
        log = os.environ.get("RETCON_SCRIPT_LOG")
        response.set_usage(input=max(len(text) // 4, 1), output=3)
        if "\nStep: owner" not in text:
            _log(log, {"model": self.model_id, "step": "conversation", "prompt": text})
            yield "I only answer which commit a change belongs to."
            return
        path, places = os.environ.get("RETCON_OWNERS_LINES"), os.environ.get("RETCON_OWNERS_ROWS")
        got = answer(text, json.loads(Path(path).read_text()) if path else {},
                     {k: [(s, t, c) for s, t, c in v] for k, v in json.loads(Path(places).read_text()).items()}
                     if places else None)
        reply = json.dumps({"commit": got}) if prompt.schema else str(got)
        _log(log, {"model": self.model_id, "step": "owner", "reply": reply, "prompt": text})
        yield reply


PLUGIN = ModelPlugin("retcon-truth", OwnersTruth())
register = PLUGIN.register
unregister = PLUGIN.unregister
