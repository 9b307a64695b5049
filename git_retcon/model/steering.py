"""A step's error budget, and what to tell a model whose calls or turns went wrong:
advice for the kind of mistake it keeps making, not a generic "try again"."""
from __future__ import annotations

import difflib
import json
import re
from collections import Counter
from collections.abc import Sequence
from typing import Protocol

import llm

from git_retcon.model.args import ErrorKind, ToolError, shallow
from git_retcon.sandbox.worktree import PathRefused

MAX_TOOL_ERRORS = 12         # failed calls in one step before it counts as stuck
STEER_STREAK = 2             # failed calls in a row before an error carries steering

ADVICE: dict[ErrorKind, str] = {
    "type": "Check each argument against the tool's parameters: paths, messages and contents are strings, "
            "hunk_ids is an array of strings (ids, id:LINES selections, paths), page is a number.",
    "id": "Take hunk ids only from the latest read_diff answer or the prompt's index, as they are shown "
          "there, or name a path whose remaining hunks all belong here; a hunk you applied is gone from "
          "the remaining diff.",
    "path": "Name files by their path relative to the repository root, as read_diff shows them "
            "(e.g. 'docs/guide.md'): no leading '/' or '..'.",
    "tool": "Call only the tools you were given (the error above lists them), by their exact names, "
            "with a JSON object of their arguments.",
    "turn": "End every turn with a tool call: read_diff and apply_hunks take this commit's changes, "
            "create_commit(message) or stuck(summary) ends the step.",
    "empty": "Change the worktree before create_commit: apply_hunks takes this commit's hunks (read_diff "
             "lists them), edit_file and write_file write what the source does not have.",
    "edit": "For edit_file, copy `old` exactly from read_file's answer, with enough lines around the change "
            "that it occurs once.",
    "state": "This step has ended: reply with a one-line summary.",
    "guard": "Put back the hunks that belong to other commits (apply_hunks([\"-<id>\", ...])), or confirm "
             "with create_commit(confirm=\"why they belong here\").",
    "other": "Read the error above and change the call as it says.",
}


class Step(Protocol):
    """What the budget needs of a step: whether it has ended, and a way to end it stuck."""

    def ended(self) -> bool: ...

    def give_up(self, summary: str) -> None: ...


class Steering:
    """One step's failed tool calls and turns: counted against the step's budget (past it the
    step ends stuck), and answered with advice once they come in a streak. before_call and
    after_call are llm's tool callbacks."""

    def __init__(self, step: Step, tool_names: Sequence[str]) -> None:
        self.step = step
        self.tool_names = tool_names
        self.errors: list[str] = []
        self.kinds: list[ErrorKind] = []   # what went wrong, for the advice
        self.streak = 0                    # failed calls in a row
        self.failed_calls: Counter[str] = Counter()   # each failed call (name and arguments), how often
        self.said: list[str] = []          # every answer and steering message of the step (stuck's echo check)

    def reset(self) -> None:
        self.errors.clear()
        self.kinds.clear()
        self.streak = 0
        self.failed_calls.clear()
        self.said.clear()

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
            self.said.append(result.output)
            return
        exc = result.exception
        kind: ErrorKind = exc.kind if isinstance(exc, ToolError) else "path" if isinstance(exc, PathRefused) \
            else "type" if isinstance(exc, TypeError) else "other"
        self._failed(result.name, result.output, kind)
        # What the model reads back: the error, and after a streak, how to get out of it.
        result.output += self._repeated(call) + self._steering()
        self.said.append(result.output)     # all of it: a stuck summary may echo the advice too

    def before_call(self, tool: object, call: object) -> None:
        if self.step.ended():
            raise llm.CancelToolCall("this step has already ended")
        if tool is None:
            name = getattr(call, "name", "?")
            meant = tool_meant(str(name), self.tool_names)
            text = (f'there is no tool "{name}"' + (f": did you mean {meant}? Call it by that exact name" if meant
                                                    else "") + f"; the tools are {', '.join(self.tool_names)}")
            self._failed(name, text, "tool")
            self.said.append(text)
            raise llm.CancelToolCall(text + self._repeated(call) + self._steering())

    def turn_failed(self, what: str, text: str, kind: ErrorKind = "other") -> None:
        """A turn that ended without a tool call counts against the error budget."""
        self._failed(what, text, kind)

    def _failed(self, name: str, text: str, kind: ErrorKind) -> None:
        self.errors.append(f"{name}: {text}")
        self.kinds.append(kind)
        self.streak += 1
        if len(self.errors) >= MAX_TOOL_ERRORS:
            self.step.give_up(f"the model's tool calls kept failing ({len(self.errors)} errors); "
                              f"last: {self.errors[-1][:300]}")

    def _repeated(self, call: object) -> str:
        """Said when a failed call is one that failed before in this step: a model that sends the
        same call again believes the answer will change, and must be told it will not."""
        key = json.dumps([getattr(call, "name", None), shallow(getattr(call, "arguments", None), 6)],
                         sort_keys=True, default=str)
        self.failed_calls[key] += 1
        n = self.failed_calls[key]
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


def tool_meant(name: str, names: Sequence[str]) -> str | None:
    """The tool a name slightly off means: a namespace (`functions.apply_hunks`), another case
    or separator (`ApplyHunks`, `read-diff`), a plural dropped (`apply_hunk`), a typo."""
    plain = re.sub(r"^(functions|tools|tool|default_api)[.:/]+", "", name.strip())
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", plain).lower().replace("-", "_").replace(" ", "_")
    if snake in names:
        return snake
    for real in names:
        if snake.rstrip("s") == real.rstrip("s"):
            return real
    close = difflib.get_close_matches(snake, list(names), n=1, cutoff=0.75)
    return close[0] if close else None


def advice(kinds: list[ErrorKind]) -> str:
    """The advice for the most frequent recent kind of failure (the latest wins a tie)."""
    if not kinds:
        return ""
    counts = Counter(kinds[-4:])
    top = max(reversed(kinds[-4:]), key=lambda k: counts[k])
    return ADVICE[top]


def not_executed(names: list[str]) -> str:
    """The answer to tool calls written as text."""
    shown = ", ".join(names)
    return (f"Not executed: your reply wrote a call to {shown} as text. Text is never run and nothing "
            f"changed: call the tool {names[0]} itself, through tool calling.")
