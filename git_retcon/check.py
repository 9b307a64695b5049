"""The verification `check` runs (and the pre-push hook).

`verify` is what the pre-push hook relies on, so it stays cheap: no model, no
build (unless asked to rerun), no walk beyond the cleaned and source branches'
own commits, and tree equality decided by comparing two tree ids.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pygit2

from git_retcon.git import ownership
from git_retcon.git.ids import CommitId, tree_of
from git_retcon.git.message import FIX_PREFIXES, is_fix
from git_retcon.git.plumbing import (
    find_commit,
    fork_point,
    full_sha,
    get_commit,
    git,
    main_workdir,
    ref_target,
    short,
)
from git_retcon.git.rebased import advice, older_base
from git_retcon.reconstruct import ontop
from git_retcon.state import notes, records
from git_retcon.state.notes import CommandKind
from git_retcon.state.spec import LogicalCommit
from git_retcon.state.store import Store, Stored
from git_retcon.ui import plural

if TYPE_CHECKING:
    from git_retcon.sandbox.runner import Result

# How far past the recorded commits the branch walk goes before giving up on
# finding the merge-base: a branch rebased elsewhere must not cost a full-history walk.
_SLACK = 50
_MAX_SOURCE_WALK = 10000
_STAT_FILES = 20


@dataclass
class CheckReport:
    items: list[tuple[bool, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(ok for ok, _ in self.items)

    def add(self, ok: bool, text: str) -> None:
        self.items.append((ok, text))

    def render(self) -> str:
        """The checklist as `check` and the pre-push hook print it."""
        return "\n".join(f"{'✓' if ok else '✗'} {text}" for ok, text in self.items)


def check_spec(store: Store, stored: Stored, allow_wip: bool = False, rerun: bool = False,
           progress: Callable[[str], None] | None = None, sandbox: str | None = None) -> CheckReport:
    """The checks the pre-push hook relies on; no model, and no build unless rerun."""
    repo = store.repo
    spec = stored.spec
    name = stored.name
    v = CheckReport()
    open_ = [(i, c) for i, c in enumerate(spec.commits) if c.state != "complete"]
    if open_:
        v.add(False, _open_text(stored, open_))
    else:
        v.add(True, f"all {len(spec.commits)} logical commits are complete")
    tip = ref_target(repo, f"refs/heads/{spec.cleaned}")
    if tip is None:
        v.add(False, f"branch '{spec.cleaned}' does not exist: run `git retcon run {name}`")
        return v
    fork = fork_point(repo, spec.source, spec.remote, f"fix `source`/`remote` with `git retcon spec edit {name}`")
    src = fork.source
    base = str(fork.base.id)
    recorded = [full_sha(repo, s) for c in spec.commits for s in c.created]
    on = ownership.chain(repo, spec.cleaned, base, len(recorded) + _SLACK)
    chain, on_base = on.commits, on.on_base
    started = any(c.history for c in spec.commits)
    foreign = ownership.foreign(repo, name, spec.cleaned, base, recorded, started,
                                (str(src.id), str(fork.remote.id))) if on_base else None
    if foreign:
        # run would refuse it too: saying "run to adopt them" would send the user in a circle.
        v.add(False, f"{foreign}: git-retcon neither checks nor adopts it; rename or delete that branch, "
                     f"or give the spec another `cleaned` name")
        return v
    if not on_base and not open_ and older_base(repo, recorded, tip, base) is not None:
        v.add(False, advice(spec.source, name))   # what status and absorb say, and run does
        return v
    v.add(*_chain_item(repo, stored, chain, on_base, recorded, base))
    v.add(*_tree_item(repo, stored, tip, src, base, complete=not open_))
    if rerun:
        v.add(*_rerun(store, stored, progress or (lambda _text: None), sandbox))
    v.add(*_tests_item(store, stored))
    for item in _adopted_items(store, stored):
        v.add(False, item)
    fixes = {s: m for s in chain if is_fix(m := get_commit(repo, s).message or "")}
    wip = list(fixes)
    kinds = "/".join(sorted({p.strip() for m in fixes.values() for p in FIX_PREFIXES if m.startswith(p)}))
    if wip and not allow_wip:
        v.add(False, f"{plural(len(wip), f'{kinds} commit')} left ({', '.join(short(s) for s in wip[:5])}): "
                     f"squash them into their logical commits, or pass --allow-wip")
    elif wip:
        v.add(True, f"{plural(len(wip), f'{kinds} commit')} (allowed)")
    else:
        v.add(True, "no WIP: commits")
    return v


def _open_text(stored: Stored, open_: list[tuple[int, LogicalCommit]]) -> str:
    n = len(stored.spec.commits)
    i, c = open_[0]
    what = {
        "stuck": f"fix what it says, then `git retcon resolve -m \"...\" {stored.name}` and run again",
        "resolved": f"resolved but not finished: run `git retcon run {stored.name}`",
        "in-progress": f"in progress: run `git retcon run {stored.name}` to finish it",
        "pending": f"not started: run `git retcon run {stored.name}`",
    }[c.state]
    text = f"commit {i + 1}/{n} is {c.state}: {c.summary}: {what}"
    if (stuck := c.stuck()) is not None:
        reason = stuck.summary.strip().splitlines()
        text += f"\n    stuck because: {reason[0] if reason else '(no summary)'}"
    if len(open_) > 1:
        text += f"\n    (and {plural(len(open_) - 1, 'later logical commit')} not complete)"
    return text


def _chain_item(repo: pygit2.Repository, stored: Stored, chain: list[CommitId], on_base: bool,
                recorded: list[CommitId], base: str) -> tuple[bool, str]:
    spec, name = stored.spec, stored.name
    if not on_base:
        return False, (f"'{spec.cleaned}' is not on top of merge-base('{spec.source}', '{spec.remote}') "
                       f"{short(base)} (a branch was rebased since the run): start over with "
                       f"`git retcon abort {name}` and `git retcon run {name}`")
    if chain == recorded:
        return True, f"'{spec.cleaned}' holds exactly the {plural(len(recorded), 'recorded commit')} on {short(base)}"
    if chain[: len(recorded)] == recorded and (on := ontop.find(repo, spec, name)) is not None:
        return False, on.advice(repo)    # a person's fix on the finished branch: what run and absorb say
    if chain[: len(recorded)] == recorded:
        extra = len(chain) - len(recorded)
        return False, (f"'{spec.cleaned}' has {plural(extra, 'commit')} the spec does not record "
                       f"({', '.join(short(s) for s in chain[len(recorded):][:5])}): "
                       f"run `git retcon run {name}` to adopt and test them")
    missing = next(s for i, s in enumerate(recorded) if i >= len(chain) or chain[i] != s)
    return False, (f"'{spec.cleaned}' does not hold the recorded commits (first missing: {short(missing)}; "
                   f"{len(chain)} on the branch, {len(recorded)} recorded): restore it with "
                   f"`git branch -f {spec.cleaned} {recorded[-1][:12]}`, or start over with "
                   f"`git retcon abort {name}`")


def _tree_item(repo: pygit2.Repository, stored: Stored, tip: str, src: pygit2.Commit, base: str,
               complete: bool) -> tuple[bool, str]:
    spec, name = stored.spec, stored.name
    tip_tree = str(get_commit(repo, tip).tree_id)
    if tip_tree == str(src.tree_id):
        return True, f"final tree equals '{spec.source}' ({short(str(src.id))})"
    newer = source_moved_on(repo, src, tip_tree, base) if complete else []
    if newer:
        listed = "\n".join(f"    {short(str(c.id))} {c.message.splitlines()[0] if c.message else ''}"
                           for c in newer[:5])
        more = f"\n    ... and {len(newer) - 5} more" if len(newer) > 5 else ""
        return False, (f"'{spec.source}' has moved on since the run: {plural(len(newer), 'new commit')} not in "
                       f"'{spec.cleaned}': absorb them into the logical commits they belong to (what status and "
                       f"run say): git retcon absorb {name}\n{listed}{more}")
    stat = git(main_workdir(repo), "diff", "--no-color", "--no-ext-diff", "--stat=100",
               f"--stat-count={_STAT_FILES}", tip, str(src.id)).rstrip("\n")
    m = re.search(r"(\d+) files? changed", stat)
    count = plural(int(m.group(1)), "path") if m else "some paths"
    indented = "\n".join("   " + line for line in stat.splitlines())
    unfinished = "" if complete else " (the run is not finished)"
    return False, f"final tree differs from '{spec.source}' in {count}{unfinished}:\n{indented}"


def source_moved_on(repo: pygit2.Repository, src: pygit2.Commit, tree: str, base: str) -> list[pygit2.Commit]:
    """The source's commits, newest first, made after the one whose tree is `tree`
    (what the run reproduced); empty when no commit of the source has that tree."""
    newer: list[pygit2.Commit] = []
    cur: pygit2.Commit | None = src
    while cur is not None and str(cur.id) != base and len(newer) < _MAX_SOURCE_WALK:
        if str(cur.tree_id) == tree:
            return newer
        newer.append(cur)
        cur = find_commit(repo, cur.parent_ids[0]) if cur.parent_ids else None
    return []


def configured_commands(stored: Stored) -> dict[CommandKind, str]:
    return {kind: cmd for kind in notes.COMMAND_KINDS if (cmd := getattr(stored.spec, kind))}


def record_for(store: Store, stored: Stored, sha: str, kind: CommandKind) -> notes.CommandRecord | None:
    """The record of the spec's kind command that answers for commit sha's tree: made in the spec's
    context (state/records.py), under the sandbox the commit's note names when there are several."""
    command = getattr(stored.spec, kind)
    commit = find_commit(store.repo, sha)
    if not command or commit is None:
        return None
    note = notes.read_commit(store, str(commit.id))
    ran = note.get("sandbox") if isinstance(note, dict) else None
    return records.for_spec(notes.tree_records(store, str(commit.tree_id)), command,
                            records.of_spec(stored.spec, kind), ran if isinstance(ran, str) else None)


