"""`git retcon abort`: drop a run's branch, worktree and progress."""
from __future__ import annotations

import click

from git_retcon.cli.group import cli, load_named
from git_retcon.ui import echo


@cli.command()
@click.argument("name")
def abort(name: str) -> None:
    """Drop a run: delete the cleaned branch (only if git-retcon made it) and worktree,
    clear the spec's history.

    The spec keeps its commits and hints; the old state stays in the spec's own
    history (git log refs/retcon/NAME).

    \b
    Example (start over after changing the spec):
      git retcon abort feature-clean && git retcon run feature-clean
    """
    from git_retcon.reconstruct.abort import abort as drop

    store, stored = load_named(name)
    drop(store, stored, echo)
