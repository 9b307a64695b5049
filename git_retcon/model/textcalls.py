"""Tool calls a model wrote into its text instead of making them, read back as calls.

Mid-size models often print `{"name": "apply_hunks", "arguments": {...}}` (fenced or bare), a
`<tool_call>` block, `<function=apply_hunks>{...}</function>`, `[TOOL_CALLS]apply_hunks[ARGS]{...}`
or `create_commit(message="...")`, and then believe the call ran. `read_calls` reads each into
a WrittenCall: a name and its arguments, or, when the name is there but the arguments cannot be
read, what is wrong with them. A model without tool calling writes its calls this way on purpose
(model/protocol.py describes the form it is asked for); step.py runs the well-formed ones.
"""
from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from git_retcon.model import meaning
from git_retcon.model.args import shallow

_IGNORED_KEYS = {"type", "id", "call_id", "tool_call_id", "index"}
_MAX_TEXT = 200_000     # characters of a reply read for calls (a model that writes more is cut)


@dataclass(frozen=True)
class WrittenCall:
    """A tool call found in text: its arguments, or why they cannot be read (problem)."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    problem: str = ""
    at: int = 0                   # where it starts in the text
    end: int = -1                 # where it ends (its closing brace or parenthesis), -1 if unknown

    @property
    def ok(self) -> bool:
        return not self.problem

    def shown(self) -> str:
        """The call as one line, for answers: `apply_hunks({"hunk_ids": ["3f2a"]})`."""
        try:
            args = json.dumps(shallow(self.arguments, 4), ensure_ascii=False, default=str)
        except (TypeError, ValueError):
            args = "{...}"
        return f"{self.name}({args if len(args) <= 200 else args[:197] + '...'})"


def _tool(value: object, tools: Mapping[str, Sequence[str]]) -> str | None:
    """The tool a name means: `apply_hunks`, `functions.apply_hunks`, `default_api.apply_hunks`."""
    meant = meaning.written_tool(value, tools)
    return meant.value if meant.found else None


def _arguments(raw: object, name: str, params: Sequence[str]) -> tuple[dict[str, Any], str]:
    """A call's arguments as sent: an object, a JSON string holding one, or nothing; a bare value
    (`"arguments": ["3f2a"]`, `"arguments": "the summary"`) is the value of the tool's one
    parameter (its first, of apply_hunks, stuck, read_file), as a model that writes it means."""
    if raw is None:
        return {}, ""
    if isinstance(raw, str):
        text = raw.strip()
        if not text:
            return {}, ""
        try:
            raw = json.loads(text)
        except (ValueError, RecursionError):
            raw = text
    if isinstance(raw, list) and len(raw) == 1 and isinstance(raw[0], dict):
        raw = raw[0]        # [{"hunk_ids": [...]}]: the object, in a list
    if isinstance(raw, dict):
        return raw, ""
    if params:
        return {params[0]: raw}, ""
    return {}, f"the arguments of {name} must be a JSON object of parameter names and values, not {raw!r:.80}"


def _from_json(obj: object, tools: Mapping[str, Sequence[str]], at: int, end: int = -1) -> list[WrittenCall]:
    """The calls a decoded JSON value holds, in order (the value spans text[at:end])."""
    found: list[WrittenCall] = []
    if isinstance(obj, list):
        for item in obj:
            found += _from_json(item, tools, at, end)
    elif isinstance(obj, dict):
        for key in meaning.NAME_KEYS:
            value = obj.get(key)
            name = _tool(value, tools)
            if name is not None:
                arg_key = next((k for k in meaning.ARGUMENT_KEYS if k in obj), None)
                if arg_key is not None:
                    args, problem = _arguments(obj[arg_key], name, tools[name])
                else:   # {"name": "create_commit", "message": "x"}: the arguments beside the name
                    args, problem = {k: v for k, v in obj.items() if k != key and k not in _IGNORED_KEYS}, ""
                found.append(WrittenCall(name, args, problem, at, end))
                break
            if isinstance(value, dict):    # OpenAI's {"type": "function", "function": {...}}
                found += _from_json(value, tools, at, end)
                break
        else:
            if len(obj) == 1:       # {"apply_hunks": {...}}
                (key, value), = obj.items()
                name = _tool(key, tools)
                if name is not None and isinstance(value, dict):
                    found.append(WrittenCall(name, value, "", at, end))
        for key in ("tool_calls", "calls", "tool_uses"):
            found += _from_json(obj.get(key), tools, at, end)
    return found


def _json_values(text: str) -> Iterable[tuple[int, int, object]]:
    """Each JSON value in text that starts with an object: where it starts and ends, and it."""
    decoder = json.JSONDecoder()
    pos = 0
    while True:
        start = min((i for i in (text.find("{", pos), text.find("[{", pos)) if i >= 0), default=-1)
        if start < 0:
            return
        try:
            obj, end = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):
            pos = start + 1
            continue
        yield start, end, obj
        pos = end


def _alternation(tools: Iterable[str]) -> str:
    return "|".join(re.escape(n) for n in sorted(tools, key=lambda n: (-len(n), n)))


def _tagged(text: str, tools: Mapping[str, Sequence[str]]) -> list[WrittenCall]:
    """Calls in the tags some chat templates wrap them in: Llama's `<function=NAME>{...}`, Mistral's
    `[TOOL_CALLS]NAME[ARGS]{...}`, `<invoke name="NAME">` with `<parameter name="p">` elements."""
    names = _alternation(tools)
    tag = re.compile(r"(?:<function\s*=\s*|<function\s+name\s*=\s*|<invoke\s+name\s*=\s*|\[TOOL_CALLS\]\s*)"
                     rf"[\"']?(?:\w+\.)?({names})\b[\"']?\s*>?\s*(?:\[ARGS\])?\s*")
    found: list[WrittenCall] = []
    for m in tag.finditer(text):
        name, rest = m.group(1), text[m.end():]
        if rest.startswith("{"):
            try:
                args, length = json.JSONDecoder().raw_decode(rest)
            except (ValueError, RecursionError):
                found.append(WrittenCall(name, {}, f"the arguments after {name} are not valid JSON", m.start()))
                continue
            args_, problem = _arguments(args, name, tools[name])
            found.append(WrittenCall(name, args_, problem, m.start(), m.end() + length))
            continue
        body = rest.split("</invoke>")[0]
        params = re.findall(r"<parameter\s+name\s*=\s*[\"']?(\w+)[\"']?\s*>(.*?)</parameter>", body, re.S)
        parsed: dict[str, Any] = {}
        for key, value in params:
            try:
                parsed[key] = json.loads(value)
            except (ValueError, RecursionError):
                parsed[key] = value
        found.append(WrittenCall(name, parsed, "", m.start(), m.end() + len(body)))
    return found


def _closing(text: str, start: int) -> int | None:
    """The index after the `)` that closes the `(` at start, skipping strings; None if unclosed."""
    depth, i, quote = 0, start, ""
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif text.startswith(quote, i):
                i += len(quote) - 1
                quote = ""
        elif ch in "\"'":
            quote = text[i:i + 3] if text[i:i + 3] in ('"""', "'''") else ch
            i += len(quote) - 1
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return None


