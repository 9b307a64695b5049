"""Build and test a created commit: the one place the loop runs the configured
commands on the cleaned branch's tip, and the final-tree rule for the last commit.
"""
from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from typing import TYPE_CHECKING

import pygit2

from git_retcon import diff
from git_retcon.errors import RetconError
from git_retcon.git.ids import CommitId, TreeId, tree_of
from git_retcon.git.plumbing import get_commit, short
from git_retcon.model.outcome import Stuck
from git_retcon.reconstruct.branch import Branches
from git_retcon.reconstruct.journal import Journal
from git_retcon.reconstruct.work import Run, Work
from git_retcon.sandbox import setup as setupmod
from git_retcon.sandbox.runner import Commands, Result
from git_retcon.sandbox.worktree import Worktree
from git_retcon.state import notes
from git_retcon.ui import UI, plural

if TYPE_CHECKING:
    # rework (failure parsers: many regexes) is imported when a build or test fails, not at start-up.
    from git_retcon import rework

_LABELS = {"build": "Building", "test": "Tests"}   # else setup's own label (Commands.prepare)
_BASE_OUTPUT_LINES = 25   # of the base's failure, in the error: enough to see why
# How a shell, env or make says that a program is missing (exit 127): dash `sh: 1: bundt: not found`,
# bash `bash: line 1: bundt: command not found`, env `env: 'bundt': No such file or directory`.
_MISSING = re.compile(r"^\S*?\b(?:sh|env|make(?:\[\d+\])?):(?: line)?(?: \d+:)? [\'‘\"]?([^\s:\'‘’\"]+)[\'’\"]?: "
                      r"(?:[Cc]ommand not found|not found|No such file or directory)", re.M)
# Where a project's own programs live in a worktree, though not on PATH.
_BIN_DIRS = ("node_modules/.bin", ".venv/bin", "venv/bin", "vendor/bin", "bin", "target/debug", "target/release")


def label(kind: str) -> str:
    return _LABELS.get(kind, kind)


def check_base(run: Run, br: Branches, wt: Worktree, commands: Commands) -> None:
    """Set up, build and test the base before commit 1 (build and test once: the result is recorded
    on its tree). A command that fails there would make commit 1 look stuck: say so, with its output,
    before any model call."""
    if not any(commands.configured(kind) for kind in notes.COMMAND_KINDS):
        return
    ui = run.ui
    ui.line(f"Checking the base ({short(br.base)})...")
    wt.reset(br.base)
    # Setup first, even when the base's results are recorded: a setup that cannot work in this
    # worktree is said here, not taken for commit 1's failure.
    # No commit yet for `check --rerun` to time: the -v line advises it from commit 1 on.
    unready = commands.prepare("build", on_start=ui.start, on_done=shown(ui, run.name, advise=False),
                               on_output=ui.output)
    results = [unready] if unready is not None else commands.build_and_test(
        tree_of(get_commit(run.repo, br.base)), on_start=lambda kind: ui.start(label(kind)),
        on_done=shown(ui, run.name, advise=False), on_output=ui.output,
    )
    failed = next((r for r in results if not r.passed), None)
    if failed is not None:
        raise _fails_at_start(run, wt, commands, failed, f"on the base (merge-base {br.base[:12]})", "on the base")


def set_up(run: Run, wt: Worktree, commands: Commands, tip: CommitId) -> None:
    """A run that resumes past the base in a new worktree: setup runs on the tip before any model
    call, and a failure is setup's, as at the base. In a worktree set up before, a setup that must
    run again (a lockfile changed, or it failed on this commit) is left to the commit's build and
    test: its failure is the commit's, which the fix loop mends."""
    if commands.setup is None or not commands.setup.fresh() or not any(
            commands.configured(kind) for kind in notes.COMMAND_KINDS):
        return
    wt.reset(tip)
    ui = run.ui
    failed = commands.prepare("build", on_start=ui.start, on_done=shown(ui, run.name), on_output=ui.output)
    if failed is not None:
        raise _fails_at_start(run, wt, commands, failed, f"on the cleaned branch's tip ({short(tip)})",
                              "on the tip")


def _fails_at_start(run: Run, wt: Worktree, commands: Commands, failed: Result, where: str,
                    there: str) -> RetconError:
    """The error for a command that fails before any commit is made: what failed and why, what to
    do, and its output, whatever the exit code."""
    what = failed.what
    fix = f"fix `{what}` in the spec (git retcon spec edit {run.name}) so that it passes {there}"
    if failed.result == "notfound":
        head = f"the {what} command `{failed.command}` is not found {where} (exit 127): " + \
            not_found(failed, wt, commands, run.name)
    elif failed.result == "timeout":
        head = (f"the {what} command `{failed.command}` timed out after {failed.seconds:.0f}s {where}: {fix}, "
                "or raise `timeout` in the spec")
    elif failed.denied is not None:
        head = (f"the {what} command `{failed.command}` fails {where}: {failed.denied.say()}; "
                f"{failed.denied.allow()}, then run the command again")
    elif failed.cached:   # the world around it may have changed since: say how to run it again
        head = (f"the {what} command fails {where}, as recorded when it last ran there: `{failed.command}` exits "
                f"{failed.exit_code}; {fix}, then run again, or, if what it depends on outside the tree changed "
                f"since, run it again now: git retcon run --retest {run.name}")
    else:
        head = f"the {what} command fails {where}: `{failed.command}` exits {failed.exit_code}; {fix}, then run again"
    lines = [ln for ln in failed.output.splitlines() if not ln.startswith("[the setup command")]
    if not lines:
        return RetconError(head + " (it printed nothing)")
    shown = (["[...]"] if len(lines) > _BASE_OUTPUT_LINES else []) + lines[-_BASE_OUTPUT_LINES:]
    return RetconError(head + ". Its output:\n" + "\n".join("  " + ln for ln in shown))


