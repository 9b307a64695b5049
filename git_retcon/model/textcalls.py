"""Tool calls a model wrote into its text instead of making them.

Mid-size models often print `{"name": "apply_hunks", "arguments": {...}}`, a
`<tool_call>` block, `<function=apply_hunks>{...}</function>` or `create_commit(message="...")`
and then believe the call ran.
Nothing in text is ever run: the step answers "not executed: call the tool".
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterable

_NAME_KEYS = ("name", "tool", "tool_name", "function", "action", "recipient_name")
_ARG_KEYS = ("arguments", "parameters", "args", "input", "params", "action_input")


def _named(obj: object, tools: set[str]) -> list[str]:
    """Tool names a decoded JSON value calls, in order."""
    found: list[str] = []
    if isinstance(obj, list):
        for item in obj:
            found += _named(item, tools)
    elif isinstance(obj, dict):
        for key in _NAME_KEYS:
            value = obj.get(key)
            if isinstance(value, str) and value.split(".")[-1] in tools:
                found.append(value.split(".")[-1])
                break
            if isinstance(value, dict):
                found += _named(value, tools)
        else:
            if len(obj) == 1:       # {"apply_hunks": {...}}
                (key, value), = obj.items()
                if key in tools and isinstance(value, dict):
                    found.append(key)
        for key in ("tool_calls", "calls", "tool_uses"):
            found += _named(obj.get(key), tools)
    return found


def _objects(text: str) -> Iterable[object]:
    decoder = json.JSONDecoder()
    pos = 0
    while True:
        start = min((i for i in (text.find("{", pos), text.find("[{", pos)) if i >= 0), default=-1)
        if start < 0:
            return
        try:
            obj, end = decoder.raw_decode(text, start)
        except ValueError:
            pos = start + 1
            continue
        yield obj
        pos = end


def written_calls(text: str, tools: Iterable[str]) -> list[str]:
    """The tools that text calls in writing (JSON objects, or name(...) call syntax)."""
    names = set(tools)
    if not text or not any(n in text for n in names):
        return []
    found: list[str] = []
    for obj in _objects(text):
        found += _named(obj, names)
    pattern = r"\b(" + "|".join(re.escape(n) for n in sorted(names)) + r")\s*\(\s*(?:[\w\"'\[{]|\))"
    found += re.findall(pattern, text)
    # Tags some chat templates wrap a call in: Llama's <function=NAME>, Mistral's [TOOL_CALLS]NAME[ARGS].
    tagged = r"(?:<function\s*=\s*|<function\s+name\s*=\s*|<invoke\s+name\s*=\s*|\[TOOL_CALLS\]\s*)[\"']?(?:\w+\.)?(" \
        + "|".join(re.escape(n) for n in sorted(names)) + r")\b"
    found += re.findall(tagged, text)
    return list(dict.fromkeys(found))
