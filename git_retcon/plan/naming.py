"""`plan --outline`: the commits plain code proposes (plan/clusters.py), named by the model, a
question per commit whose reply is its message (a JSON schema where the model supports one), every
question showing the same list of commits (so a server's prompt cache serves the rest). The
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
from git_retcon.git.plumbing import get_commit
from git_retcon.model.ask import Asking, Question, ask
from git_retcon.model.logs import ExchangeLog
from git_retcon.model.prompt import template
from git_retcon.owners import names
from git_retcon.owners.files import Files
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


SCHEMA: dict[str, Any] = {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}


def shown(read: Files, cores: list[list[diff.Hunk]], budget: int = OVERVIEW_CHARS) -> str:
    """Each proposed commit: its files (a folder of data files in one), the names it adds, and a
    line per change while its share of the budget lasts (each file read once: pflag's 64 atoms are
    of two files)."""
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
            line = change_line(h, read.lines(h.path, True))
            if used + len(line) > share:
                break
            block.append(line)
            used += len(line) + 1
        out += block
    return "\n".join(out)


def read(text: str) -> str | None:
    """The message a reply gives (JSON, else its first line that says something), or None."""
    m = _JSON.search(text)
    try:
        value = json.loads(m.group(0) if m else text)
        said = value.get("message") if isinstance(value, dict) else None
    except ValueError:
        found = _MESSAGE.search(text)
        said = json.loads(f'"{found[1]}"') if found else None
    if not isinstance(said, str) or not said.strip() or NOISE.match(said):
        return None
    return " ".join(said.split())[:MESSAGE_CHARS]


ECHO = 6     # words in a row of the question's own text that make a message an echo of it


def echoes(message: str, asked: str) -> bool:
    """Whether the message repeats the question's own words (not the commits it lists): the 1.5B
    model named p-map's second commit "Grouped changes into 5 commits, each holding what belongs
    together (a definition and its uses, a test and the code it te"."""
    said, words = " ".join(re.findall(r"\w+", asked.lower())), re.findall(r"\w+", message.lower())
    return any(" ".join(words[i:i + ECHO]) in said for i in range(len(words) - ECHO + 1))


def name(model: llm.Model, text: str, n: int, instructions: str, log: ExchangeLog | None,
         say: Callable[[str], None]) -> list[str]:
    """A message for each of the n commits text shows, one question each (the 1.5B model, asked
    for all in one list, wrote one about the task and named the rest one commit off); asked once
    more after an unusable reply, "" where the second is unusable too."""
    structured = bool(getattr(model, "supports_schema", False))
    how = "" if structured else '\nReply with JSON only: {"message": "..."}.'
    asking = Asking(log, None, say)
    out: list[str] = []
    for k in range(1, n + 1):
        prompt = template("plan-name.md").substitute(count=str(n), commits=text, number=str(k), how=how,
                                                     instructions=f"\n{instructions}" if instructions else "")
        got = None
        for p in (prompt, prompt + "\n\nYour last reply could not be used: reply with the message, JSON only."):
            got = read(str(ask(model, Question(p, SCHEMA, route="schema" if structured else "text"), asking)))
            if got is not None and not echoes(got, prompt.replace(text, "")):
                break
            got = None
        out.append(got or "")
    if not any(out):
        raise RetconError(f"{model.model_id} named none of the {n} commits plain code proposed: write the "
                          "commits yourself in a file and run `git retcon plan --from-file FILE -m MODEL`")
    return out


def overview(repo: pygit2.Repository, base: str, tip: str, cores: list[list[diff.Hunk]]) -> str:
    """What the model is shown: the proposed commits, then the branch's own subjects."""
    files = Files(repo, get_commit(repo, base).tree, get_commit(repo, tip).tree)
    return "\n".join([shown(files, cores), *subjects_text(repo, base, tip)])
