"""`plan --outline`: the commits plain code proposes (plan/clusters.py), named by the model in one
call whose reply is a message per commit (a JSON schema where the model supports one). The
structure is plain code's; the model writes what a 1.5B model writes well: a subject line for a
change it is shown.
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import llm
import pygit2

from git_retcon import diff
from git_retcon.errors import RetconError
from git_retcon.git.plumbing import get_blob, get_commit
from git_retcon.model.ask import Asking, Question, ask
from git_retcon.model.logs import ExchangeLog
from git_retcon.model.prompt import template
from git_retcon.owners import names
from git_retcon.plan import clusters
from git_retcon.plan.outline import MESSAGE_CHARS, NOISE, OVERVIEW_CHARS, change_line, data_folders, subjects_text

_JSON = re.compile(r"\{.*\}", re.S)
_MESSAGE = re.compile(r'"message"\s*:\s*"((?:[^"\\\n]|\\.)*)"')


@dataclass
class Proposed:
    """The commits plain code proposes, in order (each its atoms), and the atoms left in doubt."""

    cores: list[list[diff.Hunk]]
    left: list[diff.Hunk]


def propose(repo: pygit2.Repository, base: str, tip: str, hunks: list[diff.Hunk], most: int) -> Proposed | None:
    """Plain code's commits for base..tip; None where it finds none, or more than most."""
    cores, left = clusters.clusters(repo, base, tip, hunks, noise=lambda s: bool(NOISE.match(s)))
    if not cores or len(cores) > most:
        return None
    return Proposed(clusters.order(cores), left)


def schema(n: int) -> dict[str, Any]:
    commits = {"type": "array", "minItems": n, "maxItems": n, "items": {
        "type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}}
    return {"type": "object", "properties": {"commits": commits}, "required": ["commits"]}


def shown(repo: pygit2.Repository, tip: str, cores: list[list[diff.Hunk]], budget: int = OVERVIEW_CHARS) -> str:
    """Each proposed commit: its files (a folder of data files in one), the names it adds, and a
    line per change while its share of the budget lasts."""
    tree = get_commit(repo, tip).tree
    share = max(300, budget // max(len(cores), 1))
    out: list[str] = []
    for k, core in enumerate(cores, start=1):
        paths = list(dict.fromkeys(h.path for h in core))
        folders = data_folders(paths)
        in_folder = {p: f for f, ps in folders.items() for p in ps}
        files = list(dict.fromkeys(f"{in_folder[p]}/ ({len(folders[in_folder[p]])} data files)" if p in in_folder
                                   else p for p in paths))
        _, added, removed = diff.stat(core)
        head = f"Commit {k} (+{added} -{removed}): {', '.join(files)}"[:300]
        block = [head]
        adds = list(dict.fromkeys(d for h in core for d in names.defined(names.hunk_lines(h)[1])))
        if adds:
            block.append(f"    adds: {', '.join(adds[:8])}")
        used = sum(len(b) + 1 for b in block)
        for h in core:
            if h.path in in_folder:
                continue
            try:
                lines = names.text_lines(get_blob(repo, tree[h.path].id).data)
            except (KeyError, ValueError):
                lines = []
            line = change_line(h, lines)
            if used + len(line) > share:
                break
            block.append(line)
            used += len(line) + 1
        out += block
    return "\n".join(out)


def read(text: str, n: int) -> list[str] | str:
    """The messages a reply gives, in order, or what is wrong with it (to ask once more)."""
    m = _JSON.search(text)
    try:
        value = json.loads(m.group(0) if m else text)
        items = value.get("commits") if isinstance(value, dict) else value
        got = [" ".join(it["message"].split())[:MESSAGE_CHARS] for it in items or []
               if isinstance(it, dict) and isinstance(it.get("message"), str) and it["message"].strip()]
    except (ValueError, TypeError, AttributeError):
        got = [" ".join(json.loads(f'"{a}"').split())[:MESSAGE_CHARS] for a in _MESSAGE.findall(text)]
        if not got:
            return 'the reply is not JSON: reply with {"commits": [{"message": ...}, ...]}'
    if len(got) < n:
        return f"the reply names {len(got)} messages for {n} commits: write one for each commit"
    return got[:n]


def partial(text: str) -> list[str]:
    """The messages a reply gives, however many."""
    m = _MESSAGE.findall(text)
    return [" ".join(json.loads(f'"{a}"').split())[:MESSAGE_CHARS] for a in m]


def name(model: llm.Model, text: str, n: int, instructions: str, log: ExchangeLog | None,
         say: Callable[[str], None]) -> list[str]:
    """A message for each of the n commits text shows (asked once more after an unusable reply;
    "" for those a second reply still leaves unnamed)."""
    structured = bool(getattr(model, "supports_schema", False))
    how = "" if structured else '\nReply with JSON only: {"commits": [{"message": "..."}, ...]}.'
    prompt = template("plan-name.md").substitute(count=str(n), commits=text, how=how,
                                                 instructions=f"\n{instructions}" if instructions else "")
    asking = Asking(log, None, say)

    def once(p: str) -> str:
        return str(ask(model, Question(p, schema(n), route="schema" if structured else "text"), asking))

    got = read(once(prompt), n)
    if isinstance(got, str):
        reply = once(prompt + f"\n\nYour last reply could not be used: {got}.")
        got = read(reply, n)
        if isinstance(got, str):
            some = partial(reply)
            if not some:
                raise RetconError(f"{model.model_id} named none of the {n} commits plain code proposed ({got}): "
                                  "write the commits yourself in a file and run "
                                  "`git retcon plan --from-file FILE -m MODEL`")
            got = some[:n] + [""] * (n - len(some))    # the caller names the rest by their files
    return got


def overview(repo: pygit2.Repository, base: str, tip: str, cores: list[list[diff.Hunk]]) -> str:
    """What the model is shown: the proposed commits, then the branch's own subjects."""
    return "\n".join([shown(repo, tip, cores), *subjects_text(repo, base, tip)])
