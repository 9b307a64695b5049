"""One model step of the loop (an extraction or a fix): its prompt's values, the
tools' session, the call, and the tokens it spent, counted against --max-tokens.
A step returns what it made (model/outcome.py); it records nothing but its cost.

Judgement only where it is needed: where the spec already says which changes belong to a
commit (the hunks `plan` assigned it, its `paths`), plain code applies them before the model is
called, and a fix starts with the rework brief's candidate hunks applied (those that define
what is missing first); the prompt says what was applied, and the model confirms or adjusts
with the same tools. The guards of create_commit (model/guards.py) know the spec too.
"""
from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from git_retcon import diff
from git_retcon.diff.sums import Sums
from git_retcon.git.ids import CommitId, tree_of
from git_retcon.git.plumbing import get_commit
from git_retcon.model import commit, guards, take
from git_retcon.model.args import ToolError
from git_retcon.model.builtin import candidates_message, defining_first
from git_retcon.model.choose import BUILTIN, tools_mode
from git_retcon.model.context import READ_BUDGET, StepContext
from git_retcon.model.outcome import GaveUp, OverBudget, Proposed, StepKind, StepOutcome, Stuck, Unavailable
from git_retcon.model.prompt import template
from git_retcon.model.retry import retry_reporter
from git_retcon.model.session import Session
from git_retcon.model.step import ModelUnavailable, StepResult, run_step
from git_retcon.model.tools import command_answer
from git_retcon.model.window import Window, window
from git_retcon.reconstruct import judge, lines
from git_retcon.reconstruct.journal import Journal
from git_retcon.reconstruct.left import under
from git_retcon.reconstruct.work import Work
from git_retcon.state import notes
from git_retcon.state import spec as specmod
from git_retcon.ui import clip, plural

if TYPE_CHECKING:
    # rework (failure parsers: many regexes) is imported when a build or test fails, not at start-up.
    from git_retcon.rework import Brief
    from git_retcon.rework.blame import Candidate
    from git_retcon.sandbox.runner import Result

INDEX_BUDGET = 12000
FIXED_CHARS = 7000      # the system prompt and the tools' descriptions, about (the window's share is of the rest)
# How an extraction prompt introduces the whole remaining diff, when it carries it.
WHOLE_DIFF_LEAD = "The whole remaining diff, as read_diff() shows it (no need to call it):"
# What a prompt says of the rest, when plain code applied what the spec decides.
PREPARED_LEAD = "(not shown: read_diff() lists it, if something named above is missing)"


@dataclass(frozen=True)
class StepStart:
    """A step as plain code opened it: its tools' session, with what the spec (or a fix's brief)
    decides already applied; for a fix, the commands' result on those candidates, and the message
    plain code commits them with when they pass."""

    session: Session
    checked: Result | None = None
    message: str = ""

    @property
    def step(self) -> StepKind:
        return self.session.ctx.step


def session(w: Work, step: StepKind, parent: CommitId, brief: Brief | None = None,
            candidates: list[Candidate] | None = None) -> StepStart:
    """The tools' state for one step, whose work goes on parent; what the spec (or a fix's rework
    brief) already decides is applied before the model is asked."""
    if w.run.remaining is None:
        w.run.remaining = diff.RemainingDiff(w.run.repo, w.br.source_tree)
    fix = step == "fix"
    rest = takes_the_rest(w, step)
    prepared: tuple[str, ...] = ()
    if not rest:
        now = w.run.remaining.at(w.wt.tree())
        prepared = tuple(_decided(w, now, candidates) if fix else _decided(w, now))
    ctx = StepContext(
        wt=w.wt, source_tree=w.br.source_tree, parent=parent, commands=w.commands, remaining_diff=w.run.remaining,
        step=step,
        # create_commit("") in a fix makes `WIP: <the failure's one-line summary>`
        default_message=brief.text.splitlines()[0] if brief is not None and brief.text else "",
        base_tree=tree_of(get_commit(w.run.repo, w.br.base)),
        fixup_of=w.commit.summary if fix and (w.run.opts.fixup or w.spec.wip == "fixup") else None,
        read_budget=model_window(w).share(0.35, READ_BUDGET, FIXED_CHARS),
        rules=None if rest else rules(w),
        prepared=prepared,
    )
    s = Session(ctx)
    take.begin(s)
    if not (fix and s.sel.taken):
        return StepStart(s)
    checked = check_candidates(w)
    message = ""
    if checked is not None and checked.passed:   # committed by plain code, named for what they take
        applied = s.prepared_ids()
        message = candidates_message([(c.hunk.id, c.hunk.path, c.reason)
                                      for c in candidates or [] if c.hunk.id in applied])
    return StepStart(s, checked, message)


