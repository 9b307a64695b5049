"""Lines a commit makes up: added lines in neither the base nor the source branch, and lines it
removes that the source keeps.

Taking hunks never invents a line; a model that writes files can (a typo, a line ending, a
helper the source does not have), and one that deletes or empties a file the source keeps
removes lines no hunk removes (its tests may then pass vacuously). Counting both at each commit
keeps anything that drifts from the source in view: in the tool's answer, in the note, in
`git retcon status`.
"""
from __future__ import annotations

from collections import Counter
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
    lines: list[str] = field(default_factory=list)   # "path: +text" or "path: -text", the first SAMPLE
    removed: int = 0                                  # of count, lines removed that the source keeps

    def note(self) -> notes.Invented:
        out: notes.Invented = {"count": self.count, "lines": self.lines}
        if self.removed:
            out["removed"] = self.removed
        return out

    def answer(self) -> str:
        if not self.count:
            return ""
        added = self.count - self.removed
        parts = []
        if added:
            parts.append(f"{added} added line{'s' if added != 1 else ''} in neither the base nor the source branch")
        if self.removed:
            parts.append(f"{self.removed} removed line{'s' if self.removed != 1 else ''} that the source branch "
                         "keeps")
        return (f"\nNote: {' and '.join(parts)} (invented; recorded in the commit's note): " + "; ".join(self.lines)
                + ("; ..." if self.count > len(self.lines) else ""))

    def add(self, path: str, sign: str, raw: bytes, why: str = "") -> None:
        self.count += 1
        if sign == "-":
            self.removed += 1
        if len(self.lines) < SAMPLE:
            text = raw.decode("utf-8", errors="replace").rstrip("\n").replace("\r", "\\r")
            self.lines.append(f"{path}: {sign}{text[:SHOWN]}{why}")


def _lines(repo: pygit2.Repository, tree: pygit2.Tree | None, path: str | None) -> Counter[bytes]:
    """The file's lines, each with its end, counted; split at newlines only (a CR inside a line is
    part of it, as a diff has it)."""
    if tree is None or not path:
        return Counter()
    try:
        blob = get_blob(repo, (tree / path).id)
    except (KeyError, TypeError):
        return Counter()
    data = bytes(blob.data)
    return Counter(line + b"\n" for line in data.split(b"\n")[:-1]) + \
        (Counter([data.rsplit(b"\n", 1)[-1]]) if data and not data.endswith(b"\n") else Counter())


def _plain(raw: bytes) -> bytes:
    return raw.rstrip(b"\n").rstrip(b"\r")


def invented(repo: pygit2.Repository, parent_tree: str, new_tree: str, base_tree: str | None,
             source_tree: str) -> Drift:
    """The lines new_tree adds to parent_tree that neither base_tree nor source_tree has at that
    path (blank lines aside; a changed line ending counts), and those it removes that source_tree
    has more of at that path than new_tree keeps (a line only re-ended is counted once, as added)."""
    source = get_tree(repo, source_tree)
    new = get_tree(repo, new_tree)
    base = get_tree(repo, base_tree) if base_tree else get_tree(repo, parent_tree)
    diff = get_tree(repo, parent_tree).diff_to_tree(new, context_lines=0)
    out = Drift()
    for patch in diff:
        if patch is None or patch.delta.is_binary:
            continue
        delta = patch.delta
        path = delta.new_file.path
        src = _lines(repo, source, path)
        known = src | _lines(repo, base, path) | _lines(repo, base, delta.old_file.path)
        kept = _lines(repo, new, path)
        short: Counter[bytes] = Counter()     # per removed line: how many fewer than the source has
        for hunk in patch.hunks:
            added = {_plain(bytes(ln.raw_content)) for ln in hunk.lines if ln.origin == "+"}
            for line in hunk.lines:
                raw = bytes(line.raw_content)
                if not raw.strip():
                    continue
                if line.origin == "+" and raw not in known:
                    why = " (the same line, but without its newline)" if raw + b"\n" in known else \
                        " (the same line, but ending in CRLF)" if raw.replace(b"\r\n", b"\n") in known else ""
                    out.add(path, "+", raw, why)
                elif line.origin == "-" and _plain(raw) not in added:
                    missing = src[raw] - kept[raw] - short[raw]
                    if missing > 0:
                        short[raw] += 1
                        out.add(path, "-", raw)
    return out
