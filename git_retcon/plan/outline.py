"""`plan -m MODEL --outline`: the model proposes the commits only, in one call whose reply is a list
of {message, holds} (a JSON schema where the model supports one); which hunks go where is then the
owners' questions' (owners/), as for a hints-only spec. A small model can name five commits from an
overview of a diff; it cannot hold fifty hunks in mind and group them.

The overview is plain code's: each file with its +/- lines and the names its hunks define, a line
per hunk (the definition it sits in, its first changed line), and the source commits' subjects,
cut to a budget.
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
from git_retcon.git.plumbing import get_blob, get_commit
from git_retcon.model.ask import Asking, Question, ask
from git_retcon.model.logs import ExchangeLog
from git_retcon.model.prompt import template
from git_retcon.owners import names
from git_retcon.owners.source import source_commits
from git_retcon.state import spec as specmod

OVERVIEW_CHARS = 6000     # the overview's share of the prompt: a 1.5B model reads 8k tokens well
MESSAGE_CHARS = 120
MOST = 12                 # commits asked for at most when --max-commits does not say (a schema's bound)
PER_FILE = 8              # hunks of one file described a line each
_JSON = re.compile(r"\{.*\}", re.S)
_STR = r'"((?:[^"\\\n]|\\.)*)"'
_ENTRY = re.compile(r'\{\s*"message"\s*:\s*' + _STR + r'\s*,\s*"holds"\s*:\s*' + _STR + r"\s*\}")
NOISE = re.compile(r"^\s*(wip|tmp|temp|fixup!|squash!|amend!|fix|fixes|more|stuff|\.+)\b\W*\S{0,12}\s*$", re.I)


def schema(most: int) -> dict[str, Any]:
    commits: dict[str, Any] = {"type": "array", "minItems": 1, "maxItems": most, "items": {
        "type": "object", "properties": {"message": {"type": "string"}, "holds": {"type": "string"}},
        "required": ["message", "holds"]}}
    return {"type": "object", "properties": {"commits": commits}, "required": ["commits"]}


def change_line(h: diff.Hunk, file_lines: list[str]) -> str:
    """One hunk in a line: the definition it sits in, and its first changed line that says something."""
    removed, added = names.hunk_lines(h)
    shown = next((ln.strip() for ln in added + removed if len(ln.strip()) > 3), "")
    where: str | None = h.kind if h.kind != "modify" else None
    if where is None and (inside := names.enclosing(file_lines, h.new_start - 1,
                                                     names.least_indent(added or removed))):
        where = f"in {inside}"
    return (f"    {where}: " if where else "    ") + ("+ " if added else "- ") + shown[:90]


def overview(repo: pygit2.Repository, base: str, tip: str, hunks: list[diff.Hunk],
             budget: int = OVERVIEW_CHARS) -> str:
    """Each file: +/- lines and the names its hunks define, then a line per hunk (where it is, what
    it changes) while the budget lasts; then the branch's subjects."""
    heads, details = _files(repo, tip, hunks)
    text: list[str] = []
    used = sum(len(h) + 1 for h in heads)
    for k, head in enumerate(heads):
        if sum(len(t) + 1 for t in text) + len(head) > budget:
            text.append(f"- ... {len(heads) - k} more files")
            break
        text.append(head)
        for d in details[k]:
            if used + len(d) > budget:
                break
            text.append(d)
            used += len(d) + 1
    return "\n".join(text + subjects_text(repo, base, tip))


def subjects_text(repo: pygit2.Repository, base: str, tip: str) -> list[str]:
    """The branch's own commit subjects that say something ("wip", "fixup! ...": nothing to
    learn), as lines to end an overview with."""
    subjects: list[str] = []
    with contextlib.suppress(pygit2.GitError, KeyError, ValueError):
        subjects = [c.message.strip().splitlines()[0][:MESSAGE_CHARS] for c in source_commits(repo, base, tip)
                    if c.message.strip()]
    subjects = [s for s in subjects if not NOISE.match(s)]
    if not subjects:
        return []
    return ["", "The branch's own commit subjects, oldest first:", *[f"- {s}" for s in subjects[-30:]]]


