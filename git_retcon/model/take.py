"""Taking source hunks into the step's worktree, and putting them back: apply_hunks' work.
Each call turns the session's selection into a new one (model/selection.py) and writes the
worktree to match; the answers are written for a model to recover from.
"""
from __future__ import annotations

from git_retcon import diff
from git_retcon.git.plumbing import git
from git_retcon.model import selection
from git_retcon.model.applied import put_back_hint, sort_items, taken_before
from git_retcon.model.args import ToolError
from git_retcon.model.nearest import applied_already, meant_ids
from git_retcon.model.session import Session


def begin(s: Session) -> str:
    """The step's start: the remaining diff noted (the guards compare with it), then the
    prepared items applied by plain code. The answer says what they did (or why not)."""
    s.began(list(s.remaining()))
    if s.ctx.prepared:
        try:
            s.opened(apply(s, list(s.ctx.prepared)))
        except ToolError as exc:
            s.ctx.wt.reset(s.ctx.parent)
            s.sel = selection.EMPTY
            s.opened(f"Error: {exc}", failed=True)
    return s.opening


def restart(s: Session) -> None:
    """Back to the start of the step, and what plain code applies first applied again."""
    s.reset()
    begin(s)


def apply(s: Session, hunk_ids: list[str]) -> str:
    """apply_hunks: the items applied, all or none (see model/tools.Tools.apply_hunks)."""
    s.open()
    raw = [i.strip().strip("[]'\"") for i in hunk_ids if i.strip()]
    if raw and all(i.startswith("-") for i in raw) and _puts_back(s, raw):
        return put_back(s, raw)
    try:
        items = diff.parse_items(raw)
    except diff.SelectionError as exc:
        raise ToolError(f"{exc}; nothing was applied", "id") from None
    if not items:
        raise ToolError("hunk_ids is empty: pass a list of hunk ids or paths from read_diff", "id")
    wt = s.ctx.wt
    before = s.remaining()
    look = diff.lookup(before)     # read_diff's: ids, names and paths indexed once per remaining diff
    names = look.names
    found = sort_items(items, look, dict(s.sel.applied), s.start_names, s.branch_paths)
    items, done = found.keep, found.done
    put_back_text, taken = put_back_hint(raw, look, done), taken_before(found.earlier)
    if not items:
        return _nothing(s, done, taken, len(before), put_back_text)
    try:
        items, remarks = diff.expand(items, before, s.path)
    except diff.SelectionError as exc:
        keys = [it.key or it.id for it in items]
        again = applied_already(keys, dict(s.sel.applied), {names[h.id]: h.path for h in before})
        meant = meant_ids(keys, before, names, s.path)
        raise ToolError(f"{exc}; nothing was applied." + meant + (again or " Ids change only when a hunk's "
                        "content does: call read_diff for the current ones"), "id") from None
    by_id = look.by_id
    try:
        chosen = diff.hunks_of(items, by_id)
    except diff.SelectionError as exc:
        whole = ", ".join(dict.fromkeys(f"'{names.get(it.id, it.id)}'" for it in items if it.lines is not None))
        raise ToolError(f"{diff.shorten(str(exc), names)}; nothing was applied: read_diff numbers each hunk's "
                        "- and + lines from 1 (they are not the file's line numbers); to take a whole hunk, "
                        f"name it alone ({whole})", "id") from None
    wt.edited = True   # even a failed apply may have written files: reset before a build
    try:
        touched = diff.apply(wt.repo, wt.index, wt.path, chosen)
    except ValueError as exc:
        wt.exact = False   # files may differ from the index now
        raise ToolError(f"{diff.shorten(str(exc), names)}; nothing was applied: call read_diff") from None
    wt.index_changed(touched)
    s.sel = selection.took(s.sel, [(h.id, h.path) for h in chosen if h.id in by_id], items,
                           {i: h.path for i, h in by_id.items()})
    text = _applied(s, chosen, set(by_id), touched)
    if done:
        text += f" Already in the worktree (applied in this step): {', '.join(done)}.{put_back_text}"
    text += taken
    return text + "".join(f" Note: {r}." for r in remarks)


