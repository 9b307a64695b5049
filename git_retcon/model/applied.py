"""apply_hunks items that name what is in the worktree already: hunks this step applied (by id,
excluded with '-', selected with lines, or by a path all of whose hunks it took), and paths whose
changes earlier commits took. A weak model names them again beside new items; they change
nothing, so they are left out of the call and named in its answer instead of refusing it whole.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from git_retcon import diff
from git_retcon.diff.ids import Lookup, looks_like_id


def under(path: str, prefix: str) -> bool:
    """Whether path is prefix, or lies in the folder prefix."""
    return path == prefix or path.startswith(prefix + "/")


@dataclass
class Sorted:
    keep: list[diff.Item] = field(default_factory=list)    # what the call still has to apply
    done: list[str] = field(default_factory=list)          # applied in this step, as the answer names them
    earlier: list[str] = field(default_factory=list)       # paths whose changes earlier commits took


def sort_items(items: list[diff.Item], look: Lookup, applied: dict[str, str], names: dict[str, str],
               branch_paths: Callable[[], set[str]]) -> Sorted:
    """items split by what is in the worktree already. applied: whole id -> path of the hunks this step
    applied; names: their ids as shown when the step began; branch_paths: the paths the source
    branch changes (read only when an item needs it)."""
    out = Sorted()
    left = {h.path for h in look.by_id.values()}
    for it in items:
        key = (it.key or it.id).lower().lstrip("-")
        if looks_like_id(key):
            hits = [] if any(i.startswith(key) for i in look.by_id) else [i for i in applied if i.startswith(key)]
            # A remaining hunk's id (whatever else it may name) or an unknown one is the call's to judge.
            _add(out, it, f"{names.get(hits[0], key)} ({applied[hits[0]]})" if len(hits) == 1 else "")
            continue
        path = (it.key or it.id).strip().rstrip("/")
        if it.lines is not None or not path or path.startswith("-") or any(under(p, path) for p in left):
            out.keep.append(it)
        elif any(under(p, path) for p in applied.values()):
            # The files of the "Applied for you" list, named as well as their ids.
            _add(out, it, f"{path} (its hunks)")
        elif any(under(p, path) for p in branch_paths()):
            # A path of the commit whose changes an earlier commit (a fix, say) took.
            if path not in out.earlier:
                out.earlier.append(path)
        else:
            out.keep.append(it)
    return out


def _add(out: Sorted, it: diff.Item, name: str) -> None:
    if not name:
        out.keep.append(it)
    elif name not in out.done:
        out.done.append(name)


def put_back_hint(raw: list[str], look: Lookup, done: list[str]) -> str:
    """An exclusion of an applied hunk beside other items does nothing: how a put-back is made."""
    ids = [i[1:].partition(":")[0] for i in raw if i.startswith("-")]
    gone = [i for i in ids if looks_like_id(i) and not any(h.startswith(i.lower()) for h in look.by_id)]
    return f" To put one back, call apply_hunks(['-{gone[0]}']) with nothing else." if gone and done else ""


def taken_before(earlier: list[str]) -> str:
    return (f" Nothing is left under {', '.join(earlier)}: the commits before this one took "
            f"{'its' if len(earlier) == 1 else 'their'} changes.") if earlier else ""
