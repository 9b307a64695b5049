"""The reconstruction loop: the seed's algorithm, resumable at any instant.

For each logical commit whose history does not end in `complete`:
extract (model) -> commit -> record -> build & test -> complete, or the fix loop
(model makes a WIP commit, or stuck). Writes for one created commit happen in
this order: commit object, note, cleaned branch (CAS), spec entry (CAS). On
resume, commits on the cleaned branch past the spec's last entry are adopted.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import llm
import pygit2

from git_retcon import diff as hunks
from git_retcon import rework
from git_retcon.errors import BudgetStop, RetconError, StuckStop
from git_retcon.failpoint import failpoint
from git_retcon.git.plumbing import (
    cas_ref,
    first_parent_chain,
    fork_point,
    full_sha,
    get_commit,
    ref_target,
    short,
    signature,
)
from git_retcon.model.step import (
    DEFAULT_CHAIN_LIMIT,
    ModelUnavailable,
    run_step,
    template,
)
from git_retcon.model.tools import Outcome, Session
from git_retcon.sandbox.runner import Result, Verifier, check_command_exists
from git_retcon.sandbox.worktree import Worktree, ensure_not_checked_out
from git_retcon.state import cost
from git_retcon.state import spec as specmod
from git_retcon.state.store import NOTES_REF, TESTS_REF, Store, Stored, spec_ref
from git_retcon.ui import UI

DEFAULT_MAX_FIX = 5
INDEX_BUDGET = 12000


@dataclass
class Options:
    model: str | None = None
    dry_run: bool = False
    max_fix: int = DEFAULT_MAX_FIX
    chain_limit: int = DEFAULT_CHAIN_LIMIT
    max_tokens: int | None = None      # stop the run (resumable) once it has used this many
    squash_wip: bool = False           # fold WIP commits into their logical commit at the end


@dataclass
class Tally:
    input_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0
    per_commit: dict[int, dict[str, int]] = field(default_factory=dict)   # 1-based index -> usage
    notes: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens


class Branches:
    """source, remote, base and the cleaned branch, resolved once per run."""

    def __init__(self, repo: pygit2.Repository, spec: specmod.Spec):
        fork = fork_point(repo, spec.source, spec.remote,
                          "check that `remote` is the branch the source was started from")
        self.source = fork.source
        self.remote = fork.remote
        self.base = str(fork.base.id)
        self.source_tree = str(self.source.tree_id)
        self.cleaned_ref = f"refs/heads/{spec.cleaned}"
        self.cleaned_tip = ref_target(repo, self.cleaned_ref)


def resolution_text(commit: specmod.LogicalCommit) -> str:
    """The human's resolution (and what it answers) when the last stuck was resolved."""
    last_stuck = last_resolved = None
    for i, entry in enumerate(commit.history):
        if isinstance(entry, specmod.Stuck):
            last_stuck = (i, entry.summary)
        elif isinstance(entry, specmod.Resolved):
            last_resolved = (i, entry.text)
    if last_resolved is None or (last_stuck is not None and last_stuck[0] > last_resolved[0]):
        return ""
    text = f"\nResolution from a human: {last_resolved[1]}\n"
    if last_stuck is not None:
        text += f"(It answers this earlier stuck summary: {last_stuck[1]})\n"
    return text


