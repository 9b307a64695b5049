"""What to tell a model whose calls or turns went wrong: advice for the kind of
mistake it keeps making, not a generic "try again"."""
from __future__ import annotations

from collections import Counter

from git_retcon.model.args import ErrorKind

ADVICE: dict[ErrorKind, str] = {
    "type": "Check each argument against the tool's parameters: paths, messages and contents are strings, "
            "hunk_ids is an array of id strings (or id:LINES selections), page is a number.",
    "id": "Take hunk ids only from the latest read_diff answer or the prompt's index (10 hex digits); "
          "a hunk you applied is gone from the remaining diff.",
    "path": "Name files by their path relative to the repository root, as read_diff shows them "
            "(e.g. 'src/app.py'): no leading '/' or '..'.",
    "tool": "Call only the tools you were given (the error above lists them), through tool calling: "
            "a call written in your text is never run.",
    "turn": "End every turn with a tool call: read_diff and apply_hunks take this commit's changes, "
            "create_commit(message) or stuck(summary) ends the step.",
    "empty": "Change the worktree (apply_hunks, write_file) before create_commit, or call stuck(summary) "
             "if this commit cannot have changes.",
    "edit": "For edit_file, copy `old` exactly from read_file's answer, with enough lines around the change "
            "that it occurs once.",
    "state": "This step has ended: reply with a one-line summary.",
    "other": "Read the error above and change the call; call stuck(summary) if you cannot go on.",
}



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
