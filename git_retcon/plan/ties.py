"""What plan/clusters.py reads of atoms and files to tie two changes together: the names a line says,
a line said again elsewhere, a replacement made twice, what kind of file a path is, and the words
a unit of atoms says.
"""
from __future__ import annotations

import re
from collections.abc import Iterable

from git_retcon import diff
from git_retcon.owners import files, names

SHORT = 3               # a name shorter than this ties nothing
SAME_EDIT = 20          # characters a line has at least to tie two files by the same edit
PROSE = frozenset({"md", "rst", "txt", "adoc"})
DATA = frozenset({"json", "toml", "yaml", "yml", "txt", "csv", "xml", "snap", "golden", "out", "expected", "in"})
CONFIG = frozenset({"yaml", "yml", "toml", "cfg", "ini", "conf", "json"})
CODELESS = PROSE | DATA | {"cfg", "ini", "lock", "conf"}
# Words every test file's path says: they tell no test's code apart.
GENERIC = frozenset({"test", "tests", "data", "spec", "fixture", "valid", "invalid", "json", "toml", "yaml"})

_STRING = re.compile(r""""(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`[^`\n]*`""")
_MARKS = re.compile(r"^\s*(?:///?|#+|--|\*|/\*+|<!--|-(?=\s)|[*+](?=\s))\s*")
_TOKEN = re.compile(r"[\w.]+")
# A comment after code names no code: is' "// -0 >= 0 is true in JavaScript" tied two predicates'
# tests by a "new name". Not #: a verbose regular expression's lines say their "# seconds" in a string.
_TRAILING = re.compile(r"\s//.*$")
_TICKED = re.compile(r"`(?:[\w.]+::)*([A-Za-z_]\w*)(?:\(\))?`")
QUOTED = re.compile(r"""["'`]([\w][\w./-]{2,80})["'`]""")


def key(ident: str) -> str:
    """A name as every spelling of it reads: isFiniteNumber, is_finite_number -> isfinitenumber."""
    return "".join(p.lower() for p in names.parts(ident))


def keys(lines: Iterable[str], path: str) -> tuple[set[str], set[str]]:
    """The names the lines of the file at path say outside strings and comments, a // comment after
    code too (in prose and comments, only those in backticks), and every run of two to five words or
    name parts on one line, strings included ('finite number' -> finitenumber)."""
    is_prose = prose(path)
    after = _TRAILING if extension(path) in files.BLOCK_COMMENTS else None
    full: set[str] = set()
    runs: set[str] = set()
    for ln in lines:
        ln = ln[:300]
        if is_prose or names.COMMENT.match(ln):    # a name in backticks: xmlparser's "/// - `InvalidQuote`"
            full |= {k for m in _TICKED.findall(ln) if len(k := key(m)) >= SHORT and k not in names.COMMON_WORDS}
            if not is_prose:
                continue
        code = _STRING.sub(" ", ln)
        for ident in [] if is_prose else names.identifiers(after.sub("", code) if after else code):
            if len(k := key(ident)) >= SHORT and not k.isdigit() and k not in names.COMMON_WORDS:
                full.add(k)     # `int`, `list`: no base file may say them, they are no one's
        tokens = [p.lower() for ident in names.identifiers(ln) for p in names.parts(ident)]
        for i in range(len(tokens)):
            for j in range(i + 2, min(i + 5, len(tokens)) + 1):
                runs.add("".join(tokens[i:j]))
    return full, runs


def plain(line: str) -> str:
    """A line as any file says it: comment marks and spacing gone."""
    return " ".join(_MARKS.sub("", line).split())


def edit_lines(h: diff.Hunk) -> dict[str, bool]:
    """h's changed lines of SAME_EDIT characters or more, plain, each signed - or +, and whether it
    is code (not prose, not a comment)."""
    removed, added = names.hunk_lines(h)
    return {sign + text: not prose(h.path) and not names.COMMENT.match(ln)
            for sign, lines in (("-", removed), ("+", added)) for ln in lines if len(text := plain(ln)) >= SAME_EDIT}


def swap(h: diff.Hunk) -> tuple[frozenset[str], frozenset[str]] | None:
    """What a hunk replaces with what, word by word (`2.3.0` -> `2.4.0`), where it replaces."""
    removed, added = names.hunk_lines(h)
    old = set(_TOKEN.findall(" ".join(removed)))
    new = set(_TOKEN.findall(" ".join(added)))
    if not removed or not added or not old - new or not new - old:
        return None
    return frozenset(old - new), frozenset(new - old)


def norm(ws: Iterable[str]) -> set[str]:
    """Words with a plural's s taken off (datetimes, datetime)."""
    return {w[:-1] if len(w) > 4 and w.endswith("s") and not w.endswith("ss") else w for w in ws}


def extension(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[-1].lower() if "." in name else ""


def prose(path: str) -> bool:
    return extension(path) in PROSE


def config(path: str) -> bool:
    """A project's configuration: a dotfile, a file in a dot-folder (.github/), a root file of a
    configuration format (package.json, pyproject.toml)."""
    parts = path.split("/")
    return any(p.startswith(".") for p in parts) or (len(parts) == 1 and extension(path) in CONFIG)


def test(path: str) -> bool:
    """A test or its data (a CI workflow named tests.yaml is configuration)."""
    return names.is_test(path) and not config(path)


def code(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return "." in name and not name.startswith(".") and extension(path) not in CODELESS


class Files(files.Files):
    """The base and tip versions of the changed files, each read once, and what their lines say."""

    def vocabulary(self, paths: Iterable[str], new: bool) -> set[str]:
        """Every name the files at paths say, at the tip (new) or the base: not their runs of words,
        for a readme's "is one of the given values" made is' new `isOneOf` an old name."""
        out: set[str] = set()
        for path in paths:
            full, _ = keys(self.lines(path, new), path)
            out |= full
        return out

    def doc(self, h: diff.Hunk) -> bool:
        """Prose: a hunk of a prose file, or of comment lines only (a line of a /* */ comment with no
        mark of its own too)."""
        if prose(h.path):
            return True
        removed, added = names.hunk_lines(h)
        return all(names.COMMENT.match(ln) or not ln.strip() or ln.strip() in self.commented(path, new)
                   for lines, path, new in ((removed, h.old_path or h.path, False), (added, h.path, True))
                   for ln in lines)

    def says(self, paths: Iterable[str], line: str, new: bool) -> bool:
        """Whether one of paths (at the tip: new) says the plain line."""
        return any(plain(ln) == line for p in paths for ln in self.lines(p, new))


def words(hs: list[diff.Hunk], around: list[str | None]) -> dict[str, float]:
    """The words of a unit of atoms, each with its weight: its code's alone where it has code (a
    code unit's tests would speak for it to every other test), with the definitions its changes
    sit in; a test file's name, less GENERIC, counts twice (localtime.toml and RE_LOCALTIME)."""
    has_code = any(not test(h.path) for h in hs)
    out: dict[str, float] = {}
    for h, a in zip(hs, around, strict=True):
        if has_code and test(h.path):
            continue
        removed, added = names.hunk_lines(h)
        for w in norm(names.words(a or "") | names.words(h.path) | names.words(" ".join((added or removed)[:200]))):
            out.setdefault(w, 1.0)
        if not has_code:
            for w in norm(names.words(names.stem(h.path))) - GENERIC:
                out[w] = 2.0
    return out
