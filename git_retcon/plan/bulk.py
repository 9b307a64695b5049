"""Lock, generated and minified files as a plan prompt lists them: one line per file. What they
are and where they go is the owners room's rule (owners/bulk.py)."""
from __future__ import annotations

from collections.abc import Sequence

from git_retcon.owners.bulk import GENERATED, LOCKS, Bulk, classify, owner_by_rule
from git_retcon.plan.context import fit_rows

__all__ = ["GENERATED", "LOCKS", "Bulk", "classify", "describe_all", "owner_by_rule"]


def describe_all(bulk: Sequence[Bulk], budget: int) -> str:
    if not bulk:
        return "(none)"
    return fit_rows(["- " + b.describe() for b in bulk], budget, "such files")
