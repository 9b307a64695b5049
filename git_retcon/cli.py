"""The command line: thin click commands over the modules that do the work."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

from . import spec as specmod
from .errors import RetconError, StuckStop
from .gitops import cas_ref, open_repo, ref_target, short
from .store import Store, Stored
from .ui import UI


def _store() -> Store:
    return Store(open_repo())


def resolve_name(store: Store, name: str | None) -> str:
    """NAME, else the only spec, else the spec whose source is the current branch."""
    names = store.names()
    if name:
        if name not in names:
            raise RetconError(f"no spec named '{name}'" + (f": known specs are {', '.join(names)}" if names
                                                           else ": create one with `git retcon plan`"))
        return name
    if len(names) == 1:
        return names[0]
    if not names:
        raise RetconError("no specs yet: create one with `git retcon plan`")
    from .plan import current_branch

    branch = current_branch(store.repo)
    matching = [n for n in names if store.load(n).spec.source == branch] if branch else []
    if len(matching) == 1:
        return matching[0]
    raise click.UsageError(f"several specs exist, name one: {', '.join(names)}")


def _load(name: str | None) -> tuple[Store, Stored]:
    """The repository's store and the spec NAME designates (see resolve_name)."""
    store = _store()
    return store, store.load(resolve_name(store, name))


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="git-retcon")
def cli() -> None:
    """Rebuild a messy branch as clean logical commits that each build and pass tests.

    \b
    Typical flow:
      git retcon plan --from-commits     # or --from-file spec.toml
      git retcon run                     # rebuilds the cleaned branch
      git retcon resolve -m "..."        # after a stuck stop, then run again
      git retcon check                   # what the pre-push hook verifies

    \b
    Try it offline on a demo repository: git retcon demo
    The manual: git retcon --help (man git-retcon); a command's help: git retcon run -h
    """


# -- plan -----------------------------------------------------------------------


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
def plan(source: str | None, remote: str | None, cleaned: str | None, from_file: str | None,
         from_commits: bool, model: str | None, max_commits: int | None, instructions: str | None,
         budget: int, jobs: int, build: str | None, test_cmd: str | None,
         edit: bool | None, force: bool) -> None:
    """Write the history spec for a branch and save it.

    Without --from-file or --from-commits the model proposes it: ordered
    logical commits, each with the hunks of the diff it takes.

    \b
    Examples:
      git retcon plan -m gpt-4.1 --max-commits 6
      git retcon plan --from-commits --build "make" --test "pytest -q"
      git retcon plan --from-file spec.toml --no-edit
    """
    from . import plan as planmod

    store = _store()
    repo = store.repo
    proposal: planmod.Proposed | None = None
    if from_file and from_commits:
        raise click.UsageError("--from-file and --from-commits exclude each other")
    if from_file:
        spec, _ = planmod.read_file(from_file)
        spec.source = source or spec.source
        spec.remote = remote or spec.remote
        spec.cleaned = cleaned or spec.cleaned
    else:
        src = source or planmod.current_branch(repo)
        if not src:
            raise RetconError("HEAD is detached: name the branch to clean up with --source")
        rem = remote or planmod.default_remote(repo, src)
        name = cleaned or f"{src}-clean"
        if from_commits:
            spec = planmod.from_commits(repo, src, rem, name)
        else:
            if ref_target(repo, f"refs/retcon/{name}") is not None and not force:
                raise RetconError(f"a spec named '{name}' exists: replace it with --force, "
                                  f"or change it with `git retcon spec edit {name}`")
            proposal = planmod.propose_with_model(repo, model, src, rem, name, instructions or "",
                                                  max_commits, budget, jobs, click.echo)
            spec = proposal.spec
            model = proposal.keep_model
    spec.build = build or spec.build
    spec.test = test_cmd or spec.test
    spec.model = model or spec.model
    specmod.parse(specmod.dump(spec))  # what we save must be valid
    planmod.check_branches(repo, spec)
    if edit is None:
        edit = sys.stdin.isatty() and sys.stdout.isatty()
    if edit:
        edited = planmod.edit(repo, specmod.dump(spec) + (planmod.leftover_comment(proposal.leftovers)
                                                             if proposal else ""))
        if edited is None:
            raise RetconError("the spec was emptied: nothing was saved")
        spec = edited
        planmod.check_branches(repo, spec)
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


# -- spec -----------------------------------------------------------------------


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
    click.echo(specmod.dump(_load(name)[1].spec), nl=False)


