"""Every note git-retcon writes: one typed definition each, read and written here.

The JSON shapes are a public format (ARCHITECTURE.md, "Where state lives"; the man page):
other tools read them with `git notes --ref=retcon show`. Notes are written
compare-and-swap through Store.write_note. Readers get what is stored: a note
written by hand or by an older version may lack keys, so they use `.get`.

- refs/notes/retcon on a created commit: CommitNote (a squashed commit's adds
  `squashed` or `rewritten_from`).
- refs/notes/retcon on a commit of the spec chain: SpecNote, the tokens spent by
  steps that made no commit, and each run's totals.
- refs/notes/retcon-tests on a tree: TreeNote, one CommandRecord per command text.
"""
from __future__ import annotations

import json
from typing import Any, Literal, TypedDict, cast

import pygit2

from git_retcon.git import ownership
from git_retcon.git.ids import CommitId
from git_retcon.state.store import NOTES_REF, TESTS_REF, Store

# A created commit: a step's first, a fix (WIP: or fixup!), or a human's that a run adopted.
Kind = Literal["initial", "wip", "adopted"]
CommandKind = Literal["build", "test"]
# What running a configured command gave; timeouts and missing programs are not cached.
CommandResult = Literal["pass", "fail", "timeout", "notfound"]
# A created commit's build/test: the command's result, or skipped when none is configured.
Verdict = Literal["pass", "fail", "skipped", "timeout", "notfound"]
COMMAND_KINDS: tuple[CommandKind, ...] = ("build", "test")
# How a run ended: all complete, a stuck stop, --max-tokens, or an error.
RunEnd = Literal["complete", "stuck", "budget", "error"]   # how a run ended: a run note's `stop`


class _TokensKeys(TypedDict):
    input: int
    output: int


class Tokens(_TokensKeys, total=False):
    cached: int                       # of input, prompt tokens the backend served from its cache


class _UsageKeys(TypedDict):
    input: int
    output: int
    calls: int


class Usage(_UsageKeys, total=False):
    cached: int                       # of input, prompt tokens the backend served from its cache


class SquashedFix(TypedDict):
    commit: str
    message: str
    by: str                           # model, plain code, or human (...)
    diagnosis: str
    candidates: list[str]


class SquashedStop(TypedDict):
    stuck: str
    by: str
    resolved: str


# "from" is a keyword, hence the functional form.
Squashed = TypedDict("Squashed", {
    "from": list[str], "attempts": int, "fixes": list[SquashedFix], "stops": list[SquashedStop],
    "resolved_by": str,
})


class _InventedKeys(TypedDict):
    count: int
    lines: list[str]                  # the first few, as "path: +text" (added) or "path: -text" (removed)


class Invented(_InventedKeys, total=False):
    """Lines a model made up: added lines in neither the base nor the source, and lines removed
    that the source keeps (count holds both)."""

    removed: int                      # of count, the removed ones


class _CommitNoteKeys(TypedDict):
    spec: str
    index: int                        # 1-based logical commit
    kind: Kind
    attempt: int                      # 1 for the initial commit, then each WIP
    tokens: Tokens                    # spent by the step that made it


class CommitNote(_CommitNoteKeys, total=False):
    """refs/notes/retcon on a commit git-retcon created: the keys above always, these when known."""

    model_calls: int
    model_retries: int
    model_seconds: float              # the wall time of the step that made it
    build: Verdict
    test: Verdict
    diagnosis: str                    # a WIP commit's rework brief
    rework: dict[str, object]         # the brief as data (locations, candidates, ...)
    squashed: Squashed                # a squash that folded WIP commits
    rewritten_from: str               # a squash that only re-parented this commit
    invented: Invented                # lines in neither the base nor the source, counted at create_commit
    confirmed: list[str]              # what create_commit's guards named, and the model's reason to keep it
    instead: str                      # why plain code made the commit in the model's place (it gave no judgement)
    sandbox: str                      # what its build and test ran under (CommandRecord.sandbox)


class _SpentKeys(TypedDict):
    index: int                        # 1-based logical commit
    why: str                          # how the step ended: stuck, budget
    input: int
    output: int
    calls: int


class Spent(_SpentKeys, total=False):
    seconds: float                    # the step's wall time (older notes have none)


