"""Before the first commit of a run: the hunks no `hunks` or `paths` assign are placed by small
questions (owners/), the answers saved in the spec's `hunks` (the run's save: `undo` takes them
back with the run), the table printed; the run then goes on as with a plan.

Only for a spec that says owners = "questions" (absent, the model chooses in each commit's
conversation, as before); not for the built-in `retcon-paths` (it has only rules), nor a run that
has made commits already (the hunks left are the steps' to take).
"""
from __future__ import annotations

import llm

from git_retcon.model.choose import BUILTIN
from git_retcon.owners import place as owners
from git_retcon.reconstruct.work import Run
from git_retcon.state.store import Stored


def wanted(stored: Stored, model: llm.Model | None) -> bool:
    spec = stored.spec
    return (model is not None and model.model_id != BUILTIN and spec.owners == "questions"
            and len(spec.commits) > 1 and not any(c.history for c in spec.commits))


def place_first(run: Run, stored: Stored, model: llm.Model | None) -> None:
    """Ask, save and say, when the spec leaves hunks unassigned (see the module's comment)."""
    if not wanted(stored, model):
        return
    spec_diff = owners.spec_diff(run.repo, stored.spec)
    if not owners.unassigned(stored.spec, spec_diff[2]):
        return
    run.ui.heading("Which commit each hunk belongs to")
    p = owners.place(run.repo, stored.spec, model, run.opts.jobs, run.ui.line, run.exchange_log(), spec_diff)
    owners.assign(stored.spec, p)
    run.store.update(stored, owners.record(p))
    for line in owners.table(stored.spec, p):
        run.ui.line(line)
    if p.tally is not None:
        t = p.tally
        run.ui.line(f"{t.questions} questions, {t.calls} calls, {t.input_tokens} tokens in, {t.output_tokens} out; "
                    f"saved in the spec's hunks (move one: git retcon hunks {stored.name}, then spec edit)")
