"""`git retcon plan`: write a spec from a file, from commits, or by a model."""
from __future__ import annotations

import sys

import click

from git_retcon.cli.group import cli, open_store
from git_retcon.ui import echo


@cli.command()
@click.option("--source", help="The messy branch (default: the current branch).")
@click.option("--onto", "remote", help="The branch it will merge into (default: its upstream).")
@click.option("--cleaned", help="Name of the clean branch to build (default: SOURCE-clean).")
@click.option("--from-file", "from_file", type=click.Path(dir_okay=False), help="Take the spec from a TOML file.")
@click.option("--from-commits", is_flag=True, help="One logical commit per source commit (no model).")
@click.option("--outline/--whole", default=None, help="--outline: plain code proposes the commits from the diff "
              "and the model names them (one call); which commit each change in doubt belongs to is asked as small "
              "questions, for any model, small local ones included; --whole: the model groups every hunk itself, for "
              "a strong model. Default: --outline, or --whole where git config retcon.owners says conversation.")
@click.option("-m", "--model", help="Model that proposes the spec (default: retcon.model, llm's default); with "
              "--from-file, the model asked which commit each hunk the file leaves unassigned belongs to.")
@click.option("--max-commits", type=click.IntRange(1), help="Propose at most N logical commits.")
@click.option("--instructions", help="Extra guidance for the model, e.g. \"keep the tests separate\".")
@click.option("--budget", type=click.IntRange(4000), default=32000, show_default=True,
              help="The model's context window in tokens: no prompt is bigger.")
@click.option("--jobs", type=click.IntRange(1, 32), default=4, show_default=True,
              help="Model calls in flight at once for a large branch.")
@click.option("--setup", help="Installs the dependencies in the build worktree (npm ci, cargo fetch, ...).")
@click.option("--build", help="Build command, run in the worktree after each commit.")
@click.option("--test", "test_cmd", help="Test command, run after the build.")
@click.option("--edit/--no-edit", default=None, help="Open the spec in $GIT_EDITOR (default: on a terminal).")
@click.option("--force", is_flag=True, help="Replace an existing spec of the same name.")
@click.option("--no-log", is_flag=True, help="Do not record the model exchanges in llm's database (`llm logs`).")
def plan(source: str | None, remote: str | None, cleaned: str | None, from_file: str | None,
         from_commits: bool, outline: bool | None, model: str | None, max_commits: int | None, instructions: str | None,
         budget: int, jobs: int, setup: str | None, build: str | None, test_cmd: str | None,
         edit: bool | None, force: bool, no_log: bool) -> None:
    """Write the history spec for a branch and save it.

    Without --from-file or --from-commits the model proposes it: plain code
    proposes the logical commits and the model names them, and small
    questions say which commit each change in doubt belongs to (--outline,
    the default); or the model groups every hunk itself (--whole).

    \b
    Examples:
      git retcon plan -m gpt-4.1 --whole --max-commits 6
      git retcon plan --from-commits --setup "npm ci" --build "npm run build" --test "npm test"
      git retcon plan --from-commits --build "cargo build" --test "cargo test"
      git retcon plan --from-file spec.toml --no-edit
      git retcon plan --from-file hints-only.toml -m local   # hunks placed by questions
      git retcon plan -m local   # the model names the commits, questions place the hunks
    """
    from git_retcon.plan.save import PlanRequest
    from git_retcon.plan.save import plan as save_plan

    if (from_file or from_commits) and outline is not None:
        raise click.UsageError(f"--{'outline' if outline else 'whole'} is how the model proposes the commits: "
                               f"not with --{'from-file' if from_file else 'from-commits'}")
    if from_file and from_commits:
        raise click.UsageError("--from-file and --from-commits exclude each other")
    if edit is None:
        edit = sys.stdin.isatty() and sys.stdout.isatty()
    spec = save_plan(open_store(), PlanRequest(
        source=source, remote=remote, cleaned=cleaned, from_file=from_file, from_commits=from_commits, outline=outline,
        model=model, max_commits=max_commits, instructions=instructions, budget=budget, jobs=jobs, setup=setup,
        build=build, test=test_cmd, edit=edit, force=force, log=not no_log), echo)
    echo(f"Next: git retcon run {spec.cleaned}")
