"""Every hunk gets an owner: the evidence decides what it can, the model is asked the rest as
small questions, plain code composes and checks the answers; the result goes into the spec's
`hunks`, and the save's message records who decided each one (`git retcon hunks` reads it).
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace

import llm
import pygit2

from git_retcon import diff
from git_retcon.diff import atoms as diff_atoms
from git_retcon.git import config
from git_retcon.git.plumbing import fork_point, get_commit
from git_retcon.model.logs import ExchangeLog
from git_retcon.owners import atoms
from git_retcon.owners.compose import Composed, Owner, compose
from git_retcon.owners.evidence import Evidence, Who, gather
from git_retcon.owners.question import Asker, Tally, ask_all
from git_retcon.state import notes
from git_retcon.state import spec as specmod
from git_retcon.state.spec import OWNERS_MODES, OwnersMode, paths_match_any

NO_BASE = "name the branch the source was started from as the spec's remote (git retcon spec edit)"
RECORD = "owners"      # the first word of a spec save that placed hunks
_LINE = re.compile(r"^([0-9a-f]{10}(?::[0-9,-]+)?) (\d+) (user|rule|model|model, uncertain)$", re.M)


@dataclass
class Placement:
    hunks: list[diff.Hunk]
    evidence: Evidence
    composed: Composed
    tally: Tally | None

    @property
    def owners(self) -> dict[str, Owner]:
        return self.composed.owners


def mode_of(repo: pygit2.Repository, spec_owners: OwnersMode | None) -> OwnersMode:
    """How hunks no rule assigns get their commit: the spec's `owners`, else git config
    retcon.owners, else "questions" (`run`'s questions; `plan -m`'s outline, then questions)."""
    return spec_owners or config.choice(repo, "retcon.owners", OWNERS_MODES) or "questions"


def ends(repo: pygit2.Repository, spec: specmod.Spec) -> tuple[str, str]:
    """The spec's diff: merge base and source tip, as commit ids."""
    fork = fork_point(repo, spec.source, spec.remote, NO_BASE)
    return str(fork.base.id), str(fork.source.id)


def spec_diff(repo: pygit2.Repository, spec: specmod.Spec) -> tuple[str, str, list[diff.Hunk]]:
    """The spec's ends (merge base, source tip) and the hunks between them."""
    base, tip = ends(repo, spec)
    return base, tip, diff.remaining(repo, str(get_commit(repo, base).tree_id), str(get_commit(repo, tip).tree_id))


def unassigned(spec: specmod.Spec, hunks: list[diff.Hunk]) -> list[diff.Hunk]:
    """The hunks no commit's `hunks` or `paths` take (a hunk named in atoms is taken: the placement
    that split it named all its lines)."""
    planned = {diff_atoms.hunk_id(i) for c in spec.commits for i in c.hunks}
    globs = [c.paths for c in spec.commits if c.paths]
    return [h for h in hunks if h.id not in planned
            and not any(paths_match_any((h.path, h.old_path), g) for g in globs)]


def place(repo: pygit2.Repository, spec: specmod.Spec, model: llm.Model | None, jobs: int = 1,
          say: Callable[[str], None] = lambda s: None, log: ExchangeLog | None = None,
          diff_of: tuple[str, str, list[diff.Hunk]] | None = None) -> Placement:
    """Each hunk's logical commit: the evidence's, the model's answers (none without a model),
    composed and checked. diff_of: the spec's ends and hunks, when the caller has them already."""
    base, tip, whole = diff_of or spec_diff(repo, spec)
    # Hunks holding lines of several commits are placed as their atoms (owners/atoms.py).
    frames: set[str] = set()
    hunks = atoms.split(repo, base, tip, whole, {i for c in spec.commits for i in atoms.whole_ids(c.hunks)}, frames)
    ev = gather(repo, spec, base, tip, hunks)
    tally = None
    answers = {}
    if model is not None and ev.ranked:
        asker = Asker(model, spec, log, say)
        asker.whole = {h.id: h for h in whole}
        say(f"Placing hunks: {len(ev.decided)} of {len(hunks)} by the spec and plain rules; asking {model.model_id} "
            f"about {len(ev.ranked)} (one small question each)...")
        answers = ask_all(asker, ev, jobs, say)
        tally = asker.tally
    return Placement(hunks, ev, compose(repo, base, tip, len(spec.commits), ev, answers, frames), tally)


