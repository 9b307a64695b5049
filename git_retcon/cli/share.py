"""`git retcon push|pull`: share specs, notes and cleaned branches."""
from __future__ import annotations

import click

from git_retcon.cli.group import cli
from git_retcon.git.plumbing import open_repo
from git_retcon.ui import echo


@cli.command()
@click.argument("remote", required=False)
@click.option("--no-verify", is_flag=True, help="Skip the pre-push hooks for this push.")
def push(remote: str | None, no_verify: bool) -> None:
    """Push the specs, notes and cleaned branches (as refs/retcon-branches/*) to REMOTE.

    \b
    Only fast-forwards: when REMOTE has newer state, pull first. Example:
      git retcon push origin
    """
    from git_retcon import share

    for line in share.push(open_repo(), remote, no_verify):
        echo(line)


@cli.command()
@click.argument("remote", required=False)
def pull(remote: str | None) -> None:
    """Fetch REMOTE's specs, notes and cleaned branches; fast-forward them here, merge notes.

    \b
    Example (a colleague resumes a stuck run):
      git retcon pull origin && git retcon status
    """
    from git_retcon import share

    for line in share.pull(open_repo(), remote):
        echo(line)
