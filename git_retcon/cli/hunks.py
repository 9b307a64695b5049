"""`git retcon hunks`: every hunk of a spec's diff and the logical commit it belongs to."""
from __future__ import annotations

import json

import click

from git_retcon.cli.group import cli, load_named
from git_retcon.ui import echo


@cli.command()
@click.argument("name", required=False)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output: a list of objects.")
def hunks(name: str | None, as_json: bool) -> None:
    """Every hunk of the spec's diff (merge base to source tip), offline: its id, path, lines,
    +/-, the logical commit it belongs to and who decided (user: the spec's hunks or paths;
    rule: plain code; model: the questions `run` asked; none: the last commit takes it).

    Move a hunk by putting its id in another commit's `hunks` (git retcon spec edit), or,
    after a complete run, with `git retcon absorb --into K`.

    \b
    Examples:
      git retcon hunks
      git retcon hunks feature-clean --json | jq '.[] | select(.who == "none")'
    """
    from git_retcon.owners import listing

    store, stored = load_named(name)
    found = listing.rows(store, stored)
    if as_json:
        echo(json.dumps([r.as_json() for r in found], indent=2))
        return
    for line in listing.render(len(stored.spec.commits), found):
        echo(line)
