"""The model's answer: its JSON shape, and the plain-code check that every id it was
given lands in exactly one entry. What fails comes back as text that steers the
next attempt."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any


# The answer's shape, per step; `items` is the list's key.
def _entry_schema(with_groups: bool) -> dict[str, Any]:
    props: dict[str, Any] = {
        "message": {"type": "string", "description": "commit message: subject line, blank line, body"},
        "hints": {"type": "string", "description": "which files and functions it takes; what to leave out"},
    }
    if with_groups:
        props["groups"] = {"type": "array", "items": {"type": "string"}, "description": "group ids"}
    else:
        props["files"] = {"type": "array", "items": {"type": "string"},
                          "description": "paths whose hunks all go here (except those listed by id elsewhere)"}
        props["hunks"] = {"type": "array", "items": {"type": "string"}, "description": "single hunk ids"}
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


def schema(items: str, with_groups: bool) -> dict[str, Any]:
    return {"type": "object", "properties": {items: {"type": "array", "items": _entry_schema(with_groups)}},
            "required": [items], "additionalProperties": False}


def shape(items: str, with_groups: bool) -> str:
    ref = '"groups": ["<group id>", ...]' if with_groups else '"files": ["<path>", ...], "hunks": ["<hunk id>", ...]'
    return f'{{"{items}": [{{"message": "...", "hints": "...", {ref}}}, ...]}}'


class Invalid(Exception):
    """The answer does not have the required shape; the message steers the model."""


@dataclass
class Entry:
    message: str
    hints: str
    ids: list[str]


@dataclass
class Checked:
    entries: list[Entry]              # those with ids left, ids in the order given
    problems: list[str]               # what steers the next attempt
    unassigned: list[str]
    # The other problems. Accepted as is, a doubled id stays with its first entry and
    # unknown ids and files are ignored.
    others: list[str]


def _listing(items: list[str], n: int = 40) -> str:
    return ", ".join(items[:n]) + (f" and {len(items) - n} more" if len(items) > n else "")


def parse_answer(raw: Any, items: str, with_groups: bool) -> list[dict[str, Any]]:
    """The answer as a list of entries, or Invalid saying exactly what is wrong."""
    if isinstance(raw, str):
        raw = _json_in(raw)
    if not isinstance(raw, dict) or items not in raw:
        raise Invalid(f'the answer must be a JSON object with the key "{items}": {shape(items, with_groups)}')
    entries = raw[items]
    if not isinstance(entries, list) or not entries:
        raise Invalid(f'"{items}" must be a non-empty array')
    refs = ("groups",) if with_groups else ("files", "hunks")
    for i, e in enumerate(entries, 1):
        if not isinstance(e, dict):
            raise Invalid(f'{items} entry {i} must be an object with "message", "hints", {", ".join(refs)}')
        if not isinstance(e.get("message"), str) or not e["message"].strip():
            raise Invalid(f'{items} entry {i}: "message" must be a non-empty string')
        if not isinstance(e.get("hints", ""), str):
            raise Invalid(f'{items} entry {i}: "hints" must be a string')
        for key in refs:
            v = e.get(key, [])
            if isinstance(v, str):
                v = [x for x in re.split(r"[\s,]+", v) if x]
            if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
                raise Invalid(f'{items} entry {i}: "{key}" must be an array of strings')
            e[key] = [x.strip() for x in v if x.strip()]
        if not any(e[k] for k in refs):
            raise Invalid(f'{items} entry {i} ("{e["message"].splitlines()[0][:50]}") lists no {" or ".join(refs)}')
    return entries


def _json_in(text: str) -> Any:
    text = text.strip()
    fence = re.search(r"```(?:json)?\s*\n(.*?)```", text, re.S)
    candidates = [text] + ([fence.group(1)] if fence else [])
    if "{" in text and "}" in text:
        candidates.append(text[text.index("{"): text.rindex("}") + 1])
    for c in candidates:
        try:
            return json.loads(c)
        except ValueError:
            continue
    cut = _cut_off(text)
    if cut is not None:
        return cut
    raise Invalid("the reply is not valid JSON")


_ARRAY = re.compile(r'\{\s*"(\w+)"\s*:\s*\[')


def _cut_off(text: str) -> dict[str, list[Any]] | None:
    """A reply cut off at the length limit, read up to its last whole entry: a small model that
    repeats its entries (the 1.5B one, sampling greedily) runs into the limit, and its first
    entries are still an answer that the check can judge, rather than nothing usable."""
    m = _ARRAY.search(text)
    if m is None:
        return None
    decoder = json.JSONDecoder()
    entries: list[Any] = []
    at = m.end()
    while True:
        at = len(text) - len(text[at:].lstrip(" \t\r\n,"))
        try:
            entry, at = decoder.raw_decode(text, at)
        except ValueError:
            break
        entries.append(entry)
    return {m.group(1): entries} if entries else None


def check(entries: list[dict[str, Any]], known: dict[str, str], most: int | None, what: str) -> Checked:
    """Every known id in exactly one entry. `known` maps id -> path ("" for groups);
    an entry's `files` take every hunk of those paths that no entry lists by id."""
    owner: dict[str, int] = {}
    doubled: dict[str, set[int]] = {}
    unknown: list[str] = []
    bad_files: list[str] = []
    for i, e in enumerate(entries):
        for raw in e.get("hunks", e.get("groups", [])):
            x = raw
            if what == "hunk":
                # Models copy whole index lines at times: the id is the first word.
                m = re.match(r"[0-9a-fA-F]{10}\b", raw)
                x = m.group().lower() if m else raw
            if x not in known:
                unknown.append(raw)
            elif x in owner and owner[x] != i:
                doubled.setdefault(x, {owner[x]}).add(i)
            else:
                owner[x] = i
    by_path: dict[str, list[str]] = {}
    for x, p in known.items():
        by_path.setdefault(p, []).append(x)
    file_owner: dict[str, list[int]] = {}
    for i, e in enumerate(entries):
        for f in e.get("files", []):
            f = f.strip().removeprefix("./")
            matched = [p for p in by_path if p == f or p.startswith(f.rstrip("/") + "/")]
            if not matched:
                bad_files.append(f)
            for p in matched:
                if i not in file_owner.setdefault(p, []):
                    file_owner[p].append(i)
    unassigned: list[str] = []
    for x, p in known.items():
        if x in owner:
            continue
        owners = file_owner.get(p, [])
        if len(owners) > 1:
            doubled[x] = set(owners)
        if owners:
            owner[x] = owners[0]
        else:
            unassigned.append(x)
    label = "hunk ids" if what == "hunk" else "group ids"
    missing = []
    if unassigned:
        shown = [f"{x} ({known[x]})" if known[x] else x for x in unassigned]
        missing.append(f"{len(unassigned)} {label} are in no entry: {_listing(shown)}")
    others: list[str] = []
    if doubled:
        shown = [f"{x} (entries {' and '.join(str(i + 1) for i in sorted(s))})" for x, s in doubled.items()]
        others.append(f"{len(doubled)} {label} are in more than one entry: {_listing(shown)}")
    if unknown:
        others.append(f"{len(unknown)} ids are not in the list you were given (do not invent ids): "
                      f"{_listing(unknown)}")
    if bad_files:
        others.append(f"{len(bad_files)} files are not in the index: {_listing(bad_files, 20)}")
    if most is not None and len(entries) > most:
        others.append(f"{len(entries)} entries, but at most {most} are allowed: merge related ones")
    order = list(known)
    out = [Entry(e["message"].strip(), e.get("hints", "").strip(),
                 [x for x in order if owner.get(x) == i]) for i, e in enumerate(entries)]
    return Checked([e for e in out if e.ids], missing + others, unassigned, others)
