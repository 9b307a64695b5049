"""`git retcon resolve`: a human's way out of a stuck stop."""
from __future__ import annotations

import click

from git_retcon.cli.group import cli, load_named
from git_retcon.git.plumbing import short
from git_retcon.ui import echo


@cli.command()
@click.option("-m", "--message", required=True, help="What you changed to get it unstuck.")
@click.option("--redo", is_flag=True,
              help="Also drop the stuck commit's created commits from the cleaned branch's tip, so the next run "
                   "extracts it afresh (after you edited the spec). "
                   "Example: git retcon resolve --redo -m \"split the helper into its own commit\"")
@click.argument("name", required=False)
def resolve(message: str, redo: bool, name: str | None) -> None:
    """Record how you resolved the stuck commit, so `run` can go on.

    With --redo, the stuck commit's commits on the cleaned branch are dropped
    (only git-retcon's own, at the branch's tip, never while it is checked out),
    so the next run extracts that commit afresh: use it after `git retcon spec
    edit` when the spec was what was wrong.

    \b
    Examples:
      git retcon resolve -m "merged commits 3 and 4: they depend on each other"
      git retcon spec edit && git retcon resolve --redo -m "moved the helper to commit 2"
    """
    from git_retcon.reconstruct.resolve import resolve as record
    from git_retcon.reconstruct.stops import run_command

    store, stored = load_named(name)
    if not message.strip():
        raise click.UsageError("the message is empty: say what you changed")
    done = record(store, stored.name, message.strip(), redo)
    echo(f"Resolved commit {done.index + 1}/{done.total}: {done.summary}")
    if done.redo:
        dropped = done.dropped
        echo(f"Dropped {len(dropped)} commit{'s' if len(dropped) != 1 else ''} of it from "
                   f"'{stored.spec.cleaned}'"
                   + (f" ({', '.join(short(s) for s in dropped)}): the next run extracts it afresh" if dropped
                      else ": it had none; the next run extracts it afresh"))
    echo(f"Next: {run_command(store.repo, stored.spec, done.model)}")
