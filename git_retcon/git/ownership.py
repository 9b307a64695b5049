"""What git-retcon owns, and nothing else (ARCHITECTURE.md): the one place for the rule.

git-retcon creates, moves, deletes and pushes only its own refs (refs/retcon*,
refs/notes/retcon*), its worktrees, and cleaned branches that it created. A cleaned
branch is git-retcon's (`foreign` says why not) when its name is free, or when its
commits (`chain`: the first-parent chain from its tip back to merge-base(source,
remote)) begin with the spec's recorded commits (commits on top are a human's fix, which
the run adopts), or all carry this spec's note (a crash before the spec entry, a pull);
with no commit of its own, when the spec has a history or the branch's reflog says
git-retcon created it. A branch checked out in any work tree, or being rebased or
bisected there, is never moved (`refuse_checked_out`).

Names are checked with git's own rules before a spec is saved, so that nothing
git-retcon writes can break `git gc` or shadow a ref the user has.
"""
from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pygit2

from git_retcon.errors import RetconError
from git_retcon.git.commits import signature
from git_retcon.git.ids import CommitId
from git_retcon.git.plumbing import (
    cas_ref,
    common_dir,
    find_commit,
    first_parent_chain,
    fork_point,
    full_sha,
    ref_target,
)

HEADS = "refs/heads/"
SPEC_PREFIX = "refs/retcon/"
NOTES_REF = "refs/notes/retcon"
# The prefixes under which a cleaned branch's name becomes a ref: its branch and its spec.
_NAMESPACES = (HEADS, SPEC_PREFIX)
# How git resolves a short name (`git help revisions`): another ref found this way
# would make the cleaned branch's name mean something else to git and to the user.
_DWIM = ("refs/{}", "refs/tags/{}", "refs/remotes/{}", "refs/remotes/{}/HEAD")
# First components that make a short name another ref's spelling (heads/x is refs/heads/x to git).
_SPELLINGS = ("heads", "tags", "remotes", "notes", "retcon", "stash")
# HEAD, FETCH_HEAD, ORIG_HEAD...: git reads these before any branch of that name.
_PSEUDO = re.compile(r"[A-Z_]*HEAD")
# A first-parent walk that never reaches the base stops here (a branch rebased elsewhere).
_MAX_CHAIN = 10000


class NotOurs(RetconError):
    """A branch that git-retcon did not make: it refuses to move or delete it."""


def branch_ref(name: str) -> str:
    return HEADS + name


# -- names ---------------------------------------------------------------------------


def name_problem(name: str) -> str | None:
    """Why git would refuse `name` as a branch (as `git branch NAME` does), or None."""
    if not pygit2.reference_is_valid_name(HEADS + name):
        return ("git's ref-name rules refuse it (no '..', ':', '~', '^', '?', '*', '[', '\\', spaces, "
                "'@{', a trailing '.lock' or '/', or a component starting with '.')")
    if name.startswith("-"):
        return "a branch name cannot start with '-'"
    if name == "@" or _PSEUDO.fullmatch(name):
        return f"'{name}' is a name git gives a special meaning"
    if name.startswith("refs/"):
        return "write the branch's short name, without 'refs/...'"
    if name.split("/")[0] in _SPELLINGS:
        return f"git reads '{name}' as refs/{name} first: write a name that does not start with '{name.split('/')[0]}/'"
    return None


def check_name(field: str, name: str) -> None:
    """Refuse a cleaned name git's rules refuse (the one-line error names the field)."""
    problem = name_problem(name)
    if problem:
        raise RetconError(f"'{field}' = {name!r} cannot be a branch name: {problem}: choose another name")


def _ref_of(repo: pygit2.Repository, rev: str) -> str | None:
    """The full ref a revision names (a branch under any spelling), None for a bare sha."""
    try:
        _, ref = repo.resolve_refish(rev)
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
        return None
    return ref.name if ref is not None else None


