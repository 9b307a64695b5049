"""Where edit_file's `old` does not occur: the file's lines nearest to it, in the answer, so
a model copies them exactly instead of reading the whole file again (or guessing)."""
from __future__ import annotations

import difflib

_MAX_SHOWN = 12     # lines of the file quoted at most
_CUTOFF = 0.6       # how alike a line must be to old's first line to count as near


def nearest(data: bytes, old: str) -> str:
    """The answer's tail: the file's text nearest old (whitespace-only differences said as
    such), or "" when nothing is alike."""
    text = data.decode("utf-8", "surrogateescape")
    lines = text.splitlines(keepends=True)
    wanted = [ln for ln in old.splitlines() if ln.strip()]
    if not lines or not wanted:
        return ""
    first = wanted[0].strip()
    stripped = [ln.strip() for ln in lines]
    at = next((i for i, ln in enumerate(stripped) if ln == first), None)
    if at is None:
        close = difflib.get_close_matches(first, stripped, n=1, cutoff=_CUTOFF)
        if not close:
            return ""
        at = stripped.index(close[0])
    shown = "".join(lines[at: at + min(len(old.splitlines()) + 1, _MAX_SHOWN)])
    same = [ln.strip() for ln in old.splitlines() if ln.strip()] == \
        [ln.strip() for ln in shown.splitlines() if ln.strip()][: len(wanted)]
    what = "differs from it only in whitespace (indentation, tabs, trailing spaces); the file has" if same \
        else "is nearest to these lines of the file"
    return f"\nold {what}, from line {at + 1}:\n{shown}" + ("" if shown.endswith("\n") else "\n")
