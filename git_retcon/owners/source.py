"""Which source commit wrote each hunk: the lines a hunk adds are blamed at the source tip over
merge-base..tip, the lines it removes are found in the source commit that removed them. A hunk all
of whose lines one source commit wrote most likely belongs where that commit's subject points.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import pygit2

from git_retcon import diff
from git_retcon.git.plumbing import get_commit


@dataclass(frozen=True)
class SourceCommit:
    sha: str
    subject: str


def source_commits(repo: pygit2.Repository, base: str, tip: str) -> list[pygit2.Commit]:
    """base..tip along first parents, oldest first."""
    walker = repo.walk(get_commit(repo, tip).id, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)
    walker.simplify_first_parent()
    walker.hide(get_commit(repo, base).id)
    return list(walker)


def _subject(c: pygit2.Commit) -> str:
    text = c.message.strip()
    return text.splitlines()[0] if text else ""


def written_by(repo: pygit2.Repository, base: str, tip: str, hunks: list[diff.Hunk],
               ) -> tuple[list[SourceCommit], dict[str, Counter[int]]]:
    """The source commits, and for each hunk id how many of its lines each of them wrote
    (index into the list). A history too odd to blame (no first parent) counts nothing."""
    commits = source_commits(repo, base, tip)
    index = {c.id: i for i, c in enumerate(commits)}
    removed: dict[str, list[tuple[int, bytes]]] = {}
    touched: dict[str, list[int]] = {}
    for i, c in enumerate(commits):
        if not c.parents:
            continue
        for h in diff.remaining(repo, str(c.parents[0].tree_id), str(c.tree_id)):
            touched.setdefault(h.path, []).append(i)
            if h.removed:
                removed.setdefault(h.path, []).append((i, h.removed))
    blames: dict[str, pygit2.Blame | None] = {}
    out: dict[str, Counter[int]] = {}
    tip_id = get_commit(repo, tip).id
    base_id = get_commit(repo, base).id
    for h in hunks:
        found: Counter[int] = Counter()
        if h.kind in ("modify", "add") and h.added:
            if h.path not in blames:
                try:
                    blames[h.path] = repo.blame(h.path, newest_commit=tip_id, oldest_commit=base_id)
                except (KeyError, ValueError, pygit2.GitError):
                    blames[h.path] = None
            blame = blames[h.path]
            start = h.new_start if h.kind == "modify" else 1
            count = h.new_lines if h.kind == "modify" else h.added_lines
            for n in range(start, start + count):
                try:
                    at = index.get(blame.for_line(n).final_commit_id) if blame else None
                except (IndexError, ValueError):
                    at = None
                if at is not None:
                    found[at] += 1
        if h.removed and h.kind in ("modify", "delete"):
            for i, data in removed.get(h.path, []):
                if h.removed in data or data in h.removed:
                    found[i] += max(1, h.removed_lines)
                    break
        if not found:
            for i in touched.get(h.path, [])[:1]:
                found[i] += 1
        out[h.id] = found
    return [SourceCommit(str(c.id), _subject(c)) for c in commits], out
