"""Where each of the source's new changes goes, for `git retcon absorb`.

Plain code first, in this order: the user's `--into`; commutation (git-absorb's rule: a
hunk whose lines, or the lines around an insertion, were all introduced by one logical
commit, as the cleaned branch's blame says, belongs to it); then `paths` (a hunk under
exactly one commit's paths, when no other logical commit last changed its lines). What is
still ambiguous goes to the model, one small question per hunk with the candidate
commits' messages and hints; a hunk no rule and no model places goes to a new logical
commit at the end, and the output says why.
"""
from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable
from dataclasses import dataclass

import pygit2

from git_retcon import diff
from git_retcon.git.ids import CommitId
from git_retcon.state import spec as specmod
from git_retcon.state.spec import paths_match, paths_match_any

BASE = -1     # a line no logical commit introduced: the merge base's, or older


@dataclass
class Placed:
    """One hunk, the logical commit it goes into (0-based; None: a new one at the end), why."""

    hunk: diff.Hunk
    into: int | None
    why: str


@dataclass
class Into:
    """--into: K for every hunk, or GLOB=K for those under GLOB (1-based on the command line)."""

    index: int
    glob: str | None = None

    @classmethod
    def parse(cls, text: str, n: int) -> Into:
        glob, _, k = text.rpartition("=") if "=" in text else (None, "", text)
        if not re.fullmatch(r"\d+", k.strip()) or not 1 <= int(k) <= n:
            raise ValueError(f"--into {text!r}: give a logical commit's number, 1 to {n} (or GLOB=NUMBER)")
        return cls(int(k) - 1, glob or None)

    def takes(self, h: diff.Hunk) -> bool:
        return self.glob is None or any(fnmatch.fnmatchcase(p, self.glob) or paths_match(p, [self.glob])
                                        for p in (h.path, h.old_path) if p)


Ask = Callable[[diff.Hunk, list[int]], "tuple[int | None, str]"]


def place(repo: pygit2.Repository, spec: specmod.Spec, owner_of: dict[CommitId, int], base: str, tip: str,
          hunks: list[diff.Hunk], into: list[Into], ask: Ask | None) -> list[Placed]:
    """Each hunk of tip..source, placed. owner_of: each commit of the cleaned branch past
    base, by the logical commit that made it."""
    blame = _Blamer(repo, base, tip, owner_of)
    out: list[Placed] = []
    for h in hunks:
        chosen = next((i for i in into if i.takes(h)), None)
        if chosen is not None:
            out.append(Placed(h, chosen.index, f"--into {chosen.index + 1}"))
            continue
        owners = blame.owners(h)
        mine = owners - {BASE}
        if len(owners) == 1 and mine:
            k = mine.pop()
            out.append(Placed(h, k, f"its lines came from commit {k + 1}"))
            continue
        by_paths = [k for k, c in enumerate(spec.commits) if c.paths and paths_match_any((h.path, h.old_path), c.paths)]
        if len(by_paths) == 1 and mine <= {by_paths[0]}:
            out.append(Placed(h, by_paths[0], f"under commit {by_paths[0] + 1}'s paths"))
            continue
        candidates = sorted(mine | set(by_paths)) or list(range(len(spec.commits)))
        if ask is not None:
            judged, why = ask(h, candidates)
            out.append(Placed(h, judged, why))
            continue
        reason = ("its lines came from several commits" if len(mine) > 1 else
                  "under several commits' paths" if len(by_paths) > 1 else
                  "no logical commit introduced its lines or names its path")
        out.append(Placed(h, None, reason + ", and no model judged it"))
    return out


class _Blamer:
    """Which logical commits last changed a hunk's lines, by the cleaned branch's blame."""

    def __init__(self, repo: pygit2.Repository, base: str, tip: str, owner_of: dict[CommitId, int]):
        self.repo, self.base, self.tip, self.owner_of = repo, base, tip, owner_of
        self._blames: dict[str, pygit2.Blame | None] = {}

    def owners(self, h: diff.Hunk) -> set[int]:
        if h.kind == "modify":
            if h.old_lines:
                lines = range(h.old_start, h.old_start + h.old_lines)
            else:   # an insertion after line old_start: the lines around it
                lines = range(max(h.old_start, 1), h.old_start + 2)
            return self._lines(h.path, lines)
        if h.kind in ("delete", "mode", "binary"):
            return self._lines(h.path, None)
        if h.kind == "rename" and h.old_path:
            return self._lines(h.old_path, None)
        return set()   # a new file: no line of it is anyone's yet

    def _lines(self, path: str, lines: range | None) -> set[int]:
        blame = self._blame(path)
        if blame is None:
            return set()
        found: set[int] = set()
        for bh in blame:
            first, count = bh.final_start_line_number, bh.lines_in_hunk
            if lines is None or (first <= lines[-1] and first + count - 1 >= lines[0]):
                found.add(self.owner_of.get(CommitId(str(bh.final_commit_id)), BASE))
        return found

    def _blame(self, path: str) -> pygit2.Blame | None:
        if path not in self._blames:
            try:
                self._blames[path] = self.repo.blame(path, newest_commit=self.tip, oldest_commit=self.base)
            except (KeyError, ValueError, UnicodeError, pygit2.GitError):   # not in the tip: nobody's lines
                self._blames[path] = None
        return self._blames[path]
