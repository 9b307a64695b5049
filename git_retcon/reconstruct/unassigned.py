"""Before the first commit of a run: the hunks no `hunks` or `paths` assign are placed by small
questions (owners/), the answers saved in the spec's `hunks` (the run's save: `undo` takes them
back with the run), the table printed; the run then goes on as with a plan.

The default: the spec's `owners`, else git config retcon.owners, else "questions". With
"conversation" the model chooses in each commit's step instead (for a strong model that should
choose lines within hunks). Never with the built-in `retcon-paths` (it has only rules), nor in a
run that has made commits already (the hunks left are the steps' to take).
"""
from __future__ import annotations

import llm

from git_retcon.model.choose import BUILTIN
from git_retcon.owners import place as owners
from git_retcon.reconstruct.work import Run
from git_retcon.state import notes
from git_retcon.state.spec import OwnersMode
from git_retcon.state.store import Stored


def wanted(stored: Stored, model: llm.Model | None, mode: OwnersMode) -> bool:
    spec = stored.spec
    return (model is not None and model.model_id != BUILTIN and mode == "questions"
            and len(spec.commits) > 1 and not any(c.history for c in spec.commits))


def place_first(run: Run, stored: Stored, model: llm.Model | None, mode: OwnersMode) -> None:
    """Ask, save and say, when the spec leaves hunks unassigned (see the module's comment)."""
    if not wanted(stored, model, mode):
        return
    spec_diff = owners.spec_diff(run.repo, stored.spec)
    if not owners.unassigned(stored.spec, spec_diff[2]):
        return
    run.ui.heading("Which commit each hunk belongs to")
    p = owners.place(run.repo, stored.spec, model, run.opts.jobs, run.ui.line, run.exchange_log(), spec_diff)
    owners.assign(stored.spec, p)
    run.store.update(stored, owners.record(p))
    notes.set_placed(run.store, stored.commit, owners.placed(p))     # who placed each, as data
    for line in owners.table(stored.spec, p):
        run.ui.line(line)
    if p.tally is not None:
        t = p.tally
        # Counted with the run's spending, as "commit 0" (the placement before commit 1).
        run.spending.add(0, {"input": t.input_tokens, "output": t.output_tokens, "calls": t.calls})
        run.ui.line(f"{t.said()}; saved in the spec's hunks (move one: git retcon hunks {stored.name}, "
                    "then spec edit)")
