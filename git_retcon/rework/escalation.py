"""The deterministic rules that stop a fix loop as stuck whatever the model says."""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from git_retcon.rework.blame import Blame
from git_retcon.rework.parsed import Parsed, evidence

Phase = Literal["build", "test", "tree"]   # what failed: a command, or the last commit's tree
PERSISTENT_ATTEMPTS = 3      # rework attempts on one location before it is a trouble spot

@dataclass(frozen=True)
class Observation:
    """One failing verification, as the escalation rules see it."""

    phase: Phase                # build, test, or tree (the final tree differs)
    keys: frozenset[str]        # failing locations
    tests: frozenset[str]       # failing test ids
    tests_ran: bool             # the tests ran, so the ones not failing passed (but those of not_run)
    not_run: frozenset[str]     # test modules or files that failed to load: their tests did not run
    failing: int                # failing cases (the runner's count: subtests each), else failing tests
    signature: str              # the failure with timings and addresses taken out
    remaining: frozenset[str]   # hunk ids of the remaining diff at that tree
    summary: str                # a few lines of evidence for a stuck summary

    @property
    def located(self) -> bool:
        return bool(self.keys)


_NOISE = [(re.compile(r"0x[0-9a-fA-F]+"), "0x?"), (re.compile(r"\b\d+(?:\.\d+)?\s*(?:s|ms|sec|seconds)\b"), "?s"),
          (re.compile(r"\(\d+\) panicked"), "panicked"), (re.compile(r"/tmp/\S+"), "/tmp/?")]


def signature(parsed: Parsed, output: str) -> str:
    """What stays the same when the same failure happens again."""
    if parsed.locations or parsed.names or parsed.modules or parsed.tests:
        text = "\n".join([ln.key + " " + ln.message for ln in parsed.locations]
                         + parsed.names + parsed.modules + parsed.tests)
    else:
        text = "\n".join(ln.strip() for ln in output.splitlines() if ln.strip())
    for rx, sub in _NOISE:
        text = rx.sub(sub, text)
    return text


def observe(phase: Phase, output: str, parsed: Parsed, b: Blame, remaining: Iterable[str]) -> Observation:
    return Observation(
        phase=phase, keys=frozenset(ln.key for ln in b.locations), tests=frozenset(parsed.tests),
        tests_ran=phase == "test" and bool(parsed.tests) and not parsed.interrupted,
        not_run=frozenset(parsed.not_run),
        failing=parsed.failed if parsed.failed is not None else len(parsed.tests),
        signature=signature(parsed, output), remaining=frozenset(remaining),
        summary=evidence(parsed, output).split("\n[...")[0][:800],
    )


_ORDER = {"build": 0, "test": 1, "tree": 2}   # how far a verification got before it failed


def better(before: Observation, after: Observation | None) -> bool:
    """Whether a fix changed the failure for the better: it passes (after is None), it fails later
    (the build passes now), or in the same phase it fails differently and in no more cases
    (errors 9 -> 4 is better; the same failure again is not; a later test phase is)."""
    if after is None:
        return True
    if after.phase != before.phase:
        return _ORDER[after.phase] > _ORDER[before.phase]
    if after.signature == before.signature:
        return False
    return not (after.phase == "test" and after.failing > before.failing > 0)


def _within(test: str, modules: frozenset[str]) -> bool:
    """test belongs to one of modules (a file `a/t.py`, a dotted module `a.t`): it did not run then."""
    return any(test == m or test.startswith((m + "::", m + ".")) for m in modules)


def _test_files(test: str) -> set[str]:
    """The files a test id may live in: pytest's `path::name`, unittest's `pkg.mod.Class.test`."""
    if "::" in test or "/" in test:
        return {test.split("::")[0]}
    parts = test.split(".")
    return {"/".join(parts[:k]) + ".py" for k in range(1, len(parts) + 1)}


class Escalation:
    """The rules that end a fix loop as stuck, whatever the model says.

    Feed it every failing verification in order (observe), and tell it when a
    fix attempt starts (attempt). A rule that fires returns the stuck summary.
    """

    def __init__(self) -> None:
        self.attempts: Counter[str] = Counter()
        self.last: Observation | None = None
        self.unlocated = 0

    def attempt(self, obs: Observation) -> None:
        for key in obs.keys:
            self.attempts[key] += 1

    def observe(self, obs: Observation, fix_changed: set[str] | None = None) -> str | None:
        """fix_changed: the paths the last fix attempt changed (None before any attempt)."""
        prev, self.last = self.last, obs
        self.unlocated = self.unlocated + 1 if not obs.located else 0
        persistent = sorted(k for k in obs.keys if self.attempts[k] >= PERSISTENT_ATTEMPTS)
        if persistent:
            return (f"escalated (persistent trouble spot): {persistent[0]} still fails after "
                    f"{self.attempts[persistent[0]]} rework attempts.\n{obs.summary}")
        if prev is not None and fix_changed is not None:
            if prev.tests_ran and obs.phase == "test" and obs.failing >= prev.failing:
                # A test failing now that ran and did not fail before, and that the fix did not edit;
                # unless fewer fail now (errors 9 -> 4 with a new failure is progress).
                newly = sorted(t for t in obs.tests - prev.tests
                               if not _within(t, prev.not_run) and not _test_files(t) & fix_changed)
                if newly:
                    return (f"escalated (regression cascade): the last fix made previously passing tests fail: "
                            f"{', '.join(newly[:10])}.\nBefore it, only these failed: "
                            f"{', '.join(sorted(prev.tests)[:10])}.\n{obs.summary}")
            if obs.signature == prev.signature and prev.remaining <= obs.remaining:
                return ("escalated (no progress): the last fix took nothing from the remaining diff and "
                        f"the same failure happened again.\n{obs.summary}")
        if self.unlocated >= 2:
            return ("escalated (no location): twice in a row the failure named no file and line of the "
                    "project: an environment problem or a flaky test, which a model cannot fix.\n"
                    f"{obs.summary}")
        return None