def _tests_item(store: Store, stored: Stored) -> tuple[bool, str]:
    """Each logical commit's last tree needs a passing record of every configured command."""
    commands = configured_commands(stored)
    if not commands:
        return True, ("no build or test command in the spec: nothing to test "
                      f"(add `build`/`test` with `git retcon spec edit {stored.name}`)")
    problems: dict[str, list[str]] = {}  # reason -> commits, so the line stays short
    for i, c in enumerate(stored.spec.commits):
        if not c.created:
            if c.state != "complete":   # complete with none: nothing was left for it, its tree is the one before
                problems.setdefault("not built yet", []).append(str(i + 1))
            continue
        commit = find_commit(store.repo, full_sha(store.repo, c.created[-1]))
        if commit is None:
            problems.setdefault("not in this repository (git retcon pull)", []).append(str(i + 1))
            continue
        for kind in commands:
            rec = record_for(store, stored, str(commit.id), kind)
            if rec is None:
                problems.setdefault(f"{kind} never ran", []).append(f"{i + 1} {short(str(commit.id))}")
                break
            if rec.get("result") != "pass":
                problems.setdefault(f"{kind} {rec.get('result', 'unknown')}", []).append(
                    f"{i + 1} {short(str(commit.id))}")
                break
    if problems:
        listed = "; ".join(f"{'commit' if len(ks) == 1 else 'commits'} {', '.join(ks)} ({why})"
                           for why, ks in problems.items())
        return False, (f"no passing {'/'.join(commands)} record for {listed}: run `git retcon run {stored.name}`, "
                       f"or test again with `git retcon check --rerun {stored.name}`")
    return True, f"every logical commit's last tree passed {' and '.join(commands)}"


