"""The base and tip versions of a branch's changed files, each read once: what the evidence's
ranking (owners/evidence.py) and plan --outline's ties (plan/ties.py) read of them."""
from __future__ import annotations

import re

import pygit2

from git_retcon import diff
from git_retcon.diff.apply import files_under
from git_retcon.git.plumbing import get_blob
from git_retcon.owners import names


class Files:
    def __init__(self, repo: pygit2.Repository, base: pygit2.Tree, tip: pygit2.Tree) -> None:
        self.repo, self.base, self.tip = repo, base, tip
        self.files: dict[tuple[str, bool], list[str]] = {}
        self._folders: dict[str, set[str]] | None = None
        self._commented: dict[tuple[str, bool], frozenset[str]] = {}

    def lines(self, path: str, new: bool) -> list[str]:
        """The file's lines at the tip (new) or the base; none where it is not there or not text."""
        key = (path, new)
        if key not in self.files:
            try:
                self.files[key] = names.text_lines(get_blob(self.repo, (self.tip if new else self.base)[path].id).data)
            except (KeyError, ValueError):
                self.files[key] = []
        return self.files[key]

    def commented(self, path: str, new: bool) -> frozenset[str]:
        """The lines (stripped) the file says only inside /* */ comments: a JSDoc's prose, whose lines
        need no leading * (p-map's index.d.ts: "@returns A `Promise` that is fulfilled...")."""
        key = (path, new)
        if path.rsplit(".", 1)[-1].lower() not in BLOCK_COMMENTS:    # a glob's /* in YAML opens nothing
            return frozenset()
        if key not in self._commented:
            inside: set[str] = set()
            outside: set[str] = set()
            open_ = False
            for ln in self.lines(path, new):
                starts_open = open_
                rest = ln if open_ else _STRING.sub('""', ln).split("//", 1)[0]
                while True:     # each /* and */ in turn
                    mark = rest.find("*/") if open_ else rest.find("/*")
                    if mark < 0:
                        break
                    open_, rest = not open_, rest[mark + 2:]
                    if not open_:
                        rest = _STRING.sub('""', rest).split("//", 1)[0]
                (inside if starts_open else outside).add(ln.strip())
            self._commented[key] = frozenset(inside - outside)
        return self._commented[key]

    def around(self, h: diff.Hunk) -> str | None:
        """The name of the definition a modifying hunk sits inside, if any."""
        return names.around(h, self.lines)

    def folder_of(self, stem: str) -> str | None:
        """The one folder of the tip's tree that holds files named stem (any extension), if one does."""
        if self._folders is None:
            self._folders = {}
            for path in files_under(self.repo, self.tip):
                folder, _, name = path.rpartition("/")
                self._folders.setdefault(name.split(".", 1)[0], set()).add(folder)
        found = self._folders.get(stem, set())
        return next(iter(found)) if len(found) == 1 else None


_STRING = re.compile(r""""(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'""")     # a /* in a string opens nothing

# The languages whose comments are /* */ blocks.
BLOCK_COMMENTS = frozenset({"c", "h", "cc", "cpp", "cxx", "hpp", "hh", "m", "mm", "java", "kt", "kts", "scala",
                             "groovy", "go", "rs", "swift", "cs", "dart", "php", "js", "jsx", "mjs", "cjs", "ts", "tsx",
                             "mts", "cts", "css", "scss", "less", "sql"})
