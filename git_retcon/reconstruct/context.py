"""What the parts of the loop share: the run's options and counters, the branches
resolved once per run, and `Work`, the one context every step of one logical
commit takes (instead of threading spec, branches and index through each call).
"""
from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import NoReturn

import llm
import pygit2

from git_retcon.diff import RemainingDiff
from git_retcon.errors import BudgetStop, StuckStop
from git_retcon.git.plumbing import fork_point, ref_target
from git_retcon.model.logs import ExchangeLog
from git_retcon.model.step import DEFAULT_CHAIN_LIMIT
from git_retcon.sandbox.runner import Verifier
from git_retcon.sandbox.worktree import Worktree
from git_retcon.state import spec as specmod
from git_retcon.state.notes import CommitNote, Usage
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


@dataclass
class Tally:
    """The tokens this run spent, in all and per logical commit."""

    input_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0
    per_commit: dict[int, Usage] = field(default_factory=dict)   # 1-based index -> usage

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def add(self, index: int, spent: Usage) -> None:
        self.input_tokens += spent["input"]
        self.output_tokens += spent["output"]
        self.calls += spent["calls"]
        mine = self.per_commit.setdefault(index, {"input": 0, "output": 0, "calls": 0})
        mine["input"] += spent["input"]
        mine["output"] += spent["output"]
        mine["calls"] += spent["calls"]


@dataclass
class Run:
    """One `git retcon run`: where it works, how, and what it has spent."""

    repo: pygit2.Repository
    store: Store
    name: str
    opts: Options
    ui: UI
    tally: Tally = field(default_factory=Tally)
    remaining: RemainingDiff | None = None   # the remaining diff, kept up to date across steps
    exchanges: ExchangeLog | None = None   # for `llm logs`; made from opts.log on first use
    # Notes of commits this run made, with what their step spent and then their build and test
    # verdicts, not written yet: they go out with the next created commit's note (or when the
    # run stops), one notes write per created commit.
    unwritten: dict[str, CommitNote] = field(default_factory=dict)
    # What the spec's history gained in memory and no save has written yet (a created commit's
    # entry waits for its verdict: one spec save per commit, not two; see record.record_commit).
    unsaved: list[str] = field(default_factory=list)

    def exchange_log(self) -> ExchangeLog:
        if self.exchanges is None:
            self.exchanges = ExchangeLog(self.opts.log, say=self.ui.line)
        return self.exchanges


def save_unsaved(run: Run, stored: Stored, message: str = "") -> None:
    """Save the spec if anything is held back or a message says what changed."""
    parts = [*run.unsaved, message] if message else list(run.unsaved)
    if parts:
        run.store.update(stored, "; ".join(parts))
        run.unsaved.clear()


def way_out(cleaned: str, model: str | None) -> str:
    """What a human does about a stuck commit: the commands, with the run's model repeated
    (without it, `run` picks the default model, which may want another key)."""
    again = f"  git retcon run {cleaned}" + (f" -m {shlex.quote(model)}" if model else "")
    return (f"When you have fixed it (a fix committed on '{cleaned}', say), record what you did and run again:\n"
            f"  git retcon resolve -m \"what you changed\" {cleaned}\n{again}\n"
            f"If the spec was wrong, edit it (git retcon spec edit {cleaned}) and redo this commit: --redo drops "
            f"its commits, so that the next run extracts it afresh:\n"
            f"  git retcon resolve --redo -m \"what you changed\" {cleaned}\n{again}")


class Branches:
    """source, remote, base and the cleaned branch, resolved once per run."""

    def __init__(self, repo: pygit2.Repository, spec: specmod.Spec):
        fork = fork_point(repo, spec.source, spec.remote,
                          "check that `remote` is the branch the source was started from")
        self.source = fork.source
        self.remote = fork.remote
        self.base = str(fork.base.id)
        self.source_tree = str(self.source.tree_id)
        self.cleaned_ref = f"refs/heads/{spec.cleaned}"
        self.cleaned_tip = ref_target(repo, self.cleaned_ref)


@dataclass
class Work:
    """Logical commit k being reconstructed, with everything its steps need."""

    run: Run
    stored: Stored
    br: Branches
    wt: Worktree
    verifier: Verifier
    model: llm.Model
    k: int

    @property
    def spec(self) -> specmod.Spec:
        return self.stored.spec

    @property
    def commit(self) -> specmod.LogicalCommit:
        return self.stored.spec.commits[self.k]

    @property
    def n(self) -> int:
        return len(self.stored.spec.commits)

    @property
    def is_last(self) -> bool:
        return self.k == self.n - 1

    def tip(self) -> str:
        """The cleaned branch's tip (the base before the first commit)."""
        return ref_target(self.run.repo, self.br.cleaned_ref) or self.br.base

    def save(self, message: str) -> None:
        """Write the spec (CAS) with what was appended to its history, including what
        `save_later` held back."""
        save_unsaved(self.run, self.stored, message)

    def save_later(self, message: str) -> None:
        """An entry appended to the history, written by the next save."""
        self.run.unsaved.append(message)

    def stop_stuck(self, summary: str) -> NoReturn:
        self.commit.history.append(specmod.Stuck(summary))
        self.save(f"commit {self.k + 1} stuck")
        self.run.ui.bad("✗ Stuck - stopping")
        raise StuckStop(f"commit {self.k + 1}/{self.n} is stuck: {summary}\n"
                        + way_out(self.spec.cleaned, self.model.model_id))

    def stop_budget(self) -> NoReturn:
        tally, opts = self.run.tally, self.run.opts
        self.run.ui.bad("✗ Token budget reached - stopping")
        raise BudgetStop(
            f"token budget reached: {tally.tokens} tokens used in this run "
            f"(--max-tokens {opts.max_tokens}), while on commit {self.k + 1}/{self.n}. Nothing is stuck and "
            f"everything committed so far is kept. To go on, run again (each run has its own budget):\n"
            f"  git retcon run {self.spec.cleaned} --max-tokens N"
        )
