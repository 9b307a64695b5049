"""The two calls that end a step: create_commit (what the worktree holds, checked by the
guards, becomes a Proposed) and stuck (a Stuck, unless the summary only echoes our answers).
Each returns the step's end as a value (outcome.Ended) or refuses with a ToolError; the session
records the end (model/tools.py), and nothing here writes but the answer.
"""
from __future__ import annotations

from git_retcon import diff
from git_retcon.git.ids import tree_of
from git_retcon.git.message import wip_message
from git_retcon.git.plumbing import get_commit
from git_retcon.model import answers, guards
from git_retcon.model.args import ToolError
from git_retcon.model.echo import weigh_stuck
from git_retcon.model.invented import invented
from git_retcon.model.outcome import Ended, Proposed
from git_retcon.model.session import Session
from git_retcon.state.spec import paths_match


def propose(s: Session, message: str = "", confirm: str = "", guarded: bool = True) -> Ended:
    """create_commit: the worktree as the step's commit. guarded: the guards check what it took
    (plain code committing the spec's own hunks in a model's place has nothing to check)."""
    s.open()
    if "\0" in message:
        raise ToolError("message contains a NUL character (\\u0000), which a git commit message cannot hold: "
                        "call create_commit again without it; nothing was committed", "other")
    ctx = s.ctx
    parent_tree = tree_of(get_commit(ctx.wt.repo, ctx.parent))
    tree = ctx.wt.tree()
    if tree == parent_tree:
        raise ToolError("nothing to commit: the worktree still equals the previous commit (nothing was applied "
                        "or written in this step). Take this commit's changes first: " + next_take(s)
                        + "; then call create_commit again", "empty")
    confirmed: list[str] = []
    if ctx.rules is not None and guarded:
        found, back = guards.problems(ctx.rules, s.start, s.remaining(), s.start_names,
                                      fix=ctx.step == "fix", prepared=s.prepared_ids())
        # A reason counts only for what the guards named before (a weak model fills in every
        # parameter, "yes" included), and only in words.
        ids = {h.id for h in back}
        if found and not (ids <= s.ledger.named and guards.a_reason(confirm)):
            told = s.ledger.name_back(ids)
            raise ToolError(guards.refusal(found, back, s.start_names, told and bool(confirm.strip())), "guard")
        confirmed = [f"{'; '.join(found)}: {confirm.strip()}"] if found else []
    message = message.strip() or ctx.default_message.strip()
    if ctx.step == "fix":
        message = wip_message(message, ctx.fixup_of)
    drift = invented(ctx.wt.repo, parent_tree, tree, ctx.base_tree, ctx.source_tree)
    return Ended(Proposed(tree, message, drift.note(), confirmed),
                 answers.ACCEPTED + drift.answer() + (answers.REASON_KEPT if confirmed else ""))


def stuck(s: Session, summary: str) -> Ended:
    """stuck: the step ends stuck with the summary, unless it only echoes git-retcon's answers
    or says the commit is complete (sent back once, model/echo.py)."""
    s.open()
    outcome, refusal, s.ledger.echoed = weigh_stuck(summary, s.ledger.said, s.ledger.echoed, s.changed)
    if outcome is None:
        raise ToolError(refusal, "other")
    return Ended(outcome, answers.RECORDED)


def next_take(s: Session) -> str:
    """The call that takes this commit's changes, for an answer: its paths' hunks, else read_diff."""
    left = s.remaining()
    if not left:
        return ("there is nothing left in the remaining diff, so write what this commit needs "
                "(edit_file, write_file)")
    names = diff.names_of(left)
    rules = s.ctx.rules
    if rules is not None and rules.paths:
        mine = [names[h.id] for h in left if paths_match(h.path, rules.paths)][:12]
        if mine:
            return f"apply_hunks({mine!r}) takes the remaining hunks under its paths"
    if rules is not None and rules.hints:
        # The model decides; the answer names the call for the files the hints name, as written.
        named = guards.named_in(rules.hints, sorted({h.path for h in left}))[:12]
        if named:
            return (f"the hints name {', '.join(named)}: apply_hunks({named!r}) takes their remaining hunks "
                    "(read_diff shows them first, if some belong elsewhere)")
    return f"read_diff() shows the {len(left)} remaining hunks; apply_hunks([...]) takes those that belong here"
