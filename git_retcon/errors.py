"""The errors a user sees as one line: what went wrong and what to do."""
from __future__ import annotations


class RetconError(Exception):
    """A user-facing error: printed as one line, exit code 1, nothing changed."""

    exit_code = 1


class StuckStop(RetconError):
    """The run stopped because a logical commit is stuck (exit code 3)."""

    exit_code = 3


class BudgetStop(StuckStop):
    """The run stopped at --max-tokens (exit code 3); nothing is stuck: run again to go on."""
