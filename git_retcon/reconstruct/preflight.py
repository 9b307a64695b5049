"""What `run` checks before it writes anything: one list of named checks, in the order they run.

Each check is a function of the run's facts (`Facts`) that refuses with the one line its
docstring names (Promise 6: bad input changes nothing) or fills in what the run needs next
(the model, the sandbox, the owners mode). `reconstruct()` calls `preflight(...)` once; a new
check is one function and one row of `CHECKS`.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import llm

from git_retcon.git.ownership import refuse_checked_out
from git_retcon.owners import place as owners_room
from git_retcon.reconstruct import ontop
from git_retcon.reconstruct.branch import Branches, recorded, refuse_taken
from git_retcon.reconstruct.empty import refuse_unmatched
from git_retcon.reconstruct.stops import refuse_stuck
from git_retcon.reconstruct.work import Run
from git_retcon.sandbox import choice, confine
from git_retcon.sandbox.runner import check_command_exists
from git_retcon.state import spec as specmod
from git_retcon.state.store import Stored


@dataclass
class Facts:
    """What the checks read, and what they find for the run: the model (when one may be
    needed), the sandbox of the spec's commands, the owners mode."""

    run: Run
    stored: Stored
    br: Branches | None = None
    model: llm.Model | None = None
    sandbox: confine.Sandbox | None = None
    owners: specmod.OwnersMode = "questions"

    @property
    def spec(self) -> specmod.Spec:
        return self.stored.spec

    @property
    def branches(self) -> Branches:
        assert self.br is not None, "branches_found runs first"
        return self.br


def not_stuck(f: Facts) -> None:
    """"commit K/N is stuck: SUMMARY" and the commands that go on from it (exit 3)."""
    if (k := f.spec.current()) is not None:
        refuse_stuck(f.run, f.stored, k)


def no_fix_on_top(f: Facts) -> None:
    """A person's commits on the finished cleaned branch are absorbed, never undone: refused with
    the two commands that carry them to the source and absorb them (reconstruct/ontop.py)."""
    ontop.refuse(f.run.repo, f.spec, f.run.name)


def branches_found(f: Facts) -> None:
    """The source, the remote and their merge base: "branch 'X' not found" or "'S' and 'R' have no
    common ancestor: check that `remote` is the branch the source was started from"."""
    f.br = Branches(f.run.repo, f.spec)


def model_ready(f: Facts) -> None:
    """The model loads and its key is set, whenever one may be needed (work left in the spec, or
    commits on the branch to adopt): llm's "unknown model" or "no key" line, with what to set."""
    if work_left(f):
        f.model = load_model(f.run, f.spec)


def commands_exist(f: Facts) -> None:
    """"the setup|build|test command 'X' is not found: ..." for a command whose program is not
    on PATH, before a model call is paid for."""
    if f.model is None:
        return
    for kind in ("setup", "build", "test"):
        if command := getattr(f.spec, kind):
            check_command_exists(command, kind)


def paths_found(f: Facts) -> None:
    """"commit K/N (...): its paths [...] match no file that 'SOURCE' changes: fix them (git
    retcon spec edit NAME), then run again"."""
    if f.model is not None:
        refuse_unmatched(f.run.repo, f.spec, f.branches, f.run.name)


def cleaned_not_checked_out(f: Facts) -> None:
    """"branch 'CLEANED' is checked out in DIR: switch that work tree to another branch first"."""
    refuse_checked_out(f.run.repo, f.spec.cleaned)


def cleaned_name_free(f: Facts) -> None:
    """"cannot create branch 'CLEANED': WHY: rename what is in the way, or give the spec another
    `cleaned` name", for a branch still to make whose name is taken."""
    refuse_taken(f.run.repo, f.spec)


def sandbox_chosen(f: Facts) -> None:
    """The sandbox for setup, build and test: `--sandbox require` where no mechanism works is
    refused here with how to install one."""
    f.sandbox = choice.for_spec(f.run.repo, f.spec, f.run.opts.sandbox)


def owners_mode(f: Facts) -> None:
    """How unassigned hunks are placed: a bad `retcon.owners` is refused here, naming the values."""
    f.owners = owners_room.mode_of(f.run.repo, f.spec.owners)


Check = Callable[[Facts], None]
# In the order they run. A dry run makes the PREVIEW ones only: it reads, and needs no model.
PREVIEW: list[Check] = [not_stuck, no_fix_on_top, branches_found]
CHECKS: list[Check] = PREVIEW + [
    model_ready, commands_exist, paths_found, cleaned_not_checked_out, cleaned_name_free, sandbox_chosen,
    owners_mode,
]


def preflight(run: Run, stored: Stored) -> Facts:
    """The checks in order (PREVIEW only for --dry-run); the first refusal ends the run, nothing written."""
    facts = Facts(run, stored)
    for check in PREVIEW if run.opts.dry_run else CHECKS:
        check(facts)
    return facts


def work_left(f: Facts) -> bool:
    """Whether a model may be needed: a logical commit not complete, or commits on the cleaned
    branch past the recorded ones (adopted, they reopen the last logical commit)."""
    if f.spec.current() is not None:
        return True
    made, br = recorded(f.run.repo, f.spec), f.branches
    return br.cleaned_tip is not None and br.cleaned_tip != (made[-1] if made else br.base)


def load_model(run: Run, spec: specmod.Spec) -> llm.Model:
    from git_retcon.model import choose as models

    return models.load(models.choose(run.repo, run.opts.model, spec.model), mode=run.opts.tools)
