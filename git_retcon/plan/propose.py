"""The model proposes the spec: which hunks form which logical commit, in what order.

Plain code owns everything checkable: the hunk index, the prompt budget, chunking
by directory, lock/generated files (assigned by rule), and the check that every
hunk id lands in exactly one commit. The model only groups, orders and names.

A branch whose index fits one prompt is planned in one call. A larger one is cut
by directory, recursively, into chunks that fit; each chunk is grouped on its own
(in parallel), then the groups are combined into ordered commits, the combine
itself cut into parts when the groups do not fit one prompt.
"""
from __future__ import annotations

import re
import threading
from collections.abc import Callable
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import TypeVar

import llm
import pygit2

from git_retcon import diff
from git_retcon.diff.hunk import Hunk
from git_retcon.errors import RetconError
from git_retcon.git.plumbing import fork_point
from git_retcon.model.logs import ExchangeLog
from git_retcon.model.prompt import template
from git_retcon.plan.ask import Asker, Limits, Tally
from git_retcon.plan.bulk import Bulk, classify, describe_all, owner_by_rule
from git_retcon.plan.context import LABEL_CHARS, commits_text, cut, index_line_costs, overview, split, style_text
from git_retcon.plan.replies import Entry, check
from git_retcon.state import spec as specmod


@dataclass
class Request:
    source: str
    remote: str
    cleaned: str
    instructions: str = ""
    max_commits: int | None = None


@dataclass
class Proposal:
    spec: specmod.Spec
    hunks: list[Hunk]                 # the whole remaining diff the plan covers
    leftovers: list[Hunk]             # assigned nowhere, after the repair rounds
    bulk: dict[str, Bulk]
    chunks: int                       # 0: planned in one prompt
    tally: Tally
    warnings: list[str]               # problems the repair rounds left, settled by rule


SLACK = 200           # characters of margin for what the estimate of a prompt's size misses


# --- the planner ------------------------------------------------------------------


@dataclass
class Group:
    gid: str
    message: str
    hints: str
    ids: list[str]
    where: str

    def line(self, by_id: dict[str, Hunk], hints: int) -> str:
        paths = list(dict.fromkeys(by_id[i].path for i in self.ids))
        added = sum(by_id[i].added_lines for i in self.ids)
        removed = sum(by_id[i].removed_lines for i in self.ids)
        files = ", ".join(cut(p, 80) for p in paths[:4]) + (f", +{len(paths) - 4} more" if len(paths) > 4 else "")
        text = (f"{self.gid} [{cut(self.where, 60)}] {cut(self.message.splitlines()[0], 100)} - "
                f"{len(self.ids)} hunks +{added} -{removed}: {files}")
        if hints and self.hints:
            text += "\n    hints: " + cut(self.hints, hints)
        return text


T = TypeVar("T")


