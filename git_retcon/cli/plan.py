"""`git retcon plan`: write a spec from a file, from commits, or by a model."""
from __future__ import annotations

import sys

import click

from git_retcon.cli.group import cli, open_store
from git_retcon.errors import RetconError
from git_retcon.git.plumbing import check_identity, ref_target
from git_retcon.state import spec as specmod
from git_retcon.state import spectoml
from git_retcon.ui import UI


@cli.command()
@click.option("--source", help="The messy branch (default: the current branch).")
@click.option("--onto", "remote", help="The branch it will merge into (default: its upstream).")
@click.option("--cleaned", help="Name of the clean branch to build (default: SOURCE-clean).")
@click.option("--from-file", "from_file", type=click.Path(dir_okay=False), help="Take the spec from a TOML file.")
@click.option("--from-commits", is_flag=True, help="One logical commit per source commit (no model).")
@click.option("-m", "--model", help="Model that proposes the spec (default: retcon.model, llm's default).")
@click.option("--max-commits", type=click.IntRange(1), help="Propose at most N logical commits.")
@click.option("--instructions", help="Extra guidance for the model, e.g. \"keep the tests separate\".")
@click.option("--budget", type=click.IntRange(4000), default=32000, show_default=True,
              help="The model's context window in tokens: no prompt is bigger.")
@click.option("--jobs", type=click.IntRange(1, 32), default=4, show_default=True,
              help="Model calls in flight at once for a large branch.")
@click.option("--build", help="Build command, run in the worktree after each commit.")
@click.option("--test", "test_cmd", help="Test command, run after the build.")
@click.option("--edit/--no-edit", default=None, help="Open the spec in $GIT_EDITOR (default: on a terminal).")
@click.option("--force", is_flag=True, help="Replace an existing spec of the same name.")
@click.option("--no-log", is_flag=True, help="Do not record the model exchanges in llm's database (`llm logs`).")
def plan(source: str | None, remote: str | None, cleaned: str | None, from_file: str | None,
         from_commits: bool, model: str | None, max_commits: int | None, instructions: str | None,
         budget: int, jobs: int, build: str | None, test_cmd: str | None,
         edit: bool | None, force: bool, no_log: bool) -> None:
    """Write the history spec for a branch and save it.

    Without --from-file or --from-commits the model proposes it: ordered
    logical commits, each with the hunks of the diff it takes.

    \b
    Examples:
      git retcon plan -m gpt-4.1 --max-commits 6
      git retcon plan --from-commits --build "make" --test "pytest -q"
      git retcon plan --from-file spec.toml --no-edit
    """
    from git_retcon.plan import branches
    from git_retcon.plan import write as planmod

    store = open_store()
    repo = store.repo
    check_identity(store.git_dir)   # the spec is saved as a commit: refuse before any model call
    proposal: planmod.Proposed | None = None
    if from_file and from_commits:
        raise click.UsageError("--from-file and --from-commits exclude each other")
    if from_file:
        spec, _ = planmod.read_file(from_file)
        spec.source = source or spec.source
        spec.remote = remote or spec.remote
        spec.cleaned = cleaned or spec.cleaned
    else:
        src = source or branches.current_branch(repo)
        if not src:
            raise RetconError("HEAD is detached: name the branch to clean up with --source")
        rem = remote or branches.default_remote(repo, src, click.echo)
        name = cleaned or f"{src}-clean"
        if from_commits:
            spec = planmod.from_commits(repo, src, rem, name)
        else:
            if ref_target(repo, f"refs/retcon/{name}") is not None and not force:
                raise RetconError(f"a spec named '{name}' exists: replace it with --force, "
                                  f"or change it with `git retcon spec edit {name}`")
            branches.check_cleaned_name(repo, name, src, rem)   # before the model's work, not after
            ui = UI()
            with ui.waiting(f"Waiting for {model or 'the model'}"):   # elapsed time on a terminal
                proposal = planmod.propose_with_model(repo, model, src, rem, name, instructions or "",
                                                      max_commits, budget, jobs, ui.line, log=not no_log)
            spec = proposal.spec
            model = proposal.keep_model
    spec.build = build or spec.build
    spec.test = test_cmd or spec.test
    spec.model = model or spec.model
    specmod.parse(spectoml.dump(spec))  # what we save must be valid
    branches.check_branches(repo, spec)
    if edit is None:
        edit = sys.stdin.isatty() and sys.stdout.isatty()
    if edit:
        edited = planmod.edit(repo, spectoml.dump(spec) + (planmod.leftover_comment(proposal.leftovers)
                                                             if proposal else ""))
        if edited is None:
            raise RetconError("the spec was emptied: nothing was saved")
        spec = edited
        branches.check_branches(repo, spec)
    old = ref_target(repo, f"refs/retcon/{spec.cleaned}")
    if old is not None and not force:
        raise RetconError(f"a spec named '{spec.cleaned}' exists: replace it with --force, "
                          f"or change it with `git retcon spec edit {spec.cleaned}`")
    store.save(spec, old, "plan")
    click.echo(f"Saved spec '{spec.cleaned}': {len(spec.commits)} logical commits "
               f"from '{spec.source}' onto '{spec.remote}'.")
    for line in planmod.report(repo, spec, proposal):
        click.echo(line)
    click.echo(f"Next: git retcon run {spec.cleaned}")
