"""A scripted llm model that makes real tool calls, registered through llm's plugin manager.

The script (JSON, path in $RETCON_SCRIPT) maps a step to the turns the model plays:

    {"1/extract": [{"calls": [{"name": "read_diff", "arguments": {}}]},
                   {"calls": [{"name": "apply_hunks", "arguments": {"hunk_ids": "$ids:src/"}}]},
                   {"calls": [{"name": "create_commit", "arguments": {"message": "x"}}]}],
     "2/fix/1": [...], "*/extract": [...]}

The step key comes from the prompt (`Commit k/N`, `Step: extract` or `Step: fix
(attempt a)`), the turn from the number of model turns so far, so the model is
stateless and survives the process being killed. "$ids:PREFIX" expands to the
hunk ids under PREFIX seen in the prompt or in earlier tool results. Every call
is appended to $RETCON_SCRIPT_LOG (JSON lines) for tests to assert on.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Iterator

import llm
from llm.parts import Message, TextPart, ToolResultPart

ID_LINES = (re.compile(r"^hunk ([0-9a-f]{10}) (\S+)", re.M), re.compile(r"^([0-9a-f]{10}) (\S+) ", re.M))


def _texts(messages: list[Message]) -> tuple[str, list[str]]:
    user = ""
    results: list[str] = []
    for m in messages:
        for p in m.parts:
            if m.role == "user" and isinstance(p, TextPart) and not user:
                user = p.text
            elif isinstance(p, ToolResultPart):
                results.append(p.output if isinstance(p.output, str) else json.dumps(p.output))
    return user, results


def step_keys(prompt: str) -> list[str]:
    m = re.search(r"^Commit (\d+)/\d+", prompt, re.M)
    k = m.group(1) if m else "?"
    s = re.search(r"^Step: (\w+)(?: \(attempt (\d+)\))?", prompt, re.M)
    step = s.group(1) if s else "extract"
    attempt = s.group(2) if s and s.group(2) else "1"
    return [f"{k}/{step}/{attempt}", f"{k}/{step}", f"*/{step}/{attempt}", f"*/{step}"]


def _expand(value: Any, seen: list[tuple[str, str]]) -> Any:
    if isinstance(value, str) and value.startswith("$ids:"):
        prefix = value[len("$ids:"):]
        ids: list[str] = []
        for hid, path in seen:
            if (prefix in ("", "*") or path.startswith(prefix)) and hid not in ids:
                ids.append(hid)
        return ids
    if isinstance(value, dict):
        return {k: _expand(v, seen) for k, v in value.items()}
    if isinstance(value, list):
        return [_expand(v, seen) for v in value]
    return value


class ScriptedModel(llm.Model):
    model_id = "scripted"
    supports_tools = True
    can_stream = False

    def execute(self, prompt: llm.Prompt, stream: bool, response: llm.Response,
                conversation: llm.Conversation | None) -> Iterator[str]:
        messages = prompt.messages
        user, results = _texts(messages)
        turn = sum(1 for m in messages if m.role == "assistant")
        script = json.loads(Path(os.environ["RETCON_SCRIPT"]).read_text())
        turns: list[dict[str, Any]] = next((script[k] for k in step_keys(user) if k in script), [])
        play = turns[turn] if turn < len(turns) else {"text": "I have nothing more to do."}
        seen = [(h, p) for text in [user, *results] for rx in ID_LINES for h, p in rx.findall(text)]
        calls = []
        for call in play.get("calls", []):
            args = call.get("raw_arguments", _expand(call.get("arguments", {}), seen))
            calls.append({"name": call["name"], "arguments": args})
            response.add_tool_call(llm.ToolCall(name=call["name"], arguments=args))
        log = os.environ.get("RETCON_SCRIPT_LOG")
        if log:
            with open(log, "a") as f:
                f.write(json.dumps({"keys": step_keys(user)[:1], "turn": turn, "prompt": user,
                                    "results": results, "calls": calls}) + "\n")
        chars = sum(len(getattr(p, "text", "") or getattr(p, "output", "") or "") for m in messages for p in m.parts)
        text = play.get("text", "")
        response.set_usage(input=max(chars // 4, 1), output=max((len(json.dumps(calls)) + len(text)) // 4, 1))
        yield text


class ScriptedNoTools(llm.Model):
    model_id = "scripted-notools"
    supports_tools = False

    def execute(self, prompt, stream, response, conversation):  # type: ignore[no-untyped-def]
        yield "no tools here"


class ScriptedNeedsKey(ScriptedModel):
    model_id = "scripted-key"
    needs_key = "scripted"
    key_env_var = "SCRIPTED_API_KEY"


class Plugin:
    __name__ = "retcon-scripted"

    @llm.hookimpl
    def register_models(self, register: Any) -> None:
        register(ScriptedModel())
        register(ScriptedNoTools())
        register(ScriptedNeedsKey())


PLUGIN_NAME = "retcon-scripted"


def register() -> None:
    if llm.plugins.pm.get_plugin(PLUGIN_NAME) is None:
        llm.plugins.pm.register(Plugin(), name=PLUGIN_NAME)


def unregister() -> None:
    if llm.plugins.pm.get_plugin(PLUGIN_NAME) is not None:
        llm.plugins.pm.unregister(name=PLUGIN_NAME)
