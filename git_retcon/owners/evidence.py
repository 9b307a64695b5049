"""Plain code decides what the evidence decides, and ranks the rest: the rows of owners/rules.py.

For each hunk of the spec's diff (merge base to source tip) and each logical commit: the commit's
planned `hunks` and its `paths` (the user's word), files one commit's hints name and no other's,
whitespace-only hunks for the one commit whose message says style or format, the source commit
that wrote the hunk's lines, and the words a message or hint shares with the hunk (the names it
defines, the function around it, its file's name, the words of its lines), each word weighed by
how few commits name it. A hunk no rule settles keeps its few plausible commits, ranked; the
questions (question.py) ask among those only.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Literal

import pygit2

from git_retcon import diff
from git_retcon.git.plumbing import get_commit
from git_retcon.model.guards import names_file
from git_retcon.owners import names, rules
from git_retcon.owners.files import Files
from git_retcon.owners.source import SourceCommit, written_by
from git_retcon.state import spec as specmod

# Who placed a hunk in its logical commit: the spec (user), a rule of plain code, the model (twice
# the same answer, or once agreeing with the evidence), or the model unsure (two answers differ).
Who = Literal["user", "rule", "model", "model, uncertain"]

_QUOTED = re.compile(r"""["']([\w][\w.-]{2,60})["']""")   # a quoted word that may name a file
PLAUSIBLE = 5          # the most commits one question offers
COMMON = 5             # a word on this many lines of a file names nothing in it (p-map's "promise")


@dataclass(frozen=True)
class Decided:
    k: int                 # the logical commit (0-based)
    who: Who
    why: str               # the rule, in words


@dataclass
class Evidence:
    hunks: list[diff.Hunk]
    decided: dict[str, Decided] = field(default_factory=dict)
    ranked: dict[str, list[tuple[int, float]]] = field(default_factory=dict)   # in doubt: best first
    sources: list[SourceCommit] = field(default_factory=list)
    around: dict[str, str] = field(default_factory=dict)   # a hunk in doubt: the definition it is inside

    def top(self, hid: str) -> int | None:
        """The commit the evidence scores best for a hunk in doubt (None: no evidence at all)."""
        r = self.ranked.get(hid) or []
        return r[0][0] if r and r[0][1] > 0 and (len(r) == 1 or r[0][1] > r[1][1]) else None


def _source_owner(spec: specmod.Spec, src: SourceCommit, commit_words: list[set[str]]) -> tuple[int, bool] | None:
    """The logical commit a source commit's subject points to, and whether exactly (its subject,
    or its sha in the hints, as plan --from-commits writes them)."""
    for k, c in enumerate(spec.commits):
        if src.subject and c.summary.strip().lower() == src.subject.strip().lower():
            return k, True
        if re.search(rf"\b{src.sha[:7]}", c.hints):
            return k, True
    mine = names.words(src.subject)
    if not mine:
        return None
    sims = [len(mine & w) / len(mine | w) if w else 0.0 for w in commit_words]
    best = max(range(len(sims)), key=lambda k: sims[k])
    if sims[best] >= 0.34 and sims.count(sims[best]) == 1:
        return best, False
    return None


class _Reader(Files):
    """A hunk's words by kind, reading each file's blobs once."""

    def __init__(self, repo: pygit2.Repository, base: pygit2.Tree, tip: pygit2.Tree):
        super().__init__(repo, base, tip)
        self.counts: dict[str, Counter[str]] = {}

    def common(self, path: str, word: str) -> bool:
        """Whether the word is on COMMON lines or more of the file (its base version, else its
        tip's): a word everywhere in a file tells none of its hunks apart."""
        if path not in self.counts:
            lines = self.lines(path, False) or self.lines(path, True)
            self.counts[path] = Counter(w for ln in lines for w in names.words(ln))
        return self.counts[path][word] >= COMMON

    def terms(self, h: diff.Hunk, around: str | None) -> dict[str, float]:
        """Each word the hunk says, with the weight of where it says it (the highest); around: the
        definition it sits in (around(), found once per hunk)."""
        removed, added = names.hunk_lines(h)
        out: dict[str, float] = {}

        def put(ws: set[str], weight: float) -> None:
            for w in ws:
                out[w] = max(out.get(w, 0.0), weight)

        put(names.words(" ".join(added or removed)), rules.LINES.weight)
        put(names.words(names.stem(h.path)), rules.FILE.weight)
        put({w for n in names.defined(added or removed) for w in names.words(n)}, rules.DEFINES.weight)
        for quoted in {m for ln in (added or removed)[:50] for m in _QUOTED.findall(ln)}:
            if (folder := self.folder_of(quoted)) is not None and folder != h.path.rpartition("/")[0]:
                put(names.words(folder.rsplit("/", 1)[-1]), rules.NAMES_A_FILE.weight)
        if around:
            put(names.words(around), rules.AROUND.weight)
        return out


def gather(repo: pygit2.Repository, spec: specmod.Spec, base: str, tip: str,
           hunks: list[diff.Hunk] | None = None) -> Evidence:
    """The evidence for every hunk of base..tip (or of `hunks`, ids of that diff): the rows of
    owners/rules.py, deciding ones first."""
    base_c, tip_c = get_commit(repo, base), get_commit(repo, tip)
    if hunks is None:
        hunks = diff.remaining(repo, str(base_c.tree_id), str(tip_c.tree_id))
    ev = Evidence(hunks)
    n = len(spec.commits)
    facts = rules.SpecFacts(spec, frozenset(h.path for h in hunks))
    for k, c in enumerate(spec.commits):
        for hid in c.hunks:
            ev.decided.setdefault(hid, Decided(k, "user", f"commit {specmod.number(k)}'s hunks"))
    for h in hunks:
        for row, decide in rules.DECIDING if h.id not in ev.decided else []:
            if (got := decide(facts, h)) is not None:
                ev.decided[h.id] = Decided(got[0], "user" if row.who == "user" else "rule", got[1])
                break
    doubt = [h for h in hunks if h.id not in ev.decided]
    if not doubt or n == 0:
        return ev
    _rank(repo, spec, ev, doubt, _Reader(repo, base_c.tree, tip_c.tree), base, tip)
    return ev


@dataclass
class _Spec:
    """What the ranking rows read of the spec and the branch, once for every hunk in doubt."""

    spec: specmod.Spec
    commit_words: list[set[str]]
    messages: list[str]                  # each commit's message and hints as lowercase words
    naming: Counter[str]                 # how many commits name each word
    paths: set[str]
    wrote: dict[str, Counter[int]]       # per hunk, the lines each source commit wrote
    owner_of: list[tuple[int, bool] | None]
    defined_in: dict[str, int]
    named: list[set[str]] = field(default_factory=list)   # each message's names of two or more parts
    writes: dict[str, int] = field(default_factory=dict)  # a format string decided hunks add -> their commit
    named_all: set[str] = field(init=False)

    def __post_init__(self) -> None:
        self.named_all = set().union(*self.named)


@dataclass
class _Score:
    """One hunk's scores per logical commit, which commits the evidence points to strongly, and
    the words that did it."""

    scores: list[float]
    strong: list[bool]
    said: list[list[str]]
    lines: Counter[int]
    words: list[int]         # how many words of the hunk each commit's message or hints say


def _rank(repo: pygit2.Repository, spec: specmod.Spec, ev: Evidence, doubt: list[diff.Hunk], reader: _Reader,
          base: str, tip: str) -> None:
    """The ranking rows for each hunk in doubt; one the evidence settles is decided after all."""
    commit_words = [names.words(c.message + "\n" + c.hints) for c in spec.commits]
    try:
        ev.sources, wrote = written_by(repo, base, tip, doubt)
    except (pygit2.GitError, KeyError, ValueError):
        ev.sources, wrote = [], {}
    facts = _Spec(spec, commit_words,
                  [" ".join(re.findall(r"[a-z0-9]+", (c.message + " " + c.hints).lower())) for c in spec.commits],
                  Counter(w for ws in commit_words for w in ws), {h.path for h in ev.hunks}, wrote,
                  [_source_owner(spec, s, commit_words) for s in ev.sources], _defined_in(ev),
                  [rules.identifiers(c.message) for c in spec.commits], _writes(ev))
    # Code first: a test's rows (the code it calls, the messages it expects) read what the code's
    # hunks were decided to be, the ranking's decisions included.
    code_done = False
    for h in sorted(doubt, key=lambda h: names.is_test(h.path)):
        if names.is_test(h.path) and not code_done:
            facts.defined_in, facts.writes, code_done = _defined_in(ev), _writes(ev), True
        inside = reader.around(h)
        verdict = _verdict(facts, ev, h, _score(facts, reader, h, inside))
        if isinstance(verdict, Decided):
            ev.decided[h.id] = verdict
            continue
        ev.ranked[h.id] = verdict
        if inside is not None:
            ev.around[h.id] = inside


def _score(f: _Spec, reader: _Reader, h: diff.Hunk, inside: str | None) -> _Score:
    """The ranking rows' weights for h, per logical commit."""
    n = len(f.spec.commits)
    out = _Score([0.0] * n, [False] * n, [[] for _ in range(n)], f.wrote.get(h.id, Counter()), [0] * n)
    for w, weight in reader.terms(h, inside).items():
        for k in range(n):
            if w in f.commit_words[k]:
                out.scores[k] += weight / f.naming[w]
                out.words[k] += 1
                if weight > rules.LINES.weight and f.naming[w] == 1 and not reader.common(h.path, w):
                    out.strong[k] = True
                    out.said[k].append(w)
    for phrase in rules.phrases(h):
        said_by = [k for k in range(n) if f" {phrase} " in f" {f.messages[k]} "]
        for k in said_by if len(said_by) == 1 else []:
            out.scores[k] += rules.PHRASE.weight
            out.strong[k] = True
            out.said[k].append(phrase)
    for name in rules.runs(h) & f.named_all:
        said_by = [k for k in range(n) if name in f.named[k]]
        for k in said_by if len(said_by) == 1 else []:
            out.scores[k] += rules.NAMED.weight
            out.strong[k] = True
            out.said[k].append(name)
    for k in (k for k, c in enumerate(f.spec.commits) if names_file(c.hints, h.path, f.paths)):
        out.scores[k] += rules.HINTED.weight
    if names.is_test(h.path):
        lines = names.hunk_lines(h)[1]
        for k in {f.defined_in[u] for u in names.used(lines) if u in f.defined_in}:
            out.scores[k] += rules.CALLS.weight
        for k in {k for pattern, k in f.writes.items() if any(re.search(pattern, ln) for ln in lines)}:
            out.scores[k] += rules.WRITES.weight
    total = sum(out.lines.values())
    for i, count in out.lines.items():
        found = f.owner_of[i] if i < len(f.owner_of) else None
        if found is not None:
            k, exact = found
            out.scores[k] += (rules.SOURCE_EXACT.weight if exact else rules.SOURCE_NEAR.weight) * count / total
            out.strong[k] = out.strong[k] or (exact and count == total)
    return out


def _verdict(f: _Spec, ev: Evidence, h: diff.Hunk, sc: _Score) -> Decided | list[tuple[int, float]]:
    """The commit the scores decide, or the few plausible commits, ranked; the ruling-out rows
    take commits out of the running first (unless they would take out every one)."""
    n, scores = len(f.spec.commits), sc.scores
    out = {k for k, c in enumerate(f.spec.commits) for _, rule_out in rules.RULING_OUT if rule_out(c, h)}
    running = [k for k in range(n) if k not in out] or list(range(n))
    order = sorted(running, key=lambda k: (-scores[k], k))
    best = order[0]
    second = order[1] if len(order) > 1 else best
    floor = min(scores[k] for k in running)   # what every commit shares tells none apart
    if len(order) == 1 or (sc.strong[best] and scores[best] > floor and not sc.strong[second]
                           and scores[best] - floor >= 2 * (scores[second] - floor)):
        return Decided(best, "rule", _why(best, sc.lines, f.owner_of, ev.sources, sorted(sc.said[best])))
    top = scores[best]
    # One word, however weighty, decides nothing alone (p-map's "promise" is on eleven lines).
    if top > 0 and sc.words[best] >= 2 and top >= rules.CLEAR.weight * scores[second]:
        return Decided(best, "rule", f"its evidence scores commit {best + 1} {top / scores[second]:.1f} times any other"
                       if scores[second] > 0 else f"its evidence points to commit {best + 1} only")
    if top > 0:
        keep = [k for k in order if scores[k] >= 0.25 * top][:PLAUSIBLE]
        keep = keep if len(keep) >= 2 else order[:2]
    else:   # no evidence at all: every commit still running is plausible
        keep = order
    return [(k, round(scores[k], 3)) for k in keep]


def _writes(ev: Evidence) -> dict[str, int]:
    """The format strings the hunks decided so far add, each with its one logical commit."""
    found: dict[str, set[int]] = {}
    for h in ev.hunks:
        if (d := ev.decided.get(h.id)) is not None and not names.is_test(h.path):
            for pattern in rules.formats(names.hunk_lines(h)[1]):
                found.setdefault(pattern, set()).add(d.k)
    return {pattern: next(iter(ks)) for pattern, ks in found.items() if len(ks) == 1}


def _defined_in(ev: Evidence) -> dict[str, int]:
    """The names the hunks decided so far define, each with its one logical commit."""
    found: dict[str, set[int]] = {}
    for h in ev.hunks:
        if (d := ev.decided.get(h.id)) is not None:
            for name in names.defined(names.hunk_lines(h)[1]):
                found.setdefault(name, set()).add(d.k)
    return {name: next(iter(ks)) for name, ks in found.items() if len(ks) == 1}


def _why(k: int, lines: Counter[int], owner_of: list[tuple[int, bool] | None], sources: list[SourceCommit],
         words: list[str]) -> str:
    for i in lines:
        found = owner_of[i] if i < len(owner_of) else None
        if found == (k, True) and len(lines) == 1:
            return f"written by {sources[i].sha[:9]} ({sources[i].subject[:50]})"
    named = f" ({', '.join(words[:4])})" if words else ""
    return f"commit {k + 1}'s message names what it changes{named}"
