"""What a spec file would drop of the stored spec's history: an export older than what was recorded
since (a resolve, a stop, commits), imported over it (issue 38). Refused unless the user says so.

An export's first line says which save of the spec it was made from (`header`); a file made from the
spec's last save is the user's edit, and its history is theirs to change. One made from an earlier
save lacks what was recorded since, where its history for a logical commit is the stored one's start.
"""
from __future__ import annotations

import re

from git_retcon.state import spec as specmod

_HEADER = re.compile(r"^# git retcon spec export of (\S+) at ([0-9a-f]{40})\b", re.M)


def header(name: str, commit: str) -> str:
    """The comment `spec export` writes first: which save of which spec the file was made from."""
    return f"# git retcon spec export of {name} at {commit}: import refuses it once the spec has moved on\n"


def exported_from(text: str) -> tuple[str, str] | None:
    """(spec name, spec commit) of an export's header, if the file has one."""
    m = _HEADER.search(text[:2000])
    return (m.group(1), m.group(2)) if m else None


def _entry(e: specmod.Entry) -> str:
    if isinstance(e, specmod.Resolved):
        return f'resolved "{e.text[:60]}"'
    if isinstance(e, specmod.Stuck):
        return f'stuck "{e.summary.splitlines()[0][:60] if e.summary else ""}"'
    if isinstance(e, specmod.CommitCreated):
        return f"commit_created {e.sha[:9]}"
    if isinstance(e, specmod.Squashed):
        return f"squashed {e.sha[:9]}"
    if isinstance(e, specmod.Absorbed):
        return "absorbed"
    return "complete"


def dropped(old: specmod.Spec | None, new: specmod.Spec) -> list[str]:
    """Per logical commit the file keeps (the same message), the entries the stored spec recorded
    past the file's history for it, when the file's history is their start (an older export):
    "commit 2: resolved "..."". A history the file changed otherwise is an edit, not age."""
    if old is None:
        return []
    out: list[str] = []
    for k, o in enumerate(old.commits):
        same = [n for n in new.commits if n.message == o.message]
        if len(same) != 1:
            continue   # removed, renamed or repeated: realign's business
        had, has = o.history, same[0].history
        if len(has) < len(had) and had[: len(has)] == has:
            out += [f"commit {k + 1}: {_entry(e)}" for e in had[len(has):]]
    return out
