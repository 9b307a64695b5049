"""`git retcon stack`: a branch per logical commit, for stacked pull requests."""
from __future__ import annotations

import click

from git_retcon.cli.group import cli, open_store, spec_name
from git_retcon.ui import echo


@cli.command()
@click.argument("name", required=False)
@click.option("--prefix", metavar="P", help="Name the branches P1, P2, ... (default: the cleaned branch's name and "
                                            "a dash: feature-clean-1, feature-clean-2, ...).")
@click.option("--push", "remote", metavar="REMOTE", help="Push the branches to REMOTE, bottom first, with "
                                                          "--force-with-lease.")
def stack(name: str | None, prefix: str | None, remote: str | None) -> None:
    """A branch per complete logical commit, each on the one below, for stacked pull requests.

    Run it again after an absorb (or any rebuild) and the same branches move to the new
    commits. Only branches git-retcon made and nobody added to are moved; each move is
    compare-and-swap, never of a branch checked out, and `git retcon undo` takes it back.

    \b
    Examples:
      git retcon stack
      git retcon stack --push origin
      git retcon stack --prefix review/feature-
    """
    from git_retcon.reconstruct.stack import stack as make

    store = open_store()
    make(store, spec_name(store, name), prefix, remote, echo)