def _syntax(text: str, tools: Mapping[str, Sequence[str]]) -> list[WrittenCall]:
    """Calls in call syntax: `apply_hunks(hunk_ids=["3f2a"])`, `default_api.create_commit()`."""
    names = _alternation(tools)
    found: list[WrittenCall] = []
    for m in re.finditer(rf"(?<![\w.])(?:\w+\.)?({names})\s*(\()\s*(?=[\w\"'\[{{)\-])", text):
        name = m.group(1)
        end = _closing(text, m.start(2))
        if end is None:
            found.append(WrittenCall(name, {}, f"the call to {name} has no closing parenthesis", m.start()))
            continue
        source = name + text[m.start(2):end]
        try:
            node = ast.parse(source, mode="eval").body
            if not isinstance(node, ast.Call):
                raise ValueError(source)
            args: dict[str, Any] = {}
            params = tools[name]
            for i, arg in enumerate(node.args):
                if i >= len(params):
                    raise ValueError(f"{name} takes at most {len(params)} arguments")
                args[params[i]] = _value(arg, text[:m.start()])
            for kw in node.keywords:
                if kw.arg is None:
                    raise ValueError("**")
                args[kw.arg] = _value(kw.value, text[:m.start()])
        except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
            found.append(WrittenCall(name, {}, f"the arguments of {name}(...) are not literal values (quoted strings, "
                                     "numbers, lists)", m.start()))
            continue
        found.append(WrittenCall(name, args, "", m.start(), end))
    return found


def _value(node: ast.expr, before: str) -> Any:
    """An argument's literal value; a name is the literal the reply assigned it last before the call
    (`hunk_ids = ["3f2a", ...]` then `apply_hunks(hunk_ids)`: the 1.5B model writes its calls as a
    Python script). ValueError otherwise."""
    if isinstance(node, ast.Name):
        found = list(re.finditer(rf"^[ \t]*{re.escape(node.id)}[ \t]*=[ \t]*(?=\S)", before, re.M))
        if not found:
            raise ValueError(node.id)
        start = found[-1].end()
        end = _closing(before, start) if before[start] in "([{" else None
        source = before[start:end] if end is not None else before[start:].split("\n", 1)[0]
        return ast.literal_eval(source.strip())
    return ast.literal_eval(node)


