"""What one step works with, as a value: the worktree it writes, the trees it compares, the
commands it may run, and what the spec (or a fix's rework brief) decides for it. The loop
(reconstruct/steps.py) makes it once per step; the tools read it and never change it.
"""
from __future__ import annotations

from dataclasses import dataclass

from git_retcon import diff
from git_retcon.git.ids import CommitId, TreeId
from git_retcon.model import guards
from git_retcon.model.outcome import StepKind
from git_retcon.sandbox.runner import Commands
from git_retcon.sandbox.worktree import Worktree

READ_BUDGET = 24000          # characters per read_diff page / read_file answer, at most
# The tools, named as the man page and the prompts name them (model/tools.Tools has one method each).
TOOL_NAMES = ("read_diff", "apply_hunks", "read_file", "write_file", "edit_file", "delete_file",
              "run_build", "run_tests", "create_commit", "stuck")


@dataclass(frozen=True)
class StepContext:
    """One step's fixed facts. parent: the commit the step's work goes on; step: an extraction,
    or a fix (its commit `WIP: ...`, or `fixup! ...` with fixup_of); default_message: what an
    empty create_commit message means (a fix: the failure's summary); base_tree: the merge base's
    tree (for the invented-lines count); remaining_diff: the run's remaining diff, kept up to date
    path by path across steps; rules: an extraction's spec (what it and later commits are given);
    prepared: the items plain code applies at the step's start (again on a restart)."""

    wt: Worktree
    source_tree: TreeId
    parent: CommitId
    commands: Commands
    step: StepKind
    default_message: str = ""
    base_tree: TreeId | None = None
    fixup_of: str | None = None
    remaining_diff: diff.RemainingDiff | None = None
    read_budget: int = READ_BUDGET
    rules: guards.SpecRules | None = None
    prepared: tuple[str, ...] = ()
