"""Saving a spec from the command line: `plan` (from a file, from commits, or proposed by a
model, then optionally edited), `spec import` and `spec edit`. Whatever is saved parses,
names branches that exist and a `cleaned` name git-retcon may own (plan/branches.py), and
is written compare-and-swap; an existing spec is replaced only when asked.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

import llm

from git_retcon import diff
from git_retcon.errors import RetconError
from git_retcon.git.commits import check_identity
from git_retcon.git.ids import SpecCommitId
from git_retcon.git.plumbing import get_commit
from git_retcon.owners import place as owners
from git_retcon.plan import branches, ties, together
from git_retcon.plan import report as planreport
from git_retcon.plan import write as planmod
from git_retcon.plan.dropped import dropped, exported_from
from git_retcon.plan.realign import realign
from git_retcon.state import notes, oplog, specparse, spectoml
from git_retcon.state import spec as specmod
from git_retcon.state.store import Store, Stored
from git_retcon.ui import UI


@dataclass
class PlanRequest:
    """`git retcon plan`'s options."""

    source: str | None = None
    remote: str | None = None
    cleaned: str | None = None
    from_file: str | None = None
    from_commits: bool = False
    outline: bool | None = None     # the model names the commits, questions place the hunks (None: by
                                    # retcon.owners: questions -> outline, conversation -> the whole plan)
    model: str | None = None
    max_commits: int | None = None
    instructions: str | None = None
    budget: int = 32000
    jobs: int = 4
    setup: str | None = None
    build: str | None = None
    test: str | None = None
    edit: bool = False
    force: bool = False
    log: bool = True


def plan(store: Store, req: PlanRequest, say: Callable[[str], None]) -> specmod.Spec:
    """Write the spec req asks for, save it, and say what it holds."""
    repo = store.repo
    check_identity(store.git_dir)   # the spec is saved as a commit: refuse before any model call
    proposal: planmod.Proposed | None = None
    outlined: _Asked | None = None     # the model and the diff the outline was asked with
    model = req.model
    if req.from_file:
        spec, _ = planmod.read_file(req.from_file, repo)
        spec.source = req.source or spec.source
        spec.remote = req.remote or spec.remote
        spec.cleaned = req.cleaned or spec.cleaned
    else:
        src = req.source or branches.current_branch(repo)
        if not src:
            raise RetconError("HEAD is detached: name the branch to clean up with --source")
        rem = req.remote or branches.default_remote(repo, src, say)
        name = req.cleaned or f"{src}-clean"
        if req.from_commits:
            spec = planmod.from_commits(repo, src, rem, name)
        elif req.outline or (req.outline is None and owners.mode_of(repo, None) == "questions"):
            _refuse_existing(store, name, req.force)
            branches.check_cleaned_name(repo, name, src, rem)
            spec, outlined = _outlined(store, req, src, rem, name, say)
        else:
            _refuse_existing(store, name, req.force)
            branches.check_cleaned_name(repo, name, src, rem)   # before the model's work, not after
            ui = UI()
            with ui.waiting(f"Waiting for {model or 'the model'}"):   # elapsed time on a terminal
                proposal = planmod.propose_with_model(repo, model, src, rem, name, req.instructions or "",
                                                      req.max_commits, req.budget, req.jobs, ui.line, log=req.log)
            spec = proposal.spec
            model = proposal.keep_model
    spec.setup = req.setup or spec.setup
    spec.build = req.build or spec.build
    spec.test = req.test or spec.test
    spec.model = model or spec.model
    specparse.parse(spectoml.dump(spec))  # what we save must be valid
    branches.check_branches(repo, spec)
    placed = _placed(store, spec, req, say, outlined) if (req.from_file and req.model) or outlined else None
    if req.edit:
        edited = planmod.edit(repo, spectoml.dump(spec) + (planmod.leftover_comment(proposal.leftovers)
                                                             if proposal else ""))
        if edited is None:
            raise RetconError("the spec was emptied: nothing was saved")
        spec = edited
        branches.check_branches(repo, spec)
    for line in planreport.empty_commits(repo, spec, proposal.everything if proposal else None):
        say("Warning: " + line)
    with store.lock(spec.cleaned), oplog.recording(store, spec.cleaned, "plan", oplog.refs_of(spec.cleaned,
                                                                                              spec.cleaned)):
        saved = store.save(spec, _refuse_existing(store, spec.cleaned, req.force),
                           owners.record(placed) if placed is not None else "plan")
        if placed is not None:
            notes.set_placed(store, saved, owners.placed(placed))     # who placed each, as data
    say(f"Saved spec '{spec.cleaned}': {len(spec.commits)} logical commits "
        f"from '{spec.source}' onto '{spec.remote}'.")
    for line in planreport.report(repo, spec, proposal):
        say(line)
    if placed is not None:
        for line in owners.table(spec, placed)[len(spec.commits) + 1:]:   # the moves, warnings, uncertain
            say(line)
    return spec