def _adopted_items(store: Store, stored: Stored) -> list[str]:
    """A human's commit that a run adopted (not a fix) is vouched for by check as it stands:
    it needs a passing record of its own, even when a fix after it mends the logical commit."""
    commands = configured_commands(stored)
    spec, repo = stored.spec, store.repo
    out: list[str] = []
    for i, c in enumerate(spec.commits):
        for sha in c.created[:-1]:      # the last is the logical commit's, checked above
            commit = find_commit(repo, full_sha(repo, sha))
            note = notes.read_commit(store, str(commit.id)) if commit is not None else None
            if commit is None or not isinstance(note, dict) or note.get("kind") != "adopted" \
                    or is_fix(commit.message or ""):
                continue
            for kind in commands:
                rec = record_for(store, stored, str(commit.id), kind)
                result = str(rec.get("result", "unknown")) if rec is not None else "never ran"
                if result != "pass":
                    subject = (commit.message or "").splitlines()[0][:60] if commit.message else ""
                    out.append(f"adopted commit {short(str(commit.id))} ({subject}) of commit {i + 1}/"
                               f"{len(spec.commits)} has no passing {kind} record ({kind} {result}): check "
                               f"vouches only for commits that pass; fold the fixes after it into it with "
                               f"`git retcon squash {stored.name}`, or mend it on the branch and run again")
                    break
    return out


