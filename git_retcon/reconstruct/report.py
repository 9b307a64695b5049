"""What a run prints about itself: the header, the closing report with the token
tally, and `run --dry-run`."""
from __future__ import annotations

from git_retcon import diff
from git_retcon.git.message import is_fix
from git_retcon.git.plumbing import get_commit, short
from git_retcon.reconstruct.branch import Branches
from git_retcon.reconstruct.work import Run
from git_retcon.state import spec as specmod
from git_retcon.state.store import Stored
from git_retcon.ui import plural


def header(run: Run, spec: specmod.Spec, br: Branches, model: str | None) -> None:
    ui = run.ui
    ui.line(f"Spec: {run.name}")
    ui.line(f"Source: {spec.source} ({short(str(br.source.id))})")
    ui.line(f"Remote: {spec.remote}")
    ui.line(f"Cleaned: {spec.cleaned}")
    if model:
        ui.line(f"Model: {model}")


def skipped_commands(run: Run, spec: specmod.Spec) -> None:
    for kind in ("build", "test"):
        if not getattr(spec, kind):
            run.ui.line(f"No {kind} command configured: {'builds' if kind == 'build' else 'tests'} skipped.")


def tokens(run: Run) -> None:
    """This run's token spending (nothing when no model was called)."""
    t = run.spending
    if t.input_tokens or t.output_tokens:   # the offline model calls none that cost a token
        cached = f" ({t.cached_tokens} of them cached)" if t.cached_tokens else ""
        run.ui.line(f"Tokens this run: {t.input_tokens} in{cached}, {t.output_tokens} out "
                    f"({plural(t.calls, 'model call')})")


def wip_count(run: Run, shas: list[str]) -> int:
    """The WIP fix commits among shas (`WIP: ` or `fixup! `), by message: a human's adopted fix is not one."""
    return sum(1 for sha in shas if is_fix(get_commit(run.repo, sha).message))


def final(run: Run, stored: Stored, squashed: int = 0) -> None:
    """The closing report; squashed: how many WIP commits --squash-wip folded just now."""
    spec = stored.spec
    ui = run.ui
    made = [sha for c in spec.commits for sha in c.created]
    wips = wip_count(run, made)
    # A logical commit with no commit of its own is a finding, not a success: its changes are in
    # the commits before it, and the history is not the one the spec asked for.
    empty = [specmod.number(k) for k, c in enumerate(spec.commits) if not c.created]
    ui.heading("Complete!" if not empty else "Complete, with empty logical commits")
    if empty:
        ui.line(f"{plural(len(made), 'commit')} for {plural(len(spec.commits), 'logical commit')}; "
                f"{len(empty)} empty ({', '.join(map(str, empty))}): their changes are in the commits before "
                f"them. Merge or drop them (git retcon spec edit {spec.cleaned}), or reorder and run again")
    else:
        ui.line(f"{plural(len(spec.commits), 'logical commit')} created")
    if squashed:
        ui.line(f"{plural(squashed, 'WIP fix commit')} squashed into their logical commits")
    ui.line(f"{plural(wips, 'WIP fix commit')}" + (" left" if squashed else ""))
    tokens(run)
    if run.spending.tokens:   # per commit, as the tokens line: nothing for the offline model
        for i, u in sorted(run.spending.per_commit.items()):
            ui.line(f"  {f'commit {i}' if i else 'placing hunks'}: {u['input']} in, {u['output']} out, "
                    f"{u['calls']} calls")
    ui.line(f"Branch: {spec.cleaned}")
    if wips:
        ui.line("To squash WIP commits (trees and test records stay as they are):")
        ui.line(f"  git retcon squash {spec.cleaned}")


def dry_run(run: Run, stored: Stored, br: Branches) -> None:
    spec = stored.spec
    ui = run.ui
    header(run, spec, br, None)
    tip = br.cleaned_tip or br.base
    ui.line(f"Base commit: {short(br.base)}")
    ui.line(f"Cleaned branch: {short(br.cleaned_tip) if br.cleaned_tip else 'not created yet'}")
    left = diff.remaining(run.repo, str(get_commit(run.repo, tip).tree_id), br.source_tree)
    files, added, removed = diff.stat(left)
    ui.line(f"Remaining diff: {plural(len(left), 'hunk')} in {plural(files, 'file')} (+{added} -{removed})")
    for i, c in enumerate(spec.commits):
        ui.line(f"  {i + 1}. [{c.state}] {c.summary}")
    k = spec.current()
    ui.line("Dry run: nothing was changed. "
            + (f"Next: commit {k + 1}." if k is not None else "Nothing left to do."))
