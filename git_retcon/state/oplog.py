"""The operations that changed a spec or its branch, for `git retcon undo`.

refs/retcon-undo/<name> is a chain of commits, one per operation (run, resolve, squash,
import, edit, abort, ...): its tree holds op.json, each ref the operation changed with
its value before and after. The record's other parents are those values, so whatever an
undo would put back, or take away, stays reachable as long as the record does.

An operation is recorded when it starts (its refs' values before), and completed when it
ends (after); one killed in between is completed by the next operation on the spec, with
the values it left. An operation that changed nothing leaves no record.
"""
from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass

import pygit2

from git_retcon.git.commits import signature
from git_retcon.git.ownership import branch_ref, name_problem
from git_retcon.git.plumbing import cas_ref, get_blob, get_commit, ref_target
from git_retcon.state.store import Store, spec_ref

UNDO_PREFIX = "refs/retcon-undo/"
_FILE = "op.json"


def undo_ref(name: str) -> str:
    return UNDO_PREFIX + name


@dataclass
class Op:
    """One recorded operation: what it was, when, and its refs' values (None: no such ref)."""

    what: str
    at: float
    before: dict[str, str | None]
    after: dict[str, str | None] | None     # None while it runs (or after a kill)
    record: str                             # the record's own commit
    previous: str | None                    # the record before it

    @property
    def changed(self) -> dict[str, tuple[str | None, str | None]]:
        after = self.after or {}
        return {ref: (old, after.get(ref)) for ref, old in self.before.items() if old != after.get(ref)}


def refs_of(cleaned: str, name: str) -> list[str]:
    """The refs an operation on a spec may change: the spec's, and its cleaned branch."""
    return [spec_ref(name), branch_ref(cleaned)]


def last(store: Store, name: str) -> Op | None:
    tip = ref_target(store.repo, undo_ref(name))
    return None if tip is None else _read(store.repo, tip)


@contextmanager
def recording(store: Store, name: str, what: str, refs: list[str]) -> Iterator[None]:
    """Record `what`, an operation on spec `name` that may change refs, around its body.
    The caller holds the spec's lock. A name git's ref rules refuse (an older version saved
    such specs) gets no record: its only operation is `spec rm`."""
    if name_problem(name):
        yield
        return
    pending = last(store, name)
    if pending is not None and pending.after is None:   # a killed operation: done, with what it left
        _write(store, name, pending.what, pending.before, _values(store.repo, list(pending.before)),
               pending.previous, replace=pending.record, at=pending.at)
    before = _values(store.repo, refs)
    base = ref_target(store.repo, undo_ref(name))
    record = _write(store, name, what, before, None, base, replace=base)
    try:
        yield
    except BaseException:
        with suppress(Exception):   # the operation's own error is the one to see; the next completes this
            _complete(store, name, what, before, refs, base, record)
        raise
    _complete(store, name, what, before, refs, base, record)


def _complete(store: Store, name: str, what: str, before: dict[str, str | None], refs: list[str],
              base: str | None, record: str) -> None:
    after = _values(store.repo, refs)
    if after == before:     # nothing changed: nothing to undo
        cas_ref(store.repo, undo_ref(name), base, record, f"retcon: {what} (no change)")
    else:
        _write(store, name, what, before, after, base, replace=record)


def drop_last(store: Store, name: str, op: Op) -> None:
    """Forget op, the last record (undo put its refs back)."""
    cas_ref(store.repo, undo_ref(name), op.previous, op.record, f"retcon: undo {op.what}")


def _values(repo: pygit2.Repository, refs: list[str]) -> dict[str, str | None]:
    return {ref: ref_target(repo, ref) for ref in refs}


def _write(store: Store, name: str, what: str, before: dict[str, str | None],
           after: dict[str, str | None] | None, previous: str | None, replace: str | None,
           at: float | None = None) -> str:
    """A record on top of previous, swapped in for replace (the ref's current value)."""
    repo = store.repo
    doc = {"op": what, "at": time.time() if at is None else at, "before": before, "after": after,
           "previous": previous}
    builder = repo.TreeBuilder()
    builder.insert(_FILE, repo.create_blob(json.dumps(doc, indent=1, sort_keys=True) + "\n"),
                   pygit2.GIT_FILEMODE_BLOB)
    kept = [v for v in [*before.values(), *(after or {}).values()] if v is not None and v in repo]
    parents = [previous] if previous else []
    parents += [v for v in dict.fromkeys(kept) if v not in parents]
    sig = signature(store.git_dir, "COMMITTER")
    commit = str(repo.create_commit(None, sig, sig, f"retcon {what}\n", builder.write(), parents))
    cas_ref(repo, undo_ref(name), commit, replace, f"retcon: {what}")
    return commit


def _read(repo: pygit2.Repository, record: str) -> Op | None:
    commit = get_commit(repo, record)
    try:
        doc = json.loads(get_blob(repo, commit.tree[_FILE].id).data)
    except (KeyError, ValueError):
        return None
    previous = doc.get("previous")
    return Op(str(doc.get("op", "?")), float(doc.get("at", 0)), dict(doc.get("before") or {}),
              dict(doc["after"]) if isinstance(doc.get("after"), dict) else None, record,
              previous if isinstance(previous, str) else None)
