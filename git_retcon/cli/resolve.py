"""`git retcon resolve`: a human's way out of a stuck stop."""
from __future__ import annotations

import shlex

import click

from git_retcon.cli.group import cli, load_named
from git_retcon.errors import RetconError
from git_retcon.git.plumbing import short
from git_retcon.state import notes
from git_retcon.state import spec as specmod


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
    store, stored = load_named(name)
    if not message.strip():
        raise click.UsageError("the message is empty: say what you changed")
    with store.lock(stored.name):
        stored = store.load(stored.name)   # re-read under the lock
        spec = stored.spec
        k = spec.current()
        if k is None or spec.commits[k].state != "stuck":
            state = "complete" if k is None else f"commit {k + 1} is {spec.commits[k].state}"
            raise RetconError(f"nothing is stuck in '{stored.name}' ({state}): there is nothing to resolve")
        model = notes.last_run_model(store, stored.commit)
        if redo:
            from git_retcon.reconstruct.redo import redo as drop

            dropped = drop(store, stored, k, message.strip())
        else:
            spec.commits[k].history.append(specmod.Resolved(message.strip()))
            store.update(stored, f"commit {k + 1} resolved")
    click.echo(f"Resolved commit {k + 1}/{len(spec.commits)}: {spec.commits[k].summary}")
    if redo:
        click.echo(f"Dropped {len(dropped)} commit{'s' if len(dropped) != 1 else ''} of it from '{spec.cleaned}'"
                   + (f" ({', '.join(short(s) for s in dropped)}): the next run extracts it afresh" if dropped
                      else ": it had none; the next run extracts it afresh"))
    click.echo(f"Next: git retcon run {stored.name}" + (f" -m {shlex.quote(model)}" if model else ""))