def _files(repo: pygit2.Repository, tip: str, hunks: list[diff.Hunk]) -> tuple[list[str], list[list[str]]]:
    """A head line per file (a folder of data files: one for them all), and the file's hunks, a
    line each."""
    by_path: dict[str, list[diff.Hunk]] = {}
    for h in hunks:
        by_path.setdefault(h.path, []).append(h)
    tip_tree = get_commit(repo, tip).tree
    heads: list[str] = []
    details: list[list[str]] = []
    folders = data_folders(list(by_path))
    in_folder = {p: f for f, ps in folders.items() for p in ps}
    for path, hs in by_path.items():
        if path in in_folder:   # a folder of data files is one line, where its first file is
            folder = in_folder[path]
            if folder in folders:
                paths = folders.pop(folder)
                _, added, removed = diff.stat([h for p in paths for h in by_path[p]])
                files = ", ".join(p.rsplit("/", 1)[-1] for p in paths)
                heads.append(f"- {folder}/ ({len(paths)} data files, +{added} -{removed}): {files}"[:200])
                details.append([])
            continue
        _, added, removed = diff.stat(hs)
        said: list[str] = []
        for h in hs:
            rem, add = names.hunk_lines(h)
            said += [n for n in names.defined(add or rem) if n not in said]
        heads.append((f"- {path} (+{added} -{removed})" + (f": {', '.join(said[:8])}" if said else ""))[:200])
        try:
            file_lines = names.text_lines(get_blob(repo, tip_tree[path].id).data)
        except (KeyError, ValueError):
            file_lines = []
        details.append([change_line(h, file_lines) for h in hs[:PER_FILE]])
    return heads, details


# Files that hold data, not code: a folder of two or more of them is one line of the overview
# (tomli's twelve test data files, a line each, became a commit each from the 1.5B model).
DATA = frozenset({"json", "toml", "yaml", "yml", "txt", "csv", "tsv", "xml", "snap", "golden", "out",
                  "expected", "in", "dat", "ini"})


def data_folders(paths: list[str]) -> dict[str, list[str]]:
    """The folders holding two or more changed data files, each with them, in the diff's order."""
    found: dict[str, list[str]] = {}
    for p in paths:
        folder, _, name = p.rpartition("/")
        if folder and "." in name and name.rsplit(".", 1)[1].lower() in DATA:
            found.setdefault(folder, []).append(p)
    return {f: ps for f, ps in found.items() if len(ps) >= 2}


def read(text: str, most: int) -> list[tuple[str, str]] | str:
    """The commits a reply names, or what is wrong with it (to ask once more). A reply cut off at
    the length limit (a small model that repeats its list until it is stopped) is read up to its
    last whole entry; an entry said again is kept once."""
    m = _JSON.search(text)
    try:
        value = json.loads(m.group(0) if m else text)
        items = value.get("commits") if isinstance(value, dict) else value
    except ValueError:
        items = [{"message": json.loads(f'"{a}"'), "holds": json.loads(f'"{b}"')} for a, b in _ENTRY.findall(text)]
        if not items:
            return 'the reply is not JSON: reply with {"commits": [{"message": ..., "holds": ...}]}'
    if not isinstance(items, list):
        return 'the reply has no "commits" list'
    out: dict[str, str] = {}
    for it in items:
        if isinstance(it, dict) and isinstance(it.get("message"), str) and it["message"].strip():
            holds = it.get("holds")
            out.setdefault(" ".join(it["message"].split())[:MESSAGE_CHARS],
                           " ".join(holds.split())[:400] if isinstance(holds, str) else "")
    if not out:
        return "the reply names no commit with a message"
    return list(out.items())[:most]


def propose(model: llm.Model, text: str, most: int, instructions: str, log: ExchangeLog | None,
            say: Callable[[str], None]) -> tuple[list[tuple[str, str]], Any]:
    """The commits the model proposes (one call, once more after an unreadable reply), with the
    last response's usage."""
    structured = bool(getattr(model, "supports_schema", False))
    limit = f" at most {most}"
    how = "" if structured else '\nReply with JSON only: {"commits": [{"message": "...", "holds": "..."}]}.'
    prompt = template("plan-outline.md").substitute(overview=text, most=limit,
                                                    instructions=f"\n{instructions}" if instructions else "",
                                                    how=how)
    usage: list[Any] = []

    how_asked = Asking(log, usage.append, say)

    def once(p: str) -> str:
        return str(ask(model, Question(p, schema(most), route="schema" if structured else "text"), how_asked))

    got = read(once(prompt), most)
    if isinstance(got, str):
        got = read(once(prompt + f"\n\nYour last reply could not be used: {got}."), most)
    if isinstance(got, str):
        raise RetconError(f"{model.model_id} proposed no usable commits ({got}): write the commits yourself "
                          "in a file and run `git retcon plan --from-file FILE -m MODEL`")
    return got, usage


def spec_of(source: str, remote: str, cleaned: str, commits: list[tuple[str, str]]) -> specmod.Spec:
    return specmod.Spec(source=source, remote=remote, cleaned=cleaned,
                        commits=[specmod.LogicalCommit(message=m, hints=h) for m, h in commits])
