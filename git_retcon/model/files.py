"""The tools on worktree files: read_file, and the writes by hand (write_file, edit_file,
delete_file), which a selection records (model/selection.wrote). Paths are the session's
(model/meaning.path), confined to the worktree (Worktree.confine).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from git_retcon import diff
from git_retcon.errors import machine_error
from git_retcon.model import selection
from git_retcon.model.args import ToolError
from git_retcon.model.layout import layout_warning
from git_retcon.model.nearest import nearest
from git_retcon.model.session import Session
from git_retcon.sandbox.worktree import PathRefused

T = TypeVar("T")


def again(s: Session, name: str, args: tuple[object, ...]) -> str:
    """For a read the step made before, with the worktree as it was then: said, and counted as a
    failed turn (a weak model reads the same thing over and over instead of acting on it)."""
    if s.ledger.read(name, args, str(s.ctx.wt.tree())) < 2:
        return ""
    s.steering.turn_failed(name, "the same read again, with nothing changed", "turn")
    return (f"(You made this same {name} call before, and nothing has changed since: the answer is the same. "
            "Act on it: apply_hunks takes hunks, create_commit ends the step.)\n")


def read_file(s: Session, path: str) -> str:
    rel = s.path(path)
    data = _read(s, rel)
    seen = again(s, "read_file", (rel,))
    if b"\0" in data[:8000]:
        return seen + f"{path}: binary file, {len(data)} bytes"
    text = data.decode("utf-8", errors="replace")
    budget = s.ctx.read_budget
    if len(text) > budget:
        return seen + text[:budget] + f"\n[... cut: {len(text) - budget} more characters not shown ...]"
    return seen + text


def write_file(s: Session, path: str, content: str) -> str:
    s.open()
    rel = s.path(path)
    data = content.encode("utf-8")
    _guard(s, lambda: s.ctx.wt.write(rel, data), rel)
    s.sel = selection.wrote(s.sel, rel)
    return f"Wrote {rel} ({len(content)} characters)." + layout_warning(s.ctx.wt, s.ctx.source_tree, rel)


def edit_file(s: Session, path: str, old: str, new: str) -> str:
    s.open()
    path = s.path(path)
    if not old:
        raise ToolError("old is empty: give the exact text to replace; to add lines, put the line "
                        "before them in old, and that line followed by the new lines in new", "empty")
    data = _read(s, path)
    if b"\0" in data[:8000]:
        raise ToolError(f"{path} is a binary file: edit_file changes text files only")
    before, after = old.encode("utf-8"), new.encode("utf-8")
    count = occurrences(data, before)
    if count == 0 and b"\r\n" in data and b"\n" in before and b"\r" not in before:
        # The model copied a CRLF file's text with plain newlines: mean the file's endings.
        crlf = before.replace(b"\n", b"\r\n")
        if occurrences(data, crlf) == 1:
            before, after, count = crlf, after.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"), 1
    if count != 1:
        if count == 0:
            near = nearest(data, old)
            raise ToolError(f"old does not occur in {path}; nothing was changed: copy the text exactly, "
                            "whitespace and all" + (near or f" (read_file({path!r}) shows it)"), "edit")
        raise ToolError(f"old occurs {count} times in {path}; nothing was changed: include more of the "
                        "lines around it, so that it occurs once", "edit")
    edited = data.replace(before, after, 1)
    _guard(s, lambda: s.ctx.wt.write(path, edited), path)
    s.sel = selection.wrote(s.sel, path)
    return f"Edited {path}: {_lines(before)} replaced by {_lines(after)}."


def delete_file(s: Session, path: str) -> str:
    s.open()
    rel = s.path(path)
    _guard(s, lambda: s.ctx.wt.delete(rel), rel)
    s.sel = selection.wrote(s.sel, rel)
    return f"Deleted {rel}."


def _read(s: Session, rel: str) -> bytes:
    """A worktree file's bytes. A file the source adds and the step has not applied yet is
    not there: the answer says that apply_hunks makes it, rather than leave a model to write
    it out whole."""
    wt = s.ctx.wt
    try:
        return _guard(s, lambda: wt.read(rel), rel)
    except ToolError as exc:
        try:
            there = wt.confine(rel).exists()
        except PathRefused:
            there = True        # refused (outside the worktree, say): the refusal is the answer
        if there:
            raise
        look = diff.lookup(s.remaining())
        adds = [h for h in look.covered(rel) if h.path == rel and h.kind in ("add", "rename")]
        if not adds:
            raise
        raise ToolError(f"{exc}: the source adds it, and this step has not applied it yet: "
                        f"apply_hunks([{rel!r}]) makes it, exactly (hunk "
                        f"{', '.join(look.names[h.id] for h in adds)})", "path") from None


def _guard(s: Session, fn: Callable[[], T], rel: str) -> T:
    try:
        return fn()
    except PathRefused as exc:
        raise ToolError(str(exc), "path") from None
    except OSError as exc:
        # A full disk or a read-only file system is not the model's to fix: name the file.
        machine = machine_error(exc, str(s.ctx.wt.path / rel))
        if machine is None:
            raise
        raise machine from exc


def occurrences(data: bytes, part: str | bytes) -> int:
    """How many times part occurs in data, overlapping ones too: in "\\n\\n\\n", "\\n\\n" occurs twice,
    and replacing "the one" would be a guess."""
    needle = part.encode("utf-8", "surrogateescape") if isinstance(part, str) else part
    count, at = 0, data.find(needle)
    while at != -1 and needle:
        count += 1
        at = data.find(needle, at + 1)
    return count


def _lines(text: bytes) -> str:
    n = text.count(b"\n") + (0 if not text or text.endswith(b"\n") else 1)
    return f"{n} line{'s' if n != 1 else ''}"
