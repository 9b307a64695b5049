"""The remaining diff as read_diff shows it: each hunk's block with numbered lines, pages within a
budget, the path filter, the whole diff for a prompt; and the counts and per-hunk cache the
prompt's index (index.py) shares. `read_hunks` and `read_page` read that text back, for the
models that drive the tools from it (retcon-paths, the test models): the wording has one
writer and one reader, side by side."""
from __future__ import annotations

import operator
import re
import weakref
from collections.abc import Callable
from typing import Generic, NamedTuple, TypeVar

from git_retcon.diff.hunk import (
    MODE_GITLINK,
    MODE_LINK,
    Hunk,
    count_lines,
    has_nul,
    is_text_entry,
    split_lines,
)
from git_retcon.diff.ids import lookup, names_of
from git_retcon.diff.select import selectable

PATH = operator.attrgetter("path")
ADDED = operator.attrgetter("added_lines")
REMOVED = operator.attrgetter("removed_lines")


def stat(hunks: list[Hunk]) -> tuple[int, int, int]:
    """(files, added lines, removed lines)."""
    # map and attrgetter: a prompt counts the whole remaining diff at every step, so at C speed.
    return len(set(map(PATH, hunks))), sum(map(ADDED, hunks)), sum(map(REMOVED, hunks))


_T = TypeVar("_T")


class PerHunk(Generic[_T]):
    """A value worked out from one hunk alone, kept while the hunk lives: a step only works out
    those of the hunks that are new since the last (hunks are immutable, and the remaining diff
    keeps the same objects from step to step). Found by the object's identity: an entry goes
    when its hunk dies, before its id() can be reused."""

    def __init__(self, make: Callable[[Hunk], _T]) -> None:
        self.make = make
        self.kept: dict[int, tuple[weakref.ref[Hunk], _T]] = {}

    def __call__(self, h: Hunk) -> _T:
        got = self.kept.get(id(h))
        if got is not None and got[0]() is h:
            return got[1]
        value = self.make(h)
        kept, key = self.kept, id(h)
        kept[key] = (weakref.ref(h, lambda _: kept.pop(key, None)), value)
        return value


def _summary(hunks: list[Hunk]) -> str:
    return summary_text(len(hunks), *stat(hunks))


def summary_text(hunks: int, files: int, added: int, removed: int) -> str:
    return (f"{hunks} hunk{'s' if hunks != 1 else ''} in {files} file{'s' if files != 1 else ''} "
            f"(+{added} -{removed} lines)")


def decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


_MAX_SHOWN_LINE = 2000


def _show_lines(sign: str, data: bytes, first: int = 0, width: int = 0) -> list[str]:
    """Lines with their sign; numbered from `first` (right-aligned to `width`) when first > 0."""
    out = []
    for k, line in enumerate(split_lines(data)):
        text = decode(line[:-1] if line.endswith(b"\n") else line)
        if len(text) > _MAX_SHOWN_LINE:
            text = text[:_MAX_SHOWN_LINE] + f" [line cut: {len(text) - _MAX_SHOWN_LINE} more characters]"
        out.append(f"{first + k:>{width}} {sign}{text}" if first else sign + text)
        if not line.endswith(b"\n"):
            out.append(" " * (width + 1) + "\\ No newline at end of file" if first else "\\ No newline at end of file")
    return out


def _numbered(removed: bytes, added: bytes) -> list[str]:
    """A hunk's body with its `-` lines numbered 1..m and its `+` lines m+1..n (selections name them)."""
    m = count_lines(removed)
    width = len(str(m + count_lines(added)))
    return [*_show_lines("-", removed, 1, width), *_show_lines("+", added, m + 1, width)]


NUMBERING_NOTE = ("Lines inside hunks are numbered: apply_hunks(['<id>:1-3,7']) takes only those lines "
                  "(its - lines removed, its + lines added); '<id>' alone takes the whole hunk.")


def describe_entry(mode: int, data: bytes, size: int | None = None) -> str:
    size = len(data) if size is None else size
    if mode == MODE_LINK:
        return f"symlink -> {decode(data)}" if data else "symlink"
    if mode == MODE_GITLINK:
        return "submodule"
    kind = "binary file" if has_nul(data) else "file"
    return f"{kind} mode {mode:o}, {size} bytes"