def renumber(p: Placement, new: list[int]) -> None:
    """The placement after commits were merged: new[k] is old commit k's number now (its owners,
    the evidence's decisions and rankings, the best score kept where two commits became one)."""
    p.composed.owners = {i: replace(o, k=new[o.k]) for i, o in p.composed.owners.items()}
    p.evidence.decided = {i: replace(d, k=new[d.k]) for i, d in p.evidence.decided.items()}
    for i, ranked in p.evidence.ranked.items():
        best: dict[int, float] = {}
        for k, score in ranked:
            best[new[k]] = max(best.get(new[k], score), score)
        p.evidence.ranked[i] = sorted(best.items(), key=lambda ks: (-ks[1], ks[0]))
    p.composed.empty = sorted({new[k] for k in p.composed.empty} - {o.k for o in p.composed.owners.values()})
    p.composed.moved = [re.sub(r"\bcommit (\d+)\b", lambda m: f"commit {new[int(m[1]) - 1] + 1}"
                               if 0 < int(m[1]) <= len(new) else m[0], line) for line in p.composed.moved]


def clustered(p: Placement, ids: dict[str, int]) -> None:
    """The atoms `plan --outline`'s plain code put in a commit (plan/clusters.py), placed by a rule."""
    for i in ids.keys() & p.composed.owners.keys():
        o = p.composed.owners[i]
        if o.who == "user":
            p.composed.owners[i] = replace(o, who="rule", why="plain code's cluster (plan --outline)")


def assign(spec: specmod.Spec, p: Placement) -> None:
    """The placement written into the spec's `hunks`, in diff order (what the spec decided stays)."""
    for k, c in enumerate(spec.commits):
        mine = [h.id for h in p.hunks if p.owners[h.id].k == k]
        c.hunks = list(dict.fromkeys(c.hunks + mine))


def record(p: Placement) -> str:
    """The spec save's message: counts, then a line per hunk, id, commit number and who."""
    counts: dict[Who, int] = {}
    for o in p.owners.values():
        counts[o.who] = counts.get(o.who, 0) + 1
    said = ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
    asked = f"Asked: {p.tally.said()}\n\n" if p.tally is not None else ""
    return (f"{RECORD}: {len(p.hunks)} hunks placed ({said})\n\n{asked}"
            + "\n".join(f"{h.id} {p.owners[h.id].k + 1} {p.owners[h.id].who}" for h in p.hunks) + "\n")


def placed(p: Placement) -> dict[str, notes.PlacedBy]:
    """Who placed each hunk or atom, as the spec chain's note keeps it (state/notes.PlacedBy); for
    the model's, the evidence's first choice beside it, so its answers can be scored against the
    evidence's (bench/local_model.py)."""
    out: dict[str, notes.PlacedBy] = {}
    for h in p.hunks:
        owner = p.owners[h.id]
        out[h.id] = {"commit": specmod.number(owner.k), "who": owner.who}
        if owner.who.startswith("model") and (top := p.evidence.top(h.id)) is not None:
            out[h.id]["first"] = specmod.number(top)
        elif owner.who == "rule" and owner.why:
            out[h.id]["why"] = owner.why[:200]
    return out


def read_record(message: str) -> dict[str, tuple[int, Who]]:
    """record()'s lines read back: hunk id -> (logical commit, who)."""
    if not message.startswith(RECORD + ":"):
        return {}
    return {m[1]: (int(m[2]) - 1, m[3]) for m in _LINE.finditer(message)}  # type: ignore[misc]


def table(spec: specmod.Spec, p: Placement) -> list[str]:
    """The placement as people read it: per commit its hunks, files, lines, uncertain hunks."""
    rows = [f"  {'#':>3}  {'hunks':>5}  {'files':>5}  {'lines':>13}  {'unsure':>6}  message"]
    for k, c in enumerate(spec.commits):
        mine = [h for h in p.hunks if p.owners[h.id].k == k]
        files, added, removed = diff.stat(mine)
        unsure = sum(1 for h in mine if p.owners[h.id].who == "model, uncertain")
        rows.append(f"  {k + 1:>3}  {len(mine):>5}  {files:>5}  {f'+{added} -{removed}':>13}  {unsure:>6}  "
                    f"{c.summary[:60]}")
    counts = Counter(o.who for o in p.owners.values())
    lines = rows + [f"  placed by: {counts['user']} the spec, {counts['rule']} rules, "
                    f"{counts['model'] + counts['model, uncertain']} the model"]
    lines += ["  " + m for m in p.composed.moved[:10]]
    for k in p.composed.empty:
        lines.append(f"Warning: commit {k + 1} ({spec.commits[k].summary}) is left with no hunk: merge or drop it "
                     f"(git retcon spec edit {spec.cleaned})")
    if p.composed.uncertain:
        lines.append(f"{len(p.composed.uncertain)} hunks are uncertain (the model answered two ways): "
                     + ", ".join(p.composed.uncertain[:8]) + (" ..." if len(p.composed.uncertain) > 8 else "")
                     + f"; see `git retcon hunks {spec.cleaned}`")
    return lines
