"""`git retcon status` and `git retcon list`."""
from __future__ import annotations

import json

import click

from git_retcon.cli.group import cli, load_named, open_store
from git_retcon.errors import RetconError


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
    from git_retcon.check import branch_state, commit_rows
    from git_retcon.state import cost

    store, stored = load_named(name)
    spec = stored.spec
    rows = commit_rows(store, stored)
    spent, runs = cost.ledger(store, stored)
    cost.add_to_rows(rows, spent)
    branch = branch_state(store, stored)
    if as_json:
        doc = {"name": stored.name, "source": spec.source, "remote": spec.remote,
               "cleaned": spec.cleaned, "state": spec.state, "branch": branch, "commits": rows,
               "runs": [{"model": r.get("model"), "stop": r.get("stop"), "tokens": r.get("tokens")} for r in runs]}
        click.echo(json.dumps(doc, indent=2))
        return
    # The spec's history alone would say "complete" for a branch deleted by hand.
    state = {"missing": "branch missing", "moved": "branch moved",
             "foreign": "branch not git-retcon's"}.get(branch, spec.state)
    click.echo(f"{stored.name}: {state} ({spec.source} onto {spec.remote} -> {spec.cleaned})")
    click.echo(f"{'#':>3}  {'state':<11} {'commits':>7} {'wip':>3}  {'build':<7} {'test':<7} {'tokens':>9}  message")
    for r in rows:
        tok = r["tokens"]["input"] + r["tokens"]["output"]
        click.echo(f"{r['index']:>3}  {r['state']:<11} {len(r['commits']):>7} {r['wip']:>3}  "
                   f"{r['build'] or '-':<7} {r['test'] or '-':<7} {tok:>9}  {r['message']}")
    for r in rows:
        if r["invented"]["count"]:   # lines a model wrote that neither the base nor the source has
            click.echo(f"Commit {r['index']}: {r['invented']['count']} invented lines (in neither the base nor "
                       f"the source): " + "; ".join(r["invented"]["lines"][:3]))
    if runs:
        t = cost.total(runs)
        click.echo(f"Tokens: {t['input']} in, {t['output']} out, {t['calls']} model calls in {len(runs)} "
                   f"run{'s' if len(runs) != 1 else ''}; last run: {runs[-1]['tokens']['input']} in, "
                   f"{runs[-1]['tokens']['output']} out ({runs[-1].get('stop')})")
    if branch == "missing":
        click.echo(f"\nBranch '{spec.cleaned}' is gone, but the spec records commits on it: restore it "
                   f"(git branch {spec.cleaned} {rows_last(rows)}), or start over with "
                   f"`git retcon abort {stored.name}`")
    elif branch == "foreign":
        click.echo(f"\nA branch '{spec.cleaned}' exists that git-retcon did not make: run refuses to touch it; "
                   "rename or delete it, or give the spec another `cleaned` name")
    elif branch == "moved":
        click.echo(f"\nBranch '{spec.cleaned}' no longer holds the recorded commits: "
                   f"`git retcon check {stored.name}` says how to repair it")
    k = spec.current()
    if k is not None and (stuck := spec.commits[k].stuck()) is not None:
        click.echo(f"\nStuck: {stuck.summary}")
        click.echo(f"Resolve with: git retcon resolve -m \"...\" {stored.name}")


def rows_last(rows: list[dict[str, object]]) -> str:
    """The last recorded commit, abbreviated as a user types it."""
    shas = [s for r in rows for s in r["commits"]]  # type: ignore[attr-defined]
    return str(shas[-1])[:12] if shas else ""


@cli.command("list")
def list_() -> None:
    """List the specs of this repository.

    \b
    Example:
      git retcon list
    """
    store = open_store()
    names = store.names()
    if not names:
        click.echo("No specs. Create one with `git retcon plan`.")
        return
    from git_retcon.git.ownership import name_problem

    for n in names:
        if problem := name_problem(n):   # saved by an older version; it breaks `git gc`
            click.echo(f"{n}\tinvalid name: {problem}: keep it with `git retcon spec export {n} -o FILE` "
                       f"(then change `cleaned` and `git retcon spec import FILE`), and remove it with "
                       f"`git retcon spec rm {n}`")
            continue
        try:
            s = store.load(n).spec
            done = sum(1 for c in s.commits if c.state == "complete")
            click.echo(f"{n}\t{s.state}\t{done}/{len(s.commits)} complete\t{s.source} -> {s.cleaned}")
        except RetconError as exc:
            click.echo(f"{n}\tunreadable: {exc}")
