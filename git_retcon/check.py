"""Read-only views of a run: status rows, and the verification `check` runs."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pygit2

from . import hunks
from . import spec as specmod
from .gitops import first_parent_chain, ref_target, resolve_commit, short
from .store import NOTES_REF, TESTS_REF, Store, Stored


def commit_rows(store: Store, stored: Stored) -> list[dict[str, Any]]:
    """One row per logical commit, in the `status --json` shape."""
    rows = []
    for i, c in enumerate(stored.spec.commits):
        tokens = {"input": 0, "output": 0}
        for sha in c.created:
            note = store.read_note(NOTES_REF, sha) or {}
            t = note.get("tokens") or {}
            tokens["input"] += int(t.get("input", 0) or 0)
            tokens["output"] += int(t.get("output", 0) or 0)
        result = tree_result(store, c.created[-1]) if c.created else None
        rows.append({
            "index": i + 1, "message": c.summary, "state": c.state, "commits": c.created,
            "wip": max(len(c.created) - 1, 0), "tokens": tokens,
            "build": result[0] if result else None, "test": result[1] if result else None,
        })
    return rows


def tree_result(store: Store, sha: str) -> tuple[str, str] | None:
    """(build, test) recorded for the tree of commit sha: pass, fail, or skipped."""
    commit = store.repo.get(sha)
    if commit is None:
        return None
    note = store.read_note(TESTS_REF, str(commit.tree_id)) or {}
    b = note.get("build", {}).get("result") if isinstance(note.get("build"), dict) else None
    t = note.get("test", {}).get("result") if isinstance(note.get("test"), dict) else None
    return (b or "none", t or "none")


@dataclass
class Verdict:
    items: list[tuple[bool, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(ok for ok, _ in self.items)

    def add(self, ok: bool, text: str) -> None:
        self.items.append((ok, text))


def verify(store: Store, stored: Stored, allow_wip: bool = False) -> Verdict:
    """The checks the pre-push hook relies on; no model, no build."""
    repo = store.repo
    spec = stored.spec
    v = Verdict()
    open_ = [(i, c) for i, c in enumerate(spec.commits) if c.state != "complete"]
    if open_:
        i, c = open_[0]
        v.add(False, f"commit {i + 1}/{len(spec.commits)} is {c.state}: {c.summary}")
    else:
        v.add(True, f"all {len(spec.commits)} logical commits are complete")
    tip = ref_target(repo, f"refs/heads/{spec.cleaned}")
    if tip is None:
        v.add(False, f"branch '{spec.cleaned}' does not exist")
        return v
    src = resolve_commit(repo, spec.source, "source")
    rem = resolve_commit(repo, spec.remote, "remote")
    base = repo.merge_base(src.id, rem.id)
    stop = repo.merge_base(pygit2.Oid(hex=tip), src.id) or base
    chain = first_parent_chain(repo, tip, str(stop))
    recorded = [str(repo.revparse_single(s).id) for c in spec.commits for s in c.created]
    if chain == recorded:
        v.add(True, f"'{spec.cleaned}' holds exactly the {len(recorded)} recorded commits")
    else:
        v.add(False, f"'{spec.cleaned}' does not hold exactly the recorded commits "
                     f"({len(chain)} on the branch, {len(recorded)} recorded): run `git retcon run`")
    tip_tree = str(repo.get(tip).tree_id)
    if tip_tree == str(src.tree_id):
        v.add(True, f"final tree equals '{spec.source}'")
    else:
        left = hunks.remaining(repo, tip_tree, str(src.tree_id))
        per: dict[str, list[int]] = {}
        for h in left:
            a = per.setdefault(h.path, [0, 0])
            a[0] += h.added_lines
            a[1] += h.removed_lines
        lines = [f"   {p} | +{a} -{r}" for p, (a, r) in sorted(per.items())[:20]]
        more = f"\n   ... and {len(per) - 20} more" if len(per) > 20 else ""
        v.add(False, f"final tree differs from '{spec.source}' in {len(per)} paths:\n" + "\n".join(lines) + more)
    untested = []
    for i, c in enumerate(spec.commits):
        if not c.created:
            continue
        res = tree_result(store, c.created[-1])
        if res is None or not all(r in ("pass", "none") for r in res) or (
                res == ("none", "none") and (spec.build or spec.test)):
            untested.append(f"{i + 1} ({short(c.created[-1])}: build {res[0] if res else '?'}, "
                            f"test {res[1] if res else '?'})")
    if untested:
        v.add(False, "no passing build/test record for commits " + ", ".join(untested))
    else:
        v.add(True, "every logical commit's tree has a passing build/test record")
    wip = [s for s in chain if (repo.get(s).message or "").startswith("WIP:")]
    if wip and not allow_wip:
        v.add(False, f"{len(wip)} WIP: commits remain (squash them, or pass --allow-wip)")
    elif wip:
        v.add(True, f"{len(wip)} WIP: commits (allowed)")
    else:
        v.add(True, "no WIP: commits")
    return v