@spec_group.command("export")
@click.argument("name", required=False)
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write to this file instead of stdout.")
def spec_export(name: str | None, output: str | None) -> None:
    """Write the stored spec as TOML (to stdout or -o FILE).

    \b
    Example:
      git retcon spec export -o spec.toml feature-clean
    """
    text = specmod.dump(_load(name)[1].spec)
    if output:
        Path(output).write_text(text, encoding="utf-8")
        click.echo(f"Wrote {output}")
    else:
        click.echo(text, nl=False)


@spec_group.command("import")
@click.argument("file", type=click.Path(dir_okay=False))
def spec_import(file: str) -> None:
    """Replace (or create) the spec named by FILE's `cleaned` with FILE.

    \b
    Example:
      git retcon spec export -o s.toml && $EDITOR s.toml && git retcon spec import s.toml
    """
    from . import plan as planmod

    store = _store()
    spec, _ = planmod.read_file(file)
    planmod.check_branches(store.repo, spec)
    old = ref_target(store.repo, f"refs/retcon/{spec.cleaned}")
    store.save(spec, old, f"import {os.path.basename(file)}")
    click.echo(f"Imported spec '{spec.cleaned}' ({len(spec.commits)} logical commits).")


@spec_group.command("edit")
@click.argument("name", required=False)
def spec_edit(name: str | None) -> None:
    """Edit the stored spec in $GIT_EDITOR; it is validated before it is saved.

    \b
    Example:
      GIT_EDITOR=nano git retcon spec edit feature-clean
    """
    from . import plan as planmod

    store, stored = _load(name)
    edited = planmod.edit(store.repo, specmod.dump(stored.spec))
    if edited is None:
        raise RetconError("the spec was emptied: nothing was saved")
    if edited.cleaned != stored.spec.cleaned:
        raise RetconError("`cleaned` names the spec and cannot change in an edit: use `spec import` for a new one")
    if specmod.dump(edited) == specmod.dump(stored.spec):
        click.echo("No changes.")
        return
    planmod.check_branches(store.repo, edited)
    stored.spec = edited
    store.update(stored, "edit")
    click.echo(f"Saved spec '{edited.cleaned}'.")


# -- run, resolve -----------------------------------------------------------------


@cli.command()
@click.argument("name", required=False)
@click.option("-m", "--model", help="llm model id or alias (default: spec, retcon.model, llm's default).")
@click.option("--squash-wip", is_flag=True, help="Fold WIP commits into their logical commit at the end.")
@click.option("--dry-run", is_flag=True, help="Show what would happen; change nothing.")
@click.option("--max-fix", type=click.IntRange(0, 100), default=5, show_default=True,
              help="Fix attempts per logical commit before stopping as stuck.")
@click.option("--max-tokens", type=click.IntRange(1), default=None,
              help="Stop (resumably, exit 3) once this run has used this many model tokens.")
@click.option("-q", "--quiet", is_flag=True, help="Print only errors and the stuck summary.")
@click.option("-v", "--verbose", is_flag=True, help="Also print model calls and tokens.")
def run(name: str | None, model: str | None, squash_wip: bool, dry_run: bool, max_fix: int,
        max_tokens: int | None, quiet: bool, verbose: bool) -> None:
    """Rebuild the cleaned branch, resuming where the spec's history says.

    \b
    Exit codes: 0 done, 1 error, 3 stopped stuck (see `git retcon resolve`).
    Examples:
      git retcon run
      git retcon run feature-clean -m gpt-4.1
      git retcon run --dry-run
    """
    from .loop import Options, Run

    store = _store()
    Run(store.repo, store, resolve_name(store, name),
        Options(model=model, dry_run=dry_run, max_fix=max_fix, max_tokens=max_tokens, squash_wip=squash_wip),
        UI(quiet, verbose)).execute()


@cli.command()
@click.argument("name", required=False)
def squash(name: str | None) -> None:
    """Fold each complete logical commit's WIP commits into it.

    The trees stay the same, so nothing is built or tested again: the recorded
    results carry over. The new commits' notes say what was folded and why.

    \b
    Example:
      git retcon squash feature-clean && git retcon check feature-clean
    """
    from .squash import squash as fold
    from .worktree import ensure_not_checked_out

    store, stored = _load(name)
    ensure_not_checked_out(store.repo, stored.spec.cleaned)
    with store.lock(stored.name):
        fold(store, store.load(stored.name), click.echo)


