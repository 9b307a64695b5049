"""Which hunks hold lines of several commits, split into atoms by the evidence of their lines.

A hunk is split where the evidence of its lines differs, and only there: each line edited,
added or removed is read for
- the source commit that wrote it (an added line, blamed at the source tip; a removed line,
  found in the source commit that removed it), where the branch has more than one commit;
- the changed file it names (`tests/data/valid/dates.toml`, `test_money`), a file of the
  branch's diff other than the hunk's own;
- the module it imports (`import json`, `from .money import Money`, `use std::fmt;`,
  `#include <stdio.h>`, `import "os"`): each import of a block is an entry of its own;
- the definition it begins (`def words`, `fn parse`, `class Money`) or, in Markdown, the section
  (`##### .negativeInteger(value)`): the lines after it, to the next, are its body;
- the entry of a list, set or table it is (`"hex-escape",`, `"no-seconds": 3,`, `NAME,`, a change
  log's or a doc comment's `- item`, a TypeScript member `name: type;`): each entry is one of its
  own (tomli's block of expected failures: a name each feature takes out).
Adjacent lines with the same evidence stay together; a line with none stays with the line before
it. A hunk all of whose lines say one thing (or nothing) is not split, so a branch whose hunks
each belong to one commit is placed as before. Hunks the spec decides (its `hunks`, by id) stay
whole: the user's word is about the hunk.
"""
from __future__ import annotations

import re
from collections.abc import Hashable, Sequence

import pygit2

from git_retcon import diff
from git_retcon.diff import atoms
from git_retcon.diff.select import numbered
from git_retcon.git.plumbing import get_commit
from git_retcon.model.guards import names_file
from git_retcon.owners import names
from git_retcon.owners.source import source_commits

# One import line of the common languages, and the module it names.
_IMPORT = re.compile(r"""^\s*(?:import\s+(?:static\s+)?([\w.]+)|from\s+([.\w]+)\s+import|use\s+([\w:]+)|"""
                     r"""#\s*include\s*[<"]([^>"]+)[>"]|import\s+"([^"]+)"|(?:const|let|var)\s+\w+\s*=\s*"""
                     r"""require\(['"]([^'"]+)|import\s.*\sfrom\s+['"]([^'"]+))""")


# A line that begins a definition, and the name it defines.
_DEFINES = re.compile(r"^\s*(?:export\s+)?(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?"
                      r"(?:def|class|function|fn|func|struct|enum|trait|interface)\s+([A-Za-z_]\w*)"
                      # a JS/TS test or suite, by its title (sindresorhus/is: two commits' test
                      # blocks side by side, one 119-line hunk)
                      r"""|^\s*(?:test|it|describe)(?:\.\w+)?\(\s*['"`]([^'"`\n]+)""")


# One entry of a list, set or table on a line of its own: a quoted string or a name, with its value.
_ENTRY = re.compile(r"""^\s*(?:"[^"\n]*"|'[^'\n]*'|[A-Za-z_][\w.]*(?:\([^()\n]*\))?)\s*(?:[:=]\s*[^,\n]+)?,\s*$"""
                    # a match arm (Rust, Scala, Swift, C#'s switch expression), and a Markdown list
                    # item (a change log's line), also in a doc comment (a Rust function's
                    # "# Errors" list): xmlparser's three errors, each a variant, an arm of its
                    # Display, a line of the change log and of the errors a function returns
                    r"""|^\s*[\w:.]+(?:\([^()\n]*\))?\s*=>|^\s*(?:(?://[/!]?|#|\*)\s*)?[-*+]\s+\S"""
                    # a member of a TypeScript type or interface (is' `nonNegativeInteger: (value:
                    # unknown, message?: string) => asserts value is number;`, one per predicate)
                    r"""|^\s*(?:readonly\s+)?(?!(?:default|case|return)\b)[A-Za-z_$][\w$]*\??:\s*\S.*;\s*$""")

# A Markdown heading: in a Markdown file, it begins a section, as a definition begins its body
# (is' readme: a "##### .negativeInteger(value)" section per predicate, two commits' in one hunk).
_HEADING = re.compile(r"^#{1,6}\s+(\S.*)")
_MARKDOWN = (".md", ".markdown", ".mdx")


