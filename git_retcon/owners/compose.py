"""Plain code composes the answers and checks them before they are saved.

Lock and generated files follow their manifest or source (owners/bulk.py); a test goes with or
after the code it tests; a hunk that uses a name only a later commit's hunk defines brings that
definition down to its own commit (the build of the earlier commit would fail without it); a
logical commit left with no hunk is reported, not silently kept; uncertain answers are listed.
What the user's spec decides (its `hunks`, its `paths`) is never moved.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

import pygit2

from git_retcon import diff
from git_retcon.git.plumbing import get_commit
from git_retcon.owners import names
from git_retcon.owners.bulk import Bulk, classify, owner_by_rule
from git_retcon.owners.evidence import Evidence, Who
from git_retcon.owners.question import Answer
from git_retcon.owners.rules import formats

ROUNDS = 5      # definitions moved down, then looked at again (a chain of three needs two)


@dataclass(frozen=True)
class Owner:
    k: int          # the logical commit (0-based)
    who: Who
    why: str = ""


@dataclass
class Composed:
    owners: dict[str, Owner]
    moved: list[str] = field(default_factory=list)     # what the checks changed, in words
    empty: list[int] = field(default_factory=list)     # logical commits left with no hunk
    uncertain: list[str] = field(default_factory=list)  # hunk ids the model answered two ways


def compose(repo: pygit2.Repository, base: str, tip: str, n: int, ev: Evidence,
            answers: dict[str, Answer], frames: set[str] | None = None) -> Composed:
    owners: dict[str, Owner] = {}
    for h in ev.hunks:
        if (d := ev.decided.get(h.id)) is not None:
            owners[h.id] = Owner(d.k, d.who, d.why)
        elif (a := answers.get(h.id)) is not None:
            owners[h.id] = Owner(a.k, a.who, "answered " + " then ".join(
                "?" if r is None else str(r + 1) for r in a.replies))
        elif (top := ev.top(h.id)) is not None:
            owners[h.id] = Owner(top, "rule", "the best score of its evidence (no question asked)")
        else:
            owners[h.id] = Owner(n - 1, "rule", "nothing decides: the last commit takes it")
    out = Composed(owners)
    bulk = classify(repo, get_commit(repo, tip).tree, get_commit(repo, base).tree, ev.hunks)
    skip = {h.id for b in bulk.values() for h in b.hunks}
    reading = _Reading(ev.hunks)
    _frames_with_their_list(ev.hunks, out, frames or set())
    _none_empty(n, ev, out, skip, reading)
    _bulk(bulk, n, ev.hunks, out)
    _tests_after_code(ev.hunks, out, reading)
    _expectations_with_their_writer(ev.hunks, out)
    _definitions_first(ev.hunks, out, reading)
    _renames_together(ev.hunks, out, reading)
    _none_empty(n, ev, out, skip, reading)   # a hunk brought down may have emptied a commit again
    _bulk(bulk, n, ev.hunks, out)
    _definitions_first(ev.hunks, out, reading)
    _frames_with_their_list(ev.hunks, out, frames or set())
    have = {o.k for o in out.owners.values()}
    out.empty = [k for k in range(n) if k not in have]
    out.uncertain = [h.id for h in ev.hunks if out.owners[h.id].who == "model, uncertain"]
    return out


def _frames_with_their_list(hunks: list[diff.Hunk], out: Composed, frames: set[str]) -> None:
    """A list's frame (owners/atoms: its opening and closing lines) goes with its entries: an
    added one with the commit of the first entry, a removed one with the commit of the last
    (tomli's block of expected failures is gone once the last feature takes its last name out;
    a question about its `if valid.stem in {` can only guess)."""
    for f in (h for h in hunks if h.id in frames):
        own = out.owners[f.id]
        hid = f.id.split(":", 1)[0]
        entries = sorted({out.owners[h.id].k for h in hunks
                          if h.id.startswith(hid + ":") and h.id not in frames})
        if own.who == "user" or not entries or (f.added and f.removed):
            continue
        k = entries[0] if f.added else entries[-1]
        if k != own.k:
            verb = "begins it" if f.added else "empties it"
            out.owners[f.id] = Owner(k, "rule", f"a list's frame goes with the commit that {verb}")
            out.moved.append(f"{f.id}: moved to commit {k + 1}, which {verb}: a list's frame goes with its entries")


def _bulk(bulk: dict[str, Bulk], n: int, hunks: list[diff.Hunk], out: Composed) -> None:
    """Lock and generated files go where their manifest or source goes."""
    if not bulk:
        return
    owner_of_path: dict[str, int] = {}
    in_dir: list[tuple[str, int]] = []
    for h in hunks:
        if h.path in bulk:
            continue
        k = out.owners[h.id].k
        owner_of_path.setdefault(h.path, k)
        in_dir.append((h.path, k))

    def owners_in_dir(d: str) -> list[int]:
        prefix = d + "/" if d else ""
        return [k for p, k in in_dir if p.startswith(prefix)]

    for b in bulk.values():
        k, why = owner_by_rule(b, owner_of_path, owners_in_dir, n - 1)
        for h in b.hunks:
            if out.owners[h.id].who != "user":
                out.owners[h.id] = Owner(k, "rule", f"{b.kind} file: {why}")


class _Reading:
    """Which hunk alone defines a name (added lines), which alone removes a name's definition
    (removed lines, not defined again), and the names each hunk's added and removed lines use:
    read once, for every check below."""

    def __init__(self, hunks: list[diff.Hunk]):
        self.defines = _definitions(hunks)
        self.users: dict[str, set[str]] = {}      # a name -> the hunks whose added lines use it
        by: dict[str, list[str]] = {}
        for h in hunks:
            for name in names.defined(names.hunk_lines(h)[0]):
                if len(name) >= 3 and name not in self.defines:
                    by.setdefault(name, []).append(h.id)
        self.undefines = {name: ids[0] for name, ids in by.items() if len(ids) == 1}
        self.adds = {h.id: names.used(names.hunk_lines(h)[1]) for h in hunks}
        self.removes = {h.id: names.used(names.hunk_lines(h)[0]) for h in hunks}
        for hid, used in self.adds.items():
            for name in used:
                self.users.setdefault(name, set()).add(hid)
        self.defined_by: dict[str, list[str]] = {}     # a hunk -> the names only it defines
        for name, hid in self.defines.items():
            self.defined_by.setdefault(hid, []).append(name)
        # A local variable only one hunk declares: the hunks of its function that use it need it.
        local: dict[str, list[str]] = {}
        for h in hunks:
            for name in names.declared(names.hunk_lines(h)[1]):
                if len(name) >= 3 and name not in self.defines:
                    local.setdefault(name, []).append(h.id)
        self.declared_in: dict[str, str] = {}          # a local variable -> the one hunk declaring it
        for name, ids in local.items():
            if len(ids) == 1:
                self.defined_by.setdefault(ids[0], []).append(name)
                self.declared_in[name] = ids[0]

    def tied(self, hid: str) -> bool:
        """Whether another hunk uses a name this one defines or declares, or this one uses a local
        variable another declares: a hunk that moves alone may break its function (pflag: a
        `var errUnknownFlagAll` moved to fill an empty commit left its uses undefined)."""
        return any(g != hid for name in self.defined_by.get(hid, ()) for g in self.users.get(name, ())) or \
            any(self.declared_in.get(u, hid) != hid for u in self.adds[hid])

    def held_back(self, hid: str, k: int, out: Composed) -> bool:
        """Whether moving hunk hid to commit k breaks what these rules keep: it defines a name an
        earlier commit uses, or removes a use of a name whose definition an earlier one removes."""
        return any(out.owners[g].k < k
                   for name in self.defined_by.get(hid, ()) for g in self.users.get(name, ()) if g != hid) or \
            any((d := self.undefines.get(u)) is not None and d != hid and out.owners[d].k < k
                for u in self.removes[hid])


def _renames_together(hunks: list[diff.Hunk], out: Composed, reading: _Reading) -> None:
    """A hunk that removes a use of a name whose definition another hunk removes (a rename, a
    removal) goes no later than that hunk: the commits between would use a name gone."""
    for h in hunks:
        own = out.owners[h.id]
        if own.who == "user":
            continue
        for name in sorted(reading.removes[h.id]):
            d = reading.undefines.get(name)
            if d is not None and d != h.id and out.owners[d].k < own.k:
                k = out.owners[d].k
                out.owners[h.id] = Owner(k, "rule", f"removes a use of {name}, whose definition commit {k + 1} "
                                                    "removes")
                out.moved.append(f"{h.id} {h.path}: removes a use of {name}, moved to commit {k + 1} that removes "
                                 "its definition")
                break


def _none_empty(n: int, ev: Evidence, out: Composed, bulk: set[str], reading: _Reading) -> None:
    """A logical commit nothing was placed in takes, of the hunks in doubt that could be its, the
    one its evidence scores best for it relative to that hunk's best, when the hunk's own commit
    keeps another: an empty commit is a finding the user must act on, a hunk placed on weak
    evidence is what the questions' answers are anyway. A hunk tied to others by a name (reading.
    tied) is not taken: the empty commit is then said, at plan time, rather than a broken one."""
    for k in range(n):
        held = Counter(o.k for hid, o in out.owners.items() if hid not in bulk)
        if held[k]:
            continue
        best: tuple[float, str] | None = None
        for hid, ranked in ev.ranked.items():
            own = out.owners[hid]
            scores = dict(ranked)
            if k not in scores or own.who == "user" or held[own.k] < 2 or hid in bulk:
                continue
            if reading.held_back(hid, k, out) or reading.tied(hid):
                continue    # the checks below would move it straight back, or its function breaks
            top = max(scores.values()) or 1.0
            if best is None or scores[k] / top > best[0]:
                best = (scores[k] / top, hid)
        if best is not None:
            hid = best[1]
            out.owners[hid] = Owner(k, "rule", f"commit {k + 1} had no hunk: its best-scoring one in doubt")
            out.moved.append(f"{hid}: moved to commit {k + 1}, which had no hunk (it was among its plausible ones)")


def _definitions(hunks: list[diff.Hunk]) -> dict[str, str]:
    """Each name exactly one hunk defines (added lines), with that hunk's id."""
    by: dict[str, list[str]] = {}
    for h in hunks:
        for name in names.defined(names.hunk_lines(h)[1]):
            if len(name) >= 3:
                by.setdefault(name, []).append(h.id)
    return {name: ids[0] for name, ids in by.items() if len(ids) == 1}


