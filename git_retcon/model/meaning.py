"""What a model wrote, read as what it meant: one function per vocabulary (a tool's name, a
path or file name, a hunk id), each answering exact, read-as (with the note the answer
carries), ambiguous or unknown. Every repair of a model's near miss goes through here, so a new
quirk is a case of one function, not a branch in a tool.
"""
from __future__ import annotations

import difflib
import posixpath
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Literal

How = Literal["exact", "read-as", "ambiguous", "unknown"]


@dataclass(frozen=True)
class Resolved:
    """What a word resolved to. value: the name meant (exact, read-as); note: what the answer
    says of the reading, or why nothing was meant (unknown); options: the names it may mean
    (ambiguous)."""

    how: How
    value: str = ""
    note: str = ""
    options: tuple[str, ...] = ()

    @property
    def found(self) -> bool:
        return self.how in ("exact", "read-as")


def _exact_or(raw: str, value: str, note: str = "") -> Resolved:
    return Resolved("exact", value) if value == raw else Resolved("read-as", value, note)


def _one_of(found: Sequence[str], note: str = "") -> Resolved:
    if len(found) == 1:
        return Resolved("read-as", found[0], note)
    return Resolved("ambiguous", options=tuple(found)) if found else Resolved("unknown")


# -- the words models write calls in: every reader of a reply reads these -----------------------

# The key that names the tool in a call written as JSON: {"tool": "read_diff", ...}.
NAME_KEYS = ("name", "tool", "tool_name", "function", "action", "recipient_name")
# The key that holds a call's arguments, in the order a reader looks for it: {"name": "stuck",
# "parameters": {"summary": "..."}}; a native call whose arguments came wrapped once more in one
# of them, {"arguments": {"path": "a.py"}}, is read as its contents (model/args.bind).
ARGUMENT_KEYS = ("arguments", "parameters", "args", "input", "params", "action_input", "kwargs")
ID = r"[0-9a-fA-F]{4,}"
# Each dress begins an item (_START: at its start, or after a space or comma of a comma string)
# and a bracketed one ends it (_END), so that a path is never undressed: `src/cafe (1).txt`,
# `data/beef[1].csv` and `docs/#cafe.md` stay as they are.
_START = r"(?<![^\s,])"
_END = r"(?=\s*(?:,|$))"
_KIND = r"(?:add|modify|delete|rename|copy|mode)\s+\+\d+\s+-\d+\s*"
ID_DRESS = [  # how models dress an id, and the plain form: `3f2a9c` (src/a.py) -> 3f2a9c
    (re.compile(r"`"), ""),
    (re.compile(rf"{_START}(?:hunk|id)(?:[ _]id)?\s*[:#]?\s*(?={ID}\b)", re.I), ""),
    (re.compile(rf"{_START}#(?={ID}\b)"), ""),
    (re.compile(rf"{_START}({ID})\s*\([^()]*\){_END}"), r"\1"),                    # 3f2a9c (src/a.py)
    (re.compile(rf"{_START}({ID})\s*\[\s*((?:lines?\s*)?\d[^\]]*)\]{_END}", re.I), r"\1:\2"),   # 3f2a9c[1-4]
    (re.compile(rf"{_START}({ID})\s*:?\s*\blines?\s*:?\s*(?=\d)", re.I), r"\1:"),        # 3f2a9c lines 1-4
    # A line of the prompt's hunk lists copied whole ("e8aa invoicing/tax.py add +27 -0"), or its tail
    # alone as an item of its own (the 1.5B model sent ["invoicing/tax.py", "e8aa", "add +27 -0"]).
    (re.compile(rf"^\s*({ID})\s+\S+\s+{_KIND}$"), r"\1"),
    (re.compile(rf"^\s*{_KIND}$"), ""),
]
# "this commit is complete", "no further actions are required": a model that says it is done, in stuck.
SAYS_DONE = re.compile(r"\b(?:is|are|looks?|seems?) (?:now |already )?(?:complete|done|finished|ready)\b|"
                       r"\bno (?:further |more |other )?(?:action|change|step)s? "
                       r"(?:are |is )?(?:needed|required|necessary)\b|"
                       r"\bno further (?:action|change|step)s?\b|"
                       r"\balready (?:contains|holds|has|includes|in the worktree)\b|"
                       r"\bnothing (?:else|more) (?:is )?(?:needed|required|to do)\b", re.I)


# -- tool names -----------------------------------------------------------------------------------

_NAMESPACE = re.compile(r"^(functions|tools|tool|default_api)[.:/]+")


def tool(name: str, names: Sequence[str]) -> Resolved:
    """The tool a name means: exact; a namespace (`functions.apply_hunks`), another case or
    separator (`ApplyHunks`, `read-diff`), a plural dropped (`apply_hunk`), a typo: read-as."""
    if name in names:
        return Resolved("exact", name)
    plain = _NAMESPACE.sub("", name.strip())
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", plain).lower().replace("-", "_").replace(" ", "_")
    if snake in names:
        return Resolved("read-as", snake)
    for real in names:
        if snake.rstrip("s") == real.rstrip("s"):
            return Resolved("read-as", real)
    close = difflib.get_close_matches(snake, list(names), n=1, cutoff=0.75)
    return Resolved("read-as", close[0]) if close else Resolved("unknown")


