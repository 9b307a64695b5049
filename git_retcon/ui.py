"""Terminal output: plain lines, colour only on a terminal and never with NO_COLOR."""
from __future__ import annotations

import os
import sys

import click


class UI:
    def __init__(self, quiet: bool = False, verbose: bool = False):
        self.quiet = quiet
        self.verbose = verbose
        self.color = sys.stdout.isatty() and not os.environ.get("NO_COLOR")

    def _style(self, text: str, **kw: object) -> str:
        return click.style(text, **kw) if self.color else text  # type: ignore[arg-type]

    def line(self, text: str = "") -> None:
        if not self.quiet:
            click.echo(text)

    def detail(self, text: str) -> None:
        if self.verbose and not self.quiet:
            click.echo(self._style(text, dim=True))

    def start(self, text: str) -> None:
        """The first half of `Building... PASS`."""
        if not self.quiet:
            click.echo(text + "... ", nl=False)

    def finish(self, ok: bool, text: str) -> None:
        if not self.quiet:
            click.echo(self._style(text, fg="green" if ok else "red", bold=not ok))

    def good(self, text: str) -> None:
        if not self.quiet:
            click.echo(self._style(text, fg="green"))

    def bad(self, text: str) -> None:
        click.echo(self._style(text, fg="red", bold=True), err=self.quiet)

    def heading(self, text: str) -> None:
        if not self.quiet:
            click.echo()
            click.echo(self._style(text, bold=True))