def _edit_block(old_start: int, old_n: int, new_start: int, new_n: int, removed: bytes, added: bytes) -> list[str]:
    return [f"@@ -{old_start},{old_n} +{new_start},{new_n} @@", *_show_lines("-", removed), *_show_lines("+", added)]


def _block(h: Hunk, shown: str) -> list[str]:
    """A hunk as lines of text: the id line (the id as shown), a header, then the body."""
    lines = [_HEAD.format(id=shown, path=h.path, kind=h.kind)]
    if h.kind == "modify":
        lines.append(f"@@ -{h.old_start},{h.old_lines} +{h.new_start},{h.new_lines} @@")
        lines += _numbered(h.removed, h.added)
    elif h.kind == "add":
        if h.new_mode == MODE_GITLINK:
            lines.append(f"new submodule at commit {h.new_oid}")
        elif not is_text_entry(h.new_mode, h.added):
            lines.append(f"new {describe_entry(h.new_mode, h.added)}")
        else:
            n = count_lines(h.added)
            lines.append(f"new file mode {h.new_mode:o}, {n} lines")
            if n:
                lines.append(f"@@ -0,0 +1,{n} @@")
                lines += _numbered(b"", h.added)
    elif h.kind == "delete":
        if is_text_entry(h.old_mode, h.removed):
            lines.append(f"deleted file mode {h.old_mode:o}, {count_lines(h.removed)} lines ({len(h.removed)} bytes)")
        else:
            lines.append(f"deleted {describe_entry(h.old_mode, h.removed)}")
    elif h.kind == "rename":
        lines.append(f"renamed from {h.old_path} ({h.similarity}% similar)")
        if h.old_mode != h.new_mode:
            lines.append(f"mode {h.old_mode:o} -> {h.new_mode:o}")
        for e in h.edits:
            lines += _edit_block(*e)
        if not h.edits and h.old_oid != h.new_oid:
            lines.append(f"content replaced: {h.old_size} bytes -> {len(h.added)} bytes")
    elif h.kind == "mode":
        lines.append(f"mode {h.old_mode:o} -> {h.new_mode:o}")
    else:  # binary
        old = describe_entry(h.old_mode, b"", h.old_size) if h.old_mode not in (MODE_LINK,) else "symlink"
        lines.append(f"whole-file replacement: {old} -> {describe_entry(h.new_mode, h.added)}")
    return lines


# A hunk's block as text, for the name it was last shown by (a name changes only when an id
# next to it in sorted order comes or goes).
_BLOCKS: PerHunk[dict[str, str]] = PerHunk(lambda h: {})


def _cut_text(h: Hunk, shown: str, avail: int) -> str:
    """_cut_block of h's block: worked out once per hunk and name, not at every read_diff."""
    texts = _BLOCKS(h)
    text = texts.get(shown)
    if text is None:
        texts.clear()
        text = texts[shown] = "\n".join(_block(h, shown))
    return text if len(text) <= avail else _cut_block(shown, _block(h, shown), avail)


def _cut_block(shown: str, lines: list[str], avail: int) -> str:
    text = "\n".join(lines)
    if len(text) <= avail:
        return text
    kept: list[str] = []
    used = 0
    for i, line in enumerate(lines):
        omitted = len(lines) - i
        note = (f"[{omitted} more lines omitted; apply_hunks(['{shown}']) applies the whole hunk]")
        if used + len(line) + 1 + len(note) > avail:
            kept.append(note)
            break
        kept.append(line)
        used += len(line) + 1
    text = "\n".join(kept)
    if len(text) > avail:  # absurdly small budget: hard cut
        text = text[:avail]
    return text


def _filtered(hunks: list[Hunk], path_prefix: str) -> list[Hunk]:
    prefix = path_prefix.strip()
    while prefix.startswith("./"):
        prefix = prefix[2:]
    prefix = prefix.lstrip("/")
    if prefix in ("", "."):
        return list(hunks)
    # The hunks whose path (or a rename's old path) begins with prefix are one run of the sorted
    # paths: no scan of them all at every read_diff (a run asks several times per commit).
    return lookup(hunks).starting(prefix)


