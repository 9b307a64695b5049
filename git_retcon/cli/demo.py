"""`git retcon demo`: the whole flow, offline, on a small messy repository."""
from __future__ import annotations

import click

from git_retcon.cli.group import cli
from git_retcon.ui import UI


@cli.command()
@click.argument("directory", metavar="[DIR]", required=False, type=click.Path(file_okay=False))
def demo(directory: str | None) -> None:
    """Build a small project with a messy branch in DIR and clean it up, offline.

    DIR must be new or empty (default: a new temporary directory); it is left
    for you to explore. Uses the built-in retcon-paths model: no API key.

    \b
    Example:
      git retcon demo /tmp/retcon-demo && cd /tmp/retcon-demo
    """
    from git_retcon import demo as demomod

    demomod.run(directory, UI(), lambda args: cli.main(args=args, prog_name="git retcon", standalone_mode=False))
