"""A scripted llm model that makes real tool calls, registered through llm's plugin manager.

The script (JSON, path in $RETCON_SCRIPT) maps a step to the turns the model plays:

    {"1/extract": [{"calls": [{"name": "read_diff", "arguments": {}}]},
                   {"calls": [{"name": "apply_hunks", "arguments": {"hunk_ids": "$ids:src/"}}]},
                   {"calls": [{"name": "create_commit", "arguments": {"message": "x"}}]}],
     "2/fix/1": [...], "*/extract": [...]}

The step key comes from the prompt (`Commit k/N`, `Step: extract` or `Step: fix
(attempt a)`), the turn from the number of model turns so far, so the model is
stateless and survives the process being killed. "$ids:PREFIX" expands to the
hunk ids under PREFIX seen in the prompt (its index, whole diff, brief and the hunks applied
for the model) or in earlier tool results (under any of "A|B|..."; "$ids_json:" and
"$ids_csv:" to them as one JSON or comma-separated string; "$back:" to each id with a '-'
before it, a put-back; "$near:" to each with a stray 't' before it, a near miss). A call with
"deep": N has its arguments' first value nested N lists deep. Every call is appended to
$RETCON_SCRIPT_LOG (JSON lines) for tests to assert on.

Plan prompts (`Step: plan`, `Step: plan-chunk`, `Step: plan-combine`, each
maybe `(attempt a)`) take k from `Chunk k/N` or `Part k/N`, and are also found
under "plan/1" or "plan" style keys. A turn may answer with "json" (expanded,
then sent as the reply's text); "$match:REGEX" expands to the distinct first
groups of REGEX in the prompt (e.g. "$match:^(g\\d+) " for group ids); a turn
with "rate_limit": n raises a rate-limit error the first n times it is played
in this process ("unreadable": n raises the RecursionError a client raises on a reply nested
thousands deep), "error": text raises a backend error, "sleep": s waits first;
log entries say how many calls were "in_flight" at once. `scripted-schema`
(schema support, no tools) and `scripted-text` (neither) play the same scripts.

Calls written as text: a turn's "written" calls (expanded like "calls") are written into
the reply's text in its "form": "fenced" (```json {"name", "arguments"}```, the default),
"bare" (the JSON alone), "tool_call" (<tool_call>...</tool_call>), "function" (Llama's
<function=NAME>{...}</function>), "mistral" ([TOOL_CALLS]NAME[ARGS]{...}) or "syntax"
(`name(key="value")`). A model called without tools (the text protocol) writes its "calls"
that way too; it reads the answers in the user messages after the first.
"""
from __future__ import annotations

import json
import os
import re
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import llm
from llm.parts import Message, TextPart, ToolResultPart

from git_retcon import diff
from git_retcon.model.args import shallow
from git_retcon.model.prompt import read_step


def _texts(messages: list[Message]) -> tuple[str, list[str]]:
    """The step's prompt (the first user message), and every answer after it: tool results, and
    the user messages that answer calls written as text."""
    user = ""
    results: list[str] = []
    for m in messages:
        for p in m.parts:
            if m.role == "user" and isinstance(p, TextPart) and not user:
                user = p.text
            elif isinstance(p, ToolResultPart):
                results.append(p.output if isinstance(p.output, str) else json.dumps(p.output))
            elif m.role == "user" and isinstance(p, TextPart) and p.text.startswith(("Result of ", "Executed: ")):
                results.append(p.text)
    return user, results


def written(calls: list[dict[str, Any]], form: str = "fenced") -> str:
    """Calls as a model writes them into its text, in one of the shapes chat templates use."""
    out = []
    for c in calls:
        name, args = c["name"], c.get("arguments", {})
        obj = json.dumps({"name": name, "arguments": args})
        if form == "bare":
            out.append(obj)
        elif form == "tool_call":
            out.append(f"<tool_call>\n{obj}\n</tool_call>")
        elif form == "function":
            out.append(f"<function={name}>{json.dumps(args)}</function>")
        elif form == "mistral":
            out.append(f"[TOOL_CALLS]{name}[ARGS]{json.dumps(args)}")
        elif form == "syntax":
            out.append(f"{name}(" + ", ".join(f"{k}={v!r}" for k, v in args.items()) + ")")
        else:
            out.append(f"```json\n{obj}\n```")
    return "\n\n".join(out)


