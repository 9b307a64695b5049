"""`git retcon hooks install|uninstall`."""
from __future__ import annotations

import click

from git_retcon.cli.group import cli
from git_retcon.git.plumbing import open_repo
from git_retcon.ui import echo


@cli.group("hooks")
def hooks_group() -> None:
    """Install the pre-push hook that runs `git retcon check` on cleaned branches."""


@hooks_group.command("install")
@click.option("--force", is_flag=True, help="Install even where core.hooksPath points into the work tree (husky).")
def hooks_install(force: bool) -> None:
    """Install the pre-push hook (honours core.hooksPath; an existing hook keeps running).

    Where core.hooksPath points into the work tree (husky), nothing is installed without
    --force: it says the line to add to the project's own hook instead.

    \b
    Example:
      git retcon hooks install && git push origin feature-clean
    """
    from git_retcon import hooks

    for line in hooks.install(open_repo(), force):
        echo(line)


@hooks_group.command("uninstall")
def hooks_uninstall() -> None:
    """Remove the pre-push hook and put back the one it replaced.

    \b
    Example:
      git retcon hooks uninstall
    """
    from git_retcon import hooks

    for line in hooks.uninstall(open_repo()):
        echo(line)