class RunRecord(TypedDict):
    model: str
    stop: RunEnd
    tokens: Usage
    commits: dict[str, Usage]         # 1-based index -> what this run spent on it; "0": placing hunks


class _PlacedByKeys(TypedDict):
    commit: int                       # 1-based
    who: str                          # user, rule, model, model, uncertain


class PlacedBy(_PlacedByKeys, total=False):
    """Who placed one hunk or atom of the spec's diff in its logical commit, at a placement's save."""

    first: int                        # the model's: the commit the evidence ranked first, 1-based (none: a tie)
    why: str                          # a rule's: which, in words ("its evidence scores commit 1 3.1 times ...")


class SpecNote(TypedDict, total=False):
    """refs/notes/retcon on a commit of the spec chain."""

    spent: list[Spent]
    runs: list[RunRecord]
    placed: dict[str, PlacedBy]         # the save that placed hunks: each hunk or atom id, and who placed it


class _CommandRecordKeys(TypedDict):
    command: str
    kind: CommandKind                 # what the spec ran it as (the last run's, if both)
    result: CommandResult
    seconds: float
    exit_code: int | None
    output: str                       # trimmed to what matters


class CommandRecord(_CommandRecordKeys, total=False):
    """One command's last result on a tree: the keys above always, these when known."""

    sandbox: str                      # what it ran under: bubblewrap, landlock, seatbelt, none (auto) or off
    network: bool                     # whether it could reach the network
    denied: str                       # what the sandbox refused it (a failure's cause)
    # What else it ran on besides the tree (state/records.py): setup, the build before a test, the
    # spec's writable and network, the sandbox. Issue 32's records hold a string: never matched.
    depends: dict[str, Any]


class TreeNote(TypedDict, total=False):
    """refs/notes/retcon-tests on a tree: the last result of each command, by its text.

    Keyed by the command's text, so specs (or edits) with other commands on the same
    tree never erase each other's records. Older versions wrote one record per kind
    (`build`, `test`); those are still read. The same command run in another context (another
    build before it, another sandbox: state/records.py) keeps its earlier records in `others`."""

    commands: dict[str, CommandRecord]
    others: list[CommandRecord]


def usage(input_tokens: int, output_tokens: int, calls: int, cached: int = 0) -> Usage:
    out: Usage = {"input": input_tokens, "output": output_tokens, "calls": calls}
    if cached:
        out["cached"] = cached
    return out


# -- created commits -------------------------------------------------------------


def new_commit(spec: str, index: int, kind: Kind, attempt: int) -> CommitNote:
    return {"spec": spec, "index": index, "kind": kind, "attempt": attempt, "tokens": {"input": 0, "output": 0}}


def read_commit(store: Store, sha: str) -> CommitNote | None:
    return cast("CommitNote | None", store.read_note(NOTES_REF, sha))


def write_commit(store: Store, sha: str, note: CommitNote) -> None:
    store.write_note(NOTES_REF, sha, cast("dict[str, Any]", note))


def write_commits(store: Store, by_sha: dict[CommitId, CommitNote]) -> None:
    """Several commits' notes in one notes commit."""
    store.write_notes(NOTES_REF, {sha: cast("dict[str, Any]", note) for sha, note in by_sha.items()})


def tokens_of(note: CommitNote | None) -> Tokens:
    """The tokens a commit's note holds (zero when it has none)."""
    # int(... or 0): notes are JSON that a human or an older version may have written.
    t = cast("dict[str, Any]", note.get("tokens") or {}) if note else {}
    out: Tokens = {"input": int(t.get("input", 0) or 0), "output": int(t.get("output", 0) or 0)}
    if int(t.get("cached", 0) or 0):
        out["cached"] = int(t["cached"])
    return out


def model_seconds_of(note: CommitNote | None) -> float:
    """The wall time of the step that made the commit (0 when its note has none)."""
    try:
        return float(note.get("model_seconds", 0) or 0) if note else 0.0
    except (TypeError, ValueError):
        return 0.0


def invented_of(note: CommitNote | None) -> Invented:
    """The invented lines a commit's note holds (none when it has none)."""
    drift = cast("dict[str, Any]", note.get("invented") or {}) if note else {}
    out: Invented = {"count": int(drift.get("count", 0) or 0), "lines": [str(x) for x in drift.get("lines") or []]}
    if int(drift.get("removed", 0) or 0):
        out["removed"] = int(drift["removed"])
    return out