def step_keys(prompt: str) -> list[str]:
    fields = read_step(prompt)
    k = str(fields.number) if fields.number else "?"
    step, attempt = fields.step, str(fields.attempt)
    return [f"{k}/{step}/{attempt}", f"{k}/{step}", f"*/{step}/{attempt}", f"*/{step}",
            f"{step}/{attempt}", step]


_LISTED = re.compile(rf"^  ([0-9a-f]{{4,40}}) (.+?) (?:{'|'.join(diff.KINDS)}) \+\d+ -\d+", re.M)


def listed(text: str) -> list[diff.Shown]:
    """Hunks a prompt lists indented (those applied for the model: prompts/applied.md)."""
    return [diff.Shown(m[1], m[2], "") for m in _LISTED.finditer(text)]


def done_before(prompt: str) -> int:
    """The calls a step made before its conversation was cut back to fit the context window: the
    digest that the new prompt carries lists them, one a line (one call a turn, in the scripts
    that test it)."""
    if "The conversation of this step was cut back" not in prompt:
        return 0
    digest = prompt.split("The conversation of this step was cut back", 1)[1].split("\n\nThe answer to", 1)[0]
    return len(re.findall(r"^- \w+\(", digest, re.M))


def nested(value: object, levels: int) -> object:
    """value inside `levels` lists: what a model that loops on brackets sends."""
    for _ in range(levels):
        value = [value]
    return value


class RateLimitError(Exception):
    """What an HTTP backend raises on 429."""

    status_code = 429


_played: Counter[str] = Counter()
_played_lock = threading.Lock()  # plan asks in parallel threads
_in_flight = [0]


def _log(path: str | None, entry: dict[str, Any]) -> None:
    if path:
        with _played_lock, open(path, "a") as f:
            f.write(json.dumps(entry) + "\n")


def _expand(value: Any, seen: list[tuple[str, str]], text: str = "") -> Any:
    if isinstance(value, str) and value.startswith("$match:"):
        found = re.findall(value[len("$match:"):], text, re.M)
        return list(dict.fromkeys(f if isinstance(f, str) else f[0] for f in found))
    if isinstance(value, str) and value.startswith(("$ids:", "$ids_json:", "$ids_csv:", "$back:", "$near:")):
        form, prefix = value[1:].split(":", 1)
        ids: list[str] = []
        prefixes = tuple(prefix.split("|"))   # a step that takes some paths but not all
        for hid, path in seen:
            if (prefix in ("", "*") or path.startswith(prefixes)) and hid not in ids:
                ids.append(hid)
        # The forms models send lists in: a JSON string, a comma-separated string.
        if form in ("back", "near"):
            return [("-" if form == "back" else "t") + i for i in ids]
        return json.dumps(ids) if form == "ids_json" else ", ".join(ids) if form == "ids_csv" else ids
    if isinstance(value, dict):
        return {k: _expand(v, seen, text) for k, v in value.items()}
    if isinstance(value, list):
        return [_expand(v, seen, text) for v in value]
    return value


