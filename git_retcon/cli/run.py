"""`git retcon run`: the reconstruction loop."""
from __future__ import annotations

from typing import TYPE_CHECKING

import click

from git_retcon.cli.group import cli, open_store, spec_name
from git_retcon.errors import RetconError
from git_retcon.git.commits import check_identity
from git_retcon.ui import UI

if TYPE_CHECKING:
    from git_retcon.model.protocol import ToolsMode


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
@click.option("--tools", type=click.Choice(["native", "text"]), default=None,
              help="How the model calls the tools: llm's tool calling (native), or git-retcon's text protocol, "
              "one call per reply (text). Default: native when the model supports it.")
@click.option("--context", metavar="TOKENS", default=None,
              help="The model's context window, e.g. 8192 or 16k: no prompt is bigger. Default: git config "
              "retcon.context, the model's llm option, the known window.")
@click.option("--sandbox", type=click.Choice(["auto", "require", "off"]), default=None,
              help="Confine setup, build and test: the strongest sandbox that works (auto), refuse without one "
              "(require), or never (off). Default: the spec's `sandbox`, git config retcon.sandbox, auto.")
@click.option("--retest", is_flag=True, help="Build and test again trees whose results are recorded.")
@click.option("--no-log", is_flag=True, help="Do not record the model exchanges in llm's database (`llm logs`).")
@click.option("-q", "--quiet", is_flag=True, help="Print only errors and the stuck summary.")
@click.option("-v", "--verbose", is_flag=True, help="Also print model calls and tokens, and why a confined command "
              "was several times slower than unconfined.")
def run(name: str | None, model: str | None, squash_wip: bool, fixup: bool, dry_run: bool, max_fix: int,
        max_tokens: int | None, jobs: int, tools: ToolsMode | None, context: str | None, sandbox: str | None,
        retest: bool, no_log: bool, quiet: bool, verbose: bool) -> None:
    """Rebuild the cleaned branch, resuming where the spec's history says.

    \b
    Exit codes: 0 done, 1 error, 3 stopped stuck (see `git retcon resolve`).
    Examples:
      git retcon run
      git retcon run feature-clean -m gpt-4.1
      git retcon run --jobs 2
      git retcon run --fixup             # fix commits for git rebase -i --autosquash
      git retcon run -m local --tools text --context 16k
      git retcon run --dry-run
      git retcon run --sandbox require   # refuse to run commands unconfined
    """
    from git_retcon.model.window import configured, parse
    from git_retcon.reconstruct.loop import Options, Run, reconstruct

    try:
        window = parse(context, "--context") if context is not None else None
    except RetconError as exc:
        raise click.BadParameter(str(exc).split(" = ", 1)[-1], param_hint="--context") from None
    store = open_store()
    if window is None:   # git config retcon.context: refused before anything is written, as --context is
        configured(store.repo)
    if not dry_run:
        check_identity(store.git_dir)   # as the first commit would, but before any model call
    reconstruct(Run(store.repo, store, spec_name(store, name),
                    Options(model=model, dry_run=dry_run, max_fix=max_fix, max_tokens=max_tokens,
                            squash_wip=squash_wip, fixup=fixup, log=not no_log, jobs=jobs, tools=tools,
                            context=window, sandbox=sandbox, retest=retest),
                    UI(quiet, verbose)))
