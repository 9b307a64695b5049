"""Build and test a created commit: the one place the loop runs the configured
commands on the cleaned branch's tip, and the final-tree rule for the last commit.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from git_retcon import diff
from git_retcon.errors import RetconError
from git_retcon.git.ids import CommitId, TreeId, tree_of
from git_retcon.git.plumbing import get_commit, short
from git_retcon.model.outcome import Stuck
from git_retcon.reconstruct.branch import Branches
from git_retcon.reconstruct.journal import Journal
from git_retcon.reconstruct.work import Run, Work
from git_retcon.sandbox.runner import Commands, Result
from git_retcon.sandbox.worktree import Worktree
from git_retcon.state import notes
from git_retcon.ui import plural

if TYPE_CHECKING:
    # rework (failure parsers: many regexes) is imported when a build or test fails, not at start-up.
    from git_retcon import rework

_LABELS = {"build": "Building", "test": "Tests"}
_BASE_OUTPUT_LINES = 25   # of the base's failure, in the error: enough to see why


def check_base(run: Run, br: Branches, wt: Worktree, commands: Commands) -> None:
    """Build and test the base before commit 1 (once: the result is recorded on its tree).
    A command that fails there would make commit 1 look stuck: say so before any model call."""
    if not any(commands.configured(kind) for kind in notes.COMMAND_KINDS):
        return
    ui = run.ui
    ui.line(f"Checking the base ({short(br.base)})...")
    wt.reset(br.base)
    results = commands.build_and_test(
        tree_of(get_commit(run.repo, br.base)), on_start=lambda kind: ui.start(_LABELS[kind]),
        on_done=lambda r: ui.finish(r.passed, verdict(r)), on_output=ui.output,
    )
    failed = next((r for r in results if not r.passed), None)
    if failed is None:
        return
    where = f"on the base (merge-base {br.base[:12]})"
    fix = f"fix `{failed.kind}` in the spec (git retcon spec edit {run.name}) so that it passes on the base"
    if failed.result == "notfound":
        raise RetconError(f"the {failed.kind} command `{failed.command}` is not found {where} (exit 127): {fix}")
    if failed.result == "timeout":
        raise RetconError(f"the {failed.kind} command `{failed.command}` timed out after {failed.seconds:.0f}s "
                          f"{where}: {fix}, or raise `timeout` in the spec")
    lines = failed.output.splitlines()
    shown = (["[...]"] if len(lines) > _BASE_OUTPUT_LINES else []) + lines[-_BASE_OUTPUT_LINES:]
    raise RetconError(
        f"the {failed.kind} command fails {where}: `{failed.command}` exits {failed.exit_code}; {fix}, "
        "then run again. Its output:\n" + "\n".join("  " + ln for ln in shown))


def test_tip(w: Work, journal: Journal) -> rework.Failure | Stuck | None:
    """Build and test the branch tip: None when it passes, else the failure (Stuck: one no
    fix of the commit can mend)."""
    ui = w.run.ui
    tip = w.tip()
    w.wt.reset(tip)
    tree = tree_of(get_commit(w.run.repo, tip))
    results = w.commands.build_and_test(
        tree, on_start=lambda kind: ui.start(_LABELS[kind]),
        on_done=lambda r: ui.finish(r.passed, verdict(r)), on_output=ui.output,
    )
    return judge(w, journal, tip, tree, results)


def judge(w: Work, journal: Journal, tip: CommitId, tree: TreeId,
          results: list[Result]) -> rework.Failure | Stuck | None:
    """The verdict on tip from its build and test results (noted on it), and the final-tree rule."""
    journal.verdicts(w, tip, results)
    for r in results:
        if r.result == "timeout":
            return Stuck(f"{r.kind} `{r.command}` timed out after {r.seconds:.0f}s: "
                         "fix the command or raise `timeout` in the spec (git retcon spec edit)")
        if r.result == "notfound":
            raise RetconError(
                f"{r.kind} command `{r.command}` was not found in the worktree (exit 127): "
                f"fix `{r.kind}` in the spec (git retcon spec edit {w.run.name}), then run again"
            )
        if not r.passed:
            return as_failure(r)
    failure = tree_failure(w, tree)
    if failure is not None:
        w.run.ui.bad(f"Final tree differs from '{w.spec.source}' in {plural(len(failure.paths), 'path')}")
    return failure


def recorded_failure(w: Work, sha: CommitId) -> rework.Failure | None:
    """How commit sha failed, from the recorded results of its tree (None: passed or never ran)."""
    tree = tree_of(get_commit(w.run.repo, sha))
    for kind in ("build", "test"):
        if w.commands.configured(kind):
            r = w.commands.cached(tree, kind)
            if r is None:
                return None
            if not r.passed:
                return as_failure(r)
    return tree_failure(w, tree)


def tree_failure(w: Work, tree: TreeId) -> rework.Failure | None:
    """The last logical commit must end on the source tip's tree."""
    if not w.is_last or tree == w.br.source_tree:
        return None
    left = diff.remaining(w.run.repo, tree, w.br.source_tree)
    paths = sorted({h.path for h in left})
    from git_retcon.rework import Failure
    return Failure(
        "tree", "This is the last logical commit, and its tree must equal the source branch tip, "
        f"but {len(left)} hunks in {len(paths)} files remain: {', '.join(paths[:50])}.",
        "Apply them (they belong to this last commit, since no later commit will take "
        "them), or call stuck naming the paths you cannot place.", tuple(paths))


def as_failure(r: Result) -> rework.Failure:
    from git_retcon.rework import Failure
    return Failure(r.kind, f"{r.kind.capitalize()} failed: `{r.command}` (exit {r.exit_code})", r.output)


def verdict(r: Result) -> str:
    word = "PASS" if r.passed else "FAIL"
    extra = " (cached)" if r.cached else ""
    return f"{word}{extra}" if r.passed else f"{word} ({r.reason()}){extra}"
