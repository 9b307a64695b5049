"""Logical commits with nothing left to take, told by plain code before any model is asked.

A commit whose `paths` match no file the source changes is a spec's mistake (a misspelt
glob): the run refuses it before anything is written. A commit whose paths (or planned
hunks) match only changes that earlier commits already took (a fix that needed them
sooner), or that finds no change left at all, is complete with no commit of its own: the
run says which commits took its changes, and goes on.
"""
from __future__ import annotations

from dataclasses import replace

import pygit2

from git_retcon import diff
from git_retcon.errors import RetconError
from git_retcon.git.ids import TreeId, tree_of
from git_retcon.git.plumbing import full_sha, get_commit
from git_retcon.model.choose import BUILTIN
from git_retcon.reconstruct.branch import Branches
from git_retcon.reconstruct.left import Left
from git_retcon.reconstruct.work import Work
from git_retcon.state import spec as specmod
from git_retcon.state.spec import PathsIndex, paths_match


def refuse_unmatched(repo: pygit2.Repository, spec: specmod.Spec, br: Branches, name: str) -> None:
    """A logical commit still to do whose paths match no change of the source: refused,
    naming the commit and the fix, before the run writes anything."""
    pending = [(k, c) for k, c in enumerate(spec.commits) if c.paths and c.state != "complete"]
    if not pending:
        return
    changed = diff.remaining(repo, tree_of(get_commit(repo, br.base)), br.source_tree)
    index = PathsIndex((k, c.paths) for k, c in pending)
    touched = {j for h in changed for p in {h.path, h.old_path} if p is not None for j in index.which(p)}
    for k, c in pending:
        if k not in touched:
            raise RetconError(
                f"commit {k + 1}/{len(spec.commits)} ({c.summary}): its paths {c.paths} match no file that "
                f"'{spec.source}' changes: fix them (git retcon spec edit {name}), then run again")


def nothing_left(w: Work, tree: TreeId, who: bool = True) -> str | None:
    """Why logical commit k has nothing left to take on tree (None: it may have). who: say which
    earlier commits took it (a diff of each commit made so far: only where the text is shown)."""
    c = w.commit
    left = _left(w, tree)
    if not left.hunks:
        return "no change of the source is left: the commits before it hold them all"
    if w.is_last or not (c.paths or c.hunks):
        return None   # the last takes whatever is left; a hints-only commit is the model's to judge
    # An atom (`id:LINES`) names lines of the branch's diff, not a hunk of what is left: the
    # commit's planned tree says whether it takes anything (reconstruct/lines.py).
    if left.count[w.k] > 0 or any(":" in i for i in c.hunks):
        return None
    what = f"its paths {c.paths}" if c.paths else "its planned hunks"
    takers = _takers(w, c.paths) if who else ""
    return f"every change under {what} is taken already" + (f", by {takers}" if takers else "")


def takes_everything(w: Work, tree: TreeId) -> str | None:
    """Why logical commit k, not the last, cannot take what its spec gives it with the built-in model:
    its paths and planned hunks cover every change left, so the commits after it would have nothing
    (None: they do not, or a model judges). Said before anything is applied, so the worktree stays
    as it was."""
    c = w.commit
    # A model may put back what the spec over-gives (the guards name it); the built-in model's
    # judgement is the spec's, and it would only be refused after applying everything.
    if w.is_last or not (c.paths or c.hunks) or w.model.model_id != BUILTIN:
        return None
    left = _left(w, tree)
    if not left.hunks or left.count[w.k] < len(left.hunks):
        return None
    what = " and ".join(([f"its paths {c.paths}"] if c.paths else []) + (["its planned hunks"] if c.hunks else []))
    return (f"{what} take every change left ({len(left.hunks)} hunks), though this is commit {w.number} of {w.n}: "
            f"the {w.n - w.number} commits after it would have nothing. Narrow them (git retcon spec edit "
            f"{w.spec.cleaned}), then redo this commit")


def emptied(w: Work, before: TreeId, after: TreeId) -> list[tuple[int, str]]:
    """The later logical commits that had something left on before and have nothing left on after
    (a commit of logical commit k took it all), each with why: said at the step that emptied
    them, for a history with empty commits is not the history asked for. Only the commits that
    claim a hunk the step took can be emptied, unless it took the last change of all."""
    if not _left(w, before).hunks:
        return []
    left = _left(w, after)
    commits = w.spec.commits
    if left.hunks:
        found = [j for j in sorted(left.was) if j > w.k and j != w.n - 1 and left.was[j] > 0
                 and left.count[j] == 0 and not commits[j].created]
    else:   # nothing at all is left: every later commit that had something has nothing now
        found = [j for j in range(w.k + 1, w.n) if not commits[j].created and (
            j == w.n - 1 or not (commits[j].paths or commits[j].hunks) or left.was.get(j, left.count[j]) > 0)]
    return [(j, why) for j in found if (why := nothing_left(replace(w, k=j), after)) is not None]


def _left(w: Work, tree: TreeId) -> Left:
    """What each logical commit has left on tree, from the run's one remaining diff."""
    if w.run.remaining is None:
        w.run.remaining = diff.RemainingDiff(w.run.repo, w.br.source_tree)
    if w.run.left is None or w.run.left.remaining is not w.run.remaining:
        w.run.left = Left(w.run.remaining)
    return w.run.left.at(w.spec, tree)


def _takers(w: Work, patterns: list[str]) -> str:
    """The earlier commits of this run that changed files under patterns: who took them."""
    if not patterns:
        return ""
    repo = w.run.repo
    found: list[str] = []
    for j, c in enumerate(w.spec.commits[: w.k]):
        for sha in c.created:
            commit = get_commit(repo, full_sha(repo, sha))
            parent = commit.parents[0] if commit.parents else None
            if parent is None:
                continue
            changes = parent.tree.diff_to_tree(commit.tree)
            if any(paths_match(p, patterns) for d in changes.deltas for p in (d.old_file.path, d.new_file.path)):
                subject = commit.message.splitlines()[0] if commit.message else sha[:9]
                found.append(f"commit {j + 1} ({subject})")
    return ", ".join(dict.fromkeys(found))