@cli.command()
@click.option("-m", "--message", required=True, help="What you changed to get it unstuck.")
@click.argument("name", required=False)
def resolve(message: str, name: str | None) -> None:
    """Record how you resolved the stuck commit, so `run` can go on.

    \b
    Example:
      git retcon resolve -m "merged commits 3 and 4: they depend on each other"
    """
    store, stored = _load(name)
    spec = stored.spec
    k = spec.current()
    if k is None or spec.commits[k].state != "stuck":
        state = "complete" if k is None else f"commit {k + 1} is {spec.commits[k].state}"
        raise RetconError(f"nothing is stuck in '{stored.name}' ({state}): there is nothing to resolve")
    if not message.strip():
        raise click.UsageError("the message is empty: say what you changed")
    spec.commits[k].history.append(specmod.Resolved(message.strip()))
    store.update(stored, f"commit {k + 1} resolved")
    click.echo(f"Resolved commit {k + 1}/{len(spec.commits)}: {spec.commits[k].summary}")
    click.echo(f"Next: git retcon run {stored.name}")


# -- status, list, check, abort ------------------------------------------------------


@cli.command()
@click.argument("name", required=False)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def status(name: str | None, as_json: bool) -> None:
    """Each logical commit: state, commits made, WIPs, build/test result, tokens.

    \b
    Examples:
      git retcon status
      git retcon status --json feature-clean | jq '.commits[].state'
    """
    from . import cost
    from .check import commit_rows

    store, stored = _load(name)
    spec = stored.spec
    rows = commit_rows(store, stored)
    spent, runs = cost.ledger(store, stored)
    cost.add_to_rows(rows, spent)
    if as_json:
        doc = {"name": stored.name, "source": spec.source, "remote": spec.remote,
               "cleaned": spec.cleaned, "state": spec.state, "commits": rows,
               "runs": [{"model": r.get("model"), "stop": r.get("stop"), "tokens": r.get("tokens")} for r in runs]}
        click.echo(json.dumps(doc, indent=2))
        return
    click.echo(f"{stored.name}: {spec.state} ({spec.source} onto {spec.remote} -> {spec.cleaned})")
    click.echo(f"{'#':>3}  {'state':<11} {'commits':>7} {'wip':>3}  {'build':<7} {'test':<7} {'tokens':>9}  message")
    for r in rows:
        tok = r["tokens"]["input"] + r["tokens"]["output"]
        click.echo(f"{r['index']:>3}  {r['state']:<11} {len(r['commits']):>7} {r['wip']:>3}  "
                   f"{r['build'] or '-':<7} {r['test'] or '-':<7} {tok:>9}  {r['message']}")
    if runs:
        t = cost.total(runs)
        click.echo(f"Tokens: {t['input']} in, {t['output']} out, {t['calls']} model calls in {len(runs)} "
                   f"run{'s' if len(runs) != 1 else ''}; last run: {runs[-1]['tokens']['input']} in, "
                   f"{runs[-1]['tokens']['output']} out ({runs[-1].get('stop')})")
    k = spec.current()
    if k is not None and spec.commits[k].state == "stuck":
        last = spec.commits[k].history[-1]
        click.echo(f"\nStuck: {last.summary}")  # type: ignore[union-attr]
        click.echo(f"Resolve with: git retcon resolve -m \"...\" {stored.name}")


@cli.command("list")
def list_() -> None:
    """List the specs of this repository.

    \b
    Example:
      git retcon list
    """
    store = _store()
    names = store.names()
    if not names:
        click.echo("No specs. Create one with `git retcon plan`.")
        return
    for n in names:
        try:
            s = store.load(n).spec
            done = sum(1 for c in s.commits if c.state == "complete")
            click.echo(f"{n}\t{s.state}\t{done}/{len(s.commits)} complete\t{s.source} -> {s.cleaned}")
        except RetconError as exc:
            click.echo(f"{n}\tunreadable: {exc}")


@cli.command()
@click.argument("name", required=False)
@click.option("--allow-wip", is_flag=True, help="Do not fail on WIP: commits.")
@click.option("--rerun", is_flag=True, help="Build and test every logical commit again instead of "
              "trusting the recorded results.")