def split(repo: pygit2.Repository, base: str, tip: str, hunks: list[diff.Hunk],
          keep: set[str], frames: set[str] | None = None) -> list[diff.Hunk]:
    """hunks, each that holds lines of different evidence replaced by its atoms (as shown hunks,
    diff/atoms.as_hunk), in order; keep: the ids of hunks that stay whole; frames, if given,
    gets the ids of the atoms that are a list's frame (its opening and closing lines)."""
    reader = _Lines(repo, base, tip, hunks)
    out: list[diff.Hunk] = []
    for h in hunks:
        signals = reader.signals(h) if h.id not in keep and h.kind == "modify" else []
        groups = atoms.group(h, signals) if signals else []
        if len(groups) <= 1:
            out.append(h)
            continue
        out += [atoms.as_hunk(h, g) for g in groups]
        if frames is not None:
            m = len(numbered(h)[0])
            framed = frozenset(n for u, s in zip(atoms.units(h), signals, strict=True) if s == atoms.FRAME
                               for n in u.numbers(m))
            frames.update(atoms.atom_id(h, g) for g in groups if framed and framed <= g)
    return out


class _Lines:
    """The evidence of each line of the branch's hunks, each source commit's diff read once."""

    def __init__(self, repo: pygit2.Repository, base: str, tip: str, hunks: list[diff.Hunk]) -> None:
        self.repo = repo
        self.commits = source_commits(repo, base, tip)
        self.tip_id, self.base_id = get_commit(repo, tip).id, get_commit(repo, base).id
        self.paths = {p for h in hunks for p in (h.path, h.old_path) if p}
        self.blames: dict[str, pygit2.Blame | None] = {}
        self._removed: dict[str, list[tuple[int, list[bytes]]]] | None = None
        self.index = {c.id: i for i, c in enumerate(self.commits)}

    def signals(self, h: diff.Hunk) -> list[Hashable | None]:
        """One per unit of h (diff/atoms.units): the source commit that wrote it, else the other
        changed file it names, the module it imports, the definition it begins, the entry it is;
        else None. Around a list's entries, the lines before the first and after the last are
        one atom of their own: the list's frame goes with whichever commit adds or empties it."""
        old, new = numbered(h)
        out: list[Hashable | None] = []
        for u in atoms.units(h):
            text = b"".join([old[i] for i in u.old] + [new[j] for j in u.new]).decode("utf-8", "replace")
            who = self._wrote(h, u) if len(self.commits) > 1 else None
            named = sorted(p for p in self.paths if p != h.path and names_file(text, p, self.paths))
            module = _IMPORT.match(text)
            begins = _DEFINES.match(text)
            heading = _HEADING.match(text) if h.path.lower().endswith(_MARKDOWN) else None
            # an entry edited in place is an entry too (xmlparser's "/// - `InvalidChar`" made
            # "/// - `InvalidQuote`", beside an entry another commit added)
            entry = all(_ENTRY.match(line) for line in text.splitlines()) and text.strip()
            out.append(("commit", who) if who is not None else ("file", named[0]) if named else
                       ("import", next(g for g in module.groups() if g)) if module else
                       ("defines", begins[1] or begins[2]) if begins else ("section", heading[1]) if heading else
                       ("entry", text.strip()) if entry else
                       atoms.BLANK if not text.strip() else atoms.COMMENT if names.COMMENT.match(text) else None)
        return _framed(_edits(atoms.units(h), out))

    def _wrote(self, h: diff.Hunk, u: atoms.Unit) -> int | None:
        """The source commit that wrote the unit's added line (blame), or removed its removed line."""
        if u.new:
            blame = self._blame(h.path)
            try:
                found = blame.for_line(h.new_start + u.new[0]).final_commit_id if blame else None
            except (IndexError, ValueError):
                found = None
            return self.index.get(found) if found is not None else None
        line = numbered(h)[0][u.old[0]]
        for i, removed in self._removals().get(h.path, []):
            if line in removed:
                return i
        return None

    def _blame(self, path: str) -> pygit2.Blame | None:
        if path not in self.blames:
            try:
                self.blames[path] = self.repo.blame(path, newest_commit=self.tip_id, oldest_commit=self.base_id)
            except (KeyError, ValueError, pygit2.GitError):
                self.blames[path] = None
        return self.blames[path]

    def _removals(self) -> dict[str, list[tuple[int, list[bytes]]]]:
        """Per path, each source commit's removed lines (read once, when a removed line asks)."""
        if self._removed is None:
            self._removed = {}
            for i, c in enumerate(self.commits):
                if c.parents:
                    for h in diff.remaining(self.repo, str(c.parents[0].tree_id), str(c.tree_id)):
                        if h.removed:
                            self._removed.setdefault(h.path, []).append((i, diff.split_lines(h.removed)))
        return self._removed


