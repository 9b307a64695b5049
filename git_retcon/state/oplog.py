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
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass

import pygit2

from git_retcon.errors import RetconError
from git_retcon.git.commits import signature
from git_retcon.git.ownership import branch_ref, name_problem
from git_retcon.git.plumbing import cas_ref, ref_target
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


class DamagedLog(RetconError):
    """The undo log is not what git-retcon writes (a ref at a blob, a record with the wrong types,
    refs it does not own): read as untrusted, it is one error that says how to clear it."""


def damaged(name: str, why: str) -> DamagedLog:
    ref = undo_ref(name)
    return DamagedLog(f"the undo log {ref} is damaged ({why}): nothing was changed; clear it with "
                      f"`git update-ref -d {ref}` (undo then has nothing to take back for '{name}')")


def last(store: Store, name: str) -> Op | None:
    """The last record; DamagedLog when the log's tip is not one git-retcon wrote."""
    tip = ref_target(store.repo, undo_ref(name))
    if tip is None:
        return None
    try:
        return _read(store.repo, tip)
    except _Bad as exc:
        raise damaged(name, str(exc)) from None


@contextmanager
def recording(store: Store, name: str, what: str, refs: list[str]) -> Iterator[None]:
    """Record `what`, an operation on spec `name` that may change refs, around its body.
    The caller holds the spec's lock. A name git's ref rules refuse (an older version saved
    such specs) gets no record: its only operation is `spec rm`."""
    if name_problem(name):
        yield
        return
    try:
        pending = last(store, name)
    except DamagedLog:      # appending goes on: on top of a damaged record, or afresh in place of a non-commit
        pending = None
    if pending is not None and pending.after is None:   # a killed operation: done, with what it left
        _write(store, name, pending.what, pending.before, _values(store.repo, list(pending.before)),
               pending.previous, replace=pending.record, at=pending.at)
    before = _values(store.repo, refs)
    base = ref_target(store.repo, undo_ref(name))
    on = base if base is not None and isinstance(store.repo.get(base), pygit2.Commit) else None
    record = _write(store, name, what, before, None, on, replace=base)
    try:
        yield
    except BaseException:
        with suppress(Exception):   # the operation's own error is the one to see; the next completes this
            _complete(store, name, what, before, refs, base, on, record)
        raise
    _complete(store, name, what, before, refs, base, on, record)


def _complete(store: Store, name: str, what: str, before: dict[str, str | None], refs: list[str],
              base: str | None, on: str | None, record: str) -> None:
    """base: the log's tip before the operation (put back when it changed nothing); on: the
    record it goes on (base, unless base was no record)."""
    after = _values(store.repo, refs)
    if after == before:     # nothing changed: nothing to undo
        cas_ref(store.repo, undo_ref(name), base, record, f"retcon: {what} (no change)")
    else:
        _write(store, name, what, before, after, on, replace=record)


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


class _Bad(Exception):
    """Why a record is not one git-retcon wrote."""


_SHA = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")


def _read(repo: pygit2.Repository, record: str) -> Op:
    """A record, its every field checked (a human or a tool may have written it)."""
    commit = repo.get(record)
    if not isinstance(commit, pygit2.Commit):
        raise _Bad(f"it points at a {type(commit).__name__.lower() if commit is not None else 'missing object'}, "
                   "not a record")
    try:
        entry = commit.tree[_FILE]
        blob = repo.get(entry.id)
        doc = json.loads(blob.data if isinstance(blob, pygit2.Blob) else b"")
    except (KeyError, ValueError):
        raise _Bad(f"record {record[:9]} has no readable {_FILE}") from None
    if not isinstance(doc, dict):
        raise _Bad(f"record {record[:9]}'s {_FILE} is not an object")
    what, at, previous = doc.get("op"), doc.get("at"), doc.get("previous")
    if not isinstance(what, str) or isinstance(at, bool) or not isinstance(at, (int, float)):
        raise _Bad(f"record {record[:9]} has no operation name or time")
    if previous is not None and not (isinstance(previous, str) and _SHA.fullmatch(previous)
                                     and isinstance(repo.get(previous), pygit2.Commit)):
        raise _Bad(f"record {record[:9]}'s previous record is not a commit")
    before = _refs(doc.get("before"), record, "before")
    after = None if doc.get("after") is None else _refs(doc.get("after"), record, "after")
    if before is None:
        raise _Bad(f"record {record[:9]} has no refs before")
    return Op(what, float(at), before, after, record, previous)


def _refs(value: object, record: str, field: str) -> dict[str, str | None] | None:
    """A record's ref values: ref names to commit ids or null."""
    if not isinstance(value, dict):
        raise _Bad(f"record {record[:9]}'s `{field}` is not an object of refs")
    for ref, sha in value.items():
        if not isinstance(ref, str) or not ref.startswith("refs/") or not pygit2.reference_is_valid_name(ref):
            raise _Bad(f"record {record[:9]}'s `{field}` names {ref!r}, not a ref")
        if sha is not None and not (isinstance(sha, str) and _SHA.fullmatch(sha)):
            raise _Bad(f"record {record[:9]}'s `{field}` gives {ref} the value {sha!r}, not a commit id")
    return dict(value)