def _tests_after_code(hunks: list[diff.Hunk], out: Composed, reading: _Reading) -> None:
    """A test hunk placed before the code it tests (names the diff defines that it uses; for a new
    test file, also the module its name says) moves up to that code's commit."""
    defs = reading.defines
    by_id = {h.id: h for h in hunks}
    for h in hunks:
        own = out.owners[h.id]
        if own.who == "user" or not names.is_test(h.path):
            continue
        tested = names.tested_stem(h.path)
        code = {defs[u] for u in reading.adds[h.id] if u in defs and defs[u] != h.id}
        if h.kind == "add":   # a new test file goes with or after the module its name says
            code |= {g.id for g in hunks if not names.is_test(g.path) and names.stem(g.path) == tested and tested}
        code = {c for c in code if not names.is_test(by_id[c].path)}
        latest = max((out.owners[c].k for c in code), default=own.k)
        if latest > own.k:
            out.owners[h.id] = Owner(latest, "rule", f"tests go with the code they test (commit {latest + 1})")
            out.moved.append(f"{h.id} {h.path}: a test, moved to commit {latest + 1} with the code it tests")


def _expectations_with_their_writer(hunks: list[diff.Hunk], out: Composed) -> None:
    """A test line edited to expect a text that a format string of one commit's code writes (and
    no longer the text it expected) goes with that commit, before or after: earlier, it expects
    what is not written yet; later, the old expectation fails once the code writes the new text
    (xmlparser: tests/pi.rs's "expected quote mark not '*'" was put in commit 4, the arm writing
    "expected quote mark not '{}' at {}" in commit 2, whose test run then failed)."""
    writers: dict[str, set[int]] = {}
    for h in hunks:
        if not names.is_test(h.path):
            for pattern in formats(names.hunk_lines(h)[1]):
                writers.setdefault(pattern, set()).add(out.owners[h.id].k)
    for h in hunks:
        own = out.owners[h.id]
        removed, added = names.hunk_lines(h)
        if own.who == "user" or not names.is_test(h.path) or not removed or not added:
            continue
        expects = {next(iter(ks)) for pattern, ks in writers.items()
                   if len(ks) == 1 and any(re.search(pattern, ln) for ln in added)
                   and not any(re.search(pattern, ln) for ln in removed)}
        if len(expects) == 1 and (k := expects.pop()) != own.k:
            out.owners[h.id] = Owner(k, "rule", f"expects what commit {k + 1}'s code writes")
            out.moved.append(f"{h.id} {h.path}: expects what commit {k + 1}'s code writes, moved to commit {k + 1}")


def _definitions_first(hunks: list[diff.Hunk], out: Composed, reading: _Reading) -> None:
    """A definition used by an earlier commit's hunk moves down to that commit."""
    defs, uses = reading.defines, reading.adds
    by_id = {h.id: h for h in hunks}
    for _ in range(ROUNDS):
        changed = False
        for h in hunks:
            k = out.owners[h.id].k
            for name in sorted(uses[h.id]):
                d = defs.get(name)
                if d is None or d == h.id:
                    continue
                theirs = out.owners[d]
                if theirs.k > k and theirs.who != "user" and not names.is_test(by_id[d].path):
                    out.owners[d] = Owner(k, "rule", f"defines {name}, which commit {k + 1} uses")
                    out.moved.append(f"{d} {by_id[d].path}: defines {name}, moved to commit {k + 1} that uses it")
                    changed = True
        if not changed:
            return
