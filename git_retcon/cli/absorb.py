"""`git retcon absorb`: fold the source's new changes into the logical commits they belong to."""
from __future__ import annotations

import click

from git_retcon.cli.group import cli, open_store, spec_name
from git_retcon.ui import UI


@cli.command()
@click.argument("name", required=False)
@click.option("--into", "into", multiple=True, metavar="K | GLOB=K",
              help="Put every new change (K), or those under GLOB (GLOB=K), into logical commit K. Repeatable.")
@click.option("-m", "--model", help="The model that places changes no rule places (default: the spec's, then "
                                    "retcon.model; none: they go into a new commit at the end).")
@click.option("-q", "--quiet", is_flag=True, help="Print only errors.")
def absorb(name: str | None, into: tuple[str, ...], model: str | None, quiet: bool) -> None:
    """Fold the source's changes since the spec was complete into the logical commits they belong to.

    After a run and a push, review fixes land on the source branch. absorb places each
    changed hunk: with --into; else in the logical commit whose lines it changes (the
    cleaned branch's blame, as git-absorb does); else under the one commit whose paths
    match it; else by the model, one small question per hunk; else in a new logical commit
    at the end, saying why. Then every logical commit from the first one changed is re-made
    and built and tested again (a tree already tested is not run again), the spec records
    what was absorbed where, and `git retcon undo` puts the previous branch back.
    A source rebased onto a moved remote is restacked first, as run does: every commit
    re-made on the new merge base, with the same placements, and verified.
    Exit codes: 0 done, 1 error, 3 a re-made commit fails (run goes on from there).

    \b
    Examples:
      git retcon absorb
      git retcon absorb --into 2                 # all of it into logical commit 2
      git retcon absorb --into 'docs/*=4'        # what is under docs/ into commit 4
    """
    from git_retcon.model import choose as models
    from git_retcon.reconstruct.absorb import absorb as fold

    store = open_store()
    spec = spec_name(store, name)
    chosen = models.choose(store.repo, model, store.load(spec).spec.model)
    fold(store, spec, UI(quiet=quiet), list(into), models.load(chosen) if chosen else None)
