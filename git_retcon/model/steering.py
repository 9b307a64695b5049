"""A step's error budget, and what to tell a model whose calls or turns went wrong:
advice for the kind of mistake it keeps making, not a generic "try again"."""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Protocol

import llm

from git_retcon.model import meaning
from git_retcon.model.answers import ADVICE
from git_retcon.model.args import ErrorKind, ToolError
from git_retcon.model.ledger import Ledger
from git_retcon.sandbox.worktree import PathRefused
from git_retcon.ui import clip

MAX_TOOL_ERRORS = 12         # failed calls in one step before it counts as stuck
STEER_STREAK = 2             # failed calls in a row before an error carries steering


class Step(Protocol):
    """What the budget needs of a step: whether it has ended, and a way to end it stuck."""

    def ended(self) -> bool: ...

    def give_up(self, summary: str) -> None: ...


class Steering:
    """One step's failed tool calls and turns: counted against the step's budget (past it the
    step ends stuck), and answered with advice once they come in a streak. before_call and
    after_call are llm's tool callbacks."""

    def __init__(self, step: Step, tool_names: Sequence[str], ledger: Ledger) -> None:
        self.step = step
        self.tool_names = tool_names
        self.ledger = ledger               # the step's progress: what was said, which calls failed before
        self.errors: list[str] = []
        self.kinds: list[ErrorKind] = []   # what went wrong, for the advice
        self.streak = 0                    # failed calls in a row

    def reset(self) -> None:
        """The budget new (the ledger is the session's to clear)."""
        self.errors.clear()
        self.kinds.clear()
        self.streak = 0

    def diagnosis(self) -> str:
        """What went wrong with the tool calls of this step, for a steering message."""
        if not self.errors:
            return ""
        last = "\n".join(f"- {e[:300]}" for e in self.errors[-3:])
        return (f"{len(self.errors)} of your tool calls and turns in this step failed "
                f"(at most {MAX_TOOL_ERRORS} may); the last ones:\n{last}\n{advice(self.kinds)}")

    def budget_left(self) -> int:
        return MAX_TOOL_ERRORS - len(self.errors)

    def after_call(self, tool: object, call: object, result: llm.ToolResult) -> None:
        if result.exception is None:
            self.streak = 0
            self.ledger.said.append(result.output)
            return
        exc = result.exception
        kind: ErrorKind = exc.kind if isinstance(exc, ToolError) else "path" if isinstance(exc, PathRefused) \
            else "type" if isinstance(exc, TypeError) else "other"
        self._failed(result.name, result.output, kind)
        # What the model reads back: the error, and after a streak, how to get out of it.
        result.output += self._repeated(call) + self._steering()
        self.ledger.said.append(result.output)     # all of it: a stuck summary may echo the advice too

    def before_call(self, tool: object, call: object) -> None:
        if self.step.ended():
            raise llm.CancelToolCall("this step has already ended")
        if tool is None:
            name = getattr(call, "name", "?")
            meant = meaning.tool(str(name), self.tool_names)
            text = (f'there is no tool "{name}"' + (f": did you mean {meant.value}? Call it by that exact name"
                                                    if meant.found else "")
                    + f"; the tools are {', '.join(self.tool_names)}")
            self._failed(name, text, "tool")
            self.ledger.said.append(text)
            raise llm.CancelToolCall(text + self._repeated(call) + self._steering())

    def turn_failed(self, what: str, text: str, kind: ErrorKind = "other",
                    summary: Callable[[int], str] | None = None) -> None:
        """A turn that ended without a tool call counts against the error budget; summary(failures)
        is the stuck's summary when it spends the budget (else: the calls kept failing)."""
        self._failed(what, text, kind, summary)

    def _failed(self, name: str, text: str, kind: ErrorKind, summary: Callable[[int], str] | None = None) -> None:
        self.errors.append(f"{name}: {text}")
        self.kinds.append(kind)
        self.streak += 1
        if len(self.errors) >= MAX_TOOL_ERRORS:
            self.step.give_up(summary(len(self.errors)) if summary is not None else
                              f"the model's tool calls kept failing ({len(self.errors)} errors); "
                              f"last: {clip(self.errors[-1], 300)}")

    def _repeated(self, call: object) -> str:
        """Said when a failed call is one that failed before in this step: a model that sends the
        same call again believes the answer will change, and must be told it will not."""
        n = self.ledger.failed(getattr(call, "name", None), getattr(call, "arguments", None))
        if n < 2:
            return ""
        return (f"\nThis is the same call, with the same arguments, as one that already failed in this step "
                f"({n} times now): it fails the same way each time. Change it as the error says, or call "
                "another tool.")

    def _steering(self) -> str:
        if self.step.ended():
            return "\nThis step has ended as stuck: too many failed tool calls."
        if self.streak < STEER_STREAK:
            return ""
        return (f"\nSteering: {self.streak} calls in a row failed; {self.budget_left()} more "
                f"failures end this step as stuck. {advice(self.kinds[-self.streak:])}")


def advice(kinds: list[ErrorKind]) -> str:
    """The advice for the most frequent recent kind of failure (the latest wins a tie)."""
    if not kinds:
        return ""
    counts = Counter(kinds[-4:])
    top = max(reversed(kinds[-4:]), key=lambda k: counts[k])
    return ADVICE[top]