def render(hunks: list[Hunk], *, path_prefix: str = "", page: int = 1, budget: int = 24000) -> str:
    """The remaining diff as text for the model, paged to at most `budget` characters a page.
    Ids are shown abbreviated among all of `hunks` (the whole remaining diff), not the page's."""
    if not hunks:
        return "Remaining diff: no remaining changes"
    selected = _filtered(hunks, path_prefix)
    if not selected:
        return fit(f"Remaining diff: no hunks under {path_prefix!r} ({_summary(hunks)} elsewhere; "
                    f"read_diff() without a path lists them all)", budget)
    numbers = any(selectable(h) for h in selected)

    def header(p: int, q: int) -> str:
        head = f"Remaining diff: {_summary(selected)}; page {p} of {q}"
        if len(selected) != len(hunks):
            head += f" (under {path_prefix!r}; {len(hunks)} hunks in all)"
        return head + ("\n" + NUMBERING_NOTE if numbers else "")

    def trailer(p: int) -> str:
        arg = f"path={path_prefix!r}, " if path_prefix else ""
        return f"(more: read_diff({arg}page={p + 1}))"

    n = len(selected)
    reserve = len(header(n, n)) + 2 + len(trailer(n)) + 2
    avail = max(budget - reserve, 1)
    names = names_of(hunks)
    blocks = [_cut_text(h, names[h.id], avail) for h in selected]

    pages: list[list[str]] = [[]]
    used = 0
    for b in blocks:
        cost = len(b) + (2 if pages[-1] else 0)
        if pages[-1] and used + cost > avail:
            pages.append([])
            used = 0
            cost = len(b)
        pages[-1].append(b)
        used += cost
    q = len(pages)
    if page < 1 or page > q:
        return fit(f"Remaining diff: {_summary(selected)}; page {page} is out of range: "
                    f"valid pages are 1 to {q}", budget)
    parts = [header(page, q), *pages[page - 1]]
    if page < q:
        parts.append(trailer(page))
    return fit("\n\n".join(parts), budget)


def fit(text: str, budget: int) -> str:
    return text if len(text) <= budget else text[:budget]


def whole(hunks: list[Hunk], budget: int) -> str | None:
    """The remaining diff as read_diff() shows it, when all of it fits on one page of `budget`
    characters (None otherwise): an extraction prompt carries it, so the model needs no
    read_diff call (a turn, and its re-sent context) before it applies hunks."""
    if not hunks:
        return None
    # Every changed line is shown, so a diff whose lines alone pass the budget is not rendered
    # (a run asks at each step; a long remaining diff stops this loop early).
    size = 0
    for h in hunks:
        size += len(h.added) + len(h.removed) + len(h.path)
        if size > budget:
            return None
    text = render(hunks, budget=budget)
    return text if text.partition("\n")[0].endswith("; page 1 of 1") else None


# -- reading it back -------------------------------------------------------------------

_HEAD = "hunk {id} {path} ({kind})"
_HEAD_LINE = re.compile(r"^hunk (?P<id>[0-9a-f]{4,40}) (?P<path>.+) \((?P<kind>[a-z]+)\)$")
_NUMBERED = re.compile(r"^ *\d+ [-+]")
_PAGE = re.compile(r"^Remaining diff: .*; page (\d+) of (\d+)", re.M)


class Shown(NamedTuple):
    """A hunk as a text shows it: its id as shown (abbreviated or whole), its path and kind,
    and how many of its lines are numbered for a selection (`id:LINES`)."""

    id: str
    path: str
    kind: str
    numbered: int = 0


def read_hunks(text: str) -> list[Shown]:
    """The hunks a read_diff answer (or a prompt carrying the whole diff) shows, in order."""
    out: list[Shown] = []
    for line in text.splitlines():
        m = _HEAD_LINE.match(line)
        if m:
            out.append(Shown(m["id"], m["path"], m["kind"]))
        elif out and _NUMBERED.match(line):
            out[-1] = out[-1]._replace(numbered=out[-1].numbered + 1)
    return out


def read_page(text: str) -> tuple[int, int] | None:
    """(page, pages) of a read_diff answer; None for one that shows no page."""
    m = _PAGE.search(text)
    return (int(m.group(1)), int(m.group(2))) if m else None
