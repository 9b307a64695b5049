"""A source rebased onto a moved remote: the one test of it, that status, check, the pre-push
hook, run and absorb share, so that they name the same next command for the same state."""
from __future__ import annotations

from collections.abc import Sequence

import pygit2

from git_retcon.git.plumbing import find_commit


def older_base(repo: pygit2.Repository, recorded: Sequence[str], tip: str | None, base: str) -> str | None:
    """The base the recorded commits (full shas) sit on, when the cleaned branch holds exactly
    them (tip) and merge-base(source, remote) has moved past it: the source was rebased onto a
    newer remote. None otherwise (not rebased, or the branch is not as recorded: check says)."""
    if not recorded or tip is None or tip != recorded[-1]:
        return None
    first = find_commit(repo, recorded[0])
    if first is None or not first.parent_ids:
        return None
    old = str(first.parent_ids[0])
    if old == base or not repo.descendant_of(base, old):
        return None   # the same base, or one that is not older (the remote was reset)
    return old


def advice(source: str, name: str) -> str:
    """The next command, as every command that meets the state says it."""
    return f"'{source}' was rebased onto a new base: git retcon run {name} restacks the clean history on it"
