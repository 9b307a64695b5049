"""`git retcon squash`: fold WIP commits into their logical commit."""
from __future__ import annotations

import click

from git_retcon.cli.group import cli, load_named
from git_retcon.ui import echo


@cli.command()
@click.argument("name", required=False)
def squash(name: str | None) -> None:
    """Fold each complete logical commit's WIP commits into it.

    The trees stay the same, so nothing is built or tested again: the recorded
    results carry over. The new commits' notes say what was folded and why.

    \b
    Example:
      git retcon squash feature-clean && git retcon check feature-clean
    """
    from git_retcon.reconstruct.squash import squash_spec

    store, stored = load_named(name)
    squash_spec(store, stored, echo)
