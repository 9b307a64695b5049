"""What one model step returns. A step writes nothing durable: the loop's journal
(reconstruct/journal.py) turns a Proposed into a commit, a Stuck into the spec's entry.
The step's kinds of stuck (its model gave up, its backend is unavailable) are outcomes only:
the spec persists one kind of entry, in state/spec.py.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from git_retcon.git.ids import TreeId
from git_retcon.state import notes

# An extraction takes a logical commit's changes; a fix makes its build and tests pass.
StepKind = Literal["extract", "fix"]


@dataclass(frozen=True)
class Proposed:
    """create_commit's result: the worktree's tree, the commit message (a fix's carries its
    `WIP: ` or `fixup! ` prefix already), and the lines that neither the base nor the source
    holds (for the note), and the guards' findings the model confirmed with a reason."""

    tree: TreeId
    message: str
    invented: notes.Invented
    confirmed: list[str] = field(default_factory=list)   # what the guards named, and the model's reason
    instead: str = ""     # why plain code made this commit in the model's place, when it did


@dataclass(frozen=True)
class Stuck:
    """The step stops for a human: what they must decide or fix. The journal records it as the
    spec's `{ stuck = ... }` entry (state/spec.Stuck), which a step's outcome is not."""

    summary: str


@dataclass(frozen=True)
class GaveUp(Stuck):
    """The step ended with no judgement of the model's own: its calls kept failing, it echoed
    git-retcon's answers back, or it spent its responses. Where the spec decides the commit's
    changes, plain code commits them instead (reconstruct/steps.py); elsewhere it is a stuck."""


@dataclass(frozen=True)
class Unavailable(Stuck):
    """The model's backend gave up (its retries spent): stuck, with nothing of the step recorded;
    the way out is to try again, not to fix anything."""


@dataclass(frozen=True)
class OverBudget:
    """--max-tokens was reached during the step: nothing is stuck, the next run goes on."""


StepOutcome = Proposed | Stuck | OverBudget


@dataclass(frozen=True)
class Ended:
    """A tool's result that ends the step: the outcome, and the answer the model reads. (A tool's
    other results are an answer, a string, or a refusal of a known kind, a ToolError.)"""

    outcome: StepOutcome
    answer: str

__all__ = ["Ended", "GaveUp", "OverBudget", "Proposed", "StepKind", "StepOutcome", "Stuck", "Unavailable"]
