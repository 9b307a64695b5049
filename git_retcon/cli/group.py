"""The click group, and which spec a command without NAME means."""
from __future__ import annotations

import click

from git_retcon.errors import RetconError
from git_retcon.git.plumbing import open_repo
from git_retcon.state.store import Store, Stored


def open_store() -> Store:
    return Store(open_repo())


def spec_name(store: Store, name: str | None) -> str:
    """NAME, else the only spec, else the spec whose source (or cleaned branch) is the
    current branch, else a usage error listing the specs it could be."""
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
    from git_retcon.plan.branches import current_branch

    branch = current_branch(store.repo)
    if branch in names:
        return branch
    matching = [n for n in names if store.load(n).spec.source == branch] if branch else []
    if len(matching) == 1:
        return matching[0]
    if matching:
        raise click.UsageError(f"several specs clean up '{branch}': name one of {', '.join(matching)}")
    where = f"none has '{branch}' as its source" if branch else "HEAD is detached"
    raise click.UsageError(f"several specs exist and {where}: name one of {', '.join(names)}")


def load_named(name: str | None) -> tuple[Store, Stored]:
    """The repository's store and the spec NAME designates (see spec_name)."""
    store = open_store()
    return store, store.load(spec_name(store, name))


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