class Run:
    def __init__(self, repo: pygit2.Repository, store: Store, name: str, opts: Options, ui: UI):
        self.repo = repo
        self.store = store
        self.name = name
        self.opts = opts
        self.ui = ui
        self.tally = Tally()

    # -- entry point ---------------------------------------------------------

    def execute(self) -> None:
        stored = self.store.load(self.name)
        spec = stored.spec
        cur = spec.current()
        if cur is not None and spec.commits[cur].state == "stuck":
            self._refuse_stuck(spec, cur)
        br = Branches(self.repo, spec)
        if self.opts.dry_run:
            self._dry_run(stored, br)
            return
        model_name = None
        model: llm.Model | None = None
        if cur is not None:
            model = self._load_model(spec)
            model_name = model.model_id
            for kind in ("build", "test"):
                command = getattr(spec, kind)
                if command:
                    check_command_exists(command, kind)
        ensure_not_checked_out(self.repo, spec.cleaned)
        with self.store.lock(self.name):
            stored = self.store.load(self.name)  # re-read under the lock
            self.store.sweep_scratch()
            self.store.sweep_locks(
                [spec_ref(self.name), br.cleaned_ref, NOTES_REF, TESTS_REF],
                [Worktree.admin_dir(self.repo, self.name) / "index.lock"])
            self._header(stored.spec, br, model_name)
            tip = self._prepare_branch(stored, br)
            self._adopt(stored, br, tip)
            if stored.spec.current() is None:
                if self.opts.squash_wip:
                    self._squash(stored)
                self._finished_already(stored, br)
                return
            if model is None:  # only adopted commits reopened the work
                model = self._load_model(stored.spec)
                model_name = model.model_id
            wt = Worktree.ensure(self.repo, self.name, tip)
            self.wt = wt
            self.model = model
            spec = stored.spec
            self.verifier = Verifier(self.store, wt.path, spec.build, spec.test, spec.timeout,
                                     on_run=wt.touched_by_command)
            for kind in ("build", "test"):
                if not getattr(stored.spec, kind):
                    self.ui.line(f"No {kind} command configured: {'builds' if kind == 'build' else 'tests'} skipped.")
            stop = "complete"
            try:
                while (k := stored.spec.current()) is not None:
                    self._logical_commit(stored, br, k)
            except RetconError as exc:
                stop = "budget" if isinstance(exc, BudgetStop) else "stuck" if isinstance(exc, StuckStop) else "error"
                raise
            finally:
                self._record_run(stored, model_name or "", stop)
            if self.opts.squash_wip:
                self._squash(stored)
            self._report(stored, br)

    # -- before the loop -----------------------------------------------------

    def _load_model(self, spec: specmod.Spec) -> llm.Model:
        from git_retcon.model import choose as models

        return models.load(models.choose(self.repo, self.opts.model, spec.model))

    def _refuse_stuck(self, spec: specmod.Spec, k: int) -> None:
        c = spec.commits[k]
        summary = c.history[-1].summary  # type: ignore[union-attr]
        self.ui.line(f"Resuming from commit {k + 1}/{len(spec.commits)}: {c.summary}")
        raise StuckStop(
            f"commit {k + 1}/{len(spec.commits)} is stuck: {summary}\n"
            f"Fix what it says (edit the spec with `git retcon spec edit {spec.cleaned}`, or commit a fix "
            f"on '{spec.cleaned}'), then record what you did:\n"
            f"  git retcon resolve -m \"what you changed\" {spec.cleaned}"
        )

    def _header(self, spec: specmod.Spec, br: Branches, model: str | None) -> None:
        self.ui.line(f"Spec: {self.name}")
        self.ui.line(f"Source: {spec.source} ({short(str(br.source.id))})")
        self.ui.line(f"Remote: {spec.remote}")
        self.ui.line(f"Cleaned: {spec.cleaned}")
        if model:
            self.ui.line(f"Model: {model}")

    def _prepare_branch(self, stored: Stored, br: Branches) -> str:
        spec = stored.spec
        recorded = [sha for c in spec.commits for sha in c.created]
        tip = br.cleaned_tip
        if tip is None:
            if recorded:
                raise RetconError(
                    f"branch '{spec.cleaned}' is gone but the spec records {len(recorded)} commits on it: "
                    f"restore it with `git branch {spec.cleaned} {recorded[-1][:12]}`, "
                    f"or start over with `git retcon abort {spec.cleaned}`"
                )
            self.ui.line("Creating cleaned branch from merge-base...")
            cas_ref(self.repo, br.cleaned_ref, br.base, None, f"retcon: start {spec.cleaned} at merge-base")
            tip = br.base
        else:
            self.ui.line(f"Resuming cleaned branch at {short(tip)}")
        self.ui.line(f"Base commit: {short(br.base)}")
        return tip

    def _adopt(self, stored: Stored, br: Branches, tip: str) -> None:
        """Check the branch still holds the recorded commits; adopt those past them."""
        spec = stored.spec
        recorded = [sha for c in spec.commits for sha in c.created]
        stop = self.repo.merge_base(pygit2.Oid(hex=tip), br.source.id)
        chain = first_parent_chain(self.repo, tip, str(stop) if stop else br.base)
        full = [full_sha(self.repo, s) for s in recorded]
        if chain[: len(full)] != full:
            missing = next((s for i, s in enumerate(full) if i >= len(chain) or chain[i] != s), None)
            raise RetconError(
                f"branch '{spec.cleaned}' no longer holds the recorded commits "
                f"(first missing: {short(missing)}): restore it with "
                f"`git branch -f {spec.cleaned} {full[-1][:12]}`, or start over with "
                f"`git retcon abort {spec.cleaned}`"
            )
        extra = chain[len(full):]
        if not extra:
            return
        started = any(c.history for c in spec.commits)
        if not started and any(not self._ours(sha) for sha in extra):
            raise RetconError(
                f"branch '{spec.cleaned}' already exists with commits git-retcon did not make: "
                "choose another `cleaned` name (git retcon spec edit), or delete that branch"
            )
        k = spec.current()
        if k is None:
            # A commit on a finished branch reopens the last logical commit: it is
            # complete again only once its new tip is verified (and equals the source).
            k = len(spec.commits) - 1
            spec.commits[k].history.pop()
        for sha in extra:
            self.ui.line(f"Adopting {short(sha)} into commit {k + 1}/{len(spec.commits)}")
            spec.commits[k].history.append(specmod.CommitCreated(sha))
            self.store.update(stored, f"adopt {short(sha)} into commit {k + 1}")

    def _ours(self, sha: str) -> bool:
        note = self.store.read_note(NOTES_REF, sha)
        return bool(note and note.get("spec") == self.name)

    def _finished_already(self, stored: Stored, br: Branches) -> None:
        tip = ref_target(self.repo, br.cleaned_ref)
        tip_tree = str(get_commit(self.repo, tip).tree_id) if tip else ""
        if tip_tree != br.source_tree:
            paths = sorted({h.path for h in hunks.remaining(self.repo, tip_tree, br.source_tree)})
            raise RetconError(
                f"all logical commits are complete, but '{stored.spec.source}' has changed since: "
                f"{len(paths)} paths differ ({', '.join(paths[:5])}{'...' if len(paths) > 5 else ''}); "
                "add a [[commit]] for them (git retcon spec edit) and run again"
            )
        self.ui.line(f"Nothing to do: all {len(stored.spec.commits)} logical commits are complete.")
        self._report(stored, br)

    # -- one logical commit ----------------------------------------------------

    def _logical_commit(self, stored: Stored, br: Branches, k: int) -> None:
        spec = stored.spec
        c = spec.commits[k]
        n = len(spec.commits)
        self.ui.heading(f"Commit {k + 1}/{n}: {c.summary}")
        if c.state == "stuck":
            self._refuse_stuck(spec, k)
        if c.state == "resolved":
            self.ui.line(f"Resolved: {c.history[-1].text}")  # type: ignore[union-attr]
        tip = ref_target(self.repo, br.cleaned_ref) or br.base
        self.wt.reset(tip)
        if not c.created:
            self._extract(stored, br, k, tip)
        escalation = self._replay(stored, br, k)
        fixes = 0
        while True:
            failure = self._verify(stored, br, k)
            if failure is None:
                c.history.append(specmod.Complete())
                self.store.update(stored, f"commit {k + 1} complete")
                wips = len(c.created) - 1
                self.ui.good("✓ Commit created" + (f" ({wips} WIP)" if wips else ""))
                return
            diag = self._diagnose(stored, br, k, failure, escalation.attempts)
            # Deterministic escalation first: the model is not asked when a rule says stop.
            verdict = escalation.observe(diag.obs, diag.fix_changed)
            if verdict:
                self._stop_stuck(stored, k, verdict)
            fixes += 1
            if fixes > self.opts.max_fix:
                self._stop_stuck(stored, k, f"no passing state after {self.opts.max_fix} fix attempts in this run; "
                                 f"last failure:\n{failure.text}")
            # Numbered over the logical commit, not the run: a resumed run goes on counting.
            attempt = len(c.created)
            self.ui.line(f"Fix attempt {attempt}:")
            escalation.attempt(diag.obs)
            self._fix(stored, br, k, diag, attempt)

    def _diagnose(self, stored: Stored, br: Branches, k: int, failure: rework.Failure,
                  attempts: dict[str, int], sha: str | None = None) -> rework.Diagnosis:
        """Parse and blame the failure of commit sha (the branch tip by default)."""
        c = stored.spec.commits[k]
        # The tip as _verify tested it.
        commit = get_commit(self.repo, sha or ref_target(self.repo, br.cleaned_ref) or br.base)
        first = get_commit(self.repo, full_sha(self.repo, c.created[0]))
        base_tree = str(first.parents[0].tree_id) if first.parents else str(get_commit(self.repo, br.base).tree_id)
        return rework.diagnose(
            self.repo, failure, base_tree=base_tree, tree=str(commit.tree_id),
            parent_tree=str(commit.parents[0].tree_id), source_tree=br.source_tree,
            root=str(self.wt.path), attempts=attempts)

    def _replay(self, stored: Stored, br: Branches, k: int) -> rework.Escalation:
        """The escalation state from this commit's recorded fix attempts since the last
        human resolution, so that a resumed run counts them too."""
        c = stored.spec.commits[k]
        escalation = rework.Escalation()
        since = max((i for i, e in enumerate(c.history) if isinstance(e, specmod.Resolved)), default=-1)
        made = [e.sha for e in c.history[since + 1:] if isinstance(e, specmod.CommitCreated)]
        for sha in made[:-1]:   # the last one is verified next, by the loop
            sha = full_sha(self.repo, sha)
            failure = self._recorded_failure(stored, br, k, sha)
            if failure is not None:
                diag = self._diagnose(stored, br, k, failure, escalation.attempts, sha)
                escalation.observe(diag.obs, diag.fix_changed)
                escalation.attempt(diag.obs)
        return escalation

    def _recorded_failure(self, stored: Stored, br: Branches, k: int, sha: str) -> rework.Failure | None:
        tree = str(get_commit(self.repo, sha).tree_id)
        for kind in ("build", "test"):
            if self.verifier.configured(kind):
                r = self.verifier.cached(tree, kind)
                if r is None:
                    return None
                if not r.passed:
                    return _failure(r)
        return self._tree_failure(stored, br, k, tree)

    def _prompt_vars(self, stored: Stored, k: int, session: Session) -> dict[str, str]:
        spec = stored.spec
        c = spec.commits[k]
        with self.ui.waiting("Computing diff"):
            remaining = session.remaining()
        files, added, removed = hunks.stat(remaining)
        self.ui.line(f"Computing diff ({added + removed} lines)...")
        return {
            "k": str(k + 1), "n": str(len(spec.commits)), "summary": c.summary,
            "message": c.message, "hints": c.hints.strip() or "(none)",
            "paths": json.dumps(c.paths) if c.paths else "(none given)",
            "assigned": hunks.assigned_text(c.hunks, remaining),
            "resolution": resolution_text(c),
            "stat": f"{len(remaining)} hunks in {files} files (+{added} -{removed})",
            "index": hunks.index_lines(remaining, budget=INDEX_BUDGET) if remaining else "(empty)",
        }

    def _session(self, stored: Stored, br: Branches, k: int, fix: bool, parent: str,
                 note: dict[str, Any] | None = None) -> Session:
        return Session(
            wt=self.wt, source_tree=br.source_tree, parent=parent, verifier=self.verifier,
            fix=fix, on_commit=lambda message: self._record_commit(stored, br, k, message, fix, parent, note),
        )

    def _extract(self, stored: Stored, br: Branches, k: int, tip: str) -> None:
        session = self._session(stored, br, k, False, tip)
        values = self._prompt_vars(stored, k, session)
        self.ui.line("Extracting relevant changes...")
        outcome = self._step(template("extract.md").substitute(values), values, session, stored, k)
        if outcome.kind == "stuck":
            self._stop_stuck(stored, k, outcome.text)

    def _fix(self, stored: Stored, br: Branches, k: int, diag: rework.Diagnosis, attempt: int) -> None:
        tip = ref_target(self.repo, br.cleaned_ref) or br.base
        self.wt.reset(tip)
        # The brief goes into the WIP commit's note: why it was made, for squash and for humans.
        session = self._session(stored, br, k, True, tip,
                                {"diagnosis": diag.brief.text, "rework": diag.brief.record})
        values = self._prompt_vars(stored, k, session)
        values.update(attempt=str(attempt), brief=diag.brief.text)
        if diag.blame.candidates:
            self.ui.line(f"Blame: {len(diag.blame.candidates)} candidate hunks in the remaining diff "
                         f"({', '.join(c.hunk.path for c in diag.blame.candidates[:3])}"
                         f"{'...' if len(diag.blame.candidates) > 3 else ''})")
        self.ui.line("Consulting diff for missing pieces...")
        outcome = self._step(template("fix.md").substitute(values), values, session, stored, k)
        if outcome.kind == "stuck":
            self._stop_stuck(stored, k, outcome.text)
        self.ui.line(f"Creating WIP commit... {outcome.text}")

    def _step(self, prompt: str, values: dict[str, str], session: Session, stored: Stored, k: int) -> Outcome:
        if self.opts.max_tokens is not None and self.tally.tokens >= self.opts.max_tokens:
            self._stop_budget(stored, k)
        before = self.tally.tokens
        try:
            res = run_step(self.model, template("system.md").template, prompt,
                           template("steer.md").substitute(values), session, self.opts.chain_limit,
                           over_budget=self._over_budget(before), on_retry=self._retrying)
        except ModelUnavailable as exc:
            self._stop_stuck(stored, k, f"{exc}. Nothing of this step was recorded; the state is saved. "
                             "When the backend works again, resolve (e.g. -m \"retry\") and run again.")
        self.tally.input_tokens += res.input_tokens
        self.tally.output_tokens += res.output_tokens
        self.tally.calls += res.calls
        spent = cost.usage(res.input_tokens, res.output_tokens, res.calls)
        mine = self.tally.per_commit.setdefault(k + 1, cost.usage(0, 0, 0))
        for key in mine:
            mine[key] += spent[key]
        if res.outcome.commit:
            note = self.tally.notes.setdefault(res.outcome.commit, {})
            note["tokens"] = {"input": res.input_tokens, "output": res.output_tokens}
            note["model_calls"] = res.calls
            if res.retries:
                note["model_retries"] = res.retries
            self.store.write_note(NOTES_REF, res.outcome.commit, note)
        elif res.calls:
            cost.add_spent(self.store, stored, k + 1, spent, res.outcome.kind)
        self.ui.detail(f"model: {res.calls} calls, {res.input_tokens} tokens in, {res.output_tokens} out")
        if res.outcome.kind == "budget":
            self._stop_budget(stored, k)
        return res.outcome

    def _over_budget(self, before: int) -> Callable[[int], bool] | None:
        limit = self.opts.max_tokens
        return None if limit is None else (lambda step: before + step >= limit)

    def _retrying(self, error: str, attempt: int, seconds: float) -> None:
        self.ui.line(f"Model error ({error}); retrying in {seconds:.1f}s (try {attempt + 1})")

    def _stop_budget(self, stored: Stored, k: int) -> None:
        n = len(stored.spec.commits)
        self.ui.bad("✗ Token budget reached - stopping")
        raise BudgetStop(
            f"token budget reached: {self.tally.tokens} tokens used in this run "
            f"(--max-tokens {self.opts.max_tokens}), while on commit {k + 1}/{n}. Nothing is stuck and "
            f"everything committed so far is kept. To go on, run again (each run has its own budget):\n"
            f"  git retcon run {stored.spec.cleaned} --max-tokens N"
        )

    def _record_run(self, stored: Stored, model: str, stop: str) -> None:
        """The run's token totals, noted on the spec's current commit."""
        if not self.tally.calls:
            return
        if stop != "complete":   # the closing report says it otherwise
            self.ui.line(f"Tokens this run: {self.tally.input_tokens} in, {self.tally.output_tokens} out "
                         f"({self.tally.calls} model calls)")
        cost.add_run(self.store, stored, {
            "model": model, "stop": stop,
            "tokens": cost.usage(self.tally.input_tokens, self.tally.output_tokens, self.tally.calls),
            "commits": {str(i): u for i, u in sorted(self.tally.per_commit.items())},
        })

    def _record_commit(self, stored: Stored, br: Branches, k: int, message: str, fix: bool,
                       parent: str, extra: dict[str, Any] | None = None) -> str:
        """The write order that makes a crash at any instant resumable."""
        c = stored.spec.commits[k]
        if not fix:
            message = _initial_message(c.message, message)
        author = signature(self.wt.path, "AUTHOR")
        committer = signature(self.wt.path, "COMMITTER")
        sha = self.wt.commit(message, parent, author, committer)
        failpoint("after-commit-object")
        note = {"spec": self.name, "index": k + 1, "kind": "wip" if c.created else "initial",
                "attempt": len(c.created) + 1, "tokens": {"input": 0, "output": 0}, **(extra or {})}
        self.tally.notes[sha] = note
        self.store.write_note(NOTES_REF, sha, note)
        cas_ref(self.repo, br.cleaned_ref, sha, parent, f"retcon: {message.splitlines()[0]}")
        failpoint("after-branch-ref")
        self.wt.move_head(sha)
        c.history.append(specmod.CommitCreated(sha))
        self.store.update(stored, f"commit {k + 1}: created {short(sha)}")
        failpoint("after-spec-entry")
        self.ui.line(f"Creating commit... {short(sha)}")
        return sha

    def _verify(self, stored: Stored, br: Branches, k: int) -> rework.Failure | None:
        """Build and test the branch tip; None when it passes, else the failure."""
        tip = ref_target(self.repo, br.cleaned_ref) or br.base
        self.wt.reset(tip)
        tree = str(get_commit(self.repo, tip).tree_id)
        labels = {"build": "Building", "test": "Tests"}
        results = self.verifier.verify(
            tree, on_start=lambda kind: self.ui.start(labels[kind]),
            on_done=lambda r: self.ui.finish(r.passed, _verdict(r)), on_output=self.ui.output,
        )
        self._note_results(tip, results)
        for r in results:
            if r.result == "timeout":
                self._stop_stuck(stored, k, f"{r.kind} `{r.command}` timed out after {r.seconds:.0f}s: "
                                 "fix the command or raise `timeout` in the spec (git retcon spec edit)")
            if r.result == "notfound":
                raise RetconError(
                    f"{r.kind} command `{r.command}` was not found in the worktree (exit 127): "
                    f"fix `{r.kind}` in the spec (git retcon spec edit {self.name}), then run again"
                )
            if not r.passed:
                return _failure(r)
        failure = self._tree_failure(stored, br, k, tree)
        if failure is not None:
            self.ui.bad(f"Final tree differs from '{stored.spec.source}' in {len(failure.paths)} paths")
        return failure

    def _tree_failure(self, stored: Stored, br: Branches, k: int, tree: str) -> rework.Failure | None:
        """The last logical commit must end on the source tip's tree."""
        if k != len(stored.spec.commits) - 1 or tree == br.source_tree:
            return None
        left = hunks.remaining(self.repo, tree, br.source_tree)
        paths = sorted({h.path for h in left})
        return rework.Failure(
            "tree", "This is the last logical commit, and its tree must equal the source branch tip, "
            f"but {len(left)} hunks in {len(paths)} files remain: {', '.join(paths[:50])}.",
            "Apply them (they belong to this last commit, since no later commit will take "
            "them), or call stuck naming the paths you cannot place.", tuple(paths))

    def _note_results(self, tip: str, results: list[Result]) -> None:
        note = self.store.read_note(NOTES_REF, tip)
        if note is None or note.get("spec") != self.name:
            return
        for kind in ("build", "test"):
            r = next((r for r in results if r.kind == kind), None)
            if r is not None:
                note[kind] = r.result
            elif not self.verifier.configured(kind):
                note[kind] = "skipped"
        self.store.write_note(NOTES_REF, tip, note)

    def _stop_stuck(self, stored: Stored, k: int, summary: str) -> None:
        stored.spec.commits[k].history.append(specmod.Stuck(summary))
        self.store.update(stored, f"commit {k + 1} stuck")
        n = len(stored.spec.commits)
        self.ui.bad("✗ Stuck - stopping")
        raise StuckStop(
            f"commit {k + 1}/{n} is stuck: {summary}\n"
            f"When you have fixed it, record what you did and run again:\n"
            f"  git retcon resolve -m \"what you changed\" {stored.spec.cleaned}\n"
            f"  git retcon run {stored.spec.cleaned}"
        )

    # -- reports ---------------------------------------------------------------

    def _report(self, stored: Stored, br: Branches) -> None:
        spec = stored.spec
        # By message: a human's adopted fix is not a WIP commit.
        wips = sum(1 for c in spec.commits for sha in c.created
                   if get_commit(self.repo, sha).message.startswith("WIP:"))
        self.ui.heading("Complete!")
        self.ui.line(f"{len(spec.commits)} logical commits created")
        self.ui.line(f"{wips} WIP fix commits")
        if self.tally.calls:
            self.ui.line(f"Tokens this run: {self.tally.input_tokens} in, {self.tally.output_tokens} out "
                         f"({self.tally.calls} model calls)")
            for i, u in sorted(self.tally.per_commit.items()):
                self.ui.line(f"  commit {i}: {u['input']} in, {u['output']} out, {u['calls']} calls")
        self.ui.line(f"Branch: {spec.cleaned}")
        if wips:
            self.ui.line("To squash WIP commits (trees and test records stay as they are):")
            self.ui.line(f"  git retcon squash {spec.cleaned}")

    def _squash(self, stored: Stored) -> None:
        from git_retcon.reconstruct.squash import squash

        self.ui.heading("Squashing WIP commits")
        squash(self.store, stored, self.ui.line)

    def _dry_run(self, stored: Stored, br: Branches) -> None:
        spec = stored.spec
        self._header(spec, br, None)
        tip = br.cleaned_tip or br.base
        self.ui.line(f"Base commit: {short(br.base)}")
        self.ui.line(f"Cleaned branch: {short(br.cleaned_tip) if br.cleaned_tip else 'not created yet'}")
        left = hunks.remaining(self.repo, str(get_commit(self.repo, tip).tree_id), br.source_tree)
        files, added, removed = hunks.stat(left)
        self.ui.line(f"Remaining diff: {len(left)} hunks in {files} files (+{added} -{removed})")
        for i, c in enumerate(spec.commits):
            self.ui.line(f"  {i + 1}. [{c.state}] {c.summary}")
        k = spec.current()
        self.ui.line("Dry run: nothing was changed. "
                     + (f"Next: commit {k + 1}." if k is not None else "Nothing left to do."))


def _initial_message(spec_message: str, model_message: str) -> str:
    """The spec's message is authoritative; a body the model wrote is kept when the spec has none."""
    spec_message = spec_message.strip()
    if "\n" in spec_message:
        return spec_message + "\n"
    lines = model_message.strip().splitlines()
    body = "\n".join(lines[1:]).strip()
    return spec_message + ("\n\n" + body if body else "") + "\n"


def _failure(r: Result) -> rework.Failure:
    return rework.Failure(r.kind, f"{r.kind.capitalize()} failed: `{r.command}` (exit {r.exit_code})", r.output)


def _verdict(r: Result) -> str:
    word = "PASS" if r.passed else "FAIL"
    extra = " (cached)" if r.cached else ""
    return f"{word}{extra}" if r.passed else f"{word} ({r.reason()}){extra}"
