"""`git retcon status` and `git retcon list`."""
from __future__ import annotations

import json

import click

from git_retcon.cli.group import cli, load_named, open_store
from git_retcon.errors import RetconError
from git_retcon.ui import echo


@cli.command()
@click.argument("name", required=False)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def status(name: str | None, as_json: bool) -> None:
    """Each logical commit: state, commits made, WIPs, build/test result, seconds, tokens.

    \b
    Examples:
      git retcon status
      git retcon status --json feature-clean | jq '.commits[].state'
    """
    from git_retcon import status as view

    store, stored = load_named(name)
    doc = view.document(store, stored)
    if as_json:
        echo(json.dumps(doc, indent=2))
        return
    k = stored.spec.current()
    stuck = stored.spec.commits[k].stuck() if k is not None else None
    for line in view.render(doc, stuck.summary if stuck is not None else None):
        echo(line)


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
        echo("No specs. Create one with `git retcon plan`.")
        return
    from git_retcon.git.ownership import name_problem

    for n in names:
        if problem := name_problem(n):   # saved by an older version; it breaks `git gc`
            echo(f"{n}\tinvalid name: {problem}: keep it with `git retcon spec export {n} -o FILE` "
                       f"(then change `cleaned` and `git retcon spec import FILE`), and remove it with "
                       f"`git retcon spec rm {n}`")
            continue
        try:
            s = store.load(n).spec
            done = sum(1 for c in s.commits if c.state == "complete")
            echo(f"{n}\t{s.state}\t{done}/{len(s.commits)} complete\t{s.source} -> {s.cleaned}")
        except RetconError as exc:
            echo(f"{n}\tunreadable: {exc}")