def read_calls(text: str, tools: Mapping[str, Sequence[str]]) -> list[WrittenCall]:
    """The tool calls text writes, in order: those whose arguments could be read, and those that
    name a tool in a call's shape but whose arguments could not (with the problem).
    tools: each tool's name and its parameters in order (for positional arguments)."""
    text = text[:_MAX_TEXT]
    if not text or not any(n in text for n in tools):
        return []
    found: list[WrittenCall] = []
    for at, end, obj in _json_values(text):
        found += _from_json(obj, tools, at, end)
    found += _tagged(text, tools)
    found += _syntax(text, tools)
    # A call written inside another call's arguments is part of them, not a call: the 1.5B model's
    # stuck summary quoted our answer, `apply_hunks(['invoicing/money.py'])` and all; a README that
    # write_file writes may show a fenced JSON call as an example.
    found = [c for c in found if not any(_inside(c, a) for a in found)]
    # A call's JSON shape with its name, where no JSON could be decoded: broken JSON.
    names = _alternation(tools)
    for m in re.finditer(rf"[\"'](?:{'|'.join(meaning.NAME_KEYS)})[\"']\s*:\s*[\"'](?:\w+\.)?({names})[\"']", text):
        if not any(c.name == m.group(1) and c.at <= m.start() < _span_end(text, c) for c in found) \
                and not any(c.at < m.start() < c.end for c in found):
            found.append(WrittenCall(m.group(1), {}, f"the call to {m.group(1)} is not valid JSON (check its quotes, "
                                     "commas and braces)", m.start()))
    found = _unquoted(text, found, names)
    found.sort(key=lambda c: c.at)
    # The same call found twice (a JSON object inside a tag) is one call.
    out: list[WrittenCall] = []
    for c in found:
        if out and out[-1].name == c.name and out[-1].arguments == c.arguments and \
                c.at - out[-1].at < 40 and (out[-1].ok or not c.ok):
            continue
        if out and out[-1].name == c.name and not out[-1].ok and c.ok and c.at - out[-1].at < 40:
            out[-1] = c
            continue
        out.append(c)
    return out


def _unquoted(text: str, calls: list[WrittenCall], names: str) -> list[WrittenCall]:
    """calls less those written inside a string argument of another call, in any form, fenced or
    not, whether or not that call's own arguments could be read (issue 39: a README's fenced example
    call, in a write_file that could not be read, was run in its place). A call's strings are
    read leniently, as a model writes them: raw newlines, quotes left unescaped; an <invoke>'s
    arguments are everything up to its matching </invoke>. names: the tools' alternation, for the
    `{"apply_hunks": {...}}` shape, whose broken JSON no other reading finds."""
    spans: list[tuple[int, int]] = []
    keyed = [m.start() for m in re.finditer(rf"\{{\s*[\"'](?:\w+\.)?(?:{names})[\"']\s*:", text)]
    for at in sorted({c.at for c in calls} | set(keyed)):
        if text.startswith("<invoke", at):
            depth = 0
            for m in _INVOKE.finditer(text, at):
                depth += 1 if m.group() != "</invoke>" else -1
                if depth == 0:
                    spans.append((at + 1, m.start()))
                    break
            else:
                spans.append((at + 1, len(text)))
            continue
        opening = _OPENING.search(text, at)
        depth, i, quote, opened = 0, opening.start() if opening else len(text), "", 0
        while i < len(text):
            ch = text[i]
            if quote:
                if ch == "\\":
                    i += 1
                elif text.startswith(quote, i):
                    spans.append((opened, i))
                    i, quote = i + len(quote) - 1, ""
            elif ch in "\"'":
                quote = text[i:i + 3] if text[i:i + 3] in ('"""', "'''") else ch
                i += len(quote) - 1
                opened = i + 1
            elif ch in "([{":
                depth += 1
            elif ch in ")]}":
                depth -= 1
                if depth == 0:
                    break
            i += 1
        if quote:
            spans.append((opened, len(text)))   # a string never closed runs to the end
    return [c for c in calls if not any(lo <= c.at < hi for lo, hi in spans)]


_OPENING = re.compile(r"[({]")
_INVOKE = re.compile(r"<invoke\b|</invoke>")


def _inside(c: WrittenCall, a: WrittenCall) -> bool:
    """Whether call c is written within call a's span (its arguments), not beside it."""
    if a is c or a.end < 0 or not a.at <= c.at < a.end:
        return False
    return a.at < c.at or (0 <= c.end < a.end)


def _span_end(text: str, call: WrittenCall) -> int:
    """Where the JSON value that holds call ends (a broken one: the end of the text)."""
    start = call.at
    try:
        _, end = json.JSONDecoder().raw_decode(text, start)
        return int(end)
    except (ValueError, RecursionError):
        return len(text)


def written_calls(text: str, tools: Iterable[str]) -> list[str]:
    """The names of the tools that text calls in writing, well-formed or not, in order."""
    names = {n: () for n in tools}
    return list(dict.fromkeys(c.name for c in read_calls(text, names)))