def check_candidates(w: Work, say: str = "Trying the candidate hunks...") -> Result | None:
    """Whether a fix's candidates, applied, mend it is plain code's to find out: the prompt says so,
    and a model need not guess or run the tests first. Shown as the judge shows a commit's commands
    (a setup or a build can take minutes); the record it leaves answers the judge once committed."""
    ui = w.run.ui
    ui.line(say)
    tree = w.wt.tree()
    w.wt.make_exact()
    results = w.commands.build_and_test(
        tree, on_start=lambda kind: ui.start(judge.label(kind)), on_done=judge.shown(ui, w.run.name),
        on_output=ui.output)
    return results[-1] if results else None


def rules(w: Work) -> guards.SpecRules:
    """What the spec gives commit k and the commits after it, for create_commit's guards."""
    c = w.commit
    rules = guards.SpecRules(number=w.number, n=w.n, paths=list(c.paths), mine=set(c.hunks), hints=c.hints)
    for j in range(w.k + 1, w.n):     # the logical commits after this one
        nxt = w.spec.commits[j]
        whose = guards.Later(specmod.number(j), nxt.summary)
        for hid in nxt.hunks:
            rules.later.setdefault(hid, whose)
        if nxt.paths:
            rules.later_paths.append((whose, list(nxt.paths)))
        if nxt.hints.strip():
            rules.later_hints.append((whose, nxt.hints))
    return rules


def _decided(w: Work, remaining: list[diff.Hunk], candidates: list[Candidate] | None = None) -> list[str]:
    """The hunks plain code applies before the model: for an extraction, those the plan assigned
    to the commit and those under its paths; for a fix, the brief's candidates (those that define
    what is missing first, as retcon-paths takes them)."""
    live = {h.id for h in remaining}
    if candidates is not None:
        pairs = [(c.hunk.id, c.reason) for c in candidates if c.hunk.id in live]
        return list(dict.fromkeys(hid for hid, _ in defining_first(pairs)))
    c = w.commit
    ids = [hid for hid in c.hunks if hid in live]
    if c.paths:
        ids += [h.id for h in under(remaining, c.paths)]
    return list(dict.fromkeys(ids))


def model_window(w: Work) -> Window:
    """The model's context window, worked out once per run (and said once)."""
    run = w.run
    if run.window is None or run.window[0] != w.model.model_id:
        found = window(run.repo, w.model, run.opts.context)
        run.window = (w.model.model_id, found)
        if w.model.model_id != BUILTIN and found.tokens < 32768:
            run.ui.line(f"Context window: {found.tokens} tokens ({found.source}): prompts and answers are cut "
                        "to fit it")
    return run.window[1]


def applied_text(st: StepStart) -> str:
    """What the prompt says of the hunks plain code applied (or could not apply) before the model."""
    s, step = st.session, st.step
    if not s.ctx.prepared:
        return ""
    if s.opening_failed:
        what = "the rework brief's candidate hunks" if step == "fix" else "the hunks the spec gives this commit"
        return (f"\ngit-retcon could not apply {what} for you ({s.opening[len('Error: '):][:400]}): the worktree is "
                "the previous commit; take what belongs here yourself.\n")
    # By id: a file's other hunks, not applied, are not listed (a hunk taken in part is, by its whole id).
    ids = s.sel.ids()
    taken = [h for h in s.start if h.id in ids]
    lines = "\n".join(f"  {s.start_names.get(h.id, h.id)} {h.path} {h.kind} +{h.added_lines} -{h.removed_lines}"
                      for h in taken[:60]) + (f"\n  ... and {len(taken) - 60} more" if len(taken) > 60 else "")
    if step == "fix":
        why = "the rework brief's candidate hunks"
        # Candidates that pass are committed by plain code: a model only sees those that do not.
        verdict = command_answer(st.checked).splitlines()[0] if st.checked is not None else ""
        advice = (f"With them applied, it still fails ({verdict or 'not run'}; run_tests() shows the output). "
                  "Take or write what else is missing, then call create_commit().")
    else:
        why = "the hunks that the spec's paths and plan give this commit"
        advice = ("They are this commit as the spec gives it; the commits after it take the rest. If they match "
                  "the message and hints, call create_commit() now. Only if one of them clearly belongs elsewhere, "
                  "put it back with apply_hunks([\"-<id>\"]); only if something the hints name is missing, apply "
                  "it too (read_diff shows what is left).")
    return template("applied.md").substitute(why=why, lines=lines, advice=advice)


