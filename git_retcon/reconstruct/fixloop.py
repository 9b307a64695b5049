"""The fix loop's round: diagnose the failure, let the escalation rules stop it,
else ask the model for a WIP commit. Escalation state is replayed from the
recorded attempts, so a resumed run counts them too.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from git_retcon import diff as hunks
from git_retcon.git.plumbing import full_sha, get_commit
from git_retcon.reconstruct import steps
from git_retcon.reconstruct.context import Work
from git_retcon.reconstruct.verify import recorded_failure
from git_retcon.state import spec as specmod

if TYPE_CHECKING:
    # rework (failure parsers: many regexes) is imported when a build or test fails, not at start-up.
    from git_retcon import rework


def fix(w: Work, failure: rework.Failure, escalation: rework.Escalation, round_: int) -> None:
    """Fix round round_ (1-based, in this run) of logical commit k: a WIP commit, or stuck."""
    diag = diagnose(w, failure, escalation.attempts)
    # Deterministic escalation first: the model is not asked when a rule says stop.
    verdict = escalation.observe(diag.obs, diag.fix_changed)
    if verdict:
        w.stop_stuck(verdict)
    max_fix = w.run.opts.max_fix
    if round_ > max_fix:
        w.stop_stuck(f"no passing state after {max_fix} fix attempts in this run; last failure:\n{failure.text}")
    # Numbered over the logical commit, not the run: a resumed run goes on counting.
    attempt = len(w.commit.created)
    w.run.ui.line(f"Fix attempt {attempt}:")
    escalation.attempt(diag.obs)
    _fix_step(w, diag, attempt)


def replay(w: Work) -> rework.Escalation:
    """The escalation state from this commit's recorded fix attempts since the last
    human resolution."""
    from git_retcon.rework import Escalation
    c = w.commit
    escalation = Escalation()
    since = max((i for i, e in enumerate(c.history) if isinstance(e, specmod.Resolved)), default=-1)
    made = [e.sha for e in c.history[since + 1:] if isinstance(e, specmod.CommitCreated)]
    for sha in made[:-1]:   # the last one is verified next, by the loop
        sha = full_sha(w.run.repo, sha)
        failure = recorded_failure(w, sha)
        if failure is not None:
            diag = diagnose(w, failure, escalation.attempts, sha)
            escalation.observe(diag.obs, diag.fix_changed)
            escalation.attempt(diag.obs)
    return escalation


def diagnose(w: Work, failure: rework.Failure, attempts: dict[str, int],
             sha: str | None = None) -> rework.Diagnosis:
    """Parse and blame the failure of commit sha (the branch tip, as verify tested it, by default)."""
    from git_retcon import rework
    repo = w.run.repo
    commit = get_commit(repo, sha or w.tip())
    first = get_commit(repo, full_sha(repo, w.commit.created[0]))
    base_tree = str(first.parents[0].tree_id) if first.parents else str(get_commit(repo, w.br.base).tree_id)
    return rework.diagnose(
        repo, failure, base_tree=base_tree, tree=str(commit.tree_id),
        parent_tree=str(commit.parents[0].tree_id), source_tree=w.br.source_tree,
        root=str(w.wt.path), attempts=attempts)


def _fix_step(w: Work, diag: rework.Diagnosis, attempt: int) -> None:
    ui = w.run.ui
    tip = w.tip()
    w.wt.reset(tip)
    session = steps.session(w, True, tip, diag.brief)
    values = steps.prompt_values(w, session)
    # The candidates' ids as read_diff shows them (the note keeps them whole).
    shown = hunks.names_of(session.remaining())
    values.update(attempt=str(attempt), brief=hunks.shorten(diag.brief.text, shown))
    candidates = diag.blame.candidates
    if candidates:
        ui.line(f"Blame: {len(candidates)} candidate hunks in the remaining diff "
                f"({', '.join(c.hunk.path for c in candidates[:3])}{'...' if len(candidates) > 3 else ''})")
    ui.line("Consulting diff for missing pieces...")
    outcome = steps.step(w, "fix.md", values, session)
    ui.line(f"Creating WIP commit... {outcome.text}")
