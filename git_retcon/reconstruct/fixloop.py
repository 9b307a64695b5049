"""The fix loop's round: diagnose the failure, let the escalation rules stop it,
else ask the model for a WIP commit. Escalation state is replayed from the
recorded attempts, so a resumed run counts them too.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from git_retcon import diff
from git_retcon.git.ids import CommitId, TreeId, tree_of
from git_retcon.git.message import wip_message
from git_retcon.git.plumbing import full_sha, get_commit
from git_retcon.model.invented import Drift, invented
from git_retcon.model.outcome import Proposed, Stuck
from git_retcon.model.step import StepResult
from git_retcon.reconstruct import lines, repair, steps
from git_retcon.reconstruct.journal import Journal, Made, Stop
from git_retcon.reconstruct.judge import as_failure, recorded_failure
from git_retcon.reconstruct.work import Work
from git_retcon.state import spec as specmod
from git_retcon.ui import plural

if TYPE_CHECKING:
    # rework (failure parsers: many regexes) is imported when a build or test fails, not at start-up.
    from git_retcon import rework
    from git_retcon.sandbox.runner import Result


def fix(w: Work, journal: Journal, failure: rework.Failure, escalation: rework.Escalation,
        round_: int) -> Made | Stop:
    """Fix round round_ (1-based, in this run) of logical commit k: a WIP commit, or a stop."""
    diag = diagnose(w, failure, escalation.attempts)
    # Deterministic escalation first: the model is not asked when a rule says stop.
    verdict = escalation.observe(diag.obs, diag.fix_changed)
    if verdict:
        return Stuck(verdict)
    max_fix = w.run.opts.max_fix
    if round_ > max_fix:
        # For a person: a tree failure's output is the advice given to the model, not the person's.
        last = failure.headline if failure.phase == "tree" else failure.text
        return Stuck(f"no passing state after {max_fix} fix attempts in this run; last failure:\n{last}")
    # Numbered over the logical commit, not the run: a resumed run goes on counting.
    attempt = len(w.commit.created)
    w.run.ui.line(f"Fix attempt {attempt}:")
    escalation.attempt(diag.obs)
    return _fix_step(w, journal, diag, attempt)


def replay(w: Work) -> rework.Escalation:
    """The escalation state from this commit's recorded fix attempts since the last
    human resolution."""
    from git_retcon.rework import Escalation
    c = w.commit
    escalation = Escalation()
    since = max((i for i, e in enumerate(c.history) if isinstance(e, specmod.Resolved)), default=-1)
    made = [e.sha for e in c.history[since + 1:] if isinstance(e, specmod.CommitCreated)]
    for written in made[:-1]:   # the last one is verified next, by the loop
        sha = full_sha(w.run.repo, written)
        failure = recorded_failure(w, sha)
        if failure is not None:
            diag = diagnose(w, failure, escalation.attempts, sha)
            escalation.observe(diag.obs, diag.fix_changed)
            escalation.attempt(diag.obs)
    return escalation


def diagnose(w: Work, failure: rework.Failure, attempts: dict[str, int],
             sha: CommitId | None = None, tree: TreeId | None = None) -> rework.Diagnosis:
    """Parse and blame the failure of commit sha (the branch tip, as verify tested it, by default),
    or of tree made on it."""
    from git_retcon import rework
    repo = w.run.repo
    commit = get_commit(repo, sha or w.tip())
    first = get_commit(repo, full_sha(repo, w.commit.created[0]))
    base_tree = tree_of(first.parents[0] if first.parents else get_commit(repo, w.br.base))
    return rework.diagnose(
        repo, failure, base_tree=base_tree, tree=tree or tree_of(commit),
        parent_tree=tree_of(commit) if tree else tree_of(commit.parents[0]), source_tree=w.br.source_tree,
        root=str(w.wt.path), attempts=attempts)


def _fix_step(w: Work, journal: Journal, diag: rework.Diagnosis, attempt: int) -> Made | Stop:
    ui = w.run.ui
    tip = w.tip()
    w.wt.reset(tip)
    candidates = diag.blame.candidates
    if candidates:
        paths = list(dict.fromkeys(c.hunk.path for c in candidates))
        ui.line(f"Blame: {plural(len(candidates), 'candidate hunk')} in the remaining diff "
                f"({', '.join(paths[:3])}{'...' if len(paths) > 3 else ''})")
    # Where the spec names lines, the lines later commits name that mend it (reconstruct/repair.py).
    mended = _by_lines(w, journal, diag, tip)
    if mended is not None:
        return mended
    if lines.in_lines(w.spec):   # whole hunks hold other commits' lines: only those that empty none
        candidates = repair.emptying_none(w, tip, candidates)
    # Each candidate alone first, smallest first (reconstruct/repair.py): the one that passes is the fix.
    found = repair.search(w, tip, candidates)
    start = steps.session(w, "fix", tip, diag.brief, found.passed or candidates)
    # The tree plain code tried the candidates on (the worktree holds them now), and how it failed.
    tried = _tried(w, diag, start.checked) if start.checked is not None else None
    values = steps.prompt_values(w, start)
    # The candidates' ids as read_diff showed them when the step began, before the candidates were
    # applied for the model (the note keeps them whole).
    shown = start.session.start_names
    values.update(attempt=str(attempt), brief=diff.shorten(diag.brief.text, shown))
    ui.line(steps.fixing_line(start))
    res = steps.step(w, journal, "fix.md", values, start)
    if not isinstance(res.outcome, Proposed):
        return res.outcome
    if tried is not None and res.outcome.tree == tried[0] and tried[1] is not None:
        alone = "".join(f"; {c.hunk.path} alone: {why}" for c, why in found.tried)
        return Stuck(_not_better(diag, tried[1], candidates) + alone)
    ui.line(f"Creating WIP commit... {res.outcome.message}")
    return journal.make(w, res, tip, diag.brief)


def _by_lines(w: Work, journal: Journal, diag: rework.Diagnosis, tip: CommitId) -> Made | None:
    """The fix plain code finds among the lines later commits name (reconstruct/repair.by_lines),
    committed as a WIP with no model call; None where none passes or fails for the better."""
    from git_retcon import rework

    def better(result: Result, tree: TreeId) -> str:
        """"ran": better, and the tests ran where they did not (a compile error gone); "better";
        or "" (rework.better says how a failure changes for the better)."""
        after = diagnose(w, as_failure(result), {}, tree=tree).obs
        if not rework.better(diag.obs, after):
            return ""
        return "ran" if after.tests_ran and not diag.obs.tests_ran else "better"

    paths = {c.hunk.path for c in diag.blame.candidates} | {loc.path for loc in diag.blame.locations if loc.path}
    found = repair.by_lines(w, tip, paths, diag.failure.output, better)
    for what, why in found.tried:
        w.run.ui.detail(f"{what}: {why}")
    if found.tree is None:
        return None
    verb = "they fail for the better; committing them, and going on from there" if found.progress else \
        "they pass; committing them as the fix"
    w.run.ui.line(f"{found.took[0].upper()}{found.took[1:]}: {verb} (no model needed)...")
    # The tests decided where the lines belong: the spec's hunks say so from here on.
    w.run.ui.line(f"Moved in the spec's hunks: {repair.move_in_spec(w, found.moved)}")
    fixup_of = w.commit.summary if w.run.opts.fixup or w.spec.wip == "fixup" else None
    message = wip_message(found.took if found.given else f"take {found.took}", fixup_of)
    parent_tree = tree_of(get_commit(w.run.repo, tip))
    drift = invented(w.run.repo, parent_tree, found.tree, lines.planned_tree(w, -1), w.br.source_tree)
    w.wt.reset_to_tree(found.tree, tip)
    w.run.ui.line(f"Creating WIP commit... {message}")
    # Lines given back are the source's, and the next commit takes them: nothing drifts.
    note = Drift().note() if found.given else drift.note()
    return journal.make(w, StepResult(Proposed(found.tree, message, note)), tip, diag.brief)


def _tried(w: Work, diag: rework.Diagnosis, checked: Result) -> tuple[TreeId, str | None]:
    """The tree the candidates were tried on, and why they are no fix: their failure, when it is
    not better than the one they were to mend (None: they pass, or change it for the better)."""
    from git_retcon import rework
    tree = w.wt.tree()
    if checked.passed:
        return tree, None
    after = diagnose(w, as_failure(checked), {}, tree=tree)
    return tree, None if rework.better(diag.obs, after.obs) else after.failure.headline + (
        f": {after.parsed.cause}" if after.parsed.cause else "")


def _not_better(diag: rework.Diagnosis, after: str, candidates: list[rework.Candidate]) -> str:
    """A stop that says what was tried, and that it was not committed."""
    tried = "; ".join(f"{c.hunk.path} ({c.reason})" for c in candidates[:5])
    more = f" and {len(candidates) - 5} more" if len(candidates) > 5 else ""
    before = diag.failure.headline + (f": {diag.parsed.cause}" if diag.parsed.cause else "")
    result = (f"with them it fails the same way: {before}" if after == before
              else f"before: {before}; with them: {after}")
    return (f"the candidate hunks tried as a fix did not change the failure for the better, so nothing was "
            f"committed. Tried: {tried}{more}; {result}")