def written_tool(value: object, names: Collection[str]) -> Resolved:
    """A tool named inside a call written as text: exact, or under a dotted namespace
    (`functions.apply_hunks`, `default_api.apply_hunks`); nothing looser (prose is not a call)."""
    if not isinstance(value, str):
        return Resolved("unknown")
    name = value.strip().split(".")[-1]
    return _exact_or(value, name) if name in names else Resolved("unknown")


# -- parameter names ------------------------------------------------------------------------------

def parameter(unknown: Sequence[str], params: Sequence[str], given: Collection[str],
              missing: Sequence[str]) -> Resolved:
    """The parameter that a call's one unknown argument name means: the one required parameter
    it left out, or the tool's only parameter when the call names none of the real ones.
    unknown: the names the call used that the tool has not; given: all the names it used."""
    if len(unknown) != 1:
        return Resolved("unknown")
    if len(missing) == 1:
        return Resolved("read-as", missing[0], f"(read '{unknown[0]}' as '{missing[0]}')")
    if not missing and len(params) == 1 and not set(given) & set(params):
        return Resolved("read-as", params[0], f"(read '{unknown[0]}' as '{params[0]}')")
    return Resolved("unknown")


# -- paths ----------------------------------------------------------------------------------------

def path(raw: str, root: str, resolved_root: str, exists: Callable[[str], bool],
         known: Callable[[], Collection[str]], on_disk: Callable[[str], bool]) -> Resolved:
    """A path as the worktree names it. `./x` and a diff header's `a/x` read as `x`; an absolute
    path is unknown, its note naming the relative path meant where one is (inside the worktree,
    or the longest tail of it that exists). root, resolved_root: the worktree's folder as given and
    resolved; exists(p): whether something is at p, on disk or in the remaining diff; known(): the
    remaining diff's paths; on_disk(p): whether a file or folder is at p in the worktree."""
    text = raw.strip()
    while text.startswith("./"):
        text = text[2:].lstrip("/")
    text = undiffed(text, exists)
    if not text.startswith("/"):
        return _exact_or(raw, text)
    norm = posixpath.normpath(text)
    for top in (resolved_root, root):
        if norm == top or norm.startswith(top + "/"):
            rel = norm[len(top):].lstrip("/") or "."
            return Resolved("unknown", note=f"{raw}: absolute paths are refused: call it '{rel}' "
                                            "(relative to the repository root)")
    guess = _suffix(norm, on_disk, known)
    return Resolved("unknown", note=f"{raw}: absolute paths are refused: use a path relative to the repository "
                                    "root" + (f" (did you mean '{guess}'?)" if guess else ""))


def _suffix(norm: str, on_disk: Callable[[str], bool], known: Callable[[], Collection[str]]) -> str | None:
    """The repository path an absolute path most likely means: its longest tail that exists."""
    parts = PurePosixPath(norm).parts[1:]
    paths = known()
    for i in range(len(parts)):
        tail = "/".join(parts[i:])
        if tail in paths or (tail and on_disk(tail) and ".git" not in parts[i:]):
            return tail
    return None


def undiffed(path: str, exists: Callable[[str], bool]) -> str:
    """`a/src/x.py` or `b/src/x.py`, a diff header's name, as `src/x.py`: only when the repository
    has nothing at `a` (`b`) itself and the rest of the path names something."""
    if path[:2] in ("a/", "b/") and ".." not in path.split("/") and not exists(path[0]) and exists(path[2:]):
        return path[2:]
    return path


def file_name(name: str, paths: Collection[str]) -> Resolved:
    """The changed paths a name that is none of them most likely means: those it is the end of
    (`money.py`, `invoicing/money`), else those whose file name without its suffix it is (`money`)."""
    key = name.strip().strip("/")
    if not key or ".." in key.split("/"):
        return Resolved("unknown")
    ordered = sorted(set(paths))
    # Whole path components only: `money.py` ends `invoicing/money.py`, `ney.py` does not.
    ends = [p for p in ordered if ("/" + p).endswith("/" + key) or ("/" + p.rsplit(".", 1)[0]).endswith("/" + key)]
    return _one_of(ends or [p for p in ordered if p.rsplit("/", 1)[-1].rsplit(".", 1)[0] == key])


# -- hunk ids -------------------------------------------------------------------------------------

def hunk_id(key: str, shown: Mapping[str, str]) -> Resolved:
    """The one shown id that key is a near miss of: it holds the id with a stray character or two
    around it, or it is the id with one character changed, dropped, doubled or swapped.
    shown: shown id -> whole id."""
    if not key or len(key) > 48:
        return Resolved("unknown")
    inside = [s for s in shown if s in key and len(key) - len(s) <= 2]
    if len(inside) == 1:
        return Resolved("read-as", inside[0])
    close = sorted({s for s, whole in shown.items()
                    if _one_edit(key, s) or (len(key) > len(s) and _one_edit(key, whole[:len(key)]))})
    return _one_of(close) if len(close) <= 1 else Resolved("ambiguous", options=tuple(close))


def _one_edit(a: str, b: str) -> bool:
    """One substitution, insertion, deletion or swap of neighbours apart (and not equal)."""
    if a == b or abs(len(a) - len(b)) > 1 or min(len(a), len(b)) < 4:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1
                                  and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]])
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    return any(long_[:i] + long_[i + 1:] == short for i in range(len(long_)))
