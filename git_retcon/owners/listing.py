"""Every hunk of a spec's diff, offline: its id, path, lines, +/-, the logical commit it belongs to and
who decided (`git retcon hunks`), so that a user can move one (`hunks` in the spec, `absorb --into`).

Who: the spec's `hunks` or `paths` (user), unless the last placement by questions put it there (its
save's message says rule, model, or model uncertain); a rule of plain code for a hunk no spec entry
takes; none where nothing decides (the last commit takes what is left).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from git_retcon import diff
from git_retcon.diff import atoms
from git_retcon.git.plumbing import get_commit
from git_retcon.owners import place
from git_retcon.owners.evidence import Who, gather
from git_retcon.state import notes
from git_retcon.state import spec as specmod
from git_retcon.state.store import Store, Stored

WALK = 1000     # spec-chain commits looked through for the last placement


@dataclass(frozen=True)
class Row:
    hunk: diff.Hunk
    k: int | None         # the logical commit (0-based); None: nothing decides
    who: str              # user, rule, model, model uncertain, none
    why: str

    def lines(self) -> str:
        h = self.hunk
        if h.kind == "modify":
            return f"-{h.old_start},{h.old_lines} +{h.new_start},{h.new_lines}"
        if h.kind == "rename":
            return f"from {h.old_path}"
        return {"add": "new file", "delete": "deleted", "mode": "mode", "binary": "whole"}.get(h.kind, h.kind)

    def as_json(self) -> dict[str, object]:
        h = self.hunk
        commit = None if self.k is None else specmod.number(self.k)
        return {"id": h.id, "path": h.path, "kind": h.kind, "lines": self.lines(), "added": h.added_lines,
                "removed": h.removed_lines, "commit": commit, "who": self.who, "why": self.why}


def _last_placed(store: Store, stored: Stored) -> dict[str, notes.PlacedBy] | dict[str, tuple[int, Who]]:
    """The last save that placed hunks, walking the spec chain back once: its note's `placed`
    (state/notes.PlacedBy), or, where an older version wrote only that, its message's record."""
    at = get_commit(store.repo, stored.commit)
    for _ in range(WALK):
        kept = notes.read_spec(store, str(at.id)).get("placed")
        if kept:
            return kept
        found = place.read_record(at.message)
        if found:
            return found
        if not at.parents:
            break
        at = at.parents[0]
    return {}


def evidence_firsts(store: Store, stored: Stored) -> dict[str, int]:
    """For each hunk or atom the model placed, the logical commit (0-based) the evidence ranked
    first, as the last placement's note kept it (state/notes.PlacedBy); empty where none did."""
    return {i: p["first"] - 1 for i, p in _last_placed(store, stored).items() if isinstance(p, dict) and "first" in p}


def last_placement(store: Store, stored: Stored) -> dict[str, tuple[int, Who, str]]:
    """The who of each hunk, and a rule's why, as the last save that placed hunks recorded it."""
    return {i: (p["commit"] - 1, cast(Who, p["who"]), p.get("why", "")) if isinstance(p, dict) else (*p, "")
            for i, p in _last_placed(store, stored).items()}


def rows(store: Store, stored: Stored) -> list[Row]:
    spec = stored.spec
    base, tip, whole = place.spec_diff(store.repo, spec)
    hunks = with_atoms(spec, whole)
    ev = gather(store.repo, spec, base, tip, hunks)
    placed = last_placement(store, stored)
    out: list[Row] = []
    for h in hunks:
        d = ev.decided.get(h.id)
        if d is not None and d.who == "user" and h.id in placed and placed[h.id][0] == d.k:
            out.append(Row(h, d.k, placed[h.id][1], placed[h.id][2] or "the last placement by questions"))
        elif d is not None:
            out.append(Row(h, d.k, d.who, d.why))
        else:
            out.append(Row(h, None, "none", "nothing decides: the last commit takes what is left"))
    return out


def with_atoms(spec: specmod.Spec, hunks: list[diff.Hunk]) -> list[diff.Hunk]:
    """The hunks, each that the spec's `hunks` name in atoms shown as its atoms, under its place."""
    parts: dict[str, list[frozenset[int]]] = {}
    for c in spec.commits:
        for item in c.hunks:
            if (atom := atoms.parse_id(item)) is not None:
                parts.setdefault(atom[0], []).append(atom[1])
    out: list[diff.Hunk] = []
    for h in hunks:
        out += [atoms.as_hunk(h, n) for n in sorted(parts[h.id], key=min)] if h.id in parts else [h]
    return out


def render(spec_commits: int, found: list[Row]) -> list[str]:
    width = max([len(r.hunk.path) for r in found] + [4])
    width = min(width, 50)
    idw = max([len(r.hunk.id) for r in found] + [10])
    out = [f"{'id':<{idw}}  {'path':<{width}}  {'lines':<17}  {'+/-':>9}  {'commit':>6}  who"]
    for r in found:
        h = r.hunk
        path = h.path if len(h.path) <= width else "…" + h.path[-(width - 1):]
        commit = "-" if r.k is None else f"{r.k + 1}/{spec_commits}"
        who = r.who if r.who in ("model", "model, uncertain", "none") else f"{r.who}: {r.why}"
        out.append(f"{h.id:<{idw}}  {path:<{width}}  {r.lines():<17}  {f'+{h.added_lines} -{h.removed_lines}':>9}  "
                   f"{commit:>6}  {who}")
    return out
