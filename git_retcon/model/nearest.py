"""What a model's failed call most likely meant, for its answer: where edit_file's `old` does
not occur, the file's lines nearest to it (so a model copies them exactly instead of reading
the whole file again, or guessing); hunks it names that it has applied already; a path
written as a diff header writes it (`a/src/x.py`). The readings themselves are model/meaning.py's."""
from __future__ import annotations

import difflib
import re
from collections.abc import Callable

from git_retcon.diff import Hunk, lookup
from git_retcon.model import meaning
from git_retcon.model.applied import under as is_under

_HEX = re.compile(r"[0-9a-f]+")

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


def applied_already(keys: list[str], applied: dict[str, str], left: dict[str, str]) -> str:
    """The answer's tail for items that name hunks this step applied already (by id, or by a path
    all of whose hunks it applied): they are in the worktree now; and what remains.
    applied: whole id -> path; left: the remaining hunks' paths by their shown ids."""
    done: list[str] = []
    for key in dict.fromkeys(keys):
        low = key.lower()
        ids = [i for i in applied if re.fullmatch(r"[0-9a-f]{4,}", low) and i.startswith(low)]
        under = key.strip().rstrip("/")
        under = under[2:] if under[:2] in ("a/", "b/") and under[2:] in applied.values() else under
        paths = [p for p in applied.values() if is_under(p, under)]
        if ids:
            done.append(f"{key} ({applied[ids[0]]})")
        elif paths and not any(is_under(p, under) for p in left.values()):
            done.append(f"{key} (its hunks)")
    if not done:
        return ""
    rest = ", ".join(f"{i} ({p})" for i, p in list(left.items())[:20]) + (", ..." if len(left) > 20 else "")
    return (f" Applied already in this step: {', '.join(done)}: {'it is' if len(done) == 1 else 'they are'} "
            "in the worktree now and gone from the remaining diff, so leave "
            f"{'it' if len(done) == 1 else 'them'} out. {len(left)} hunks remain" + (f": {rest}." if left else "."))


def meant_ids(keys: list[str], remaining: list[Hunk], names: dict[str, str], as_path: Callable[[str], str]) -> str:
    """The answer's tail for items that name nothing but are a near miss of a remaining hunk's id
    (`t8b03`, `8b30`, `8B03)`, a stray character or two): "did you mean 8b03 (src/a.py)?"."""
    look = lookup(remaining)
    shown = {v: k for k, v in names.items()}       # shown id -> whole id
    out: list[str] = []
    for key in dict.fromkeys(keys):
        low = key.strip().lower()
        if _HEX.fullmatch(low) and any(i.startswith(low) for i in look.by_id) and len(low) >= 4:
            continue    # it names a hunk
        path = as_path(key) if key.strip() else key
        if low in (".", "") or look.covered(path.rstrip("/")) or look.starting(path):
            continue    # it names a path
        guess = meaning.hunk_id(low, shown)
        if guess.found:
            h = look.by_id[shown[guess.value]]
            out.append(f"{key!r}: did you mean {guess.value} ({h.path})?")
        elif paths := nearest_paths(path, remaining):
            out.append(f"{key!r}: did you mean {' or '.join(repr(p) for p in paths[:3])}?")
    return (" " + " ".join(out)) if out else ""


def nearest_paths(name: str, remaining: list[Hunk]) -> list[str]:
    """The remaining paths a name may mean (model/meaning.file_name), one or several."""
    meant = meaning.file_name(name, {h.path for h in remaining})
    return [meant.value] if meant.found else list(meant.options)
