"""Lines a commit adds that are in neither the base nor the source branch.

Taking hunks never invents a line; a model that writes files can (a typo, a line
ending, a helper the source does not have). Counting them at each commit keeps
anything that drifts from the source in view: in the tool's answer, in the note,
in `git retcon status`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import pygit2

from git_retcon.git.plumbing import get_blob, get_tree
from git_retcon.state import notes

SAMPLE = 5          # lines named in an answer and kept in the note
SHOWN = 80          # characters of each


@dataclass
class Drift:
    """The invented lines of one commit: how many, and the first few (the note keeps them)."""

    count: int = 0
    lines: list[str] = field(default_factory=list)   # "path: +text", the first SAMPLE

    def note(self) -> notes.Invented:
        return {"count": self.count, "lines": self.lines}

    def answer(self) -> str:
        if not self.count:
            return ""
        return (f"\nNote: {self.count} added lines are in neither the base nor the source branch (invented; "
                "recorded in the commit's note): " + "; ".join(self.lines)
                + ("; ..." if self.count > len(self.lines) else ""))


def _lines(repo: pygit2.Repository, tree: pygit2.Tree | None, path: str | None) -> set[bytes]:
    if tree is None or not path:
        return set()
    try:
        blob = get_blob(repo, (tree / path).id)
    except (KeyError, TypeError):
        return set()
    return set(bytes(blob.data).splitlines(keepends=True))


def invented(repo: pygit2.Repository, parent_tree: str, new_tree: str, base_tree: str | None,
             source_tree: str) -> Drift:
    """The lines new_tree adds to parent_tree that neither base_tree nor source_tree has
    at that path (blank lines aside; a changed line ending counts)."""
    source = get_tree(repo, source_tree)
    base = get_tree(repo, base_tree) if base_tree else get_tree(repo, parent_tree)
    diff = get_tree(repo, parent_tree).diff_to_tree(get_tree(repo, new_tree), context_lines=0)
    out = Drift()
    for patch in diff:
        if patch is None or patch.delta.is_binary:
            continue
        delta = patch.delta
        path = delta.new_file.path
        known = _lines(repo, source, path) | _lines(repo, base, path) | _lines(repo, base, delta.old_file.path)
        for hunk in patch.hunks:
            for line in hunk.lines:
                raw = bytes(line.raw_content)
                if line.origin != "+" or not raw.strip() or raw in known:
                    continue
                out.count += 1
                if len(out.lines) < SAMPLE:
                    why = " (the same line, but without its newline)" if raw + b"\n" in known else \
                        " (the same line, but ending in CRLF)" if raw.replace(b"\r\n", b"\n") in known else ""
                    text = raw.decode("utf-8", errors="replace").rstrip("\n").replace("\r", "\\r")
                    out.lines.append(f"{path}: +{text[:SHOWN]}{why}")
    return out