def missing_program(output: str) -> str | None:
    """The program a shell (or env, or make) said it could not find, from a command's output."""
    m = _MISSING.search(output)
    return m.group(1) if m else None


def not_found(r: Result, wt: Worktree, commands: Commands, name: str) -> str:
    """What to do about a command that exits 127: its own program missing (install it, or fix the
    command), or a program it runs (a dev dependency the worktree lacks: setup installs it)."""
    what, edit = r.what, f"git retcon spec edit {name}"
    prog = missing_program(r.output)
    try:
        words = [w for w in shlex.split(r.command) if not re.match(r"^[A-Za-z_]\w*=", w)]
    except ValueError:
        words = []
    if prog is None:
        return f"a program it runs is missing; fix `{what}` in the spec ({edit})"
    if words and prog in (words[0], words[0].removeprefix("./")):
        if "/" in prog:
            return f"the worktree has no `{prog}` (a file this commit lacks?): fix `{what}` in the spec ({edit})"
        return f"`{prog}` itself is not on PATH: install it, or fix `{what}` in the spec ({edit})"
    found = next((d for d in _BIN_DIRS if (wt.path / d / prog).is_file()), None)
    if found is not None:
        return (f"it runs `{prog}`, which is in the worktree's {found}/ but not on PATH: run it from there "
                f"({found}/{prog}), or through the project's tool (`npx {prog}`, `npm run`), in `{what}` ({edit})")
    setup = commands.setup.command if commands.setup is not None else None
    if setup is not None:
        return (f"it runs `{prog}`, which is not on PATH after the setup `{setup}`: a dependency the setup does not "
                f"install (add it to the project's dependencies), or fix `setup` or `{what}` in the spec ({edit})")
    hint = setupmod.suggest(_root_names(wt))
    example = f'; this repository has {hint[0]}: setup = "{hint[1]}"' if hint else " (npm ci, pip install -e ., ...)"
    return (f"it runs `{prog}`, which is not on PATH in the worktree: a dependency of the project? A `setup` "
            f"command in the spec installs them in the worktree{example} ({edit})")


def _root_names(wt: Worktree) -> list[str]:
    try:
        return [e.name for e in wt.repo[wt.repo.head.target].peel(pygit2.Tree) if e.name]
    except (pygit2.GitError, KeyError, ValueError):
        return []


def test_tip(w: Work, journal: Journal) -> rework.Failure | Stuck | None:
    """Build and test the branch tip: None when it passes, else the failure (Stuck: one no
    fix of the commit can mend)."""
    ui = w.run.ui
    tip = w.tip()
    w.wt.reset(tip)
    tree = tree_of(get_commit(w.run.repo, tip))
    results = w.commands.build_and_test(
        tree, on_start=lambda kind: ui.start(label(kind)), on_done=shown(ui, w.run.name), on_output=ui.output,
    )
    return judge(w, journal, tip, tree, results)


def judge(w: Work, journal: Journal, tip: CommitId, tree: TreeId,
          results: list[Result]) -> rework.Failure | Stuck | None:
    """The verdict on tip from its build and test results (noted on it), and the final-tree rule."""
    journal.verdicts(w, tip, results)
    for r in results:
        if r.result == "timeout":
            return Stuck(f"{r.what} `{r.command}` timed out after {r.seconds:.0f}s: "
                         f"fix the command or raise `timeout` in the spec (git retcon spec edit {w.run.name})")
        if r.result == "notfound":
            lines = [ln for ln in r.output.splitlines() if not ln.startswith("[the setup command")][-10:]
            raise RetconError(
                f"{r.what} command `{r.command}` was not found in the worktree (exit 127) at commit "
                f"{w.number}/{w.n} ({short(tip)}): {not_found(r, w.wt, w.commands, w.run.name)}, then run again"
                + (". Its output:\n" + "\n".join("  " + ln for ln in lines) if lines else ""))
        if not r.passed and r.denied is not None:
            # No change to the code mends what the sandbox refused: the user allows it, or not.
            return Stuck(f"{r.what} `{r.command}` failed: {r.denied.say()}; {r.denied.allow()}, then run again")
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
    return Failure(r.kind, f"{r.what.capitalize()} failed: `{r.command}` (exit {r.exit_code})", r.output)


def shown(ui: UI, name: str, advise: bool = True) -> Callable[[Result], None]:
    """A command's result as the loop shows it: the verdict that ends its `Tests...` line, then in -v
    why a confined command was several times slower than unconfined (sandbox/slow.py)."""
    def done(r: Result) -> None:
        ui.finish(r.passed, verdict(r))
        slow = r.slowdown(name, advise)
        if slow is not None:
            ui.detail(slow)
    return done


def verdict(r: Result) -> str:
    word = "PASS" if r.passed else "FAIL"
    # a recorded failure: `run --retest` runs it again (the world outside the tree may have changed)
    extra = (" (cached)" if r.passed else " (cached; --retest runs it again)") if r.cached else ""
    said = f"{word}{extra}" if r.passed else f"{word} ({r.reason()}){extra}"
    return said + (f"; {r.restored}" if r.restored else "")
