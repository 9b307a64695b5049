"""Tool arguments as models really send them, checked against the tool's parameters.

A wrong type names the parameter and the type wanted; a list given as a JSON string
or as a comma-separated string is accepted; a parameter under a near name is read as
the one it must mean when that is unambiguous (and the answer says so); hunk ids dressed
the way models write them (`hunk 3f2a9c`, `#3f2a9c`, backticks, `3f2a9c (src/a.py)`,
`3f2a9c[1-4]`, `3f2a9c lines 1..4`) are read as the plain id or id:LINES (said too). Every refusal
is a ToolError whose text tells the model what to send instead.
"""
from __future__ import annotations

import inspect
import json
import re
import typing
from collections.abc import Callable
from typing import Any

from git_retcon.model import meaning

ErrorKind = typing.Literal["type", "id", "path", "tool", "turn", "empty", "edit", "state", "guard", "other"]


class ToolError(Exception):
    """A refused tool call; the text is what the model reads, `kind` picks the steering."""

    def __init__(self, text: str, kind: ErrorKind = "other"):
        super().__init__(text)
        self.kind: ErrorKind = kind


# What each parameter holds, in the words an error uses.
MEANING = {
    "path": "a path relative to the repository root, e.g. 'docs/guide.md'",
    "page": "a page number, from 1",
    "hunk_ids": "hunk ids from read_diff",
    "content": "the whole text of the file",
    "message": "the commit message",
    "summary": "what a human must decide or fix",
    "old": "the exact text to replace",
    "new": "the text to put in its place",
}
_JSON_TYPE = {str: "string", int: "integer", float: "number", bool: "boolean", list: "array",
              tuple: "array", dict: "object", type(None): "null"}
_SPLIT = re.compile(r"[\s,;]+")
MAX_DEPTH = 16          # lists and objects within each other in one argument, at most (no tool needs 3)


def depth(value: object, limit: int = MAX_DEPTH) -> int:
    """How deeply lists and objects nest in value, counted without recursion (a model can send
    thousands of levels: Python's json and repr would raise RecursionError), up to limit + 1."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (list, tuple, dict)):
            level += 1
            deepest = max(deepest, level)
            if deepest > limit:
                return deepest
            stack.extend((v, level) for v in (item.values() if isinstance(item, dict) else item))
    return deepest


def shallow(value: object, levels: int = 3) -> object:
    """value with what lies deeper than `levels` written as "...": safe to json.dumps or repr."""
    if isinstance(value, dict):
        return {str(k): shallow(v, levels - 1) for k, v in list(value.items())[:50]} if levels > 0 else "{...}"
    if isinstance(value, (list, tuple)):
        return [shallow(v, levels - 1) for v in list(value)[:50]] if levels > 0 else "[...]"
    return value


def json_type(value: object) -> str:
    return _JSON_TYPE.get(type(value), type(value).__name__)


def wanted(hint: object) -> str:
    if typing.get_origin(hint) is list:
        return "array of strings"
    return _JSON_TYPE.get(hint, str(hint)) if isinstance(hint, type) else str(hint)


def _shape(fn: Callable[..., object]) -> tuple[dict[str, Any], typing.Mapping[str, inspect.Parameter]]:
    """fn's type hints and parameters, worked out once per function: every tool call binds its
    arguments, and get_type_hints re-evaluates the annotations' strings each time (about 0.1 ms,
    3,000 calls in a run of 200 commits). Kept by the function under a bound method, whose
    parameters leave out self: the tools are a session's methods, a new bound object per call."""
    key = (getattr(fn, "__func__", fn), hasattr(fn, "__self__"))
    got = _SHAPES.get(key)
    if got is None:
        got = _SHAPES[key] = (typing.get_type_hints(fn), inspect.signature(fn).parameters)
    return got


# Process-wide: keyed by the function itself, which lives as long as the process.
_SHAPES: dict[tuple[object, bool], tuple[dict[str, Any], typing.Mapping[str, inspect.Parameter]]] = {}


def signature(name: str, fn: Callable[..., object]) -> str:
    """`write_file(path: string, content: string)`, for answers."""
    hints, params = _shape(fn)
    return f"{name}(" + ", ".join(f"{p}: {wanted(hints.get(p, str))}" for p in params) + ")"


