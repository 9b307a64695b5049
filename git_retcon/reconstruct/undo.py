"""`git retcon undo`: the last operation that changed a spec or its branch, taken back.

The operation log (state/oplog.py) holds each ref's value before and after. Undo puts the
before values back, compare-and-swap, only when nothing else moved the refs since (a
record of an operation killed half way has no after: its refs are the run's, under the
spec's lock). A branch checked out anywhere is never moved. Undo again takes back the
operation before it.

The log is read as untrusted: a record that is not one git-retcon wrote, or that names a ref
it does not own (the source, a tag), puts nothing back and says how to clear the log.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import suppress

import pygit2

from git_retcon.errors import RetconError
from git_retcon.git import ownership
from git_retcon.git.ownership import refuse_checked_out
from git_retcon.git.plumbing import cas_ref, ref_target, short
from git_retcon.reconstruct.branch import Branches
from git_retcon.state import oplog
from git_retcon.state.spec import Spec
from git_retcon.state.store import SPEC_PREFIX, Store, spec_ref

_BRANCH = "refs/heads/"
_REMOTES = "refs/remotes/"


def undo(store: Store, name: str, say: Callable[[str], None]) -> None:
    with store.lock(name):
        op = oplog.last(store, name)
        if op is None:
            raise RetconError(f"nothing to undo for '{name}': no operation of git-retcon's is recorded for it "
                              "(run, resolve, squash, import, edit, abort, spec rm)")
        foreign = _not_ours(store, name, op)
        if foreign:
            raise oplog.damaged(name, f"its last record names refs git-retcon does not own: {', '.join(foreign)}")
        gone = [ref for ref, old in op.before.items() if old is not None and not isinstance(
            store.repo.get(old), pygit2.Commit)]
        if gone:
            raise oplog.damaged(name, f"its last record puts back commits this repository lacks: {', '.join(gone)}")
        now = {ref: ref_target(store.repo, ref) for ref in op.before}
        after = op.after if op.after is not None else now     # killed half way: what it left is its own
        back = {ref: old for ref, old in op.before.items() if now[ref] != old}
        for ref in back:
            if now[ref] != after.get(ref):
                raise RetconError(
                    f"{_label(ref)} moved since `{op.what}` ({short(after.get(ref))} then, {short(now[ref])} now): "
                    f"undo puts back only what nothing else changed since; nothing was changed. "
                    f"See `git log -g {ref}`")
        for ref in back:
            if ref.startswith(_BRANCH):
                refuse_checked_out(store.repo, ref[len(_BRANCH):])
        for ref, old in back.items():
            cas_ref(store.repo, ref, old, now[ref], f"retcon: undo {op.what}")
        oplog.drop_last(store, name, op)
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(op.at))
    what = ", ".join(f"{_label(ref)} back to {short(old)} (was {short(now[ref])})" if old else
                     f"{_label(ref)} deleted (was {short(now[ref])})" for ref, old in back.items())
    say(f"Undid `{op.what}` of {when}: " + (what or "its refs were back already") + ".")
    if op.what == "stack":
        _still_pushed(store, list(back), say)


def _still_pushed(store: Store, refs: list[str], say: Callable[[str], None]) -> None:
    """Undo moves local refs only: the stack branches a `stack --push` pushed stay on the remote
    (as its remote-tracking refs say), and the user should know it."""
    by_remote: dict[str, list[str]] = {}
    names = [ref[len(_BRANCH):] for ref in refs if ref.startswith(_BRANCH)]
    for tracking in store.repo.references:
        if not tracking.startswith(_REMOTES):
            continue
        for branch in names:
            if tracking.endswith("/" + branch) and len(tracking) > len(_REMOTES) + len(branch) + 1:
                by_remote.setdefault(tracking[len(_REMOTES):-len(branch) - 1], []).append(branch)
    for remote, found in sorted(by_remote.items()):
        branches = [b for b in names if b in found]
        say(f"Still on {remote} (undo moves local branches only): {', '.join(branches)}; "
            f"`git push {remote} --delete {' '.join(branches)}` removes them there.")


def _not_ours(store: Store, name: str, op: oplog.Op) -> list[str]:
    """The refs op names that undo must not touch: all but the spec's ref, its cleaned branch,
    and (for `stack`) branches whose every commit git-retcon made for it (git/ownership.py).
    Never the source or the remote, a tag, or any other ref: the log is read as untrusted."""
    spec = None
    if store.exists(name):
        with suppress(RetconError):
            spec = store.load(name).spec
    cleaned = {name} | ({spec.cleaned} if spec is not None else set())
    theirs = {spec.source, spec.remote} if spec is not None else set()
    bad = []
    for ref in dict.fromkeys([*op.before, *(op.after or {})]):
        branch = ref[len(_BRANCH):] if ref.startswith(_BRANCH) else None
        if ref == spec_ref(name) or branch in cleaned and branch not in theirs:
            continue
        if (branch is not None and branch not in theirs and spec is not None and op.what == "stack"
                and _stack_branch(store, name, spec, branch, op.before.get(ref))):
            continue
        bad.append(ref)
    return bad


def _stack_branch(store: Store, name: str, spec: Spec, branch: str, old: str | None) -> bool:
    """A branch `stack` made: what it holds and what undo would put back are git-retcon's for name."""
    repo = store.repo
    try:
        base = Branches(repo, spec).base
    except RetconError:
        return False
    return ownership.foreign(repo, name, branch, base, [], False) is None and (
        old is None or ownership.made_by(repo, old, name))


def _label(ref: str) -> str:
    if ref.startswith(_BRANCH):
        return f"branch {ref[len(_BRANCH):]}"
    if ref.startswith(SPEC_PREFIX):
        return f"spec {ref[len(SPEC_PREFIX):]}"
    return ref