def _nothing(s: Session, done: list[str], taken: str, left: int, put_back_text: str) -> str:
    """The answer to an apply_hunks call that left nothing to apply."""
    here = (f" {', '.join(done)} {'is' if len(done) == 1 else 'are'} in the worktree already (applied in "
            "this step).") if done else ""
    # Where the spec decided the step's hunks, what remains is the later commits' (as the prompt
    # said): "5 hunks remain" alone read to the 1.5B model as work undone, and it called stuck.
    later = " for the commits after this one" if s.ctx.prepared and s.ctx.step == "extract" else ""
    return (f"Nothing to apply:{here}{taken} {left} hunks remain{later}. If this commit is complete, "
            "call create_commit()." + put_back_text + _idle(s))


def _applied(s: Session, chosen: list[diff.Hunk], whole: set[str], touched: list[str]) -> str:
    """What an apply did, and what is left of the hunks it took in part (whole: the ids of the
    remaining diff's hunks, so a chosen hunk not among them is a part of one)."""
    left = s.remaining()
    parts = [h for h in chosen if h.id not in whole]
    text = (f"Applied {len(chosen)} hunks" + (f" ({len(parts)} of them in part)" if parts else "")
            + f" to {len(touched)} files: {', '.join(touched[:20])}. {len(left)} hunks remain.")
    if parts:
        # The rest of a hunk taken in part has a new id (ids hash content): name it, as read_diff will.
        shown = diff.names_of(left)
        rest = [h for h in left if h.id not in whole and h.path in {p.path for p in parts}]
        text += (" What is left of the hunks taken in part: "
                 + (", ".join(f"{shown[h.id]} ({h.path})" for h in rest[:20]) if rest else "nothing")
                 + (" (read_diff shows their line numbers)." if rest else "."))
    return text


def _idle(s: Session) -> str:
    """A call that changed nothing, again: counted as a failed turn, so that a model sending the
    same no-op (the 1.5B model did, 38 times) ends the step well before the chain limit."""
    if s.ledger.nothing_applied() < 2:
        return ""
    s.steering.turn_failed("apply_hunks", "nothing to apply, again", "turn")
    return (f" (This call changed nothing, like the one before it: {s.steering.budget_left()} more failed "
            "calls end this step as stuck.)")


def _puts_back(s: Session, raw: list[str]) -> bool:
    """Whether items that all begin with '-' name hunks this step applied (a put-back), rather
    than exclusions (which need a path in the same call)."""
    done = s.sel.items()
    return any(any(d.startswith(r[1:].strip().lower()) for d in done) for r in raw if len(r) > 4)


def put_back(s: Session, raw: list[str]) -> str:
    """Undo hunks this step applied: their files go back to the previous commit, and what else
    the step applied there is applied again."""
    sel = s.sel
    drop: set[str] = set()
    unknown: list[str] = []
    for r in raw:
        hits = selection.matching(sel, r[1:].strip().lower())
        if len(hits) == 1:
            drop |= hits
        else:
            unknown.append(r)
    if unknown:
        shown = ", ".join(s.start_names.get(i.split(":")[0], i) for i in sel.items())
        raise ToolError(f"{', '.join(unknown)}: not a hunk this step applied (or ambiguous); nothing was put "
                        f"back. '-<id>' alone puts back a hunk applied in this step: {shown or 'none yet'}", "id")
    paths = sorted({p for p, items in sel.taken.items() if drop & set(items)})
    edited = sel.hand_written(paths)
    if edited:
        raise ToolError(f"{', '.join(edited)}: written by hand in this step too (write_file, edit_file, "
                        "delete_file), so its hunks cannot be put back alone; nothing was put back: restore "
                        "it with edit_file or write_file", "other")
    olds = {h.old_path for h in s.start if h.path in paths and h.old_path}
    wt = s.ctx.wt
    wt.save_index()
    git(wt.path, "-c", "core.hooksPath=/dev/null", "restore", f"--source={s.ctx.parent}", "--staged",
        "--worktree", "--", *paths, *sorted(olds))
    wt.index.read(True)
    wt.index_changed()
    again = [i for p in paths for i in sel.taken[p] if i not in drop]
    s.sel = selection.without(sel, paths)
    text = f"Put back {len(drop)} hunk{'s' if len(drop) != 1 else ''} ({', '.join(paths)}): " \
           "they are in the remaining diff again."
    if again:
        text += " " + apply(s, again).replace("Applied", "Applied again the other", 1)
    return text