class ScriptedModel(llm.Model):
    model_id = "scripted"
    supports_tools = True
    can_stream = False

    def execute(self, prompt: llm.Prompt, stream: bool, response: llm.Response,
                conversation: llm.Conversation | None) -> Iterator[str]:
        with _played_lock:
            _in_flight[0] += 1
            now = _in_flight[0]
        try:
            yield from self._play(prompt, response, now)
        finally:
            with _played_lock:
                _in_flight[0] -= 1

    def _play(self, prompt: llm.Prompt, response: llm.Response, in_flight: int) -> Iterator[str]:
        messages = prompt.messages
        user, results = _texts(messages)
        turn = sum(1 for m in messages if m.role == "assistant") + done_before(user)
        script = json.loads(Path(os.environ["RETCON_SCRIPT"]).read_text())
        turns: list[dict[str, Any]] = next((script[k] for k in step_keys(user) if k in script), [])
        play = turns[turn] if turn < len(turns) else {"text": "I have nothing more to do."}
        # Ids as read_diff and the prompt show them: abbreviated (4 hex digits or more), or whole.
        seen = [(h.id, h.path) for text in [user, *results] for h in diff.read_hunks(text) + diff.read_index(text)
                + [h for h, _ in diff.read_candidates(text)] + listed(text)]
        chars = sum(len(getattr(p, "text", "") or getattr(p, "output", "") or "") for m in messages for p in m.parts)
        # What a backend sends besides the messages: the answer's schema, the tools' definitions.
        chars += len(json.dumps(prompt.schema)) if prompt.schema else 0
        chars += sum(len(t.name) + len(t.description or "") + len(json.dumps(t.input_schema))
                     for t in prompt.tools or [])
        log = os.environ.get("RETCON_SCRIPT_LOG")
        entry = {"keys": step_keys(user)[:1], "turn": turn, "prompt": user, "results": results,
                 "chars": chars, "schema": bool(prompt.schema), "tools": [t.name for t in prompt.tools or []],
                 "in_flight": in_flight}
        if play.get("sleep"):
            time.sleep(play["sleep"])
        if play.get("error"):
            _log(log, {**entry, "calls": [], "error": play["error"]})
            raise RuntimeError(play["error"])
        if play.get("unreadable"):
            # What a backend's client raises on a reply nested thousands deep (json.loads of its arguments).
            with _played_lock:
                _played[f"{step_keys(user)[0]}#{turn}#unreadable"] += 1
                unreadable = _played[f"{step_keys(user)[0]}#{turn}#unreadable"] <= play["unreadable"]
            if unreadable:
                _log(log, {**entry, "calls": [], "unreadable": True})
                raise RecursionError("maximum recursion depth exceeded while decoding a JSON array")
        if play.get("rate_limit"):
            with _played_lock:
                _played[f"{step_keys(user)[0]}#{turn}"] += 1
                limited = _played[f"{step_keys(user)[0]}#{turn}"] <= play["rate_limit"]
            if limited:
                _log(log, {**entry, "calls": [], "rate_limited": True})
                raise RateLimitError("429 Too Many Requests: rate limit reached")
        calls = []
        native = bool(prompt.tools)
        for call in play.get("calls", []):
            args = call.get("raw_arguments", _expand(call.get("arguments", {}), seen, user))
            if call.get("deep"):
                args = {k: nested(v, call["deep"]) for k, v in list(args.items())[:1]}
            calls.append({"name": call["name"], "arguments": args})
            if native:
                response.add_tool_call(llm.ToolCall(name=call["name"], arguments=args))
        text = play.get("text", "")
        if "json" in play:
            text = json.dumps(_expand(play["json"], seen, user))
        wrote = [{"name": c["name"], "arguments": _expand(c.get("arguments", {}), seen, user)}
                 for c in play.get("written", [])]
        if not native and calls:
            wrote = calls + wrote
        if wrote:
            text = (text + "\n\n" if text else "") + written(wrote, play.get("form", "fenced"))
        _log(log, {**entry, "calls": shallow(calls if native else [], 6), "text": text, "system": prompt.system or ""})
        out = len(json.dumps(shallow(calls, 6))) + len(text)
        response.set_usage(input=max(chars // 4, 1), output=max(out // 4, 1))
        yield text


class ScriptedSchema(ScriptedModel):
    model_id = "scripted-schema"
    supports_tools = False
    supports_schema = True


class ScriptedText(ScriptedModel):
    model_id = "scripted-text"
    supports_tools = False


class ScriptedNoTools(llm.Model):
    model_id = "scripted-notools"
    supports_tools = False

    def execute(self, prompt, stream, response, conversation):  # type: ignore[no-untyped-def]
        yield "no tools here"


class ScriptedNeedsKey(ScriptedModel):
    model_id = "scripted-key"
    needs_key = "scripted"
    key_env_var = "SCRIPTED_API_KEY"


class ModelPlugin:
    """An llm plugin that registers these models, added to and removed from llm's
    plugin manager under its name."""

    def __init__(self, name: str, *models: llm.Model):
        self.name = name
        self.models = models

    @llm.hookimpl
    def register_models(self, register: Any) -> None:
        for model in self.models:
            register(model)

    def register(self) -> None:
        if llm.plugins.pm.get_plugin(self.name) is None:
            llm.plugins.pm.register(self, name=self.name)

    def unregister(self) -> None:
        if llm.plugins.pm.get_plugin(self.name) is not None:
            llm.plugins.pm.unregister(name=self.name)


PLUGIN = ModelPlugin("retcon-scripted", ScriptedModel(), ScriptedSchema(), ScriptedText(),
                     ScriptedNoTools(), ScriptedNeedsKey())
register = PLUGIN.register
unregister = PLUGIN.unregister
