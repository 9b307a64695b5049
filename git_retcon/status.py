"""`git retcon status`: each logical commit's state, commits, WIPs, build/test result,
tokens and seconds, read from the spec and the notes (nothing is run or written).

`document` is the `status --json` shape (the man page's FORMATS, plus
`branch`, `runs`, `invented` and `seconds`); `render` is the table a person reads.
"""
from __future__ import annotations

from typing import Any, Literal

from git_retcon import diff
from git_retcon.check import configured_commands, record_for
from git_retcon.errors import RetconError
from git_retcon.git import ownership
from git_retcon.git.ids import CommitId
from git_retcon.git.plumbing import fork_point, full_sha, get_commit
from git_retcon.git.rebased import advice as rebased_advice
from git_retcon.git.rebased import older_base
from git_retcon.reconstruct import ontop
from git_retcon.state import cost, notes
from git_retcon.state.notes import CommandKind
from git_retcon.state.spec import Absorbed
from git_retcon.state.store import Store, Stored
from git_retcon.ui import plural

# The cleaned branch as status shows it: not made yet, as recorded (with commits on
# top to adopt, maybe), gone although commits are recorded on it, not holding them,
# or a branch git-retcon did not make; or as recorded, on the base the source was rebased away
# from (a restack: git.rebased).
BranchState = Literal["none", "ok", "missing", "moved", "foreign", "rebased"]


def document(store: Store, stored: Stored) -> dict[str, Any]:
    """The whole status, as `status --json` prints it."""
    spec = stored.spec
    walk = _branch_commits(store, stored)   # one walk of the branch for its state and the rows
    rows = commit_rows(store, stored, walk)
    spent = cost.ledger(store, stored)
    cost.add_to_rows(rows, spent)
    branch = branch_state(store, stored, walk)
    return {"name": stored.name, "source": spec.source, "remote": spec.remote, "cleaned": spec.cleaned,
            "state": spec.state, "branch": branch, "commits": rows,
            # a restack takes the remote's changes: nothing of them is absorb's
            "to_absorb": 0 if branch == "rebased" else to_absorb(store, stored),
            # a person's commits on the finished branch: the commands that absorb them (reconstruct/ontop.py)
            "on_top": on.steps() if (on := ontop.find(store.repo, spec, stored.name)) is not None else [],
            "runs": [{"model": r.get("model"), "stop": r.get("stop"), "tokens": r.get("tokens")} for r in spent.runs]}


def commit_rows(store: Store, stored: Stored, walk: Walk) -> list[dict[str, Any]]:
    """One row per logical commit, in the `status --json` shape. Seconds add up every commit
    the logical commit made: its build and test (each tree is tested once) and model steps."""
    rows = []
    commands = configured_commands(stored)
    current, pending = stored.spec.current(), unrecorded(store, stored, walk)
    for i, c in enumerate(stored.spec.commits):
        created = c.created + (pending if i == current else [])
        tokens: notes.Tokens = {"input": 0, "output": 0}
        invented: notes.Invented = {"count": 0, "lines": []}
        seconds = {"build": 0.0, "test": 0.0, "model": 0.0}
        result: dict[CommandKind, str] = {}
        sandbox: str | None = None
        for sha in created:
            note = notes.read_commit(store, sha)
            t = notes.tokens_of(note)
            tokens["input"] += t["input"]
            tokens["output"] += t["output"]
            if t.get("cached"):     # prompt tokens the backend served from its cache, when it said
                tokens["cached"] = tokens.get("cached", 0) + t.get("cached", 0)
            drift = notes.invented_of(note)
            invented["count"] += drift["count"]
            invented["lines"] += drift["lines"]
            if drift.get("removed"):
                invented["removed"] = invented.get("removed", 0) + drift.get("removed", 0)
            seconds["model"] += notes.model_seconds_of(note)
            result = {}
            for kind, (verdict, took) in _tree_records(store, stored, sha, commands).items():
                result[kind] = verdict
                seconds[kind] += took
            sandbox = _sandbox_of(store, stored, sha, commands)
        rows.append({
            "index": i + 1, "message": c.summary,
            "state": "in-progress" if c.state == "pending" and created else c.state, "commits": created,
            "wip": max(len(created) - 1, 0), "tokens": tokens,
            # the last commit's: what the logical commit ends on
            "build": result.get("build", "none") if created else None,
            "test": result.get("test", "none") if created else None,
            # what the last commit's build and test ran under (sandbox/confine.py); None: not known
            "sandbox": sandbox if created else None,
            "invented": invented, "seconds": {k: round(v, 2) for k, v in seconds.items()},
            # what `git retcon absorb` folded into it since it was first complete
            "absorbed": [e.text for e in c.history if isinstance(e, Absorbed)],
        })
    return rows