def _edits(us: list[atoms.Unit], signals: list[Hashable | None]) -> list[Hashable | None]:
    """A hunk of lines edited in place, as many removed as added and nothing else, that no evidence
    tells apart: each edited line is an atom of its own, its removed and added halves together
    (paired by likeness, else by place: the k-th removed line with the k-th added one). A function
    two commits changed a line each (its tax, then its rounding) is one such hunk when squashed."""
    olds = [i for i, u in enumerate(us) if not u.new]
    news = [i for i, u in enumerate(us) if not u.old]
    pairs = [i for i, u in enumerate(us) if u.old and u.new]
    out: list[Hashable | None] = list(signals)
    if pairs and olds + news and all(s in (atoms.COMMENT, atoms.BLANK) for s in signals):
        # A comment edited in place, and comment lines added or removed beside it: xmlparser's
        # "/// An invalid/unexpected character." (reworded by one commit) and "///", "/// Values:
        # actual, expected, pos." (added by the next) are no sentence of one commit's.
        for k, i in enumerate(pairs):
            out[i] = atoms.edit(k)
        for i in olds + news:
            out[i] = atoms.edit(len(pairs))
        return out
    if len(olds) != len(news) or len(pairs) + len(olds) < 2 or any(s is not None for s in signals):
        return signals
    for k, at in enumerate([(i,) for i in pairs] + list(zip(olds, news, strict=True))):
        for i in at:
            out[i] = atoms.edit(k)
    return out


def _framed(signals: list[Hashable | None]) -> list[Hashable | None]:
    """The lines before a run of entries and after it, with no evidence of their own, as one atom
    (diff/atoms.FRAME): the frame of the list, not the entry next to it. Its opening and closing
    lines go together: tomli's `if valid.stem in {` went to one commit and its `}:` to another,
    and the test module did not import. A blank or comment line is no frame (it goes with what
    follows it: a variant's doc comment, xmlparser's), nor are the lines after an entry that opens
    a block (a match arm's `=> {`: they are its body)."""
    entries = [i for i, s in enumerate(signals) if isinstance(s, tuple) and s[:1] == ("entry",)]
    if not entries:
        return signals
    out = list(signals)
    for i in range(entries[0]):     # a Markdown heading over a list is its frame: "### Added"
        s = out[i]
        out[i] = atoms.FRAME if s is None or isinstance(s, tuple) and s[:1] == ("section",) else s
    opened = atoms.FRAME in out[:entries[0]]
    last = signals[entries[-1]]
    if isinstance(last, tuple) and not str(last[-1]).rstrip().endswith(_OPENS):
        for i in range(entries[-1] + 1, len(out)):
            # a blank line that closes a list the hunk opens is its frame too: the change log's
            # "### Added" section came with its blank line after it, in the commit of its first entry
            out[i] = atoms.FRAME if out[i] is None or (opened and out[i] == atoms.BLANK) else out[i]
    return out


_OPENS = ("{", "(", "[", "=>", ":")


def whole_ids(items: Sequence[str]) -> set[str]:
    """The hunk ids that items (a spec's `hunks`) name whole."""
    return {i for i in items if atoms.parse_id(i) is None}
