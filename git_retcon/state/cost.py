"""Tokens spent, per logical commit and per run.

A created commit's note holds the tokens of the step that made it. What a step
that made no commit spent (it ended stuck, at the budget, or with the backend
down) and each run's totals are noted on the spec chain's commit current at
that moment, so nothing spent goes unaccounted. Both live in refs/notes/retcon.
"""
from __future__ import annotations

from typing import Any

from git_retcon.git.plumbing import first_parent_chain, get_commit
from git_retcon.state.store import NOTES_REF, Store, Stored

# Spec-chain commits that start over: spending before them belongs to another run history.
_STARTS = ("plan", "abort")


def usage(input_tokens: int, output_tokens: int, calls: int) -> dict[str, int]:
    return {"input": input_tokens, "output": output_tokens, "calls": calls}


def _append(store: Store, stored: Stored, key: str, item: dict[str, Any]) -> None:
    note = store.read_note(NOTES_REF, stored.commit) or {}
    note.setdefault(key, []).append(item)
    store.write_note(NOTES_REF, stored.commit, note)


def add_spent(store: Store, stored: Stored, index: int, spent: dict[str, int], why: str) -> None:
    """Tokens of a step of logical commit `index` (1-based) that made no commit."""
    _append(store, stored, "spent", {"index": index, "why": why, **spent})


def add_run(store: Store, stored: Stored, run: dict[str, Any]) -> None:
    _append(store, stored, "runs", run)


def ledger(store: Store, stored: Stored) -> tuple[dict[int, dict[str, int]], list[dict[str, Any]]]:
    """Tokens spent outside created commits per logical commit, and the runs, oldest first,
    since the spec was planned or last aborted."""
    spent: dict[int, dict[str, int]] = {}
    runs: list[dict[str, Any]] = []
    for sha in reversed(first_parent_chain(store.repo, stored.commit, "")):
        note = store.read_note(NOTES_REF, sha) or {}
        for item in note.get("spent", []):
            total = spent.setdefault(int(item.get("index", 0)), usage(0, 0, 0))
            for key in total:
                total[key] += int(item.get(key, 0) or 0)
        runs[:0] = note.get("runs", [])
        if (get_commit(store.repo, sha).message or "").startswith(_STARTS):
            break
    return spent, runs


def add_to_rows(rows: list[dict[str, Any]], spent: dict[int, dict[str, int]]) -> None:
    """Status rows count the created commits' tokens; add what steps without a commit spent."""
    for row in rows:
        extra = spent.get(row["index"])
        if extra:
            row["tokens"]["input"] += extra["input"]
            row["tokens"]["output"] += extra["output"]


def total(runs: list[dict[str, Any]]) -> dict[str, int]:
    out = usage(0, 0, 0)
    for run in runs:
        for key in out:
            out[key] += int((run.get("tokens") or {}).get(key, 0) or 0)
    return out