def to_absorb(store: Store, stored: Stored) -> int:
    """The source's changes since a complete spec's cleaned branch, for `absorb` (0: none, or
    the spec is not complete: a run takes them then)."""
    spec = stored.spec
    tip = ownership.branch_tip(store.repo, spec.cleaned)
    if spec.current() is not None or tip is None:
        return 0
    try:
        source = fork_point(store.repo, spec.source, spec.remote, "").source
    except RetconError:
        return 0
    return len(diff.remaining(store.repo, get_commit(store.repo, tip).tree_id, source.tree_id))


def unrecorded(store: Store, stored: Stored, walk: Walk) -> list[str]:
    """Commits of the cleaned branch past those the spec records, that carry this spec's note:
    made by a run and not yet recorded (a run writes a commit's entry with its verdict; a run
    killed before, the next one adopts them into the current logical commit, as shown here)."""
    recorded, on = walk
    if stored.spec.current() is None or on is None or on[: len(recorded)] != recorded:
        return []
    return [sha for sha in on[len(recorded):] if ownership.made_by(store.repo, sha, stored.name)]


def _tree_records(store: Store, stored: Stored, sha: str,
                  commands: dict[CommandKind, str]) -> dict[CommandKind, tuple[str, float]]:
    """(result, seconds) recorded for the tree of commit sha with each of the spec's commands, in
    the spec's context (check.record_for); a command never run there (or not configured) is absent."""
    out: dict[CommandKind, tuple[str, float]] = {}
    for kind in commands:
        rec = record_for(store, stored, sha, kind)
        if rec is None:
            continue
        try:
            took = float(rec.get("seconds", 0) or 0)
        except (TypeError, ValueError):
            took = 0.0   # a note a human or an older version wrote
        out[kind] = (str(rec.get("result") or "none"), took)
    return out


def _sandbox_of(store: Store, stored: Stored, sha: str, commands: dict[CommandKind, str]) -> str | None:
    """What the build and test of commit sha's tree ran under, as the records that answer for the
    spec say (the test's, else the build's); None when no record says (an older version's)."""
    found = [rec.get("sandbox") for k in reversed(list(commands)) if (rec := record_for(store, stored, sha, k))]
    return next((str(s) for s in found if s), None)


def foreign_branch(store: Store, stored: Stored) -> str | None:
    """Why the branch of the spec's `cleaned` name is not the one git-retcon made for it
    (the user's own branch of that name), or None: it is, or there is none."""
    spec = stored.spec
    return ownership.spec_branch_foreign(store.repo, stored.name, spec.cleaned, spec.source, spec.remote,
                                         [c for lc in spec.commits for c in lc.created],
                                         any(c.history for c in spec.commits))


# The commits the spec records (in full), and the cleaned branch's past the merge base (None: no
# branch, or the source or remote is gone, so no merge base to count from).
Walk = tuple[list[CommitId], "list[CommitId] | None"]


def _branch_commits(store: Store, stored: Stored) -> Walk:
    repo, spec = store.repo, stored.spec
    recorded = [full_sha(repo, s) for c in spec.commits for s in c.created]
    if ownership.branch_tip(repo, spec.cleaned) is None:
        return recorded, None
    try:
        base = str(fork_point(repo, spec.source, spec.remote, "").base.id)
    except RetconError:
        return recorded, None
    return recorded, ownership.chain(repo, spec.cleaned, base).commits


def branch_state(store: Store, stored: Stored, walk: Walk) -> BranchState:
    """Whether the cleaned branch still holds what the spec records (status's header)."""
    recorded, on = walk
    if ownership.branch_tip(store.repo, stored.spec.cleaned) is None:
        return "missing" if recorded else "none"
    if foreign_branch(store, stored) is not None:
        return "foreign"
    if not recorded or on is None:   # no merge base: status says what it knows, check says the rest
        return "ok"
    if on[: len(recorded)] == recorded:
        return "ok"
    return "rebased" if rebased(store, stored, recorded) else "moved"


def rebased(store: Store, stored: Stored, recorded: list[CommitId]) -> bool:
    """A complete spec whose cleaned branch holds the recorded commits on the base the source
    was rebased away from: `run` restacks it (git.rebased says so for every command)."""
    spec = stored.spec
    if spec.current() is not None:
        return False
    try:
        base = str(fork_point(store.repo, spec.source, spec.remote, "").base.id)
    except RetconError:
        return False
    return older_base(store.repo, recorded, ownership.branch_tip(store.repo, spec.cleaned), base) is not None


