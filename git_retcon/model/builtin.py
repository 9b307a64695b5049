"""`retcon-paths`: git-retcon's built-in, offline, deterministic model.

It is an ordinary llm plugin model that drives the same tools as any other. Plain
code applies what the spec gives a commit before any model is called (the hunks
under its `paths` and those the plan assigned it; in a fix, the rework brief's
candidate hunks, those that define what is missing first: reconstruct/steps.py),
so when the prompt says "Applied for you", retcon-paths only commits. Otherwise,
for an extraction it reads the remaining diff under the commit's `paths` and
applies what matches (and the `Assigned hunks:`); in a fix it applies the brief's
candidates itself. With nothing to take, or nothing that applies, it calls stuck
(with the brief in a fix), for a human to act on.
(The last logical commit's extraction calls no model at all: plain code takes every
remaining hunk, reconstruct/steps.py.)
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, TypeVar

import llm
from llm.parts import Message, TextPart, ToolCallPart, ToolResultPart

from git_retcon import diff
from git_retcon.model.context import TOOL_NAMES
from git_retcon.model.prompt import StepPrompt, read_step
from git_retcon.model.protocol import read_result, written
from git_retcon.model.textcalls import read_calls
from git_retcon.state.spec import paths_match
from git_retcon.ui import clip

__all__ = ["PathsModel", "candidates", "defining_first", "next_call", "tool_exchanges", "user_text"]

GLOB_CHARS = re.compile(r"[*?\[]")


def user_text(messages: list[Message]) -> str:
    """The first user message: the step's prompt."""
    for m in messages:
        if m.role == "user":
            return "".join(p.text for p in m.parts if isinstance(p, TextPart))
    return ""


def tool_exchanges(messages: list[Message]) -> list[tuple[str, dict[str, Any], str]]:
    """(tool name, arguments, result text) for every call made so far, in order: tool calls and
    their results, or, in the text protocol, the calls written and the answers that ran them."""
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    order: list[str] = []
    results: dict[str, str] = {}
    for m in messages:
        if not any(isinstance(p, (ToolCallPart, ToolResultPart)) for p in m.parts):
            text = "".join(p.text for p in m.parts if isinstance(p, TextPart))
            if m.role == "assistant":
                for c in read_calls(text, {n: [] for n in TOOL_NAMES})[:1]:
                    calls[f"text{len(order)}"] = (c.name, c.arguments)
                    order.append(f"text{len(order)}")
            elif m.role == "user" and order and (output := read_result(text)) is not None:
                results[order[-1]] = output
            continue
        for p in m.parts:
            if isinstance(p, ToolCallPart):
                key = p.tool_call_id or f"call{len(order)}"
                calls[key] = (p.name, dict(p.arguments or {}))
                order.append(key)
            elif isinstance(p, ToolResultPart):
                key = p.tool_call_id or (order[len(results)] if len(results) < len(order) else "")
                results[key] = p.output if isinstance(p.output, str) else json.dumps(p.output)
    return [(calls[k][0], calls[k][1], results.get(k, "")) for k in order]


def prefixes(patterns: list[str]) -> list[str]:
    """The literal directory part of each glob: the read_diff filters that cover them."""
    out: set[str] = set()
    for pat in patterns:
        m = GLOB_CHARS.search(pat)
        literal = pat[: m.start()] if m else pat
        if m:
            literal = literal[: literal.rfind("/") + 1] if "/" in literal else ""
        out.add(literal)
    if "" in out:
        return [""]
    return sorted(p for p in out if not any(p != q and p.startswith(q) for q in out))


