"""`git retcon check`: what the pre-push hook verifies."""
from __future__ import annotations

import click

from git_retcon.cli.group import cli, load_named
from git_retcon.ui import echo


@cli.command()
@click.argument("name", required=False)
@click.option("--allow-wip", is_flag=True, help="Do not fail on WIP: commits.")
@click.option("--rerun", "--retest", "rerun", is_flag=True, help="Build and test every logical commit again "
              "instead of trusting the recorded results.")
@click.option("--sandbox", type=click.Choice(["auto", "require", "off"]), default=None,
              help="How --rerun confines the commands (default: the spec's `sandbox`, git config retcon.sandbox, "
              "auto).")
def check(name: str | None, allow_wip: bool, rerun: bool, sandbox: str | None) -> None:
    """Verify the cleaned branch: complete, tested, equal to the source, no WIP.

    \b
    Exit code 0 when every check holds, 1 otherwise. Examples:
      git retcon check feature-clean
      git retcon check --rerun           # run build and tests again
    """
    from git_retcon.check import check_spec

    store, stored = load_named(name)
    verdict = check_spec(store, stored, allow_wip, rerun, progress=echo, sandbox=sandbox)
    echo(verdict.render())
    if not verdict.ok:
        raise SystemExit(1)
