"""`git retcon abort`: drop a run's branch, worktree and progress."""
from __future__ import annotations

import click

from git_retcon.cli.group import cli, load_named
from git_retcon.git.plumbing import cas_ref, ref_target, short


@cli.command()
@click.argument("name")
def abort(name: str) -> None:
    """Drop a run: delete the cleaned branch (only if git-retcon made it) and worktree,
    clear the spec's history.

    The spec keeps its commits and hints; the old state stays in the spec's own
    history (git log refs/retcon/NAME).

    \b
    Example (start over after changing the spec):
      git retcon abort feature-clean && git retcon run feature-clean
    """
    from git_retcon.git import ownership
    from git_retcon.sandbox.pool import remove_pool
    from git_retcon.sandbox.worktree import Worktree

    store, stored = load_named(name)
    spec = stored.spec
    ref = ownership.branch_ref(spec.cleaned)
    ran = any(c.history for c in spec.commits)
    with store.lock(stored.name):
        tip = ref_target(store.repo, ref)
        # Only a branch git-retcon made goes; another is the user's, whatever the spec says.
        kept = ownership.spec_branch_foreign(store.repo, stored.name, spec.cleaned, spec.source, spec.remote,
                                             [s for c in spec.commits for s in c.created], ran) if tip else None
        if tip is not None and kept is None:
            ownership.refuse_checked_out(store.repo, spec.cleaned)
        if tip is not None and kept is None:
            cas_ref(store.repo, ref, None, tip, "retcon: abort")
            click.echo(f"Deleted branch {spec.cleaned} (was {short(tip)}).")
        elif kept is not None:
            click.echo(f"Kept branch {spec.cleaned} ({short(tip)}): {kept}, so it is not git-retcon's to delete.")
        removed = Worktree.remove(store.repo, stored.name)
        if removed:
            click.echo("Removed the build worktree.")
        if pooled := remove_pool(store.repo, stored.name):
            click.echo(f"Removed the --jobs pool ({pooled} worktree{'s' if pooled > 1 else ''}).")
            removed = True
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