def next_call(prompt: str, done: list[tuple[str, dict[str, Any], str]]) -> tuple[str, dict[str, Any]] | None:
    """The whole policy: which tool to call next, from the prompt and the calls so far."""
    if done and done[-1][0] in ("create_commit", "stuck") and not done[-1][2].startswith("Error"):
        return None
    if done and done[-1][0] == "create_commit":
        # Refused (create_commit's guards, say): retcon-paths has nothing else to try.
        return "stuck", {"summary": "retcon-paths took what the spec gives this commit, and create_commit refused "
                         f"it: {clip(done[-1][2].removeprefix('Error: '), 600)}"}
    fields = read_step(prompt)
    if fields.applied and not done:
        # Plain code applied what the spec (or the brief) gives this step: nothing is left to choose.
        return "create_commit", {"message": candidates_message(candidates(fields.brief)) if fields.step == "fix"
                                 else fields.summary or "changes"}
    if fields.step == "fix":
        return fix_call(fields, done)
    patterns = fields.paths
    # The ids listed before any "(...)" remark are live hunks of the remaining diff.
    assigned = diff.read_assigned(fields.assigned)
    if not patterns and not assigned:
        return "stuck", {"summary": "retcon-paths needs `paths` globs or assigned `hunks` for this commit "
                         "in the spec: add them to the spec, or use a model that reads hints"}
    # Read every page of the diff under each prefix, then apply what matches.
    wanted = prefixes(patterns)
    reads = [(args.get("path", ""), args.get("page", 1), out) for name, args, out in done if name == "read_diff"]
    for prefix in wanted:
        mine = [(page, out) for path, page, out in reads if path == prefix]
        if not mine:
            return "read_diff", {"path": prefix, "page": 1}
        page, out = mine[-1]
        shown = diff.read_page(out)
        if shown and shown[0] < shown[1]:
            return "read_diff", {"path": prefix, "page": shown[0] + 1}
    if not any(name == "apply_hunks" for name, _, _ in done):
        ids = list(assigned)
        for _, _, out in reads:
            for h in diff.read_hunks(out):
                if paths_match(h.path, patterns) and h.id not in ids:
                    ids.append(h.id)
        if not ids:
            return "stuck", {"summary": f"no remaining hunk matches this commit's paths {patterns}: nothing is "
                             "left for it (misspelt paths, or an earlier commit or fix took it all)"}
        return "apply_hunks", {"hunk_ids": ids}
    name, _, out = done[-1]
    if name == "apply_hunks" and out.startswith("Error"):
        return "stuck", {"summary": f"applying the hunks under {patterns} failed: {out}"}
    return "create_commit", {"message": fields.summary or "changes"}


T = TypeVar("T", bound=tuple[Any, ...])


def defining_first(found: list[T]) -> list[T]:
    """Of the rework brief's candidates (each a tuple whose last item is its reason): the defining
    ones (a definition of a missing name, the imports beside it, a missing module) if there are
    any, else those that only touch a failing file. What a fix takes first, by plain code."""
    defining = [c for c in found if not str(c[-1]).startswith("touches the failing file")]
    return defining or found


def candidates(brief: str) -> list[tuple[str, str, str]]:
    """(hunk id, path, reason) of the brief's candidate hunks, defining ones first (defining_first)."""
    return defining_first([(h.id, h.path, reason) for h, reason in diff.read_candidates(brief)])


def fix_call(fields: StepPrompt, done: list[tuple[str, dict[str, Any], str]]) -> tuple[str, dict[str, Any]]:
    """A fix step: take the brief's candidate hunks, commit them."""
    brief = fields.brief or "the commit does not pass"
    chosen = candidates(brief)
    if not chosen:
        return "stuck", {"summary": "retcon-paths takes the rework brief's candidate hunks, and the brief "
                         "names no candidate in the remaining diff for this failure. Rework brief:\n" + brief}
    applied = [(args, out) for name, args, out in done if name == "apply_hunks"]
    if not applied:
        return "apply_hunks", {"hunk_ids": [hid for hid, _, _ in chosen]}
    if applied[-1][1].startswith("Error"):
        return "stuck", {"summary": f"retcon-paths could not apply the rework brief's candidate hunks "
                         f"({applied[-1][1].splitlines()[0][:300]}). Rework brief:\n" + brief}
    return "create_commit", {"message": candidates_message(chosen)}


def candidates_message(taken: list[tuple[str, str, str]]) -> str:
    """What the WIP commit took, from the brief's reasons (the note keeps the whole brief)."""
    paths = list(dict.fromkeys(path for _, path, _ in taken))
    names = list(dict.fromkeys(n for _, _, reason in taken for n in re.findall(r"defines `([^`]+)`", reason)))
    what = f"the definition of {', '.join(f'`{n}`' for n in names[:3])}" if names else "the missing pieces"
    return f"take {what} from {', '.join(paths[:3])}{'...' if len(paths) > 3 else ''}"


class PathsModel(llm.Model):
    model_id = "retcon-paths"
    supports_tools = True
    can_stream = False

    def execute(self, prompt: llm.Prompt, stream: bool, response: llm.Response,
                conversation: llm.Conversation | None) -> Iterator[str]:
        messages = prompt.messages
        call = next_call(user_text(messages), tool_exchanges(messages))
        response.set_usage(input=0, output=0)
        if call is None:
            yield "Done."
            return
        if not prompt.tools:     # the text protocol (`--tools text`): the call written, as asked
            yield written(*call)
            return
        response.add_tool_call(llm.ToolCall(name=call[0], arguments=call[1]))
        yield ""


@llm.hookimpl
def register_models(register: Any) -> None:
    register(PathsModel())
