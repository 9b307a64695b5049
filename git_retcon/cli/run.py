"""`git retcon run`: the reconstruction loop."""
from __future__ import annotations

import click

from git_retcon.cli.group import cli, open_store, spec_name
from git_retcon.git.commits import check_identity
from git_retcon.ui import UI


@cli.command()
@click.argument("name", required=False)
@click.option("-m", "--model", help="llm model id or alias (default: spec, retcon.model, llm's default).")
@click.option("--squash-wip", is_flag=True, help="Fold WIP commits into their logical commit at the end.")
@click.option("--fixup", is_flag=True, help="Make fix commits `fixup! <subject>` (as wip = \"fixup\" in the spec), "
              "for git rebase -i --autosquash.")
@click.option("--dry-run", is_flag=True, help="Show what would happen; change nothing.")
@click.option("--max-fix", type=click.IntRange(0, 100), default=5, show_default=True,
              help="Fix attempts per logical commit before stopping as stuck.")
@click.option("--max-tokens", type=click.IntRange(1), default=None,
              help="Stop (resumably, exit 3) once this run has used this many model tokens.")
@click.option("--jobs", type=click.IntRange(1, 64), default=1, show_default=True,
              help="2: build and test each commit in a second worktree while the model extracts the next.")
@click.option("--no-log", is_flag=True, help="Do not record the model exchanges in llm's database (`llm logs`).")
@click.option("-q", "--quiet", is_flag=True, help="Print only errors and the stuck summary.")
@click.option("-v", "--verbose", is_flag=True, help="Also print model calls and tokens.")
def run(name: str | None, model: str | None, squash_wip: bool, fixup: bool, dry_run: bool, max_fix: int,
        max_tokens: int | None, jobs: int, no_log: bool, quiet: bool, verbose: bool) -> None:
    """Rebuild the cleaned branch, resuming where the spec's history says.

    \b
    Exit codes: 0 done, 1 error, 3 stopped stuck (see `git retcon resolve`).
    Examples:
      git retcon run
      git retcon run feature-clean -m gpt-4.1
      git retcon run --jobs 2
      git retcon run --fixup             # fix commits for git rebase -i --autosquash
      git retcon run --dry-run
    """
    from git_retcon.reconstruct.loop import Options, Run, reconstruct

    store = open_store()
    if not dry_run:
        check_identity(store.git_dir)   # as the first commit would, but before any model call
    reconstruct(Run(store.repo, store, spec_name(store, name),
                    Options(model=model, dry_run=dry_run, max_fix=max_fix, max_tokens=max_tokens,
                            squash_wip=squash_wip, fixup=fixup, log=not no_log, jobs=jobs),
                    UI(quiet, verbose)))