@dataclass
class _Asked:
    """What `--outline` had, that placing the hunks needs again: the model loaded, the spec's diff
    (merge base, tip, hunks), and the atoms plain code put in each proposed commit."""

    model: llm.Model
    diff: tuple[str, str, list[diff.Hunk]]
    clustered: dict[str, int] = field(default_factory=dict)


def _outlined(store: Store, req: PlanRequest, source: str, remote: str, cleaned: str,
              say: Callable[[str], None]) -> tuple[specmod.Spec, _Asked]:
    """`plan -m MODEL --outline`: the commits the model proposes in one call (plan/outline.py)."""
    from git_retcon.model import choose as models
    from git_retcon.model.logs import ExchangeLog
    from git_retcon.plan import clusters, naming, outline

    model = models.load(models.choose(store.repo, req.model, None), tools=False)
    if model.model_id == models.BUILTIN:
        raise RetconError(f"{models.BUILTIN} proposes no commits: name a model with -m, or write the commits "
                          "in a file for `git retcon plan --from-file FILE`")
    draft = outline.spec_of(source, remote, cleaned, [])
    base, tip, hunks = owners.spec_diff(store.repo, draft)
    if not hunks:
        raise RetconError(f"'{source}' changes nothing that '{remote}' lacks: nothing to plan")
    ui = UI()
    most = req.max_commits or min(outline.MOST, len(hunks))
    proposed = naming.propose(store.repo, base, tip, hunks, most)
    if proposed is not None:    # plain code proposes the commits, the model names them
        cores = proposed.cores
        with ui.waiting(f"Asking {model.model_id} to name {len(cores)} commits"):
            said = naming.name(model, naming.overview(store.repo, base, tip, cores), len(cores),
                               req.instructions or "", ExchangeLog(req.log, ui.line), ui.line)
        files = [", ".join(dict.fromkeys(h.path for h in core))[:80] for core in cores]
        spec = outline.spec_of(source, remote, cleaned, [(m or f"Change {f}", clusters.describe(core))
                                                        for m, f, core in zip(said, files, cores, strict=True)])
        for c, core in zip(spec.commits, cores, strict=True):
            c.hunks = [h.id for h in core]
        say(f"Plain code proposed {len(cores)} logical commits from the diff, {model.model_id} named them; "
            f"placing the {len(proposed.left)} changes left in doubt...")
        for k in (k for k, m in enumerate(said) if not m):
            say(f"Commit {k + 1}: {model.model_id} gave no usable name, asked twice; it is named by its files "
                f"(`git retcon spec edit {cleaned}` renames it)")
        return spec, _Asked(model, (base, tip, hunks), {h.id: k for k, core in enumerate(cores) for h in core})
    with ui.waiting(f"Asking {model.model_id} for the commits"):
        commits, _ = outline.propose(model, outline.overview(store.repo, base, tip, hunks), most,
                                     req.instructions or "", ExchangeLog(req.log, ui.line), ui.line)
    say(f"{model.model_id} proposed {len(commits)} logical commits; placing the {len(hunks)} hunks...")
    return outline.spec_of(source, remote, cleaned, commits), _Asked(model, (base, tip, hunks))


