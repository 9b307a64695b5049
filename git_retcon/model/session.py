"""The state one step's tools share: its context (a value, fixed for the step), its selection
(a value, replaced as the step takes and puts back), its progress ledger and error budget, and
how it ended. The outcome is set in one place (`end`): by the tool result that ends the step
(model/tools.py), or by the conversation when the model spends its budget (model/step.py).
"""
from __future__ import annotations

import os

from git_retcon import diff
from git_retcon.git.ids import tree_of
from git_retcon.git.plumbing import get_commit, get_tree
from git_retcon.model import answers, meaning
from git_retcon.model.args import ToolError
from git_retcon.model.context import TOOL_NAMES, StepContext
from git_retcon.model.ledger import Ledger
from git_retcon.model.outcome import GaveUp, StepOutcome
from git_retcon.model.selection import EMPTY, Selection
from git_retcon.model.steering import Steering


class Session:
    """One step's shared state. start: the remaining diff as the step began (the guards compare
    with it), start_names: its ids as shown then; opening: what applying the prepared items
    answered, opening_failed: whether that apply was refused (the worktree is the parent then)."""

    def __init__(self, ctx: StepContext) -> None:
        self.ctx = ctx
        self.sel: Selection = EMPTY
        self.ledger = Ledger()
        self.steering = Steering(self, TOOL_NAMES, self.ledger)
        self.start: list[diff.Hunk] = []
        self.start_names: dict[str, str] = {}
        self.opening = ""
        self.opening_failed = False
        self._outcome: StepOutcome | None = None
        self._diff = ctx.remaining_diff
        self._branch_paths: set[str] | None = None

    # -- how the step ends ---------------------------------------------------

    @property
    def outcome(self) -> StepOutcome | None:
        return self._outcome

    def end(self, outcome: StepOutcome) -> None:
        """The step ends with outcome, unless it has ended already (the first ending stands)."""
        if self._outcome is None:
            self._outcome = outcome

    def ended(self) -> bool:
        return self._outcome is not None

    def began(self, start: list[diff.Hunk]) -> None:
        """The step starts on this remaining diff: nothing applied yet."""
        self.start = start
        self.start_names = dict(diff.names_of(start))
        self.opening, self.opening_failed = "", False

    def opened(self, answer: str, failed: bool = False) -> None:
        """What applying the prepared items answered (failed: it was refused)."""
        self.opening, self.opening_failed = answer, failed

    def give_up(self, summary: str) -> None:
        """The error budget ran out: the step ends stuck (unless it has already ended)."""
        self.end(GaveUp(summary))

    def open(self) -> None:
        """Refuses a tool that changes the worktree after the step has ended."""
        if self._outcome is not None:
            raise ToolError(answers.STEP_ENDED, "state")

    def reset(self) -> None:
        """Back to the start of the step (a model error cut it short): the worktree at the parent,
        the selection empty, the ledger and budget new, no outcome. model/take.restart applies the
        prepared items again."""
        self.ctx.wt.reset(self.ctx.parent)
        self._outcome = None
        self.sel = EMPTY
        self.ledger.clear()
        self.steering.reset()

    # -- what the step sees ----------------------------------------------------

    def remaining(self) -> list[diff.Hunk]:
        """The remaining diff, worktree vs source tip, as it is now."""
        if self._diff is None:
            self._diff = diff.RemainingDiff(self.ctx.wt.repo, self.ctx.source_tree)
        return self._diff.at(self.ctx.wt.tree())

    @property
    def remaining_diff(self) -> diff.RemainingDiff | None:
        return self._diff

    def branch_paths(self) -> set[str]:
        """The paths the source branch changes (merge base to source tip), read once."""
        if self._branch_paths is None:
            self._branch_paths = set()
            if self.ctx.base_tree is not None:
                repo = self.ctx.wt.repo
                changes = get_tree(repo, self.ctx.base_tree).diff_to_tree(get_tree(repo, self.ctx.source_tree))
                self._branch_paths = {p for d in changes.deltas for p in (d.old_file.path, d.new_file.path)}
        return self._branch_paths

    def changed(self) -> bool:
        """Whether the worktree holds anything the previous commit does not."""
        return self.ctx.wt.tree() != tree_of(get_commit(self.ctx.wt.repo, self.ctx.parent))

    def prepared_ids(self) -> frozenset[str]:
        """The whole ids of the hunks plain code applied at the step's start."""
        wanted = {p.lower() for p in self.ctx.prepared}
        ids = {h.id for h in self.start}
        # Ids are of one length: a whole one names only itself; only a prefix is looked for.
        prefixes = tuple(wanted - ids)
        return frozenset((wanted & ids) | ({i for i in ids if i.startswith(prefixes)} if prefixes else set()))

    def path(self, raw: str) -> str:
        """A model's path as the worktree names it (model/meaning.path); an absolute path is
        refused with the relative name it means, so the model learns the form."""
        wt = self.ctx.wt
        meant = meaning.path(
            raw, str(wt.path), str(wt.path.resolve()),
            lambda p: os.path.lexists(wt.path / p) or bool(diff.lookup(self.remaining()).covered(p)),
            lambda: {h.path for h in self.remaining()}, lambda p: (wt.path / p).exists())
        if not meant.found:
            raise ToolError(meant.note, "path")
        return meant.value