def prompt_values(w: Work, st: StepStart) -> dict[str, str]:
    c, s = w.commit, st.session
    with w.run.ui.waiting("Computing diff"):
        remaining = s.remaining()
    # The run's diff keeps its counts up to date: a step does not count every hunk again.
    sums = s.remaining_diff.sums_of(remaining) if s.remaining_diff is not None else None
    files, added, removed = (len(sums.files), sums.added, sums.removed) if sums is not None else diff.stat(remaining)
    w.run.ui.line(f"Computing diff ({plural(added + removed, 'line')})...")
    return {
        "number": str(w.number), "n": str(w.n), "summary": c.summary,
        "message": c.message, "hints": c.hints.strip() or "(none)",
        "paths": json.dumps(c.paths) if c.paths else "(none given)",
        # As the step began: what plain code applied of them is listed under "Applied for you".
        "assigned": diff.assigned_text(c.hunks, s.start or remaining),
        "applied": applied_text(st),
        "resolution": resolution_text(c),
        "stat": f"{len(remaining)} hunks in {files} files (+{added} -{removed})",
        # The last commit's extraction calls no model: no prompt to render the diff into.
        "index": "" if takes_the_rest(w, st.step) else _index(
            remaining, st.step, sums, model_window(w).share(0.35, INDEX_BUDGET, FIXED_CHARS),
            prepared=bool(s.sel.taken)),
    }


def _index(remaining: list[diff.Hunk], step: StepKind, sums: Sums | None = None, budget: int = INDEX_BUDGET,
           prepared: bool = False) -> str:
    """What the prompt shows of the remaining diff: for an extraction, the whole diff when it is
    short (the model applies from it with no read_diff turn first), else an index of it; when
    plain code applied what the spec decides, only where to look (the model confirms, it does not
    choose). A fix prompt carries the brief's candidates instead, and the index."""
    if not remaining:
        return "(empty)"
    if prepared and step != "fix":
        return PREPARED_LEAD
    text = None if step == "fix" else diff.whole(remaining, budget)
    if text is not None:
        return WHOLE_DIFF_LEAD + "\n" + text
    return diff.index_lines(remaining, budget=budget, short=True, sums=sums)


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


def step(w: Work, journal: Journal, prompt_file: str, values: dict[str, str], st: StepStart) -> StepResult:
    """Run one step with the prompt template prompt_file: what it made, or why it stopped."""
    if spent_all(w) and not _by_plain_code(w, st):
        return StepResult(OverBudget())
    try:
        return attempt(w, journal, prompt_file, values, st)
    except ModelUnavailable as exc:
        return StepResult(Unavailable(f"{exc}. The state is saved."))


def attempt(w: Work, journal: Journal, prompt_file: str, values: dict[str, str], st: StepStart) -> StepResult:
    """The step's conversation, its cost counted (and noted on the spec chain when it made no
    commit: a commit's note holds it otherwise). ModelUnavailable when the backend gave up."""
    res = _call(w, prompt_file, values, st)
    _account(w, res)
    if not isinstance(res.outcome, Proposed):
        journal.spent(w, res, "stuck" if isinstance(res.outcome, Stuck) else "budget")
    return res


def spent_all(w: Work) -> bool:
    """Whether this run has used its --max-tokens."""
    limit = w.run.opts.max_tokens
    return limit is not None and w.run.spending.tokens >= limit


def takes_the_rest(w: Work, step: StepKind) -> bool:
    """The last logical commit's extraction: its tree must be the source tip's, so there is
    nothing to judge and no model is called (the tokens of a whole step saved)."""
    return step == "extract" and w.is_last


def extracting_line(w: Work, st: StepStart | None = None) -> str:
    if takes_the_rest(w, "extract"):
        return "Taking every remaining change: the last commit ends at the source's tree (no model needed)..."
    if st is not None and planned(w, st):
        return "Committing the hunks the spec gives this commit (no model needed)..."
    return "Extracting relevant changes..."


def planned(w: Work, st: StepStart) -> bool:
    """An extraction whose changes the spec's `hunks` or `paths` give, where the questions placed
    the rest (owners = "questions"): the questions and the checks on their answers were the
    judgement, and the build and tests judge the commit; the model is not asked to confirm it again
    (the 1.5B model, asked, put a planned hunk back by a made-up id and stopped)."""
    return (w.run.owners == "questions" and st.step == "extract" and bool(w.commit.hunks or w.commit.paths)
            and spec_decides(st.session))


def _by_plain_code(w: Work, st: StepStart) -> bool:
    """A step plain code takes, with no model call: the last commit's rest, candidates that pass,
    or the hunks the questions placed."""
    return takes_the_rest(w, st.step) or candidates_pass(st) or planned(w, st)


def candidates_pass(st: StepStart) -> bool:
    """A fix whose candidate hunks, applied by plain code, build and pass the tests: nothing is
    left to judge, and no model is called (the 1.5B model, told so, still did not commit them)."""
    return st.step == "fix" and st.checked is not None and st.checked.passed


