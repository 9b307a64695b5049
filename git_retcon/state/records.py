"""What a build or test record on a tree depends on besides the tree and the command's text, and
which record answers for a spec (ARCHITECTURE.md, "Where state lives").

A record means what it says: a test that passed after `touch .dl/built` did not pass without it.
So each record carries its context (`depends`): the setup command, the build that ran before a
test, the spec's `writable` and network, and the sandbox mechanism. A record is reused only in the
same context, and records of other contexts on the same tree are kept beside it, so one spec's
run never changes another spec's verdict. A record without a context (older versions wrote
them) is read, never reused.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from git_retcon.state.notes import CommandKind, CommandRecord
from git_retcon.state.spec import Spec

UNCONFINED = "unconfined"   # --sandbox off, or auto where no mechanism works: the same rights

Context = dict[str, Any]


def context(kind: CommandKind, setup: str | None, build: str | None, writable: Iterable[str],
            network: bool, setup_network: bool, mechanism: str | None) -> Context:
    """A command's context: what ran before it and around it. A test's includes the build before it."""
    ctx: Context = {"setup": setup or "", "writable": sorted(writable), "network": network,
                    "setup_network": setup_network, "sandbox": mechanism or UNCONFINED}
    if kind == "test":
        ctx["build"] = build or ""
    return ctx


def of_spec(spec: Spec, kind: CommandKind, mechanism: str | None = None) -> Context:
    """The context the spec's fields give kind's command (sandbox/choice.py reads them the same way)."""
    return context(kind, spec.setup, spec.build, spec.writable, bool(spec.network), spec.network is not False,
                   mechanism)


def _spec_part(ctx: object) -> object:
    return {k: v for k, v in ctx.items() if k != "sandbox"} if isinstance(ctx, dict) else None


def _sandbox(label: str | None) -> str | None:
    return UNCONFINED if label in ("none", "off") else label


def exact(recs: list[CommandRecord], command: str, ctx: Context) -> CommandRecord | None:
    """The record of command in exactly ctx: the only one a run may reuse."""
    return next((r for r in reversed(recs) if r["command"] == command and r.get("depends") == ctx), None)


def for_spec(recs: list[CommandRecord], command: str, ctx: Context,
             ran_under: str | None = None) -> CommandRecord | None:
    """The record that answers for a spec whose command has context ctx (its sandbox aside): the
    one made under ran_under (the sandbox a commit's note names) when there is one, else the last;
    with none in a context, an older version's record of the command (status and check read those
    as before)."""
    command_recs = [r for r in recs if r["command"] == command]
    mine = [r for r in command_recs if isinstance(r.get("depends"), dict)
            and _spec_part(r.get("depends")) == _spec_part(ctx)]
    want = _sandbox(ran_under)
    under = [r for r in mine if want is not None and r.get("depends", {}).get("sandbox") == want]
    if under or mine:
        return (under or mine)[-1]
    if any(isinstance(r.get("depends"), dict) for r in command_recs):
        return None   # recorded in other contexts only: those vouch for other specs
    return command_recs[-1] if command_recs else None


def unconfined(recs: list[CommandRecord], command: str, ctx: Context) -> CommandRecord | None:
    """The last record of command run unconfined (--sandbox off, or none working) in ctx but for its
    sandbox: the time a confined run of it is measured against (sandbox/slow.py), never reused."""
    return next((r for r in reversed(recs) if r["command"] == command and isinstance(r.get("depends"), dict)
                 and r.get("depends", {}).get("sandbox") == UNCONFINED
                 and _spec_part(r.get("depends")) == _spec_part(ctx)), None)
