"""The words of git-retcon's answers to a model, in one table: what the tools say when a step
ends, the placeholder a confirmation must not copy back, and the advice for each kind of
mistake (model/steering.py picks one). Decisions never read these words back: a tool that
needs to know what happened keeps a fact (model/ledger.py, the session), not our text.
"""
from __future__ import annotations

from git_retcon.model.args import ErrorKind

ACCEPTED = "Accepted: git-retcon commits the worktree with this message. This step is done."
REASON_KEPT = " Your reason is kept in the commit's note."
RECORDED = "Recorded. This step is done."
STEP_ENDED = "this step has already ended; reply with a one-line summary"
# What create_commit's refusal tells a model to put in `confirm`: copied back, it is no reason.
CONFIRM_PLACEHOLDER = "why they belong here"

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
