"""`owners-truth`: a model that answers every owner question (prompts/owner.md) as a history's
authors did, registered through llm's plugin manager like the scripted model.

$RETCON_OWNERS_LINES is JSON: a changed line's text, stripped -> the number of the commit its
authors put it in. Each `+` and `-` line of the change asked about is looked up; the answer is
the commit most of them belong to, among the choices offered (none known: the first offered).
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


def answer(prompt: str, truth: dict[str, int]) -> int:
    m = _CHOICES.search(prompt)
    offered = [int(x) for x in m.group(1).split(",")] if m else [1]
    found = _CHANGE.search(prompt)
    lines = found.group(1).splitlines() if found else []
    said = [_known(ln[1:].strip(), truth) for ln in lines if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]
    known = [k for k in said if k is not None and k in offered]
    return max(set(known), key=known.count) if known else offered[0]


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
        path = os.environ.get("RETCON_OWNERS_LINES")
        got = answer(text, json.loads(Path(path).read_text()) if path else {})
        reply = json.dumps({"commit": got}) if prompt.schema else str(got)
        _log(log, {"model": self.model_id, "step": "owner", "reply": reply, "prompt": text})
        yield reply


PLUGIN = ModelPlugin("retcon-truth", OwnersTruth())
register = PLUGIN.register
unregister = PLUGIN.unregister
