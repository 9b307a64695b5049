"""`git retcon resolve`: a human's way out of a stuck stop."""
from __future__ import annotations

import click

from git_retcon.cli.group import cli, load_named
from git_retcon.errors import RetconError
from git_retcon.state import spec as specmod


@cli.command()
@click.option("-m", "--message", required=True, help="What you changed to get it unstuck.")
@click.argument("name", required=False)
def resolve(message: str, name: str | None) -> None:
    """Record how you resolved the stuck commit, so `run` can go on.

    \b
    Example:
      git retcon resolve -m "merged commits 3 and 4: they depend on each other"
    """
    store, stored = load_named(name)
    spec = stored.spec
    k = spec.current()
    if k is None or spec.commits[k].state != "stuck":
        state = "complete" if k is None else f"commit {k + 1} is {spec.commits[k].state}"
        raise RetconError(f"nothing is stuck in '{stored.name}' ({state}): there is nothing to resolve")
    if not message.strip():
        raise click.UsageError("the message is empty: say what you changed")
    spec.commits[k].history.append(specmod.Resolved(message.strip()))
    store.update(stored, f"commit {k + 1} resolved")
    click.echo(f"Resolved commit {k + 1}/{len(spec.commits)}: {spec.commits[k].summary}")
    click.echo(f"Next: git retcon run {stored.name}")