def _placed(store: Store, spec: specmod.Spec, req: PlanRequest, say: Callable[[str], None],
            asked: _Asked | None = None) -> owners.Placement | None:
    """`plan --from-file F -m MODEL`: the hunks no `hunks` or `paths` of F take, placed by the owners'
    questions to MODEL and written into `hunks` (None: nothing to place, or retcon-paths, which has only
    rules). asked: the model and diff `--outline` already had."""
    from git_retcon.model import choose as models
    from git_retcon.model.logs import ExchangeLog

    model = asked.model if asked else models.load(models.choose(store.repo, req.model, None), tools=False)
    if model.model_id == models.BUILTIN:
        return None
    spec_diff = asked.diff if asked else owners.spec_diff(store.repo, spec)
    if not (asked and asked.clustered) and not owners.unassigned(spec, spec_diff[2]):
        return None
    ui = UI()
    with ui.waiting(f"Asking {model.model_id}"):
        p = owners.place(store.repo, spec, model, req.jobs, ui.line, ExchangeLog(req.log, ui.line), spec_diff)
    if asked:   # the model's own commits, not the user's: test-only ones join the code they test
        owners.clustered(p, asked.clustered)    # and plain code's clusters are a rule's decision
        base, tip, _ = spec_diff
        files = ties.Files(store.repo, get_commit(store.repo, base).tree, get_commit(store.repo, tip).tree)
        into = together.merges(spec, {i: o.k for i, o in p.owners.items()}, p.hunks, files.doc)
        if into:
            new, said = together.merge(spec, into)
            owners.renumber(p, new)
            for line in said:
                say(line)
    owners.assign(spec, p)
    if p.tally is not None:
        say(f"Placed {len(p.hunks)} hunks: {len(p.evidence.decided)} by the spec and plain rules, "
            f"the rest by questions to {model.model_id} ({p.tally.said()})")
    return p


def _refuse_existing(store: Store, name: str, force: bool) -> SpecCommitId | None:
    """The spec ref's tip (what a save swaps from), when there is no spec or force says replace it."""
    old = store.tip(name)
    if old is not None and not force:
        raise RetconError(f"a spec named '{name}' exists: replace it with --force, "
                          f"or change it with `git retcon spec edit {name}`")
    return old


def import_file(store: Store, file: str, say: Callable[[str], None], drop_history: bool = False) -> specmod.Spec:
    """Replace (or create) the spec named by the file's `cleaned` with the file. A file that lacks
    what the stored spec recorded since it was exported is refused, unless drop_history."""
    spec, text = planmod.read_file(file, store.repo)
    branches.check_branches(store.repo, spec)
    for line in planreport.empty_commits(store.repo, spec):
        say("Warning: " + line)
    with store.lock(spec.cleaned), oplog.recording(store, spec.cleaned, "import",
                                                   oplog.refs_of(spec.cleaned, spec.cleaned)):
        stored = store.load(spec.cleaned) if store.exists(spec.cleaned) else None
        old = stored.spec if stored is not None else None
        made = exported_from(text)
        # an export of an earlier save than the stored one: what was recorded since must not vanish
        lost = dropped(old, spec) if stored is not None and made is not None and made[0] == stored.name \
            and made[1] != stored.commit else []
        if lost and not drop_history:
            raise RetconError(
                f"{file} lacks what the stored spec recorded since it was exported ({'; '.join(lost[:5])}"
                f"{' ...' if len(lost) > 5 else ''}): nothing was imported. Export the spec again and make your "
                f"change there (git retcon spec export -o {file} {spec.cleaned}), or import it anyway with "
                f"--drop-history (git retcon undo {spec.cleaned} puts it back)")
        cut = realign(store.repo, old, spec)
        store.save(spec, store.tip(spec.cleaned), f"import {os.path.basename(file)}")
    if lost:
        say(f"Dropped what was recorded since the file was exported: {'; '.join(lost)} "
            f"(`git retcon undo {spec.cleaned}` puts it back).")
    for line in cut.lines(spec.cleaned):
        say(line)
    return spec


def edit_stored(store: Store, stored: Stored, say: Callable[[str], None]) -> specmod.Spec | None:
    """The stored spec edited in the user's editor and saved; None when nothing changed."""
    edited = planmod.edit(store.repo, spectoml.dump(stored.spec))
    if edited is None:
        raise RetconError("the spec was emptied: nothing was saved")
    if edited.cleaned != stored.spec.cleaned:
        raise RetconError("`cleaned` names the spec and cannot change in an edit: use `spec import` for a new one")
    if spectoml.dump(edited) == spectoml.dump(stored.spec):
        return None
    branches.check_branches(store.repo, edited)
    with store.lock(stored.name), oplog.recording(store, stored.name, "edit",
                                                  oplog.refs_of(stored.spec.cleaned, stored.name)):
        # CAS from the spec read before the editor opened: a save since (a run) fails this one, not the run.
        cut = realign(store.repo, stored.spec, edited)
        stored.spec = edited
        store.update(stored, "edit")
    for line in cut.lines(edited.cleaned):
        say(line)
    return edited
