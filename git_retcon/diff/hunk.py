"""The Hunk: one independently applicable piece of the remaining diff, with its id and modes.

A hunk's id hashes *what* changes (path, kind, removed and added bytes), never *where*,
so ids survive the line shifts caused by applying other hunks of the same file.

Contents are always bytes. Lines are split on b"\\n" only and keep their line
endings, exactly as git's xdiff counts them, so CRLF, lone CR and a missing final
newline round-trip untouched.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cached_property
from typing import Literal, NamedTuple, TypedDict, get_args

import pygit2

MODE_BLOB = 0o100644
MODE_EXEC = 0o100755
MODE_LINK = 0o120000
MODE_GITLINK = 0o160000
MODE_TREE = 0o040000

# What a hunk does to its path: lines changed, the file added, deleted or renamed (with any
# line changes), its mode changed, or its bytes replaced whole (binary, symlink, submodule).
HunkKind = Literal["modify", "add", "delete", "rename", "mode", "binary"]
KINDS: tuple[HunkKind, ...] = get_args(HunkKind)
_BINARY_PROBE = 8000

class Edit(NamedTuple):
    """One line change inside a rename, as a hunk header and its bytes."""

    old_start: int
    old_lines: int
    new_start: int
    new_lines: int
    removed: bytes
    added: bytes


@dataclass(frozen=True)
class Hunk:
    """One independently applicable piece of the remaining diff."""

    id: str
    path: str
    kind: HunkKind
    old_path: str | None = None
    old_start: int = 0
    old_lines: int = 0
    new_start: int = 0
    new_lines: int = 0
    removed: bytes = b""
    added: bytes = b""
    old_mode: int = 0
    new_mode: int = 0
    new_oid: str | None = None
    # Optional fields, beyond what every hunk has:
    old_oid: str | None = None  # the entry the hunk was computed against (staleness check)
    old_size: int = 0  # size of the old blob, for whole-file kinds
    similarity: int = 0  # rename similarity in percent
    edits: tuple[Edit, ...] = ()  # the line changes of a rename with edits (for display)

    # Cached: a prompt's index and stat count every remaining hunk's lines at every step.
    @cached_property
    def added_lines(self) -> int:
        if self.kind == "modify":
            return count_lines(self.added)
        if self.kind == "rename":
            return sum(count_lines(e.added) for e in self.edits)
        if self.kind == "add" and is_text_entry(self.new_mode, self.added):
            return count_lines(self.added)
        return 0

    @cached_property
    def removed_lines(self) -> int:
        if self.kind == "modify":
            return count_lines(self.removed)
        if self.kind == "rename":
            return sum(count_lines(e.removed) for e in self.edits)
        if self.kind == "delete" and is_text_entry(self.old_mode, self.removed):
            return count_lines(self.removed)
        return 0


class HunkFields(TypedDict, total=False):
    """A Hunk's fields but its id, gathered before the ids are assigned."""

    path: str
    kind: HunkKind
    old_path: str
    old_start: int
    old_lines: int
    new_start: int
    new_lines: int
    removed: bytes
    added: bytes
    old_mode: int
    new_mode: int
    new_oid: str
    old_oid: str
    old_size: int
    similarity: int
    edits: tuple[Edit, ...]


# ---------------------------------------------------------------------------
# bytes and lines


def split_lines(data: bytes) -> list[bytes]:
    """Lines as git's xdiff counts them: split on b"\\n" only, endings kept."""
    if not data:
        return []
    parts = data.split(b"\n")
    lines = [p + b"\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def count_lines(data: bytes) -> int:
    if not data:
        return 0
    return data.count(b"\n") + (0 if data.endswith(b"\n") else 1)


def has_nul(data: bytes) -> bool:
    return b"\0" in data[:_BINARY_PROBE]


def is_text_entry(mode: int, data: bytes) -> bool:
    return mode in (MODE_BLOB, MODE_EXEC) and not has_nul(data)


def is_file_mode(mode: int) -> bool:
    return mode in (MODE_BLOB, MODE_EXEC)


def hunk_id(path: str, kind: str, removed: bytes, added: bytes, occurrence: int) -> str:
    h = hashlib.sha1()
    for part in (path.encode("utf-8", "surrogateescape"), kind.encode(), removed, added):
        h.update(len(part).to_bytes(8, "big"))
        h.update(part)
    if occurrence:
        h.update(b"#%d" % occurrence)
    return h.hexdigest()[:10]


def as_tree(repo: pygit2.Repository, what: pygit2.Oid | str | pygit2.Object) -> pygit2.Tree:
    if isinstance(what, pygit2.Object):
        obj = what
    elif isinstance(what, pygit2.Oid):
        obj = repo[what]
    else:
        try:
            obj = repo[pygit2.Oid(hex=what)]
        except (ValueError, KeyError):
            obj = repo.revparse_single(what)
    return obj.peel(pygit2.Tree)



class Lines:
    """A blob's lines without copying them: split once on b"\\n", slice by line number."""

    __slots__ = ("data", "parts", "count")

    def __init__(self, data: bytes):
        self.data = data
        self.parts = data.split(b"\n")
        self.count = len(self.parts) - 1 if self.parts[-1] == b"" else len(self.parts)

    def slice(self, i: int, j: int) -> bytes:
        """Lines i..j-1 (0-based) with their endings."""
        if i >= j:
            return b""
        return b"\n".join(self.parts[i:j]) + (b"\n" if j < len(self.parts) else b"")


def start_index(old_start: int, old_lines: int) -> int:
    """0-based index where a hunk's old lines begin (an insertion goes after line old_start)."""
    return old_start if old_lines == 0 else old_start - 1