def check(name: str | None, allow_wip: bool, rerun: bool) -> None:
    """Verify the cleaned branch: complete, tested, equal to the source, no WIP.

    \b
    Exit code 0 when every check holds, 1 otherwise. Examples:
      git retcon check feature-clean
      git retcon check --rerun           # run build and tests again
    """
    from .check import verify

    store, stored = _load(name)
    verdict = verify(store, stored, allow_wip, rerun, progress=click.echo)
    click.echo(verdict.render())
    if not verdict.ok:
        raise SystemExit(1)


# -- hooks, push, pull ---------------------------------------------------------------


@cli.group("hooks")
def hooks_group() -> None:
    """Install the pre-push hook that runs `git retcon check` on cleaned branches."""


@hooks_group.command("install")
def hooks_install() -> None:
    """Install the pre-push hook (honours core.hooksPath; an existing hook keeps running).

    \b
    Example:
      git retcon hooks install && git push origin feature-clean
    """
    from . import hooks

    for line in hooks.install(open_repo()):
        click.echo(line)


@hooks_group.command("uninstall")
def hooks_uninstall() -> None:
    """Remove the pre-push hook and put back the one it replaced.

    \b
    Example:
      git retcon hooks uninstall
    """
    from . import hooks

    for line in hooks.uninstall(open_repo()):
        click.echo(line)


@cli.command()
@click.argument("remote", required=False)
@click.option("--no-verify", is_flag=True, help="Skip the pre-push hooks for this push.")
def push(remote: str | None, no_verify: bool) -> None:
    """Push the specs, notes and cleaned branches (as refs/retcon-branches/*) to REMOTE.

    \b
    Only fast-forwards: when REMOTE has newer state, pull first. Example:
      git retcon push origin
    """
    from . import share

    for line in share.push(open_repo(), remote, no_verify):
        click.echo(line)


@cli.command()
@click.argument("remote", required=False)
def pull(remote: str | None) -> None:
    """Fetch REMOTE's specs, notes and cleaned branches; fast-forward them here, merge notes.

    \b
    Example (a colleague resumes a stuck run):
      git retcon pull origin && git retcon status
    """
    from . import share

    for line in share.pull(open_repo(), remote):
        click.echo(line)


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
    from .worktree import Worktree

    store, stored = _load(name)
    spec = stored.spec
    ref = f"refs/heads/{spec.cleaned}"
    tip = ref_target(store.repo, ref)
    if tip is not None:
        from .worktree import ensure_not_checked_out

        ensure_not_checked_out(store.repo, spec.cleaned)
    with store.lock(stored.name):
        if tip is not None:
            cas_ref(store.repo, ref, None, tip, "retcon: abort")
            click.echo(f"Deleted branch {spec.cleaned} (was {short(tip)}).")
        if Worktree.remove(store.repo, stored.name):
            click.echo("Removed the build worktree.")
        if any(c.history for c in spec.commits):
            before = stored.commit
            for c in spec.commits:
                c.history.clear()
            store.update(stored, f"abort: history cleared (was {short(before)})")
            click.echo(f"Cleared the run's history (the old one is {short(before)} in git log refs/retcon/{stored.name}).")


@cli.command()
@click.argument("directory", metavar="[DIR]", required=False, type=click.Path(file_okay=False))
def demo(directory: str | None) -> None:
    """Build a small project with a messy branch in DIR and clean it up, offline.

    DIR must be new or empty (default: a new temporary directory); it is left
    for you to explore. Uses the built-in retcon-paths model: no API key.

    \b
    Example:
      git retcon demo /tmp/retcon-demo && cd /tmp/retcon-demo
    """
    from . import demo as demomod

    demomod.run(directory, UI())


def main(argv: list[str] | None = None) -> None:
    """Entry point: our errors become one line and an exit code, never a traceback."""
    try:
        rc = cli.main(args=argv, prog_name="git retcon", standalone_mode=False)
        if isinstance(rc, int) and rc:
            sys.exit(rc)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(1)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except StuckStop as exc:
        click.echo(str(exc), err=True)
        sys.exit(exc.exit_code)
    except RetconError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        click.echo("Interrupted: run the same command again to resume.", err=True)
        sys.exit(130)
    except SystemExit:
        raise
    except Exception as exc:  # noqa: BLE001 - the last line of defence against tracebacks
        if os.environ.get("RETCON_DEBUG"):
            raise
        click.echo(f"error: internal error: {type(exc).__name__}: {exc} "
                   "(set RETCON_DEBUG=1 for a traceback, and please report it)", err=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
