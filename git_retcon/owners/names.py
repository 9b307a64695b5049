"""What a hunk says in words, read by plain code: the names it defines, the names it uses, the
function around it, the words of its lines and its file's name; and the words of a message or hint.

A static reading, language by language only where a keyword says it (def, class, function, fn,
func, const, let, var, struct, ...): enough to match a hunk with the commit whose message names
what it changes, and to see that one hunk needs a name another defines.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from git_retcon.diff import Hunk

_DEF = re.compile(
    r"^[ \t]*(?:export\s+)?(?:default\s+)?(?:pub(?:\([\w:]+\))?\s+)?(?:async\s+)?(?:static\s+)?"
    r"(?:def|class|function|func|fn|struct|enum|interface|trait|type|module|macro|object|record|const|let|var)"
    r"\s+\*?(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*)")
# A module-level assignment (Python, shell, Makefile): NAME = ...
_ASSIGN = re.compile(r"^([A-Za-z_][\w]*)\s*(?::[^=]+)?=(?!=)")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PARTS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
# Words too common to tell commits apart: English glue, and what every language's code says.
COMMON_WORDS = frozenset({
    "a", "an", "and", "or", "not", "the", "to", "of", "in", "on", "for", "with", "from", "by", "at",
    "as", "is", "are", "be", "it", "its", "this", "that", "these", "those", "into", "adds", "added",
    "fixes", "fixed", "uses", "makes", "changes", "changed", "updates", "more", "less", "also", "only",
    "all", "any", "some", "each", "one", "two", "when", "then", "than", "else", "if", "but", "so",
    "do", "does", "done", "can", "will", "would", "should", "def", "class", "function", "func", "fn",
    "return", "self", "none", "null", "true", "false", "let", "var", "const", "import", "export",
    "pass", "int", "str", "bool", "string", "list", "dict", "map", "set", "get", "put", "type",
    "void", "public", "private", "static", "async", "await", "yield", "end", "begin", "elif", "while",
    "try", "except", "finally", "raise", "throw", "catch", "new", "delete", "super",
})


def words(text: str) -> set[str]:
    """The words of text, lowercased, an identifier also by its parts (parse_numbers: parse,
    numbers; parseNumbers: parse, numbers), words of fewer than three letters and COMMON_WORDS left out."""
    out: set[str] = set()
    for m in _IDENT.finditer(text):
        ident = m.group(0)
        for w in [ident, *parts(ident)]:
            w = w.lower()
            if len(w) >= 3 and w not in COMMON_WORDS and not w.isdigit():
                out.add(w)
    return out


def parts(ident: str) -> list[str]:
    """An identifier's parts as written (parse_numbers, parseNumbers: parse, numbers)."""
    return _PARTS.findall(ident.replace("_", " "))


def identifiers(text: str) -> list[str]:
    return _IDENT.findall(text)


def text_lines(data: bytes) -> list[str]:
    return data.decode("utf-8", "replace").splitlines()


def hunk_lines(h: Hunk) -> tuple[list[str], list[str]]:
    """(removed lines, added lines) of a text hunk; a rename's are its edits'."""
    if h.kind == "rename":
        return ([ln for e in h.edits for ln in text_lines(e.removed)],
                [ln for e in h.edits for ln in text_lines(e.added)])
    if h.kind in ("modify", "add", "delete"):
        if b"\0" in h.added[:8000] or b"\0" in h.removed[:8000]:
            return [], []
        return text_lines(h.removed), text_lines(h.added)
    return [], []


# A line that is only a comment: it names, it does not use (xmlparser's doc comment "Values:
# actual, expected" moved another commit's `let actual` to its commit).
COMMENT = re.compile(r"^\s*(?://|#(?!include|define|if|endif|pragma|\[)|/\*|\*|--|<!--)")


# A variable inside a block (`var x`, `let mut y`, Go's `z :=`): no one else's to use.
_DECLARES = re.compile(r"^[ \t]+(?:(?:let|var|const)\s+(?:mut\s+)?([A-Za-z_$][\w$]*)|([A-Za-z_]\w*)\s*:=)")


def defined(lines: Iterable[str]) -> list[str]:
    """The names these lines define, in order (not a block's local variables)."""
    out: list[str] = []
    for ln in lines:
        m = None if _DECLARES.match(ln) else _DEF.match(ln) or _ASSIGN.match(ln)
        if m and m.group(1) not in out and len(m.group(1)) >= 2:
            out.append(m.group(1))
    return out


def declared(lines: Iterable[str]) -> list[str]:
    """The local variables these lines declare (`var x`, `let mut y`, Go's `z :=`): no other
    function's, but the rest of their own function uses them."""
    out: list[str] = []
    for ln in lines:
        if (m := _DECLARES.match(ln)) and (name := m.group(1) or m.group(2)) not in out:
            out.append(name)
    return out


def used(lines: Iterable[str]) -> set[str]:
    """The identifiers these lines name (strings included: a cheap reading), comment lines aside."""
    return {m.group(0) for ln in lines if not COMMENT.match(ln) for m in _IDENT.finditer(ln)}


def indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def around(h: Hunk, lines: Callable[[str, bool], list[str]]) -> str | None:
    """The definition a modifying hunk sits inside, if any; lines(path, at the tip) reads a file."""
    if h.kind != "modify":
        return None
    removed, added = hunk_lines(h)
    new = bool(added)
    at = (h.new_start if new else h.old_start) - 1
    return enclosing(lines(h.path, new), at, least_indent(added or removed))


def enclosing(lines: list[str], index: int, inner: int) -> str | None:
    """The name of the definition around line `index` (0-based) of a file: the nearest line above
    that defines a name and is indented less than `inner`, the hunk's least indentation."""
    if inner <= 0:
        return None
    for i in range(min(index, len(lines)) - 1, -1, -1):
        ln = lines[i]
        if not ln.strip():
            continue
        if indent(ln) < inner:
            if ln.lstrip().startswith(")"):    # the end of a signature written on several lines
                continue
            m = _DEF.match(ln)
            if m:
                return m.group(1)
            inner = indent(ln)
            if inner == 0:
                return None
    return None


def least_indent(lines: list[str]) -> int:
    found = [indent(ln) for ln in lines if ln.strip()]
    return min(found) if found else 0


def whitespace_only(h: Hunk) -> bool:
    """A change of spacing alone: the lines removed and added differ in whitespace only."""
    if h.kind != "modify":
        return False
    removed, added = hunk_lines(h)
    if not removed and not added:
        return False
    squeeze = re.compile(r"\s+")
    return squeeze.sub("", "".join(removed)) == squeeze.sub("", "".join(added))


def stem(path: str) -> str:
    """A file's name without its folder and extension: `parser` for src/parser.py."""
    name = path.rsplit("/", 1)[-1]
    return name.split(".", 1)[0] if not name.startswith(".") else name


_TEST = re.compile(r"(^|/)(tests?|spec|__tests__)/|(^|/)test_[^/]*$|_test\.\w+$|\.(test|spec)\.\w+$|Test\.\w+$"
                   r"|(^|/)tests?\.\w+$")


def is_test(path: str) -> bool:
    return bool(_TEST.search(path))


def tested_stem(path: str) -> str:
    """What a test file tests, by its name: `parser` for tests/test_parser.py or parser.test.ts."""
    s = stem(path)
    for pre in ("test_", "tests_"):
        if s.startswith(pre):
            s = s[len(pre):]
    for suf in ("_test", "_tests", "Test", "Tests", "_spec"):
        if s.endswith(suf):
            s = s[: -len(suf)]
    return s
