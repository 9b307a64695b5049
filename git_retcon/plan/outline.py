"""`plan -m MODEL --outline`: the model proposes the commits only, in one call whose reply is a list
of {message, holds} (a JSON schema where the model supports one); which hunks go where is then the
owners' questions' (owners/), as for a hints-only spec. A small model can name five commits from an
overview of a diff; it cannot hold fifty hunks in mind and group them.

The overview is plain code's: each file with its +/- lines and the names its hunks define or change,
and the source commits' subjects, cut to a budget.
"""
from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable
from typing import Any

import llm
import pygit2

from git_retcon import diff
from git_retcon.errors import RetconError
from git_retcon.model.logs import ExchangeLog
from git_retcon.model.prompt import template
from git_retcon.model.retry import Retry, retry_line
from git_retcon.owners import names
from git_retcon.owners.source import source_commits
from git_retcon.state import spec as specmod

OVERVIEW_CHARS = 6000     # the overview's share of the prompt: a 1.5B model reads 8k tokens well
MESSAGE_CHARS = 120
_JSON = re.compile(r"\{.*\}", re.S)


def schema(most: int | None) -> dict[str, Any]:
    commits: dict[str, Any] = {"type": "array", "minItems": 1, "items": {
        "type": "object", "properties": {"message": {"type": "string"}, "holds": {"type": "string"}},
        "required": ["message", "holds"]}}
    if most:
        commits["maxItems"] = most
    return {"type": "object", "properties": {"commits": commits}, "required": ["commits"]}


def overview(repo: pygit2.Repository, base: str, tip: str, hunks: list[diff.Hunk],
             budget: int = OVERVIEW_CHARS) -> str:
    """Each file: +/- lines and the names its hunks define or sit in; then the branch's subjects."""
    by_path: dict[str, list[diff.Hunk]] = {}
    for h in hunks:
        by_path.setdefault(h.path, []).append(h)
    lines = []
    for path, hs in by_path.items():
        _, added, removed = diff.stat(hs)
        said: list[str] = []
        for h in hs:
            rem, add = names.hunk_lines(h)
            said += [n for n in names.defined(add or rem) if n not in said]
        line = f"- {path} (+{added} -{removed})" + (f": {', '.join(said[:8])}" if said else "")
        lines.append(line[:200])
    subjects: list[str] = []
    with contextlib.suppress(pygit2.GitError, KeyError, ValueError):
        subjects = [c.message.strip().splitlines()[0][:MESSAGE_CHARS] for c in source_commits(repo, base, tip)
                    if c.message.strip()]
    text: list[str] = []
    used = 0
    for ln in lines:
        if used + len(ln) > budget:
            text.append(f"- ... {len(lines) - len(text)} more files")
            break
        text.append(ln)
        used += len(ln) + 1
    if subjects:
        text += ["", "The branch's own commit subjects, oldest first:"]
        text += [f"- {s}" for s in subjects[-30:]]
    return "\n".join(text)


def read(text: str, most: int | None) -> list[tuple[str, str]] | str:
    """The commits a reply names, or what is wrong with it (to ask once more)."""
    m = _JSON.search(text)
    try:
        value = json.loads(m.group(0) if m else text)
    except ValueError:
        return 'the reply is not JSON: reply with {"commits": [{"message": ..., "holds": ...}]}'
    items = value.get("commits") if isinstance(value, dict) else value
    if not isinstance(items, list):
        return 'the reply has no "commits" list'
    out = []
    for it in items:
        if isinstance(it, dict) and isinstance(it.get("message"), str) and it["message"].strip():
            holds = it.get("holds")
            out.append((" ".join(it["message"].split())[:MESSAGE_CHARS],
                        " ".join(holds.split())[:400] if isinstance(holds, str) else ""))
    if not out:
        return "the reply names no commit with a message"
    return out[:most] if most else out


def propose(model: llm.Model, text: str, most: int | None, instructions: str, log: ExchangeLog | None,
            say: Callable[[str], None]) -> tuple[list[tuple[str, str]], Any]:
    """The commits the model proposes (one call, once more after an unreadable reply), with the
    last response's usage."""
    structured = bool(getattr(model, "supports_schema", False))
    limit = f" at most {most}" if most else ""
    how = "" if structured else '\nReply with JSON only: {"commits": [{"message": "...", "holds": "..."}]}.'
    prompt = template("plan-outline.md").substitute(overview=text, most=limit,
                                                    instructions=f"\n{instructions}" if instructions else "",
                                                    how=how)
    usage: list[Any] = []

    def once(p: str) -> str:
        response = model.prompt(p, schema=schema(most)) if structured else model.prompt(p)
        reply = response.text()
        usage.append(response.usage())
        if log is not None:
            log.record(response)
        return reply

    retry = Retry(model.model_id, "nothing was saved", on_retry=lambda e, a, s: say(retry_line(e, a, s)))
    got = read(retry.call(lambda: once(prompt)), most)
    if isinstance(got, str):
        got = read(retry.call(lambda: once(prompt + f"\n\nYour last reply could not be used: {got}.")), most)
    if isinstance(got, str):
        raise RetconError(f"{model.model_id} proposed no usable commits ({got}): write the commits yourself "
                          "in a file and run `git retcon plan --from-file FILE -m MODEL`")
    return got, usage


def spec_of(source: str, remote: str, cleaned: str, commits: list[tuple[str, str]]) -> specmod.Spec:
    return specmod.Spec(source=source, remote=remote, cleaned=cleaned,
                        commits=[specmod.LogicalCommit(message=m, hints=h) for m, h in commits])
