"""The command line: thin click commands over the modules that do the work.

One module per subcommand; importing them registers them on the group."""
from __future__ import annotations

import os
import signal
import sys
import tempfile
import threading
from typing import NoReturn

import click
import pygit2

from git_retcon.cli import (  # noqa: F401
    abort,
    absorb,
    check,
    demo,
    free,
    hooks,
    hunks,
    plan,
    resolve,
    run,
    share,
    spec,
    squash,
    stack,
    status,
    undo,
)
from git_retcon.cli.group import cli
from git_retcon.errors import RetconError, Stopped, with_advice
from git_retcon.git.plumbing import known_failure
from git_retcon.sandbox.admin import cache_dir
from git_retcon.space import full
from git_retcon.ui import echo

__all__ = ["cli", "main"]


class _Terminated(BaseException):
    """SIGTERM (kill PID): unwinds like Ctrl-C, so the running build or test is killed too."""


def _terminate(signum: int, frame: object) -> None:
    raise _Terminated


def main(argv: list[str] | None = None) -> None:
    """Entry point: our errors become one line and an exit code, never a traceback."""
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _terminate) if main_thread else None
    try:
        _main(argv)
    except _Terminated:
        echo("Terminated: run the same command again to resume.", err=True)
        sys.exit(128 + signal.SIGTERM)
    finally:
        if main_thread:
            signal.signal(signal.SIGTERM, previous)


def _main(argv: list[str] | None) -> None:
    try:
        rc = cli.main(args=argv, prog_name="git retcon", standalone_mode=False)
        if isinstance(rc, int) and rc:
            sys.exit(rc)
    except click.exceptions.Abort as exc:
        # click turns Ctrl-C into Abort; the work is resumable, so say how.
        if isinstance(exc.__cause__, KeyboardInterrupt):
            _interrupted()
        echo("Aborted.", err=True)
        sys.exit(1)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except Stopped as exc:
        echo(str(exc), err=True)
        sys.exit(exc.exit_code)
    except RetconError as exc:
        echo(f"error: {with_advice(str(_full_disk(exc) or exc))}", err=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        _interrupted()
    except SystemExit:
        raise
    except Exception as exc:  # noqa: BLE001 - the last line of defence against tracebacks
        # a full disk (whatever the exception says), a SHA-256 repository: no bug
        known = _full_disk(exc, unexplained=True) or known_failure(exc, os.getcwd())
        if known is not None:
            echo(f"error: {known}", err=True)
            sys.exit(known.exit_code)
        if os.environ.get("RETCON_DEBUG"):
            raise
        echo(f"error: internal error: {type(exc).__name__}: {exc} "
                   "(set RETCON_DEBUG=1 for a traceback, and please report it)", err=True)
        sys.exit(1)



def _full_disk(exc: BaseException, unexplained: bool = False) -> RetconError | None:
    """exc as a full disk's one line, asking the filesystems a run writes to: the repository, the
    cache (the build worktrees), the temp folder."""
    cwd = os.getcwd()
    try:
        git_dir = os.environ.get("GIT_DIR") or pygit2.discover_repository(cwd)
    except (pygit2.GitError, OSError):
        git_dir = None
    places = [p for p in (git_dir, str(cache_dir()), tempfile.gettempdir(), cwd) if p]
    return full(exc, places, unexplained)


def _interrupted() -> NoReturn:
    """Ctrl-C: every write is compare-and-swap, so the same command resumes."""
    echo("Interrupted: run the same command again to resume.", err=True)
    sys.exit(130)