def made_by(store: Store, sha: str, spec: str) -> bool:
    """Whether commit sha was created by git-retcon for spec (the ownership rule's own test)."""
    return ownership.made_by(store.repo, sha, spec)


# -- the spec chain: tokens without a commit, and runs ---------------------------------


def read_spec(store: Store, spec_commit: str) -> SpecNote:
    return cast(SpecNote, store.read_note(NOTES_REF, spec_commit) or {})


def last_run_model(store: Store, spec_commit: str, depth: int = 50) -> str | None:
    """The model the last run used: its record on this spec commit or, after saves
    without a run (spec edit, resolve), on the nearest one before it."""
    cur: str | None = spec_commit
    for _ in range(depth):
        if cur is None:
            break
        runs = read_spec(store, cur).get("runs") or []
        if runs:
            return runs[-1].get("model")
        parents = store.repo[pygit2.Oid(hex=cur)].peel(pygit2.Commit).parent_ids
        cur = str(parents[0]) if parents else None
    return None


def set_placed(store: Store, spec_commit: str, placed: dict[str, PlacedBy]) -> None:
    note = read_spec(store, spec_commit)
    note["placed"] = placed
    store.write_note(NOTES_REF, spec_commit, cast("dict[str, Any]", note))


def add_spent(store: Store, spec_commit: str, item: Spent) -> None:
    note = read_spec(store, spec_commit)
    note.setdefault("spent", []).append(item)
    store.write_note(NOTES_REF, spec_commit, cast("dict[str, Any]", note))


def add_run(store: Store, spec_commit: str, item: RunRecord) -> None:
    note = read_spec(store, spec_commit)
    note.setdefault("runs", []).append(item)
    store.write_note(NOTES_REF, spec_commit, cast("dict[str, Any]", note))


# -- trees: build and test records -------------------------------------------------


def tree_commands(store: Store, tree: str) -> dict[str, CommandRecord]:
    """The last recorded result of each command on tree, by command text (records of the
    older one-per-kind shape included, the newer shape winning)."""
    return _read(store, tree)[0]


def tree_records(store: Store, tree: str) -> list[CommandRecord]:
    """Every record on tree, in every context (state/records.py picks one), the last written last."""
    last, others = _read(store, tree)
    return [*others, *last.values()]


def _read(store: Store, tree: str) -> tuple[dict[str, CommandRecord], list[CommandRecord]]:
    note = store.read_note(TESTS_REF, tree) or {}
    found: dict[str, CommandRecord] = {}
    for kind in COMMAND_KINDS:   # the older shape: {"build": {...}, "test": {...}}
        rec = note.get(kind)
        if isinstance(rec, dict) and isinstance(rec.get("command"), str):
            found[rec["command"]] = cast(CommandRecord, {"kind": kind, **rec})
    commands = note.get("commands")
    if isinstance(commands, dict):
        for text, rec in commands.items():
            if isinstance(rec, dict):
                found[text] = cast(CommandRecord, {**rec, "command": text})
    others = note.get("others")
    kept = [cast(CommandRecord, r) for r in others if isinstance(r, dict) and isinstance(r.get("command"), str)] \
        if isinstance(others, list) else []
    return found, kept


def record_key(rec: CommandRecord) -> str:
    """What makes two records the same one: the command and its context (`depends`)."""
    return rec["command"] + "\0" + json.dumps(rec.get("depends"), sort_keys=True)


def record_commands(store: Store, tree: str, recs: list[CommandRecord]) -> None:
    """Record commands' results on tree in one write, each replacing an earlier one of the same
    command in the same context, keeping every other (an older-shape note is rewritten in the new one)."""
    last, others = _read(store, tree)
    for rec in recs:
        before = last.get(rec["command"])
        if before is not None and record_key(before) != record_key(rec):
            others.append(before)
        others = [r for r in others if record_key(r) != record_key(rec)]
        last[rec["command"]] = rec
    note: TreeNote = {"commands": last}
    if others:
        note["others"] = others
    store.write_note(TESTS_REF, tree, cast("dict[str, Any]", note))
