"""What plan says about a spec before and after it saves it: the logical commits as a table
(files, hunks and lines each takes), and warnings (commits that would take nothing, hunks no
commit or two commits take, ids no longer in the diff)."""
from __future__ import annotations

import pygit2

from git_retcon import diff
from git_retcon.diff import atoms
from git_retcon.diff.select import compact, numbered
from git_retcon.git.plumbing import fork_point
from git_retcon.plan.branches import ONTO_FIX
from git_retcon.plan.write import Proposed
from git_retcon.state import spec as specmod
from git_retcon.state.spec import paths_match, paths_match_any


def _remaining(repo: pygit2.Repository, spec: specmod.Spec) -> list[diff.Hunk]:
    """The diff the spec must cover: merge base to source tip."""
    fork = fork_point(repo, spec.source, spec.remote, ONTO_FIX)
    return diff.remaining(repo, str(fork.base.tree_id), str(fork.source.tree_id))


def _shown(by_id: dict[str, diff.Hunk], item: str) -> diff.Hunk | None:
    """What a spec's `hunks` item names: a hunk by its id, or an atom (`id:SEL`) as the hunk of
    its own lines; None when its hunk is not in the diff."""
    part = atoms.parse_id(item)
    if part is None:
        return by_id.get(item)
    h = by_id.get(part[0])
    lines = len(numbered(h)[0]) + len(numbered(h)[1]) if h is not None else 0
    return atoms.as_hunk(h, part[1]) if h is not None and part[1] and max(part[1]) <= lines else None


def table(repo: pygit2.Repository, spec: specmod.Spec, everything: list[diff.Hunk] | None = None) -> list[str]:
    """The commits as a table: files, hunks and lines each takes (by its hunks, else its paths)."""

    if everything is None:
        everything = _remaining(repo, spec)
    by_id = {h.id: h for h in everything}
    taken: set[str] = set()
    rows = [f"  {'#':>3}  {'files':>5}  {'hunks':>5}  {'lines':>13}  message"]
    for k, c in enumerate(spec.commits):
        mine = [x for i in c.hunks if i not in taken and (x := _shown(by_id, i)) is not None]
        taken.update(c.hunks)
        if c.paths:   # what the paths take: the hunks no commit names, whole or in part
            named = {atoms.hunk_id(i) for i in taken}
            mine += [h for h in everything if h.id not in named and paths_match(h.path, c.paths)]
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
        planned = [i for i in c.hunks if atoms.hunk_id(i) in ids]
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
    """Warnings about the stored assignment: hunks, or lines of a hunk named in atoms, in no
    commit or in two, and ids not in the diff."""
    if not any(c.hunks for c in spec.commits):
        return []
    by_id = {h.id: h for h in everything}
    lines = {h.id: set(range(1, len(numbered(h)[0]) + len(numbered(h)[1]) + 1)) for h in everything}
    seen: dict[str, set[int]] = {}
    twice: set[str] = set()
    stale: list[str] = []
    for c in spec.commits:
        for i in c.hunks:
            if _shown(by_id, i) is None:
                stale.append(i)
                continue
            part = atoms.parse_id(i)
            hid, numbers = (part[0], set(part[1])) if part else (i, lines[i])
            if seen.get(hid, set()) & numbers:
                twice.add(i)
            seen.setdefault(hid, set()).update(numbers)
    out = []
    free = [h for h in everything if h.id not in seen]
    if free:
        out.append(f"{len(free)} hunks are assigned to no commit (the last commit takes them): "
                   + ", ".join(f"{h.id} {h.path}" for h in free[:10]) + (" ..." if len(free) > 10 else ""))
    for h in everything:
        if h.id in seen and (left := lines[h.id] - seen[h.id]):
            out.append(f"lines {compact(left)} of hunk {h.id} ({h.path}) are in no commit "
                       "(the last commit takes them)")
    if twice:
        out.append(f"{len(twice)} hunks are assigned to more than one commit (the first takes them): "
                   + ", ".join(sorted(twice)[:10]))
    if stale:
        out.append(f"{len(stale)} assigned hunk ids are not in the remaining diff: " + ", ".join(sorted(stale)[:10]))
    return out


def report(repo: pygit2.Repository, spec: specmod.Spec, proposed: Proposed | None) -> list[str]:
    everything = proposed.everything if proposed else None
    if everything is None:
        everything = _remaining(repo, spec)
    lines = table(repo, spec, everything)
    lines += ["Warning: " + w for w in coverage(spec, everything)]
    return lines + (proposed.summary if proposed else [])
