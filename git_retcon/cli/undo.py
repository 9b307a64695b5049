"""`git retcon undo`: take back the last operation that changed a spec or its branch."""
from __future__ import annotations

import click

from git_retcon.cli.group import cli, open_store, spec_name
from git_retcon.ui import echo


@cli.command()
@click.argument("name", required=False)
def undo(name: str | None) -> None:
    """Undo the last operation that changed the spec NAME or its cleaned branch.

    Run, resolve, squash, import, edit, plan --force, abort and spec rm are recorded:
    undo puts back the spec and the cleaned branch as they were before the last of
    them, after checking that nothing else moved them since, and says in one line what
    it restored. Undo again to take back the operation before it. Notes and build and
    test records stay: they are facts about commits and trees.

    \b
    Examples:
      git retcon undo                  # the last run, say
      git retcon undo feature-clean
    """
    from git_retcon.reconstruct.undo import undo as take_back

    store = open_store()
    # NAME as given: a spec that `spec rm` deleted has no ref left, only its record.
    take_back(store, name or spec_name(store, None), echo)
