"""What one step has taken so far, as a value: the hunks applied (whole or by lines) and the
paths written by hand. Taking and putting back are functions from a selection to a new one;
the session holds the current value and replaces it, so what a step took is never patched in
place (and a restart is the empty selection, not a list of fields to clear).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from git_retcon.diff.select import Item, compact, merge


def _frozen(d: dict[str, str] | dict[str, tuple[str, ...]]) -> Mapping:  # type: ignore[type-arg]
    return MappingProxyType(dict(d))


@dataclass(frozen=True)
class Selection:
    """applied: the whole id of each hunk this step applied (whole or in part) -> its path;
    taken: path -> the items applied there, in order (`id` or `id:LINES`, whole ids);
    by_hand: the paths write_file, edit_file or delete_file wrote."""

    applied: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    taken: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))
    by_hand: frozenset[str] = frozenset()

    @property
    def empty(self) -> bool:
        return not self.applied and not self.taken and not self.by_hand

    def items(self) -> list[str]:
        """Every item this step applied, path by path, as they were applied."""
        return [i for items in self.taken.values() for i in items]

    def ids(self) -> set[str]:
        """The whole ids of the hunks taken, in part or whole."""
        return {entry.split(":")[0] for entry in self.items()} | set(self.applied)

    def hand_written(self, paths: Iterable[str]) -> list[str]:
        """Those of paths that the step also wrote by hand."""
        return [p for p in paths if p in self.by_hand]


def took(sel: Selection, applied: Iterable[tuple[str, str]], items: list[Item], path_of: Mapping[str, str]
         ) -> Selection:
    """sel after an apply: applied, (whole id, path) of each hunk applied; items, as the call named
    them (whole ids; merged per hunk); path_of: a whole id's path."""
    done = dict(sel.applied)
    done.update(applied)
    taken = {p: list(v) for p, v in sel.taken.items()}
    for it in merge(items):
        taken.setdefault(path_of[it.id], []).append(it.id if it.lines is None else f"{it.id}:{compact(it.lines)}")
    return Selection(_frozen(done), _frozen({p: tuple(v) for p, v in taken.items()}), sel.by_hand)


def wrote(sel: Selection, path: str) -> Selection:
    """sel after write_file, edit_file or delete_file wrote path."""
    return Selection(sel.applied, sel.taken, sel.by_hand | {path})


def without(sel: Selection, paths: Iterable[str]) -> Selection:
    """sel with everything taken under paths put back (their files are the parent's again)."""
    gone = set(paths)
    return Selection(_frozen({i: p for i, p in sel.applied.items() if p not in gone}),
                     _frozen({p: v for p, v in sel.taken.items() if p not in gone}), sel.by_hand)


def matching(sel: Selection, key: str) -> set[str]:
    """The items taken whose id starts with key (a prefix as a model writes it)."""
    return {i for i in sel.items() if i.startswith(key)}


EMPTY = Selection()
