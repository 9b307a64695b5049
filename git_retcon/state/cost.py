"""Tokens spent, per logical commit and per run.

A created commit's note holds the tokens of the step that made it. What a step
that made no commit spent (it ended stuck, at the budget, or with the backend
down) and each run's totals are noted on the spec chain's commit current at
that moment, so nothing spent goes unaccounted (state/notes.py: SpecNote).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from git_retcon.git.plumbing import first_parent_chain, get_commit
from git_retcon.state import notes
from git_retcon.state.notes import RunRecord, Spent, Usage, usage
from git_retcon.state.store import Store, Stored

# Spec-chain commits that start over: spending before them belongs to another run history.
_STARTS = ("plan", "abort")


@dataclass
class Ledger:
    """Since the spec was planned or last aborted: what steps that made no commit spent per
    logical commit (tokens, and seconds of model time), and the runs, oldest first."""

    spent: dict[int, Usage] = field(default_factory=dict)
    seconds: dict[int, float] = field(default_factory=dict)
    runs: list[RunRecord] = field(default_factory=list)


def ledger(store: Store, stored: Stored) -> Ledger:
    out = Ledger()
    for sha in reversed(first_parent_chain(store.repo, stored.commit, "")):
        note = notes.read_spec(store, sha)
        for item in note.get("spent", []):
            index = int(item.get("index", 0))
            _add(out.spent.setdefault(index, usage(0, 0, 0)), item)
            out.seconds[index] = out.seconds.get(index, 0.0) + _float(item.get("seconds"))
        out.runs[:0] = note.get("runs", [])
        if (get_commit(store.repo, sha).message or "").startswith(_STARTS):
            break
    return out


def add_to_rows(rows: list[dict[str, Any]], spent: Ledger) -> None:
    """Status rows count the created commits' tokens and model time; add what steps without
    a commit spent."""
    for row in rows:
        extra = spent.spent.get(row["index"])
        if extra:
            row["tokens"]["input"] += extra["input"]
            row["tokens"]["output"] += extra["output"]
        row["seconds"]["model"] = round(row["seconds"]["model"] + spent.seconds.get(row["index"], 0.0), 2)


def _float(value: object) -> float:
    try:
        return float(value or 0)   # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 0.0


def total(runs: list[RunRecord]) -> Usage:
    out = usage(0, 0, 0)
    for run in runs:
        _add(out, run.get("tokens") or usage(0, 0, 0))
    return out


def _add(total: Usage, more: Usage | Spent) -> None:
    # int(... or 0): notes are JSON that a human or an older version may have written.
    total["input"] += int(more.get("input", 0) or 0)
    total["output"] += int(more.get("output", 0) or 0)
    total["calls"] += int(more.get("calls", 0) or 0)