def taken_problem(repo: pygit2.Repository, cleaned: str, source: str, remote: str) -> str | None:
    """Why refs/heads/<cleaned> (and its spec ref) would collide with what the repository
    has: the source or remote under another spelling, another ref a short name would
    find first, or a file/directory conflict with an existing ref. None: no collision."""
    mine = branch_ref(cleaned)
    for field, rev in (("source", source), ("remote", remote)):
        if _ref_of(repo, rev) == mine:
            return f"it is the {field} branch ('{rev}') under another spelling"
    refs = set(repo.references)
    for pattern in _DWIM:
        other = pattern.format(cleaned)
        if other in refs:
            return f"'{cleaned}' already names {other}"
    for prefix in _NAMESPACES:
        full = prefix + cleaned
        parts = cleaned.split("/")
        for i in range(1, len(parts)):
            above = prefix + "/".join(parts[:i])
            if above in refs:
                return f"{above} exists, so {full} cannot (a ref cannot also be a directory of refs)"
        below = next((r for r in refs if r.startswith(full + "/")), None)
        if below is not None:
            return f"{below} exists, so {full} cannot (a ref cannot also be a directory of refs)"
    return None


# -- the cleaned branch's commits ----------------------------------------------------


@dataclass(frozen=True)
class Chain:
    """The cleaned branch's commits: the first-parent chain from its tip back to the
    base (exclusive), oldest first. on_base: the walk reached the base (else the chain
    holds what the walk saw before it gave up: a branch not built on this base)."""

    tip: CommitId | None
    commits: list[CommitId]
    on_base: bool


def branch_tip(repo: pygit2.Repository, branch: str) -> CommitId | None:
    """The branch's tip, None when there is no such branch."""
    return ref_target(repo, branch_ref(branch))


def chain(repo: pygit2.Repository, branch: str, base: str, limit: int = _MAX_CHAIN) -> Chain:
    """The one definition of the cleaned branch's commits, used by run, check, status,
    abort, squash and pull."""
    tip = branch_tip(repo, branch)
    if tip is None:
        return Chain(None, [], False)
    if tip != base and not repo.descendant_of(tip, base):
        return Chain(tip, [], False)
    commits = first_parent_chain(repo, tip, base, limit)
    oldest = find_commit(repo, commits[0]) if commits else None
    on_base = tip == base if oldest is None else bool(oldest.parent_ids) and str(oldest.parent_ids[0]) == base
    return Chain(tip, commits, on_base)


def made_by(repo: pygit2.Repository, sha: str, spec: str) -> bool:
    """Whether commit sha carries spec's note in refs/notes/retcon (git-retcon made it for spec)."""
    try:
        note = repo.lookup_note(sha, NOTES_REF)
        data = json.loads(note.message)
    except (KeyError, ValueError, pygit2.GitError):
        return False
    return isinstance(data, dict) and data.get("spec") == spec


def _created_by_us(repo: pygit2.Repository, branch: str) -> bool:
    """The branch's reflog starts with git-retcon creating it (all it has at the base)."""
    try:
        entries = list(repo.references[branch_ref(branch)].log())
    except (KeyError, pygit2.GitError):
        return False
    return bool(entries) and entries[-1].oid_old == pygit2.Oid(hex="0" * 40) and \
        (entries[-1].message or "").startswith("retcon")


def ensure_reflog(repo: pygit2.Repository, name: str, new: str, message: str) -> None:
    """The entry that creating ref `name` at `new` leaves in its reflog, written here when
    git wrote none (core.logAllRefUpdates off; libgit2 then writes no reflog at all): a
    branch's reflog is how git-retcon knows a branch at the merge base is one it made."""
    try:
        if list(repo.references[name].log()):
            return
        who = signature(repo.path, "COMMITTER")
        sign = "-" if who.offset < 0 else "+"
        tz = f"{sign}{abs(who.offset) // 60:02d}{abs(who.offset) % 60:02d}"
        path = common_dir(repo) / "logs" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as f:
            f.write(f"{'0' * 40} {new} {who.name} <{who.email}> {who.time} {tz}\t{message}\n")
    except (KeyError, OSError, pygit2.GitError):
        pass   # no proof then: the next run refuses the branch and says what to do


