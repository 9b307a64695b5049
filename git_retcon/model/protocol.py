"""How a model is told what its calls written as text did.

A model without tool calling (or any model run with `--tools text`) is given the tools as a
text protocol (prompts/protocol.md: one fenced JSON call per reply) and reads each call's
result in the next user message. A tool-calling model that writes a well-formed call as text
instead has it run too, and is told so. What cannot be read as a call is answered with what
is wrong with it. The answers are written here, beside the protocol's description.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

from git_retcon.model.prompt import template
from git_retcon.model.textcalls import WrittenCall

ToolsMode = Literal["native", "text"]

EXAMPLE = '```json\n{"name": "%s", "arguments": %s}\n```'


def parameters(schema: dict[str, Any]) -> dict[str, str]:
    """A tool's parameters as `name: type` (with `= default` when it has one), in order."""
    out: dict[str, str] = {}
    for name, spec in (schema.get("properties") or {}).items():
        kind = spec.get("type", "string")
        if kind == "array":
            kind = f"array of {spec.get('items', {}).get('type', 'string')}s"
        out[name] = f"{name}: {kind}" + (f" = {json.dumps(spec['default'])}" if "default" in spec else "")
    return out


def describe(tools: Sequence[tuple[str, str, dict[str, Any]]]) -> str:
    """The text protocol, for the end of the system prompt: the form of a call and each tool
    (name, description, input schema) in a line or two."""
    rows = []
    for name, description, schema in tools:
        summary = " ".join((description or "").split())
        rows.append(f"- {name}({', '.join(parameters(schema).values())}): {summary}")
    return template("protocol.md").substitute(tools="\n".join(rows))


def result(call: WrittenCall, output: str, mode: ToolsMode) -> str:
    """The answer to a call written as text that ran."""
    if mode == "text":
        return f"Result of {call.shown()}:\n{output}"
    return (f"Executed: your reply wrote {call.shown()} as text, and git-retcon ran it (call tools through "
            f"tool calling: it is the sure way). Result:\n{output}")


def read_result(text: str) -> str | None:
    """The output a text-protocol answer carries (what `result` wrote in text mode), or None."""
    if not text.startswith("Result of "):
        return None
    head, sep, output = text.partition("):\n")
    return output if sep else None


def written(name: str, arguments: dict[str, Any]) -> str:
    """A call in the protocol's form, as a model is asked to write it."""
    return EXAMPLE % (name, json.dumps(arguments))


def not_run(calls: Sequence[WrittenCall], why: str) -> str:
    """Calls of a reply that were not run, after the one that failed or ended the step."""
    shown = ", ".join(c.name for c in calls)
    return f"Not run: {shown} ({why}). Send {'it' if len(calls) == 1 else 'them'} again if still needed."


def malformed(calls: Sequence[WrittenCall], mode: ToolsMode) -> str:
    """The answer to a reply whose calls could not be read: what is wrong, and the form."""
    first = calls[0]
    problems = "; ".join(dict.fromkeys(c.problem for c in calls))
    if mode == "text":
        return (f"Not executed: your reply wrote a call to {first.name}, but {problems}; nothing changed. "
                "Write it again in this form, with double-quoted JSON:\n"
                + EXAMPLE % (first.name, '{"...": "..."}'))
    return (f"Not executed: your reply wrote a call to {first.name} as text, but {problems}; nothing changed. "
            f"Call the tool {first.name} itself, through tool calling.")


def no_call(mode: ToolsMode) -> str:
    """What a text-protocol model is reminded of when its reply holds no call."""
    if mode != "text":
        return ""
    return ("\nWrite the call as a fenced JSON block, one per reply, e.g.:\n"
            + EXAMPLE % ("create_commit", "{}"))