def bind(name: str, fn: Callable[..., object], given: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The keyword arguments to call fn with, and notes on how they were read."""
    hints, params = _shape(fn)
    notes: list[str] = []
    given = dict(given)
    for key, value in given.items():
        if depth(value) > MAX_DEPTH:
            raise ToolError(f"{name}: the argument {key!r} holds lists or objects nested more than {MAX_DEPTH} levels "
                            f"deep; nothing was done: call {signature(name, fn)} with plain values", "type")
    # {"arguments": {...}}: the call's arguments wrapped once more.
    if len(given) == 1:
        (key, value), = given.items()
        if key not in params and key in meaning.ARGUMENT_KEYS and isinstance(value, dict) and set(value) <= set(params):
            given = dict(value)
    unknown = [k for k in given if k not in params]
    missing = [p for p, spec in params.items() if p not in given and spec.default is inspect.Parameter.empty]
    if unknown:
        meant = meaning.parameter(unknown, list(params), list(given), missing)
        if meant.found:
            notes.append(meant.note)
            given[meant.value] = given.pop(unknown[0])
        else:
            raise ToolError(f"{name} has no parameter {', '.join(repr(u) for u in unknown)}: call "
                            f"{signature(name, fn)}", "type")
    # null for an optional parameter means its default.
    for p, spec in params.items():
        if given.get(p, 0) is None and spec.default is not inspect.Parameter.empty:
            del given[p]
    missing = [p for p, spec in params.items() if p not in given and spec.default is inspect.Parameter.empty]
    if missing:
        raise ToolError(f"{name} needs {', '.join(missing)}: call {signature(name, fn)}"
                        f" ({missing[0]}: {MEANING.get(missing[0], wanted(hints.get(missing[0], str)))})", "type")
    for p, v in list(given.items()):
        # ["src/a.py"] for a string: the one string meant (a small model wraps every value in a list).
        if hints.get(p, str) is str and isinstance(v, list) and len(v) == 1 and isinstance(v[0], str):
            given[p] = v[0]
            notes.append(f"(read {p} as {v[0]!r}: one string, not a list)")
    out = {p: coerce(name, p, hints.get(p, str), plain_items(v) if p in _ITEMS else v) for p, v in given.items()}
    for p in _ITEMS & out.keys():
        sent = typing.cast(list[str], out[p])
        items = [str(plain_item(i)) for i in sent]
        if items != sent or plain_items(given[p]) != given[p]:
            shown = ", ".join(f"'{i}'" for i in items[:12]) + (", ..." if len(items) > 12 else "")
            notes.append(f"(read {p} as [{shown}]: write ids plainly, as read_diff shows them)")
        out[p] = items
    return out, notes


# Parameters that hold apply_hunks items: ids, id:LINES selections and paths.
_ITEMS = {"hunk_ids"}
_SEL = re.compile(rf"^({meaning.ID})\s*:\s*(.*)$", re.S)
_DASH = re.compile(r"\s*(?:\.\.\.?|[\u2010-\u2015\u2212]|\bto\b)\s*")      # 1..4, 1–4, 1 to 4


def plain_items(value: object) -> object:
    """A list of items written as one string, undressed before it is split at commas and spaces."""
    return plain_item(value) if isinstance(value, str) and not value.strip().startswith("[") else value


def plain_item(item: object) -> object:
    """One apply_hunks item as diff/select.py reads it: an id undressed, a selection's ranges with '-'."""
    if not isinstance(item, str):
        return item
    text = item
    for pattern, plain in meaning.ID_DRESS:
        text = pattern.sub(plain, text)
    m = _SEL.match(text.strip())
    if m:
        text = f"{m.group(1)}:{_DASH.sub('-', m.group(2)).strip()}"
    return text.strip() if text != item else item


def coerce(tool: str, param: str, hint: object, value: object) -> object:
    """value as the type the parameter wants, or a ToolError naming both."""
    def refuse(extra: str = "") -> ToolError:
        shown = json.dumps(value, default=str)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        if not extra and param == "path" and isinstance(value, list):
            extra = f"; one path a call: call {tool} once for each"
        return ToolError(f"{tool}: {param} must be {_a(wanted(hint))} ({MEANING.get(param, param)}), "
                         f"not {_a(json_type(value))}: {shown}{extra}", "type")

    if hint is str:
        if isinstance(value, str):
            return value
        raise refuse()
    if hint is int:
        if isinstance(value, bool):
            raise refuse()
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str) and value.strip().isdigit():
            return int(value.strip())
        raise refuse()
    if typing.get_origin(hint) is list:
        return as_list(tool, param, value, refuse)
    return value


def as_list(tool: str, param: str, value: object, refuse: Callable[[], ToolError]) -> list[str]:
    """A list of strings from a list, a JSON list in a string, or a comma-separated string."""
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                value = json.loads(text)
            except ValueError:
                value = [v.strip("'\"") for v in _SPLIT.split(text.strip("[]")) if v.strip("'\"")]
        else:
            value = [v.strip("'\"") for v in _SPLIT.split(text) if v.strip("'\"")]
    if not isinstance(value, (list, tuple)):
        raise refuse()
    if any(isinstance(item, (list, tuple)) for item in value):
        # [["a.py", "3f2a"], "8e01"]: one list meant, written in parts.
        value = [x for item in value for x in (item if isinstance(item, (list, tuple)) else [item])]
    out = []
    for item in value:
        if not isinstance(item, str):
            shown = json.dumps(item, default=str)[:40]
            raise ToolError(f"{tool}: {param} must be an array of strings ({MEANING.get(param, param)}); "
                            f"one item is {_a(json_type(item))}: {shown}", "type")
        out.append(item)
    return out


def _a(word: str) -> str:
    return ("an " if word[:1] in "aeiou" else "a ") + word
