"""git-retcon's settings in git config (`retcon.*`): read in one way, a bad value refused in one."""
from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

import pygit2

from git_retcon.errors import RetconError

T = TypeVar("T", bound=str)


def value(repo: pygit2.Repository | None, key: str) -> str | None:
    """The setting's text, or None where it is unset (or there is no repository)."""
    if repo is None:
        return None
    try:
        return str(repo.config[key])
    except (KeyError, pygit2.GitError):
        return None


def choice(repo: pygit2.Repository | None, key: str, choices: Sequence[T]) -> T | None:
    """One of choices (case and spaces aside), None where unset; anything else is refused with the
    command that sets the first choice."""
    text = value(repo, key)
    if text is None:
        return None
    for c in choices:
        if text.strip().lower() == c:
            return c
    raise RetconError(f"git config {key} = {text.strip().lower()!r}: use {', '.join(choices[:-1])} or "
                      f"{choices[-1]} (git config {key} {choices[0]})")