def foreign(repo: pygit2.Repository, spec: str, branch: str, base: str | None, recorded: Sequence[str],
            started: bool, heads: Sequence[str] = ()) -> str | None:
    """Why the existing branch `branch` is not git-retcon's for `spec`, or None when it is
    (or does not exist). base: merge-base(source, remote), None when they no longer
    resolve; recorded: the spec's created commits (full shas, in order); started: the
    spec has a history (so a run made the branch); heads: the source's and remote's
    tips, where a branch built on an older base (the source was rebased) ends."""
    c = chain(repo, branch, base) if base else Chain(branch_tip(repo, branch), [], False)
    if c.tip is None:
        return None
    if not c.on_base:
        return _foreign_off_base(repo, spec, branch, c.tip, recorded, heads if base else None)
    if recorded and c.commits[: len(recorded)] == list(recorded):
        return None   # the branch a run made; commits on top are a human's fix, adopted
    if started and not recorded:
        return None   # made by a run with no commit yet: a human's fix on it is adopted
    first = next((s for s in c.commits if not made_by(repo, s, spec)), None)
    if c.commits and first is None:
        return None   # every commit is git-retcon's for this spec (a crash, a pull)
    if first is None:
        if _created_by_us(repo, branch):
            return None   # at the base, as the first run left it
        return f"branch '{branch}' already exists (at {c.tip[:9]}) and git-retcon did not create it"
    return f"branch '{branch}' already exists with commits git-retcon did not make for '{spec}' ({first[:9]})"


def _foreign_off_base(repo: pygit2.Repository, spec: str, branch: str, tip: str, recorded: Sequence[str],
                      heads: Sequence[str] | None) -> str | None:
    """A branch not on the base: ours when git-retcon's commits lead from its tip down
    to a commit of the source's or remote's history (the old base, before a rebase).
    heads None: the source or remote is gone, so any commit below ours will do."""
    cur = repo.get(tip)
    mine = 0
    while isinstance(cur, pygit2.Commit) and (str(cur.id) in recorded or made_by(repo, str(cur.id), spec)):
        mine += 1
        cur = repo.get(cur.parent_ids[0]) if cur.parent_ids else None
    if mine and (heads is None or isinstance(cur, pygit2.Commit) and any(
            h == str(cur.id) or repo.descendant_of(h, cur.id) for h in heads)):
        return None
    return f"branch '{branch}' is not built on the spec's merge-base and git-retcon did not make it"


def spec_branch_foreign(repo: pygit2.Repository, spec: str, cleaned: str, source: str, remote: str,
                        recorded: Sequence[str], started: bool) -> str | None:
    """foreign() for a spec as stored: its fork point resolved here (None when the source
    or remote is gone: then only git-retcon's own commits at the tip make it ours)."""
    try:
        fork = fork_point(repo, source, remote, "")
    except RetconError:
        return foreign(repo, spec, cleaned, None, [full_sha(repo, s) for s in recorded], started)
    return foreign(repo, spec, cleaned, str(fork.base.id), [full_sha(repo, s) for s in recorded], started,
                   (str(fork.source.id), str(fork.remote.id)))


# -- work trees ------------------------------------------------------------------------


def checked_out_in(repo: pygit2.Repository, branch: str) -> Path | None:
    """The work tree (main or linked) that has `branch` checked out, or is rebasing or
    bisecting it, as git itself counts it (read from the HEAD files: no subprocess,
    as this is asked before every move)."""
    ref = branch_ref(branch)
    common = common_dir(repo)
    admin = [(common, common.parent)]   # shown to the user: the main work tree's usual place
    worktrees = common / "worktrees"
    if worktrees.is_dir():
        for d in sorted(worktrees.iterdir()):
            try:
                gitfile = Path((d / "gitdir").read_text().strip())
            except OSError:
                continue
            admin.append((d, gitfile.parent))
    for gitdir, top in admin:
        for name in ("HEAD", "rebase-merge/head-name", "rebase-apply/head-name", "BISECT_START"):
            try:
                text = (gitdir / name).read_text().strip()
            except OSError:
                continue
            if text.removeprefix("ref:").strip() in (ref, branch):
                return top
    return None


def refuse_checked_out(repo: pygit2.Repository, branch: str) -> None:
    where = checked_out_in(repo, branch)
    if where is not None:
        raise RetconError(
            f"branch '{branch}' is checked out in {where}: switch that work tree to another branch first"
        )


def move_branch(repo: pygit2.Repository, cleaned: str, new: str, old: str | None, why: str) -> None:
    """The one place run, squash, redo and a reordered spec move the cleaned branch:
    compare-and-swap from old, and never while a work tree has it checked out (asked at
    every move: the user may check it out while a run goes on)."""
    refuse_checked_out(repo, cleaned)
    cas_ref(repo, branch_ref(cleaned), new, old, f"retcon: {why}")
    if old is None and new is not None:
        ensure_reflog(repo, branch_ref(cleaned), new, f"retcon: {why}")
