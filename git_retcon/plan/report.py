"""What plan says about a spec before and after it saves it: the logical commits as a table
(files, hunks and lines each takes), and warnings (commits that would take nothing, hunks no
commit or two commits take, ids no longer in the diff)."""
from __future__ import annotations

import pygit2

from git_retcon import diff
from git_retcon.git.plumbing import fork_point
from git_retcon.plan.branches import ONTO_FIX
from git_retcon.plan.write import Proposed
from git_retcon.state import spec as specmod
from git_retcon.state.spec import paths_match, paths_match_any


def _remaining(repo: pygit2.Repository, spec: specmod.Spec) -> list[diff.Hunk]:
    """The diff the spec must cover: merge base to source tip."""
    fork = fork_point(repo, spec.source, spec.remote, ONTO_FIX)
    return diff.remaining(repo, str(fork.base.tree_id), str(fork.source.tree_id))


def table(repo: pygit2.Repository, spec: specmod.Spec, everything: list[diff.Hunk] | None = None) -> list[str]:
    """The commits as a table: files, hunks and lines each takes (by its hunks, else its paths)."""

    if everything is None:
        everything = _remaining(repo, spec)
    by_id = {h.id: h for h in everything}
    taken: set[str] = set()
    rows = [f"  {'#':>3}  {'files':>5}  {'hunks':>5}  {'lines':>13}  message"]
    for k, c in enumerate(spec.commits):
        mine = [by_id[i] for i in c.hunks if i in by_id and i not in taken]
        if c.paths:
            mine += [h for h in everything
                     if h.id not in taken and h.id not in c.hunks and paths_match(h.path, c.paths)]
        taken.update(h.id for h in mine)
        files, added, removed = diff.stat(mine)
        rows.append(f"  {k + 1:>3}  {files:>5}  {len(mine):>5}  {f'+{added} -{removed}':>13}  {c.summary}")
    return rows


def empty_commits(repo: pygit2.Repository, spec: specmod.Spec, everything: list[diff.Hunk] | None = None,
                  ) -> list[str]:
    """Warnings, said before a spec is saved, about logical commits that would take no hunk, and
    what a run will do about each."""

    if everything is None:
        everything = _remaining(repo, spec)
    ids = {h.id for h in everything}
    taken: set[str] = set()
    out = []
    for k, c in enumerate(spec.commits):
        if not (c.paths or c.hunks) or k == len(spec.commits) - 1:
            continue   # a hints-only commit is the model's to judge; the last takes what is left
        under = [h for h in everything if c.paths and paths_match_any((h.path, h.old_path), c.paths)]
        planned = [i for i in c.hunks if i in ids]
        mine = {h.id for h in under} | set(planned)
        where = f"commit {k + 1} ({c.summary})"
        if everything and mine >= ids - taken:
            out.append(f"{where}: its paths and hunks take every change left, though it is commit {k + 1} of "
                       f"{len(spec.commits)}: the commits after it would have nothing left (narrow them: git retcon "
                       f"spec edit {spec.cleaned})")
        elif c.paths and not under and not planned:
            out.append(f"{where}: its paths {c.paths} match no file the source changes; `run` refuses it until "
                       f"they do (git retcon spec edit {spec.cleaned})")
        elif not mine - taken:
            out.append(f"{where}: an earlier commit takes every change it names; a run completes it with no "
                       f"commit of its own (merge or drop it: git retcon spec edit {spec.cleaned})")
        taken |= mine
    return out


def coverage(spec: specmod.Spec, everything: list[diff.Hunk]) -> list[str]:
    """Warnings about the stored assignment: hunks in no commit, in two, or unknown."""
    if not any(c.hunks for c in spec.commits):
        return []
    known = {h.id for h in everything}
    seen: dict[str, int] = {}
    twice: set[str] = set()
    for c in spec.commits:
        for i in c.hunks:
            if i in seen:
                twice.add(i)
            seen[i] = seen.get(i, 0) + 1
    out = []
    free = [h for h in everything if h.id not in seen]
    if free:
        out.append(f"{len(free)} hunks are assigned to no commit (the last commit takes them): "
                   + ", ".join(f"{h.id} {h.path}" for h in free[:10]) + (" ..." if len(free) > 10 else ""))
    if twice:
        out.append(f"{len(twice)} hunks are assigned to more than one commit (the first takes them): "
                   + ", ".join(sorted(twice)[:10]))
    stale = sorted(set(seen) - known)
    if stale:
        out.append(f"{len(stale)} assigned hunk ids are not in the remaining diff: " + ", ".join(stale[:10]))
    return out


def report(repo: pygit2.Repository, spec: specmod.Spec, proposed: Proposed | None) -> list[str]:
    everything = proposed.everything if proposed else None
    if everything is None:
        everything = _remaining(repo, spec)
    lines = table(repo, spec, everything)
    lines += ["Warning: " + w for w in coverage(spec, everything)]
    return lines + (proposed.summary if proposed else [])