class Planner:
    def __init__(self, repo: pygit2.Repository, model: llm.Model, request: Request, limits: Limits,
                 say: Callable[[str], None] = lambda s: None, log: ExchangeLog | None = None):
        self.repo = repo
        self.request = request
        self.limits = limits
        self.say = say
        self.tally = Tally()
        self.asker = Asker(model, limits, self.tally, template("plan-system.md").template,
                           template("plan-repair.md"), say, log)
        self.lock = threading.Lock()
        self.gids = 0
        self.leftover_ids: list[str] = []
        self.warnings: list[str] = []

    # -- inputs --

    def run(self) -> Proposal:
        from git_retcon.plan.branches import ONTO_FIX, source_commits

        req = self.request
        fork = fork_point(self.repo, req.source, req.remote, ONTO_FIX)
        src, rem, base = fork.source, fork.remote, fork.base
        everything = diff.remaining(self.repo, str(base.tree_id), str(src.tree_id))
        if not everything:
            raise RetconError(f"'{req.source}' has no changes that '{req.remote}' lacks: nothing to plan")
        self.by_id = {h.id: h for h in everything}
        self.bulk = classify(self.repo, src.tree, base.tree, everything)
        normal = [h for h in everything if h.path not in self.bulk]
        budget = self.limits.prompt_chars
        files, added, removed = diff.stat(normal)
        self.values = {
            "source": req.source, "remote": req.remote,
            "commits": commits_text(source_commits(self.repo, req.source, req.remote), budget // 8),
            "style": style_text(self.repo, rem, min(2000, budget // 20)),
            "instructions": (f"Instructions from the user: {cut(req.instructions, budget // 20)}\n"
                             if req.instructions.strip() else ""),
            "limit": (f"Propose at most {req.max_commits} commits.\n" if req.max_commits else ""),
            "bulk": describe_all(list(self.bulk.values()), budget // 20),
            "stat": f"{len(normal)} hunks in {files} files (+{added} -{removed})",
            "overview": overview(normal, budget // 12),
        }
        files, added, removed = diff.stat(everything)
        self.say(f"Remaining diff: {len(everything)} hunks in {files} files (+{added} -{removed}); "
                 f"{len(self.bulk)} lock/generated files assigned by rule.")
        if normal:
            entries, chunks = self._plan(normal)
        else:
            entries, chunks = [Entry(src.message.strip() or "Update generated files", "", [])], 0
        return self._finish(everything, entries, chunks)

    # -- one prompt, or chunks and a combine --

    def _room(self, prompt: str, items: str, with_groups: bool) -> int:
        """Characters left for the variable part next to an empty `prompt`."""
        room = (self.limits.prompt_chars - len(self.asker.system) - len(prompt) - self.limits.repair_chars
                - self.asker.overhead(items, with_groups) - SLACK)
        if room < 1000:
            raise RetconError(f"a budget of {self.limits.context_tokens} tokens is too small to plan in: "
                              "raise --budget")
        return room

    def _plan(self, normal: list[Hunk]) -> tuple[list[Entry], int]:
        cost = index_line_costs(normal)
        index_chars = sum(cost.values())
        if (index_chars <= self._room(self._single_prompt("", ""), "commits", False)
                and len(normal) <= self.limits.max_ids):
            self.say(f"Asking {self.asker.model.model_id} for a plan (1 prompt)...")
            index = diff.index_lines(normal, budget=index_chars)
            known = {h.id: h.path for h in normal}
            checked = self.asker.ask(
                lambda attempt: self._single_prompt(attempt, index), "commits", False,
                lambda e: check(e, known, self.request.max_commits, "hunk"))
            self._accept("the plan", checked.unassigned, checked.others)
            return checked.entries, 0
        return self._chunked(normal, cost)

    def _accept(self, where: str, unassigned: list[str], others: list[str]) -> None:
        with self.lock:
            self.leftover_ids += unassigned
            self.warnings += [f"{where}: {o}" for o in others]

    def _single_prompt(self, attempt: str, index: str) -> str:
        return template("plan.md").substitute(self.values, step="plan" + attempt, index=index,
                                              answer=self.asker.how("commits", False))

    def _chunk_prompt(self, attempt: str, part: int, n: int, label: str, index: str, count: int) -> str:
        return template("plan-chunk.md").substitute(
            self.values, step="plan-chunk" + attempt, part=str(part), parts=str(n), label=label,
            index=index, count=str(count), answer=self.asker.how("groups", False))

    def _chunked(self, normal: list[Hunk], cost: dict[str, int]) -> tuple[list[Entry], int]:
        widest = self._chunk_prompt(" (attempt 99)", 99999, 99999, "x" * LABEL_CHARS, "", 99999)
        chunks = split(normal, cost, self._room(widest, "groups", False), self.limits.max_ids)
        n = len(chunks)
        self.say(f"Too big for one prompt: asking {self.asker.model.model_id} about {n} chunks by directory "
                 f"({min(self.limits.jobs, n)} at a time)...")
        done = [0]

        def one(i: int) -> list[Entry]:
            label, hs = chunks[i]
            index = diff.index_lines(hs, budget=10 ** 9)
            known = {h.id: h.path for h in hs}
            checked = self.asker.ask(
                lambda attempt: self._chunk_prompt(attempt, i + 1, n, label, index, len(hs)), "groups", False,
                lambda e: check(e, known, None, "hunk"))
            self._accept(f"chunk {i + 1}", checked.unassigned, checked.others)
            with self.lock:
                done[0] += 1
                if n <= 20 or done[0] % max(1, n // 10) == 0 or done[0] == n:
                    self.say(f"  {done[0]}/{n} chunks done (chunk {i + 1}, {label}: {len(checked.entries)} groups)")
            return checked.entries

        # Group ids follow the chunks' order, whatever order the answers came in.
        groups = [self._group(e, f"chunk {i + 1}: {chunks[i][0]}")
                  for i, entries in enumerate(self._parallel(one, n)) for e in entries]
        return self._combine(groups), n

    def _parallel(self, fn: Callable[[int], T], n: int) -> list[T]:
        """fn(0..n-1) on at most `jobs` threads; the first error cancels what has not started."""
        with ThreadPoolExecutor(max_workers=max(1, self.limits.jobs)) as pool:
            futures = [pool.submit(fn, i) for i in range(n)]
            finished, _ = wait(futures, return_when=FIRST_EXCEPTION)
            failed = next((f for f in finished if f.exception() is not None), None)
            if failed is not None:
                for f in futures:
                    f.cancel()
                raise failed.exception()  # type: ignore[misc]
            return [f.result() for f in futures]

    def _group(self, e: Entry, where: str) -> Group:
        self.gids += 1
        return Group(f"g{self.gids}", e.message, e.hints, e.ids, where)

    def _combine_prompt(self, attempt: str, part: int, n: int, lines: str, task: str, most: int | None) -> str:
        return template("plan-combine.md").substitute(
            self.values, step="plan-combine" + attempt, part=str(part), parts=str(n), task=task, groups=lines,
            limit=(f"Propose at most {most} commits.\n" if most else ""), answer=self.asker.how("commits", True))

    def _combine(self, groups: list[Group], level: int = 1) -> list[Entry]:
        """Groups into ordered commits: one call when they fit, else parts merged level by level."""
        final = template("plan-combine-final.md").template.strip()
        part = template("plan-combine-part.md").template.strip()
        widest = self._combine_prompt(" (attempt 99)", 99999, 99999, "", max(final, part, key=len), 99999)
        room = self._room(widest, "commits", True)
        lines = {g.gid: g.line(self.by_id, 200 if level == 1 else 80) for g in groups}
        if sum(len(line) + 1 for line in lines.values()) <= room:
            self.say(f"Combining {len(groups)} groups into commits...")
            return self._combine_call(groups, lines, 1, 1, final, self.request.max_commits)
        batches: list[list[Group]] = [[]]
        used = 0
        for g in groups:
            c = len(lines[g.gid]) + 1
            if batches[-1] and (used + c > room or len(batches[-1]) >= self.limits.max_ids):
                batches.append([])
                used = 0
            batches[-1].append(g)
            used += c
        n = len(batches)
        self.say(f"Combining {len(groups)} groups in {n} parts (level {level})...")

        def one(i: int) -> list[Entry]:
            batch = batches[i]
            if len(batch) == 1:
                return [Entry(batch[0].message, batch[0].hints, batch[0].ids)]
            return self._combine_call(batch, lines, i + 1, n, part, max(1, len(batch) // 2))

        merged = [self._group(e, f"part {i + 1}") for i, entries in enumerate(self._parallel(one, n))
                  for e in entries]
        if len(merged) >= len(groups):
            # The model merged nothing: pair neighbours so that every level shrinks.
            # Not strict: with an even count the padding None has no partner and is dropped.
            pairs = zip(merged[::2], merged[1::2] + [None], strict=False)
            merged = [self._group(Entry(a.message, a.hints, a.ids + (b.ids if b else [])), a.where) for a, b in pairs]
        return self._combine(merged, level + 1)

    def _combine_call(self, groups: list[Group], lines: dict[str, str], part: int, n: int, task: str,
                      most: int | None) -> list[Entry]:
        text = "\n".join(lines[g.gid] for g in groups)
        known = {g.gid: "" for g in groups}
        checked = self.asker.ask(lambda attempt: self._combine_prompt(attempt, part, n, text, task, most),
                                 "commits", True, lambda e: check(e, known, most, "group"))
        by_gid = {g.gid: g for g in groups}
        self._accept(f"combining part {part}" if n > 1 else "combining",
                     [i for gid in checked.unassigned for i in by_gid[gid].ids], checked.others)
        # Entry ids are group ids here: expand them to hunk ids.
        return [Entry(e.message, e.hints, [i for gid in e.ids for i in by_gid[gid].ids]) for e in checked.entries]

    # -- the spec --

    def _finish(self, everything: list[Hunk], entries: list[Entry], chunks: int) -> Proposal:
        req = self.request
        if not entries:
            raise RetconError(f"model '{self.asker.model.model_id}' assigned none of the hunks: "
                              "try another model, or `git retcon plan --from-commits`")
        owner_of_path: dict[str, int] = {}
        by_dir: dict[str, list[int]] = {}
        for k, e in enumerate(entries):
            for i in e.ids:
                p = self.by_id[i].path
                owner_of_path.setdefault(p, k)
                parts = p.split("/")[:-1]
                for d in range(len(parts) + 1):
                    by_dir.setdefault("/".join(parts[:d]), []).append(k)
        notes: dict[int, list[str]] = {}
        for b in self.bulk.values():
            k, why = owner_by_rule(b, owner_of_path, lambda d: by_dir.get(d, []), len(entries) - 1)
            entries[k].ids += [h.id for h in b.hunks]
            notes.setdefault(k, []).append(f"{b.path} ({b.kind} file; {why})")
        order = {h.id: n for n, h in enumerate(everything)}
        leftovers = set(self.leftover_ids)
        left = [h for h in everything if h.id in leftovers]
        commits = []
        for k, e in enumerate(entries):
            hints = e.hints
            if k in notes:
                hints += ("\n" if hints else "") + "Also takes, by rule: " + "; ".join(notes[k])
            if left and k == len(entries) - 1:
                hints += ("\n" if hints else "") + leftover_hint(left)
            ids = sorted(set(e.ids), key=order.__getitem__)
            commits.append(specmod.LogicalCommit(message=e.message, hints=hints, hunks=ids))
        spec = specmod.Spec(source=req.source, remote=req.remote, cleaned=req.cleaned, commits=commits)
        set_paths(spec, everything)
        return Proposal(spec, everything, left, self.bulk, chunks, self.tally, self.warnings)


def leftover_hint(left: list[Hunk]) -> str:
    shown = ", ".join(f"{h.id} ({h.path})" for h in left[:30])
    more = f" and {len(left) - 30} more" if len(left) > 30 else ""
    return (f"The plan left {len(left)} hunks unassigned; as the last commit this one takes "
            f"them unless you move them: {shown}{more}")


def _glob_escape(path: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", path)


def set_paths(spec: specmod.Spec, everything: list[Hunk]) -> None:
    """Each commit's `paths`: the files all of whose hunks it owns, a directory when it owns
    every changed file under it (what retcon-paths and a reader need)."""
    hunks_of: dict[str, set[str]] = {}
    for h in everything:
        hunks_of.setdefault(h.path, set()).add(h.id)
    files_under: dict[str, set[str]] = {}
    for p in hunks_of:
        parts = p.split("/")[:-1]
        for d in range(1, len(parts) + 1):
            files_under.setdefault("/".join(parts[:d]), set()).add(p)
    for c in spec.commits:
        mine = set(c.hunks)
        owned = {p for p, ids in hunks_of.items() if ids <= mine}
        out: list[str] = []
        for p in sorted(owned):
            parts = p.split("/")[:-1]
            top = next(("/".join(parts[:d]) for d in range(1, len(parts) + 1)
                        if files_under["/".join(parts[:d])] <= owned), None)
            entry = _glob_escape(top) + "/" if top else _glob_escape(p)
            if entry not in out:
                out.append(entry)
        c.paths = out


def propose(repo: pygit2.Repository, model: llm.Model, request: Request, limits: Limits | None = None,
            say: Callable[[str], None] = lambda s: None, log: ExchangeLog | None = None) -> Proposal:
    return Planner(repo, model, request, limits or Limits(), say, log).run()
