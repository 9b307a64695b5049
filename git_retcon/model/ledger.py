"""One step's progress ledger: every sign that a turn moved nothing, in one place. A weak model
repeats itself (the 1.5B model sent the same no-op 38 times, read the same hunks over and over,
echoed our answers back as its stuck summary); each repetition is counted here, and the step's
error budget (model/steering.py) decides when the step has spent its chances.

The ledger holds facts (counts, what was named, what was sent back); the words of the answers
live in model/answers.py.
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field

from git_retcon.model.args import shallow


@dataclass
class Ledger:
    """What this step did that did not move it on, and what it was told."""

    idle: int = 0                                   # apply_hunks calls that applied nothing
    reads: Counter[str] = field(default_factory=Counter)           # reads, by call and tree
    failed_calls: Counter[str] = field(default_factory=Counter)    # failed calls, by name and arguments
    said: list[str] = field(default_factory=list)   # every answer and steering message (a stuck's echo check)
    echoed: str = ""                                # why a stuck was sent back once, if one was
    named: set[str] = field(default_factory=set)    # hunk ids create_commit's guards named back

    def nothing_applied(self) -> int:
        """An apply_hunks call that changed nothing: how many so far."""
        self.idle += 1
        return self.idle

    def read(self, name: str, args: tuple[object, ...], tree: str) -> int:
        """A read with the worktree at tree: how many times this same read was made."""
        key = json.dumps([name, [str(a) for a in args], tree])
        self.reads[key] += 1
        return self.reads[key]

    def failed(self, name: object, arguments: object) -> int:
        """A failed call: how many times this same call (name and arguments) has failed."""
        key = json.dumps([name, shallow(arguments, 6)], sort_keys=True, default=str)
        self.failed_calls[key] += 1
        return self.failed_calls[key]

    def name_back(self, ids: set[str]) -> bool:
        """The guards name ids back: whether every one was named before (a confirmation may
        answer only what the model was told)."""
        before = ids <= self.named
        self.named |= ids
        return before

    def clear(self) -> None:
        """A step restarted from its prompt: nothing of the ledger holds any more."""
        self.idle = 0
        self.reads.clear()
        self.failed_calls.clear()
        self.said.clear()
        self.echoed = ""
        self.named.clear()
