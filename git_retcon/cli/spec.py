"""`git retcon spec show|export|import|edit`: the stored spec as TOML."""
from __future__ import annotations

import sys
from pathlib import Path

import click

from git_retcon.cli.group import cli, load_named, open_store
from git_retcon.state import spectoml
from git_retcon.ui import echo


@cli.group("spec")
def spec_group() -> None:
    """Read and change the stored spec as TOML."""


@spec_group.command("show")
@click.argument("name", required=False)
def spec_show(name: str | None) -> None:
    """Print the stored spec, with the run's history.

    \b
    Example:
      git retcon spec show feature-clean
    """
    echo(spectoml.dump(load_named(name)[1].spec), nl=False)


@spec_group.command("export")
@click.argument("name", required=False)
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write to this file instead of stdout.")
def spec_export(name: str | None, output: str | None) -> None:
    """Write the stored spec as TOML (to stdout or -o FILE).

    \b
    Example:
      git retcon spec export -o spec.toml feature-clean
    """
    from git_retcon.plan.dropped import header

    stored = load_named(name)[1]
    # which save it was made from: an import of it once the spec moved on refuses to drop what came since
    text = header(stored.name, stored.commit) + spectoml.dump(stored.spec)
    if output:
        Path(output).write_text(text, encoding="utf-8")
        echo(f"Wrote {output}")
    else:
        # Data for a file or a pipe: as it is (TOML escapes what it must); to a terminal, printable.
        (echo if sys.stdout.isatty() else click.echo)(text, nl=False)


@spec_group.command("import")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--drop-history", is_flag=True,
              help="Import a file that lacks what was recorded since it was exported, dropping that.")
def spec_import(file: str, drop_history: bool) -> None:
    """Replace (or create) the spec named by FILE's `cleaned` with FILE.

    A FILE older than the stored spec (an export from before a run or a resolve) is refused,
    naming what it lacks, unless --drop-history.

    \b
    Example:
      git retcon spec export -o s.toml && $EDITOR s.toml && git retcon spec import s.toml
    """
    from git_retcon.plan.save import import_file

    spec = import_file(open_store(), file, echo, drop_history)
    echo(f"Imported spec '{spec.cleaned}' ({len(spec.commits)} logical commits).")


@spec_group.command("edit")
@click.argument("name", required=False)
def spec_edit(name: str | None) -> None:
    """Edit the stored spec in $GIT_EDITOR; it is validated before it is saved.

    \b
    Example:
      GIT_EDITOR=nano git retcon spec edit feature-clean
    """
    from git_retcon.plan.save import edit_stored

    store, stored = load_named(name)
    edited = edit_stored(store, stored, echo)
    echo("No changes." if edited is None else f"Saved spec '{edited.cleaned}'.")


@spec_group.command("rm")
@click.argument("name")
def spec_rm(name: str) -> None:
    """Delete the spec NAME (refs/retcon/NAME) and its build worktree.

    The cleaned branch, if a run made one, is kept: it is yours now (delete it with
    `git branch -D NAME`), and so are its notes. The spec's history is gone with its ref,
    except from the reflog. Refused while a run holds the spec's lock.

    \b
    Example:
      git retcon spec rm feature-clean
    """
    from git_retcon.reconstruct.abort import remove_spec

    store, stored = load_named(name)
    echo(remove_spec(store, stored))