def _secs(value: float) -> str:
    return f"{value:.1f}s" if value else "-"


def render(doc: dict[str, Any], stuck: str | None) -> list[str]:
    """The table and the notes under it; stuck: the stuck commit's summary, if any."""
    name, rows, branch = doc["name"], doc["commits"], doc["branch"]
    state = {"missing": "branch missing", "moved": "branch moved",
             "foreign": "branch not git-retcon's", "rebased": "source rebased"}.get(branch, doc["state"])
    out = [f"{name}: {state} ({doc['source']} onto {doc['remote']} -> {doc['cleaned']})",
           f"{'#':>3}  {'state':<11} {'commits':>7} {'wip':>3}  {'build':<7} {'test':<7} "
           f"{'time b/t/model':>18} {'tokens':>9}  message"]
    for r in rows:
        tok = r["tokens"]["input"] + r["tokens"]["output"]
        s = r["seconds"]
        took = f"{_secs(s['build'])}/{_secs(s['test'])}/{_secs(s['model'])}"
        out.append(f"{r['index']:>3}  {r['state']:<11} {len(r['commits']):>7} {r['wip']:>3}  "
                   f"{r['build'] or '-':<7} {r['test'] or '-':<7} {took:>18} {tok:>9}  {r['message']}")
    ran = {r["sandbox"] for r in rows if r.get("sandbox")}
    if ran:   # what the build and test results ran under (the man page's CONFINEMENT)
        out.append("Sandbox: " + ", ".join(
            f"{s} (commits {', '.join(str(r['index']) for r in rows if r.get('sandbox') == s)})"
            if len(ran) > 1 else s for s in sorted(ran)))
    for r in rows:
        if r["absorbed"]:
            out.append(f"Commit {r['index']} absorbed: {r['absorbed'][-1]}")
        if r["invented"]["count"]:   # lines a model wrote that neither the base nor the source has
            removed = r["invented"].get("removed", 0)
            what = "in neither the base nor the source" if not removed else \
                f"{removed} of them removed while the source keeps them"
            out.append(f"Commit {r['index']}: {r['invented']['count']} invented lines ({what}): "
                       + "; ".join(r["invented"]["lines"][:3]))
    runs = doc["runs"]
    if runs:
        t = cost.total(runs)
        cached = sum(int((r.get("tokens") or {}).get("cached", 0) or 0) for r in runs)   # as the backend said
        out.append(f"Tokens: {t['input']} in" + (f" ({cached} of them cached)" if cached else "")
                   + f", {t['output']} out, {t['calls']} model calls in {len(runs)} "
                   f"run{'s' if len(runs) != 1 else ''}; last run: {runs[-1]['tokens']['input']} in, "
                   f"{runs[-1]['tokens']['output']} out ({runs[-1].get('stop')})")
    if branch == "missing":
        shas = [sha for r in rows for sha in r["commits"]]
        out += ["", f"Branch '{doc['cleaned']}' is gone, but the spec records commits on it: restore it "
                f"(git branch {doc['cleaned']} {str(shas[-1])[:12] if shas else ''}), or start over with "
                f"`git retcon abort {name}`"]
    elif branch == "foreign":
        out += ["", f"A branch '{doc['cleaned']}' exists that git-retcon did not make: run refuses to touch it; "
                "rename or delete it, or give the spec another `cleaned` name"]
    elif branch == "rebased":
        out += ["", rebased_advice(doc["source"], name)]
    elif branch == "moved":
        out += ["", f"Branch '{doc['cleaned']}' no longer holds the recorded commits: "
                f"`git retcon check {name}` says how to repair it"]
    if doc.get("on_top"):   # what `run`, `absorb` and `check` say too
        out += ["", f"'{doc['cleaned']}' has commits of a person's on top of the clean history: "
                "absorb them into the logical commits they belong to" +
                ("" if len(doc["on_top"]) == 1 else f" (first put them on '{doc['source']}')") + ":"]
        out += [f"  {step}" for step in doc["on_top"]]
    elif doc["to_absorb"]:
        out += ["", f"'{doc['source']}' has {plural(doc['to_absorb'], 'change')} since the spec was complete: "
                f"git retcon absorb {name}"]
    if stuck is not None:
        out += ["", f"Stuck: {stuck}", f"Resolve with: git retcon resolve -m \"...\" {name}"]
    return out
