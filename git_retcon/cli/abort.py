"""`git retcon abort`: drop a run's branch, worktree and progress."""
from __future__ import annotations

import click

from git_retcon.cli.group import cli, load_named
from git_retcon.git.plumbing import cas_ref, ref_target, short


@cli.command()
@click.argument("name")
def abort(name: str) -> None:
    """Drop a run: delete the cleaned branch and worktree, clear the spec's history.

    The spec keeps its commits and hints; the old state stays in the spec's own
    history (git log refs/retcon/NAME).

    \b
    Example (start over after changing the spec):
      git retcon abort feature-clean && git retcon run feature-clean
    """
    from git_retcon.sandbox.worktree import Worktree

    store, stored = load_named(name)
    spec = stored.spec
    ref = f"refs/heads/{spec.cleaned}"
    tip = ref_target(store.repo, ref)
    if tip is not None:
        from git_retcon.sandbox.worktree import ensure_not_checked_out

        ensure_not_checked_out(store.repo, spec.cleaned)
    with store.lock(stored.name):
        if tip is not None:
            cas_ref(store.repo, ref, None, tip, "retcon: abort")
            click.echo(f"Deleted branch {spec.cleaned} (was {short(tip)}).")
        removed = Worktree.remove(store.repo, stored.name)
        if removed:
            click.echo("Removed the build worktree.")
        ran = any(c.history for c in spec.commits)
        if tip is None and not removed and not ran:
            click.echo(f"Nothing to abort: '{stored.name}' never ran (no cleaned branch, build worktree or "
                       "history); the spec is kept (delete it with `git retcon spec rm`).")
        if ran:
            before = stored.commit
            for c in spec.commits:
                c.history.clear()
            store.update(stored, f"abort: history cleared (was {short(before)})")
            click.echo(f"Cleared the run's history (the old one is {short(before)} "
                       f"in git log refs/retcon/{stored.name}).")