def _rerun(store: Store, stored: Stored, progress: Callable[[str], None],
           sandbox_mode: str | None = None) -> tuple[bool, str]:
    """Build and test each logical commit's last tree again in the spec's worktree,
    recording the fresh results in place of the old ones."""
    from git_retcon.sandbox.choice import for_spec
    from git_retcon.sandbox.keep import keep
    from git_retcon.sandbox.runner import Commands
    from git_retcon.sandbox.setup import Setup
    from git_retcon.sandbox.worktree import Worktree

    commands = configured_commands(stored)
    if not commands:
        return True, "--rerun: no build or test command in the spec, nothing to run"
    spec = stored.spec
    targets = [(i, full_sha(store.repo, c.created[-1])) for i, c in enumerate(spec.commits) if c.created]
    sandbox = for_spec(store.repo, spec, sandbox_mode)   # `require` with none: refused before anything runs
    progress(f"Sandbox: {sandbox.describe()}")
    failed = []
    with store.lock(stored.name):
        wt: Worktree | None = None
        runner: Commands | None = None
        for i, sha in targets:
            commit = find_commit(store.repo, sha)
            if commit is None:
                continue  # reported by the record check
            if wt is None or runner is None:
                wt = Worktree.ensure(store.repo, stored.name, sha)
                runner = Commands(store, wt.path, spec.build, spec.test, spec.timeout, on_run=wt.touched_by_command,
                                  setup=Setup.of(wt, spec.setup, spec.timeout, sandbox), sandbox=sandbox)
            wt.reset(sha)
            for kind in commands:
                where = f"commit {i + 1}/{len(spec.commits)} {short(sha)}"
                # setup's own line, with its time: a rerun's wall time is setup's and the commands'
                res = runner.run_and_record(tree_of(commit), kind, on_setup=_say_setup(progress, where))
                progress(f"commit {i + 1}/{len(spec.commits)} {short(sha)}: {kind} {res.result} "
                         f"({res.seconds:.1f}s)" + (f"; {res.restored}" if res.restored else ""))
                if not res.passed:
                    failed.append(f"{i + 1} ({kind}: {res.reason()})")
                    break
        if wt is not None and spec.current() is None:
            keep(store.repo, stored.name)   # a complete spec's worktree is set aside (as run leaves it)
    if failed:
        return False, f"--rerun: failed for commits {', '.join(failed)}"
    return True, f"--rerun: {' and '.join(commands)} passed again for {plural(len(targets), 'logical commit')}"


def _say_setup(progress: Callable[[str], None], where: str) -> Callable[[Result], None]:
    """check --rerun's line for a setup run before a command, with its time (else a 17 s rerun
    says 5.6 s: only the commands' own times)."""
    def say(s: Result) -> None:
        progress(f"{where}: setup `{s.command}` ({s.setup}) {s.result} ({s.seconds:.1f}s)")
    return say
