"""What the plan prompts show (the source commits, the project's message style, an
overview of the diff) and how a diff too big for one prompt is cut into chunks."""
from __future__ import annotations

import re
from collections.abc import Sequence

import pygit2

from git_retcon import diff
from git_retcon.diff.hunk import Hunk

LABEL_CHARS = 300     # a chunk's label, at most


def fit_rows(rows: list[str], budget: int, what: str) -> str:
    """rows, one a line, within budget characters; when they do not all fit, the last
    line says how many more `what` were left out."""
    kept: list[str] = []
    used = 0
    for i, row in enumerate(rows):
        more = f"... and {len(rows) - i} more {what}"
        if used + len(row) + 1 + len(more) > budget:
            kept.append(more)
            break
        kept.append(row)
        used += len(row) + 1
    return "\n".join(kept)


def cut(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def commits_text(commits: Sequence[pygit2.Commit], budget: int) -> str:
    """The source's commit messages: with bodies if they fit, else subjects, else the first ones."""
    if not commits:
        return "(none)"
    full = []
    for c in commits:
        lines = [ln for ln in c.message.strip().splitlines()]
        body = [f"    {cut(ln, 160)}" for ln in lines[1:] if ln.strip()][:6]
        full.append("\n".join([f"- {str(c.id)[:7]} {cut(lines[0] if lines else '', 160)}", *body]))
    text = "\n".join(full)
    if len(text) <= budget:
        return text
    subjects = [f"- {str(c.id)[:7]} {cut(c.message.strip().splitlines()[0] if c.message.strip() else '', 120)}"
                for c in commits]
    return fit_rows(subjects, budget, "commits")


_CONVENTIONAL = re.compile(r"^[a-z]+(\([^)]*\))?!?: ")


def style_text(repo: pygit2.Repository, remote: pygit2.Commit, budget: int) -> str:
    """How the repository writes subjects, decided by code from its recent log."""
    subjects: list[str] = []
    walker = repo.walk(remote.id, pygit2.enums.SortMode.TOPOLOGICAL)
    walker.simplify_first_parent()
    for c in walker:
        if len(c.parent_ids) < 2 and c.message.strip():
            subjects.append(c.message.strip().splitlines()[0])
        if len(subjects) >= 30:
            break
    if not subjects:
        return "(no history: write short imperative subjects)"
    conv = sum(1 for s in subjects if _CONVENTIONAL.match(s))
    if conv * 2 >= len(subjects):
        rule = (f"{conv} of the last {len(subjects)} subjects use conventional prefixes "
                "(type: or type(scope): ...): use them too.")
    else:
        rule = (f"Only {conv} of the last {len(subjects)} subjects use conventional prefixes: "
                "write plain subjects like these, without prefixes.")
    lines = [rule]
    for s in subjects[:12]:
        line = f"- {cut(s, 100)}"
        if sum(len(ln) + 1 for ln in lines) + len(line) > budget:
            break
        lines.append(line)
    return "\n".join(lines)


def overview(hunks: list[Hunk], budget: int) -> str:
    """The whole diff by directory, two levels deep, for chunk prompts (context only)."""
    groups: dict[str, list[Hunk]] = {}
    for h in hunks:
        parts = h.path.split("/")[:-1][:2]
        groups.setdefault("/".join(parts) + "/" if parts else "(top level)", []).append(h)
    rows = [f"{d}: {len({h.path for h in hs})} files, {len(hs)} hunks" for d, hs in groups.items()]
    return fit_rows(rows, budget, "directories")


# --- chunking ----------------------------------------------------------------------


def index_line_costs(hunks: list[Hunk]) -> dict[str, int]:
    """Characters each hunk's line takes in diff.index_lines, newline included."""
    return {h.id: len(diff.index_lines([h], budget=10 ** 6)) + 1 for h in hunks}


def split(hunks: list[Hunk], cost: dict[str, int], chars: int, ids: int) -> list[tuple[str, list[Hunk]]]:
    """Cut hunks (in path order) into labelled chunks of at most `chars` index characters
    and `ids` hunks: by directory, recursively; a file too big alone by runs of its hunks."""

    def size(hs: list[Hunk]) -> int:
        return sum(cost[h.id] for h in hs)

    def pieces(hs: list[Hunk], depth: int, label: str) -> list[tuple[str, list[Hunk]]]:
        if len(hs) <= ids and size(hs) <= chars:
            return [(label, hs)]
        groups: dict[str, list[Hunk]] = {}
        for h in hs:
            parts = h.path.split("/")
            key = "/".join(parts[: depth + 1]) + ("/" if len(parts) > depth + 1 else "")
            groups.setdefault(key, []).append(h)
        if len(groups) == 1 and not next(iter(groups)).endswith("/"):
            return runs(hs, next(iter(groups)))
        out: list[tuple[str, list[Hunk]]] = []
        for key, sub in groups.items():
            out += pieces(sub, depth + 1, key)
        return out

    def runs(hs: list[Hunk], label: str) -> list[tuple[str, list[Hunk]]]:
        out: list[list[Hunk]] = [[]]
        used = 0
        for h in hs:
            if out[-1] and (used + cost[h.id] > chars or len(out[-1]) >= ids):
                out.append([])
                used = 0
            out[-1].append(h)
            used += cost[h.id]
        return [(f"{label} (part {i + 1} of {len(out)})", run) for i, run in enumerate(out)]

    chunks: list[tuple[list[str], list[Hunk], int]] = []
    for label, hs in pieces(hunks, 0, "(everything)"):
        c = size(hs)
        if chunks and len(chunks[-1][1]) + len(hs) <= ids and chunks[-1][2] + c <= chars:
            labels, acc, used = chunks[-1]
            labels.append(label)
            acc.extend(hs)
            chunks[-1] = (labels, acc, used + c)
        else:
            chunks.append(([label], list(hs), c))
    return [(cut(", ".join(labels), LABEL_CHARS), hs) for labels, hs, _ in chunks]
