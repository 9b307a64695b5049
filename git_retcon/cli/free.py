"""`git retcon free`: delete a spec's build worktree, kept or in use, to get its disk space back."""
from __future__ import annotations

import click

from git_retcon.cli.group import cli, open_store, spec_name
from git_retcon.errors import RetconError


@cli.command()
@click.argument("name", required=False)
@click.option("--all", "every", is_flag=True, help="Every spec's build worktree.")
def free(name: str | None, every: bool) -> None:
    """Delete a spec's build worktree and --jobs pool, with what they hold (installed
    dependencies, build outputs): a complete spec keeps them for its next run.

    The spec, its cleaned branch and its history stay; the next run makes the worktree again
    (and runs the spec's setup). Refused while a run holds the spec's lock.

    \b
    Examples:
      git retcon free feature-clean
      git retcon free --all
    """
    from git_retcon.sandbox.keep import free_spec, human

    store = open_store()
    if not every:
        free_spec(store, spec_name(store, name), click.echo)
        return
    if name:
        raise click.UsageError("name a spec or give --all, not both")
    total, refused = 0, []
    for each in store.names():
        try:
            total += free_spec(store, each, click.echo) or 0
        except RetconError as exc:
            refused.append(f"{each} ({exc})")
    if total:
        click.echo(f"Freed {human(total)} in all.")
    if refused:
        raise RetconError(f"not freed: {'; '.join(refused)}")