def fixing_line(st: StepStart) -> str:
    return ("The candidate hunks pass: committing them as the fix (no model needed)..."
            if candidates_pass(st) else "Consulting diff for missing pieces...")


def _plain(s: Session, what: str, items: list[str], message: str = "", guarded: bool = True) -> StepResult:
    """A step in plain code, through the same tools a model calls: items applied, then create_commit
    with message (empty: the spec's, or the fix's WIP line)."""
    start = time.monotonic()
    outcome: StepOutcome
    try:
        if items:
            take.apply(s, items)
        outcome = commit.propose(s, message, guarded=guarded).outcome
    except ToolError as exc:   # kept for a human: what stopped plain code stops a model too
        outcome = Stuck(f"{what} failed: {exc}")
    return StepResult(outcome, seconds=time.monotonic() - start)


def _call(w: Work, prompt_file: str, values: dict[str, str], st: StepStart) -> StepResult:
    run, s = w.run, st.session
    # Never the last commit with nothing left: the loop completes such a commit empty (reconstruct/empty.py).
    if takes_the_rest(w, st.step):
        return _plain(s, "taking every remaining change", ["."])
    if candidates_pass(st):
        return _plain(s, "committing the candidate hunks", [], st.message)
    if st.step == "extract" and w.run.owners == "questions" and lines.in_lines(w.spec):
        return lines.step(w, s.ctx.parent, s.ctx.default_message)
    if planned(w, st):   # the spec's own hunks: nothing for the guards to name back
        return _plain(s, "committing the hunks the spec gives this commit", [], guarded=False)
    # Every wait on the model shows its elapsed time, and the retry under way, on the live line.
    with run.ui.waiting(f"Waiting for {w.model.model_id}") as tail:
        res = run_step(w.model, template("system.md").template, template(prompt_file).substitute(values),
                       template("steer.md").substitute(values), s, run.opts.chain_limit,
                       over_budget=_over_budget(run.opts.max_tokens, run.spending.tokens),
                       on_retry=retry_reporter(run.ui.line, tail),
                       # retcon-paths is plain code replaying the tools: nothing for `llm logs`
                       log=None if w.model.model_id == BUILTIN else run.exchange_log(),
                       mode=tools_mode(w.model, run.opts.tools), window=model_window(w))
    for cut in res.cuts:
        run.ui.line(f"Context: {cut}")
    if w.model.model_id == BUILTIN:   # plain code replaying the tools: no model call, as the notes say
        res = replace(res, calls=0)
    if isinstance(res.outcome, GaveUp) and spec_decides(s):
        return _instead(w, s, res)
    return res


def spec_decides(s: Session) -> bool:
    """An extraction whose changes plain code took from the spec (the commit's paths, its planned
    hunks) before the model was asked."""
    return s.ctx.step == "extract" and bool(s.ctx.prepared) and not s.opening_failed


def _instead(w: Work, s: Session, res: StepResult) -> StepResult:
    """The model ended an extraction with no judgement of its own, where the spec decides the
    commit's changes: what the spec gives it is committed instead, as retcon-paths would, and the
    build and tests judge it as any commit. The 1.5B model confirmed nothing in some runs, echoing
    answers until it was stopped, while the spec's hunks were right; a stuck there helps no one."""
    why = res.outcome.summary if isinstance(res.outcome, Stuck) else ""
    w.run.ui.line(f"The model ended without a judgement ({clip((why.splitlines() or [''])[0], 120)}): "
                  "committing the hunks the spec gives this commit (no model needed)...")
    take.restart(s)
    # The spec's own hunks: nothing for the guards to name back.
    plain = _plain(s, "committing the hunks the spec gives this commit", [], guarded=False)
    outcome = plain.outcome
    if isinstance(outcome, Proposed):
        outcome = replace(outcome, instead=f"the model ended without a judgement ({clip(why, 300)}): the hunks the "
                                           "spec's paths and plan give this commit were committed")
    return replace(res, outcome=outcome, seconds=res.seconds + plain.seconds)


def _account(w: Work, res: StepResult) -> None:
    w.run.spending.add(w.number, notes.usage(res.input_tokens, res.output_tokens, res.calls, res.cached_tokens))
    if res.calls:   # a step plain code took (the last commit's) called no model
        cached = f" ({res.cached_tokens} cached)" if res.cached_tokens else ""
        w.run.ui.detail(f"model: {res.calls} calls, {res.input_tokens} tokens in{cached}, {res.output_tokens} out")


def _over_budget(limit: int | None, before: int) -> Callable[[int], bool] | None:
    return None if limit is None else (lambda spent: before + spent >= limit)

