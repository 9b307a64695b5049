"""What the parts of the loop share: the run's options and what it has spent, and
`Work`, the one context every step of one logical commit takes (instead of threading
spec, branches and worktree through each call). Nothing here writes: the journal does.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import llm
import pygit2

from git_retcon.diff import Hunk, RemainingDiff
from git_retcon.git.ids import CommitId
from git_retcon.git.plumbing import ref_target
from git_retcon.model.logs import ExchangeLog
from git_retcon.model.protocol import ToolsMode
from git_retcon.model.step import DEFAULT_CHAIN_LIMIT
from git_retcon.model.window import Window
from git_retcon.reconstruct.branch import Branches
from git_retcon.reconstruct.left import Left
from git_retcon.sandbox.runner import Commands
from git_retcon.sandbox.worktree import Worktree
from git_retcon.state import spec as specmod
from git_retcon.state.notes import Usage
from git_retcon.state.spec import OwnersMode
from git_retcon.state.store import Store, Stored
from git_retcon.ui import UI

DEFAULT_MAX_FIX = 5


@dataclass
class Options:
    model: str | None = None
    dry_run: bool = False
    max_fix: int = DEFAULT_MAX_FIX
    chain_limit: int = DEFAULT_CHAIN_LIMIT
    max_tokens: int | None = None      # stop the run (resumable) once it has used this many
    squash_wip: bool = False           # fold WIP commits into their logical commit at the end
    fixup: bool = False                # fix commits as `fixup! <subject>` this run (as the spec's wip = "fixup")
    log: bool = True                   # model exchanges to llm's database, when llm logging is on
    jobs: int = 1                      # 2+: build & test commit k in the pool while the model works ahead
    tools: ToolsMode | None = None     # --tools: llm's tool calling or the text protocol (default: the model's)
    context: int | None = None         # --context: the model's context window in tokens (default: model/window.py)
    sandbox: str | None = None         # --sandbox auto|require|off (default: the spec's, git config, auto)
    retest: bool = False               # --retest: build and test again, not trusting recorded results


@dataclass
class Spending:
    """The tokens this run spent, in all and per logical commit."""

    input_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0
    cached_tokens: int = 0             # of input_tokens, served from the backend's prompt cache
    per_commit: dict[int, Usage] = field(default_factory=dict)   # 1-based index -> usage; 0: placing hunks

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def add(self, index: int, spent: Usage) -> None:
        self.input_tokens += spent["input"]
        self.output_tokens += spent["output"]
        self.calls += spent["calls"]
        self.cached_tokens += spent.get("cached", 0)
        mine = self.per_commit.setdefault(index, {"input": 0, "output": 0, "calls": 0})
        mine["input"] += spent["input"]
        mine["output"] += spent["output"]
        mine["calls"] += spent["calls"]
        if spent.get("cached"):
            mine["cached"] = mine.get("cached", 0) + spent["cached"]


@dataclass
class Run:
    """One `git retcon run`: where it works, how, and what it has spent."""

    repo: pygit2.Repository
    store: Store
    name: str
    opts: Options
    ui: UI
    spending: Spending = field(default_factory=Spending)
    remaining: RemainingDiff | None = None   # the remaining diff, kept up to date across steps
    branch_diff: tuple[str, str, list[Hunk]] | None = None   # merge base, source tip and the hunks between
    # Planned trees by what makes them (reconstruct/lines.py): each commit's step and every repair
    # try asks for the same few again.
    planned: dict[tuple[object, ...], str] = field(default_factory=dict)
    left: Left | None = None   # what each logical commit has left, moved with the remaining diff
    exchanges: ExchangeLog | None = None   # for `llm logs`; made from opts.log on first use
    window: tuple[str, Window] | None = None   # the model's context window (model id, window), once per run
    owners: OwnersMode = "conversation"   # how hunks got their commit: "questions" commits planned hunks as they are

    def exchange_log(self) -> ExchangeLog:
        if self.exchanges is None:
            self.exchanges = ExchangeLog(self.opts.log, say=self.ui.line)
        return self.exchanges


@dataclass
class Work:
    """Logical commit k being reconstructed, with everything its steps need. k is the index in
    the spec's commits (0-based); `number` is the same commit as people count it (1-based), in
    every message, prompt and note: the one convention for commit numbers."""

    run: Run
    stored: Stored
    br: Branches
    wt: Worktree
    commands: Commands
    model: llm.Model
    k: int

    @property
    def spec(self) -> specmod.Spec:
        return self.stored.spec

    @property
    def commit(self) -> specmod.LogicalCommit:
        return self.stored.spec.commits[self.k]

    @property
    def number(self) -> int:
        return specmod.number(self.k)

    @property
    def n(self) -> int:
        return len(self.stored.spec.commits)

    @property
    def is_last(self) -> bool:
        return self.k == self.n - 1

    def tip(self) -> CommitId:
        """The cleaned branch's tip (the base before the first commit)."""
        return ref_target(self.run.repo, self.br.cleaned_ref) or self.br.base
