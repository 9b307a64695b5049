"""What a model must write to rebuild a history: the cheapest correct path, before and after
line selections and edit_file (issue 11).

Each case is a history (a base and source commits); the spec has one logical commit per
source commit, so the state each logical commit must reach is known: that commit's tree.
A model that takes the cheapest correct path through the tools (registered through llm's
plugin manager, driven by `git retcon run` like any model) reads the diff (after: from the
prompt when it carries the whole remaining diff) and makes each state with:

- before: today's tools alone: whole hunks, or write_file for a file they cannot make;
- after:  whole hunks, then line selections (`id:1-4,9`), then edit_file, write_file last;
  ids as read_diff shows them (abbreviated), and a path (a file, a directory, `.`) for the
  hunks taken under it, with `-id` for those of them not taken (and `id:SEL` for those taken
  in part, named so either way), where that is shorter than their ids.

Characters written are the JSON of every tool call's arguments (read_diff, apply_hunks,
edit_file, write_file, delete_file, create_commit): what a model pays for in output
tokens. Characters of diff are the removed and added lines of the whole history's diff
(base to source tip, no context). Every created commit is checked against its state:
a path that reaches a wrong tree is not the cheapest path, it is a bug.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import llm
import pygit2
from llm.parts import ToolResultPart

from bench import selections
from git_retcon import diff
from git_retcon.diff.hunk import Lines, split_lines, start_index
from git_retcon.diff.select import compact, numbered
from git_retcon.model.files import occurrences
from git_retcon.model.prompt import read_step
from git_retcon.reconstruct.steps import WHOLE_DIFF_LEAD
from testing.flow import feature_repo, retcon
from testing.gitrepo import GitRepo, hermetic_env
from testing.scripted_model import ModelPlugin

CLEANED = "bench-clean"


# -- the cases -----------------------------------------------------------------------

def _history(root: Path, base: dict[str, str], commits: list[tuple[str, dict[str, str | None]]]) -> GitRepo:
    repo = GitRepo.init(root)
    repo.commit("base", dict(base))
    repo.git("checkout", "-q", "-b", "feature")
    for message, files in commits:
        repo.commit(message, dict(files))
    repo.git("checkout", "-q", "main")
    return repo


def case_suite(root: Path) -> GitRepo:
    """The suite's feature_repo: a helper, a feature that uses it, docs."""
    return feature_repo(root)


def case_demo(root: Path) -> GitRepo:
    """The demo's messy history (git retcon demo)."""
    from git_retcon import demo
    root.mkdir(parents=True)
    demo.build_repo(root)
    repo = GitRepo(root)
    repo.git("checkout", "-q", demo.REMOTE)
    repo.git("branch", "-m", demo.SOURCE, "feature")
    return repo


def _function(name: str, seed: int, size: int = 18) -> str:
    """A function of `size` lines that reads like code (real histories' hunks are this size)."""
    body = [f"def {name}(items, limit=None):",
            f'    """Return the {name.replace("_", " ")} of the given items, at most `limit` of them."""',
            "    seen = set()", "    out = []"]
    steps = ["    for item in items:", "        key = item.strip().lower()", "        if not key or key in seen:",
             "            continue", "        seen.add(key)", f"        value = len(key) * {seed} + {seed % 7}",
             "        if limit is not None and len(out) >= limit:", "            break",
             f"        out.append((key, value, {seed}))", "    out.sort(key=lambda kv: kv[1])",
             f"    log.debug('{name}: %d items', len(out))", f"    total = sum(v for _, v, _ in out) + {seed}"]
    body += steps[: max(size - 5, 1)] + ["    return out, total"]
    return "\n".join(body) + "\n"


def case_appended(root: Path) -> GitRepo:
    """Functions appended at the end of one file by four commits: the whole diff is one
    insertion hunk, so every state but the last is a selection of its lines."""
    base = "import logging\n\nlog = logging.getLogger(__name__)\n\n\n" + _function("first", 1)
    text = base
    commits: list[tuple[str, dict[str, str | None]]] = []
    for i, name in enumerate(("dedupe", "rank", "cap", "merge_runs"), start=2):
        text += "\n\n" + _function(name, i, 12 + 3 * i)
        commits.append((f"pipeline: {name}", {"pipeline.py": text}))
    return _history(root, {"pipeline.py": base}, commits)


def _registry(items: list[str], handlers: list[str]) -> str:
    return ("import logging\n\nlog = logging.getLogger(__name__)\n\n\n" + "\n\n".join(handlers)
            + ("\n\n" if handlers else "") + "HANDLERS = [\n" + "".join(f"    {it},\n" for it in items) + "]\n")


def case_list(root: Path) -> GitRepo:
    """A list edited by two commits (and extended by a third), each with the handlers it
    names: the list's changes are one hunk of the whole diff."""
    names = [f"handle_{w}" for w in ("config", "db", "auth", "cache", "serve", "metrics", "close")]
    one = names[:1] + ["handle_db_pool"] + names[2:]
    two = ["handle_config_v2"] + one[1:3] + ["handle_cache_lru"] + one[4:]
    three = two[:5] + ["handle_tracing"] + two[5:]
    fns = [_function(n, i + 2) for i, n in enumerate(names)]
    f1 = fns + [_function("handle_db_pool", 11)]
    f2 = f1 + [_function("handle_config_v2", 12), _function("handle_cache_lru", 13)]
    f3 = f2 + [_function("handle_tracing", 14, 24)]
    return _history(root, {"app.py": _registry(names, fns)},
                    [("db: pool connections", {"app.py": _registry(one, f1)}),
                     ("config v2, an LRU cache", {"app.py": _registry(two, f2)}),
                     ("tracing", {"app.py": _registry(three, f3)})])


def _module(parts: list[str]) -> str:
    return '"""A parser."""\nimport logging\nimport re\n\nlog = logging.getLogger(__name__)\n\n\n' + \
        "\n\n".join(parts) + "\n"


def _tests(names: list[str], head: str = "") -> str:
    return head + "from parser import *\n\n\n" + "\n\n".join(
        f"def test_{n}():\n    out, total = {n}([' A', 'b', 'a', ''])\n"
        f"    assert [k for k, _, _ in out] == ['a', 'b']\n    assert total > 0\n" for n in names)


def case_mixed(root: Path) -> GitRepo:
    """A module and its tests grown by five commits the way real histories are: functions
    appended, a constant changed twice (an intermediate state the source no longer has),
    a test file extended, an import added, a file deleted."""
    base = [_function(f"parse_{n}", i + 2) for i, n in enumerate("abc")]
    new = [_function(f"parse_{n}", i + 5, 14 + 2 * i) for i, n in enumerate("defg")]

    def limit(n: int) -> str:
        return f"LIMIT = {n}\n"

    history: list[tuple[str, dict[str, str | None]]] = [
        ("parse d", {"parser.py": _module([*base, new[0]]), "test_parser.py": _tests(["parse_d"])}),
        ("parse e, limit 20", {"parser.py": _module([limit(20), *base, *new[:2]]),
                               "test_parser.py": _tests(["parse_d", "parse_e"])}),
        ("parse f", {"parser.py": _module([limit(20), *base, *new[:3]]),
                     "test_parser.py": _tests(["parse_d", "parse_e", "parse_f"])}),
        ("limit 50, drop the old notes", {"parser.py": _module([limit(50), *base, *new[:3]]), "NOTES.txt": None}),
        ("parse g", {"parser.py": _module([limit(50), *base, *new]),
                     "test_parser.py": _tests(["parse_d", "parse_e", "parse_f", "parse_g"], "import pytest\n")}),
    ]
    return _history(root, {"parser.py": _module(base), "NOTES.txt": "old notes\n"}, history)


CASES: dict[str, Callable[[Path], GitRepo]] = {
    "suite (feature_repo)": case_suite, "demo": case_demo, "two functions, one hunk": case_appended,
    "a list edited twice": case_list, "a module grown by 5": case_mixed}


# -- the cheapest correct path ------------------------------------------------------------

Call = tuple[str, dict[str, Any]]


def _blob(repo: pygit2.Repository, tree: str, path: str) -> bytes | None:
    try:
        obj = repo[pygit2.Oid(hex=tree)].peel(pygit2.Tree) / path
    except KeyError:
        return None
    return bytes(repo[obj.id].peel(pygit2.Blob).data)


def _changed(repo: pygit2.Repository, a: str, b: str) -> list[str]:
    d = repo[pygit2.Oid(hex=a)].peel(pygit2.Tree).diff_to_tree(repo[pygit2.Oid(hex=b)].peel(pygit2.Tree))
    out: list[str] = []
    for delta in d.deltas:
        for p in (delta.old_file.path, delta.new_file.path):
            if p not in out:
                out.append(p)
    return out


def _edits(w: bytes, t: bytes) -> list[tuple[int, int, int, int, bytes, bytes]]:
    """The zero-context line changes from w to t."""
    patch = pygit2.Patch.create_from(w, t, context_lines=0, interhunk_lines=0)
    old, new = Lines(w), Lines(t)
    out = []
    for h in patch.hunks:
        b, nb = start_index(h.old_start, h.old_lines), start_index(h.new_start, h.new_lines)
        out.append((h.old_start, h.old_lines, h.new_start, h.new_lines, old.slice(b, b + h.old_lines),
                    new.slice(nb, nb + h.new_lines)))
    return out


def _selection(h: diff.Hunk, w: bytes, t: bytes, strict: bool = False) -> str:
    """The item (`id` or `id:SEL`) that takes from h the lines t has in h's range ("" when
    none). What t has there and the source lacks is left to edit_file; strict: then nothing."""
    d_hunks = _edits(w, t)
    old, new = numbered(h)
    begin = start_index(h.old_start, h.old_lines)
    end = begin + h.old_lines
    picked: set[int] = set()
    next_new = 0
    for (os_, ol, _ns, _nl, _removed, added) in d_hunks:
        b = start_index(os_, ol)
        if not (begin <= b and b + ol <= end):
            continue
        picked |= {b - begin + k + 1 for k in range(ol)}
        for line in split_lines(added):
            # Lines the source has: selected; a line it lacks is left to edit_file.
            at = next((j for j in range(next_new, len(new)) if new[j] == line), None)
            if at is None and strict:
                return ""
            if at is not None:
                picked.add(len(old) + at + 1)
                next_new = at + 1
    if not picked:
        return ""
    return h.id if len(picked) == len(old) + len(new) else f"{h.id}:{compact(picked)}"


def _edit(text: bytes, os_: int, ol: int, removed: bytes, added: bytes) -> tuple[str, str] | None:
    """(old, new) for edit_file: the changed lines with the fewest neighbours that make old unique."""
    lines = split_lines(text)
    b = start_index(os_, ol)
    lo, hi = b, b + ol
    for _ in range(len(lines) + 1):
        old = b"".join(lines[lo:hi])
        if old and occurrences(text, old) == 1:
            new = b"".join(lines[lo:b]) + added + b"".join(lines[b + ol:hi])
            return _text(old), _text(new)
        if lo > 0 and (hi >= len(lines) or (hi - b - ol) >= (b - lo)):
            lo -= 1
        elif hi < len(lines):
            hi += 1
        else:
            return None
    return None


def _edit_calls(path: str, w: bytes, t: bytes) -> list[Call] | None:
    """edit_file calls that turn w into t: bottom-up, each made unique in the text as it is then."""
    text = w
    calls: list[Call] = []
    for os_, ol, _ns, _nl, removed, added in reversed(_edits(w, t)):
        e = _edit(text, os_, ol, removed, added)
        if e is None:
            return None
        old, new = e
        text = text.replace(old.encode("utf-8", "surrogateescape"), new.encode("utf-8", "surrogateescape"), 1)
        calls.append(("edit_file", {"path": path, "old": old, "new": new}))
    return calls if text == t else None


def _cost(calls: list[Call]) -> int:
    return sum(len(json.dumps(a)) for _, a in calls)


def cheapest(repo: pygit2.Repository, w_tree: str, t_tree: str, s_tree: str, after: bool,
             misses: list[str] | None = None) -> list[Call]:
    """The calls that turn the worktree (w_tree) into t_tree, taking from the source (s_tree).
    misses: gets the paths whose state no selection of the remaining hunks makes (after)."""
    remaining = diff.remaining(repo, w_tree, s_tree)
    names = diff.short_ids(h.id for h in remaining)

    def shown(item: str) -> str:
        """The item as a model copies it from read_diff: the id abbreviated (after: read_diff shows them so)."""
        hid, colon, sel = item.partition(":")
        return names[hid] + colon + sel if after else item

    items: list[str] = []
    calls: list[Call] = []
    done: set[str] = set()
    for h in remaining:
        # A rename the state has: take it whole (its content is the source's), then edit.
        if h.kind == "rename" and h.old_path and _blob(repo, t_tree, h.old_path) is None:
            t = _blob(repo, t_tree, h.path)
            if t is not None:
                items.append(h.id)
                done |= {h.path, h.old_path}
                if t != h.added:
                    if misses is not None and after:
                        misses.append(h.path)       # a rename's lines are not selected: no selection
                    edits = _edit_calls(h.path, h.added, t) if after else None
                    calls += edits or [("write_file", {"path": h.path, "content": _text(t)})]
    for path in _changed(repo, w_tree, t_tree):
        if path in done:
            continue
        w, t = _blob(repo, w_tree, path), _blob(repo, t_tree, path)
        mine = [h for h in remaining if h.path == path]
        if t is None:
            dele = [h for h in mine if h.kind == "delete"]
            items += [dele[0].id] if dele else []
            calls += [] if dele else [("delete_file", {"path": path})]
            continue
        # Ways to take from the source: (items, the file's content after them).
        starts: list[tuple[list[str], bytes]] = []
        exact, near = _selected(path, w, t, [h for h in mine if h.kind == ("add" if w is None else "modify")],
                                shown, after)
        starts += exact + near
        if not exact and misses is not None and after:
            misses.append(path)
        if w is None:
            add = next((h for h in mine if h.kind == "add"), None)
            if add is not None:
                starts.append(([add.id], add.added))
                sel = _selection(add, b"", t)
                if sel and sel != add.id:
                    starts.append(([sel], selections.splice(b"", [diff.select(add, _numbers(add, sel))])))
        else:
            for strict in (True, False):
                chosen = [(h, sel) for h in mine if h.kind == "modify" for sel in [_selection(h, w, t, strict)] if sel]
                parts = [diff.select(h, _numbers(h, sel)) for h, sel in chosen]
                starts.append(([sel for _, sel in chosen], selections.splice(w, parts)))
            starts.append(([], w))
        options: list[tuple[list[str], list[Call]]] = []
        for taken, mid in starts:
            if not after and any(":" in i for i in taken):
                continue        # today's tools take whole hunks only
            if mid == t:
                options.append((taken, []))
            elif after:
                edits = _edit_calls(path, mid, t)
                if edits is not None:
                    options.append((taken, edits))
        if not options:
            options.append(([], [("write_file", {"path": path, "content": _text(t)})]))
        def taking(taken: list[str], mine: list[diff.Hunk] = mine, path: str = path) -> int:
            """What naming these items costs: the ids as shown, or (after) the file's path, the
            hunks of it not taken left out (`-id`) and those taken in part with their lines."""
            ids = len(json.dumps([shown(i) for i in taken]))
            if not (after and any(":" not in i for i in taken)):
                return ids
            named = {i.partition(":")[0] for i in taken}
            left = ["-" + names[h.id] for h in mine if h.id not in named]
            return min(ids, len(json.dumps([path, *left, *(shown(i) for i in taken if ":" in i)])))

        best = min(options, key=lambda o: taking(o[0]) + _cost(o[1]))
        items += best[0]
        calls += best[1]
    named = selections.naming(items, remaining, names) if after else items
    return ([("apply_hunks", {"hunk_ids": named})] if items else []) + calls


def _selected(path: str, w: bytes | None, t: bytes, hunks: list[diff.Hunk], shown: Callable[[str], str],
              after: bool) -> tuple[list[tuple[list[str], bytes]], list[tuple[list[str], bytes]]]:
    """A state that is a selection of these hunks: the cheapest such selection's items, and the file
    they make (t: checked), first. Another state (after): second, the selection nearest to it, which
    edit_file then completes with the least to write."""
    if not hunks:
        return [], []
    found = selections.cheapest(w or b"", t, hunks, lambda h: len(json.dumps(shown(h.id))) + 2, not after)
    if found is not None:
        made = selections.splice(w or b"", [diff.select(h, numbers) for h, numbers in found])
        if made == t:
            return [([_item(h, numbers) for h, numbers in found], made)], []
        # The search's answer, made as apply_hunks makes it, must be the state.
        print(f"bench: the selection found for {path} does not make the state (a bug of bench/selections.py)",
              file=sys.stderr)
    near = selections.nearest(w or b"", t, hunks) if after else None
    if not near:
        return [], []
    return [], [([_item(h, numbers) for h, numbers in near],
                 selections.splice(w or b"", [diff.select(h, numbers) for h, numbers in near]))]


def _item(h: diff.Hunk, numbers: frozenset[int]) -> str:
    """The apply_hunks item that takes these lines of h: its id alone when they are all its lines."""
    return h.id if len(numbers) == sum(map(len, numbered(h))) else f"{h.id}:{compact(numbers)}"


def _text(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def _numbers(h: diff.Hunk, item: str) -> frozenset[int]:
    old, new = numbered(h)
    if ":" not in item:
        return frozenset(range(1, len(old) + len(new) + 1))
    parsed = diff.parse_items([item])[0].lines
    assert parsed is not None
    return parsed


# -- the model --------------------------------------------------------------------------

@dataclass
class Tally:
    calls: list[tuple[int, str, int]] = field(default_factory=list)   # (commit, tool, characters)
    writes: list[tuple[int, str]] = field(default_factory=list)       # (commit, path) of write_file
    misses: list[str] = field(default_factory=list)   # paths whose state no selection of the remaining diff makes




class Cheapest(llm.Model):
    """Plays the cheapest correct path: read_diff (unless the prompt carries the whole diff), the
    calls that make the state, create_commit."""

    model_id = "bench-cheapest"
    supports_tools = True
    can_stream = False
    repo: pygit2.Repository
    states: list[str]           # base tree, then each source commit's tree
    after = True
    tally = Tally()

    def execute(self, prompt: llm.Prompt, stream: bool, response: llm.Response,
                conversation: llm.Conversation | None) -> Iterator[str]:
        user = next(p.text for m in prompt.messages if m.role == "user" for p in m.parts if hasattr(p, "text"))
        number = read_step(user).number
        turn = sum(1 for m in prompt.messages if m.role == "assistant")
        # after: a prompt that carries the whole remaining diff needs no read_diff first
        turn += 1 if self.after and WHOLE_DIFF_LEAD in user else 0
        results = [p.output for m in prompt.messages for p in m.parts if isinstance(p, ToolResultPart)]
        if turn == 0:
            calls: list[Call] = [("read_diff", {})]
        elif turn == 1:
            tip = self.repo.references.get(f"refs/heads/{CLEANED}")
            w = str(tip.peel(pygit2.Commit).tree_id) if tip is not None else self.states[0]
            calls = (cheapest(self.repo, w, self.states[number], self.states[-1], self.after, self.tally.misses)
                     or [("read_diff", {})])
        elif turn == 2:
            calls = [("create_commit", {})]   # no message: the spec's (as the prompts say)
        elif "message is empty" in str(results[-1:]):   # where an empty message is not supported: the summary
            calls = [("create_commit", {"message": user.splitlines()[0].split(": ", 1)[1]})]
        else:
            calls = [("stuck", {"summary": f"unexpected: {results[-1:]}"})]
        for name, args in calls:
            self.tally.calls.append((number, name, len(json.dumps(args))))
            if name == "write_file":
                self.tally.writes.append((number, args["path"]))
            response.add_tool_call(llm.ToolCall(name=name, arguments=args))
        response.set_usage(input=1, output=1)
        yield ""


# -- the benchmark -----------------------------------------------------------------------

@dataclass
class Row:
    case: str
    diff_chars: int
    written: int
    whole_writes: int
    commits_with_writes: int
    ok: bool
    messages: int = 0       # of `written`: create_commit's arguments
    edits: int = 0          # edit_file calls (none where every state is a selection of source lines)
    misses: int = 0         # file states that no selection of the remaining hunks makes


def diff_chars(repo: pygit2.Repository, a: str, b: str) -> int:
    return sum(len(h.removed) + len(h.added) for h in diff.remaining(repo, a, b))


def _slug(name: str) -> str:
    return re.sub(r"\W+", "-", name)


def measure(name: str, build: Callable[[Path], GitRepo], root: Path, after: bool,
            history: Callable[[GitRepo, pygit2.Repository], tuple[list[str], list[str]]]) -> Row:
    repo = build(root / ("after" if after else "before") / _slug(name))
    pr = pygit2.Repository(str(repo.path))
    states, messages = history(repo, pr)
    # The spec: one logical commit per state, always (plan --from-commits folds a commit whose
    # hunks do not survive whole into its neighbour: the very case measured here).
    spec = root / (_slug(name) + ".toml")
    spec.write_text(f'source = "feature"\nremote = "main"\ncleaned = "{CLEANED}"\n' + "".join(
        f"\n[[commit]]\nmessage = {json.dumps(m)}\n" for m in messages))
    res = retcon(repo, "plan", "--from-file", str(spec), "--no-edit")
    assert res.code == 0, res.text
    Cheapest.repo, Cheapest.states, Cheapest.after, Cheapest.tally = pr, states, after, Tally()
    res = retcon(repo, "run", "-m", "bench-cheapest")
    made = repo.git("rev-list", "--reverse", f"main..{CLEANED}").split() if res.code == 0 else []
    ok = res.code == 0 and [repo.tree(c) for c in made] == states[1:]
    if not ok:
        wrong = next((k for k, c in enumerate(made, start=1) if repo.tree(c) != states[k]), None)
        print(f"{name} ({'after' if after else 'before'}): exit {res.code}, first wrong state: {wrong}; "
              + " | ".join(res.text.strip().splitlines()[-3:]), file=sys.stderr)
    calls = Cheapest.tally.calls
    writes = [k for k, tool, _ in calls if tool == "write_file"]
    return Row(name, diff_chars(pr, states[0], states[-1]), sum(c for _, _, c in calls), len(writes),
               len(set(writes)), ok, sum(c for _, tool, c in calls if tool == "create_commit"),
               sum(1 for _, tool, _ in calls if tool == "edit_file"), len(Cheapest.tally.misses))


def table(rows: list[tuple[Row, Row, bool]]) -> str:
    """One line per case (* marks the goal's rows); the total is over the goal's rows."""
    head = (f"{'case':<40} {'diff chars':>10} | {'before: written':>15} {'ratio':>6} {'file writes':>11} | "
            f"{'after: written':>14} {'ratio':>6} {'file writes':>11} {'edit_file':>9}")
    out = [head, "-" * len(head)]
    tot = [0, 0, 0, 0, 0, 0]
    for b, a, goal in rows:
        name = ("* " if goal else "  ") + a.case
        out.append(f"{name:<40} {a.diff_chars:>10} | {b.written:>15} {b.written / a.diff_chars:>6.1%} "
                   f"{_writes(b):>11} | {a.written:>14} {a.written / a.diff_chars:>6.1%} {_writes(a):>11} "
                   f"{a.edits:>9}" + ("" if a.ok and b.ok else "   WRONG TREE"))
        for i, v in enumerate((a.diff_chars, b.written, b.whole_writes, a.written, a.whole_writes, a.edits)):
            tot[i] += v if goal else 0
    out.append("-" * len(head))
    out.append(f"{'* the goal rows':<40} {tot[0]:>10} | {tot[1]:>15} {tot[1] / tot[0]:>6.1%} {tot[2]:>11} | "
               f"{tot[3]:>14} {tot[3] / tot[0]:>6.1%} {tot[4]:>11} {tot[5]:>9}")
    return "\n".join(out)


def _writes(r: Row) -> str:
    return f"{r.whole_writes} in {r.commits_with_writes}c" if r.whole_writes else "0"


def real(path: str, span: str) -> Callable[[Path], GitRepo]:
    """A real history: a clone of PATH with main at A and feature at B (span A..B)."""
    def build(root: Path) -> GitRepo:
        a, b = span.split("..")
        root.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "clone", "-q", "--no-checkout", path, str(root)], check=True)
        repo = GitRepo(root)
        repo.git("branch", "-f", "feature", b)
        repo.git("checkout", "-q", "-B", "main", a)
        return repo
    return build


def as_committed(repo: GitRepo, pr: pygit2.Repository) -> tuple[list[str], list[str]]:
    """The states of the history as it was committed: each first-parent commit's tree."""
    shas = repo.git("rev-list", "--reverse", "--first-parent", "main..feature").split()
    return [repo.tree("main")] + [repo.tree(s) for s in shas], [_subject(repo, s) for s in shas]


def _subject(repo: GitRepo, sha: str) -> str:
    return repo.git("log", "-1", "--format=%s", sha)


def cleaned(repo: GitRepo, pr: pygit2.Repository) -> tuple[list[str], list[str]]:
    """The states of the same history cleaned of churn, as git-retcon is for: logical commit k
    holds the lines of the whole diff that source commit k wrote (blame) or removed (reverse
    blame), so each state is a selection of the source's lines, and the zero-context hunks
    of the whole diff mix the lines of several commits."""
    fp = repo.git("rev-list", "--reverse", "--first-parent", "main..feature").split()
    n = len(fp)
    index_of: dict[str, int] = {}
    for k, sha in enumerate(fp, start=1):
        for c in repo.git("rev-list", f"{sha}^..{sha}" if k > 1 else f"main..{sha}").split():
            index_of.setdefault(c, k)
    base, tip = repo.tree("main"), repo.tree("feature")
    owned: dict[str, list[tuple[diff.Hunk, dict[int, int]]]] = {}
    whole: list[tuple[diff.Hunk, int]] = []
    for h in diff.remaining(pr, base, tip):
        if diff.selectable(h) and numbered(h) != ([], []):
            owned.setdefault(h.path, []).append((h, _owners(repo, pr, h, index_of, n)))
        else:
            whole.append((h, _first_with(repo, pr, fp, h)))
    states = [base]
    for k in range(1, n + 1):
        idx = pygit2.Index()
        idx.read_tree(pr[pygit2.Oid(hex=base)].peel(pygit2.Tree))
        for h, when in whole:
            if when > k:
                continue
            if h.kind in ("delete", "rename"):
                idx.remove(h.old_path if h.kind == "rename" else h.path)  # type: ignore[arg-type]
            if h.kind in ("add", "rename", "binary"):
                idx.add(pygit2.IndexEntry(h.path, pygit2.Oid(hex=h.new_oid), h.new_mode))
            elif h.kind == "mode":
                idx.add(pygit2.IndexEntry(h.path, idx[h.path].id, h.new_mode))
        for path, parts in owned.items():
            chosen = [diff.select(h, frozenset(i for i, o in own.items() if o <= k))
                      for h, own in parts if any(o <= k for o in own.values())]
            if not chosen:
                continue
            if chosen[0].kind == "add":
                data, mode = chosen[0].added, chosen[0].new_mode
            else:
                entry = idx[path]
                data, mode = selections.splice(bytes(pr[entry.id].peel(pygit2.Blob).data), chosen), entry.mode
            idx.add(pygit2.IndexEntry(path, pr.create_blob(data), mode))
        states.append(str(idx.write_tree(pr)))
    assert states[-1] == tip, "the cleaned history must end at the source tip"
    # A commit none of whose lines survive has no state of its own: it is not in a cleaned history.
    keep = [k for k in range(1, n + 1) if states[k] != states[k - 1]]
    return [base] + [states[k] for k in keep], [_subject(repo, fp[k - 1]) for k in keep]


def _owners(repo: GitRepo, pr: pygit2.Repository, h: diff.Hunk, index_of: dict[str, int], n: int) -> dict[int, int]:
    """read_diff's line number -> the logical commit that wrote (+) or removed (-) the line."""
    old, new = numbered(h)
    out: dict[int, int] = {}
    if new:
        tip = pr.revparse_single("feature").id
        blame = pr.blame(h.path, newest_commit=tip, oldest_commit=pr.revparse_single("main").id,
                         min_line=h.new_start if h.kind == "modify" else 1,
                         max_line=(h.new_start if h.kind == "modify" else 1) + len(new) - 1)
        first = h.new_start if h.kind == "modify" else 1
        for bh in blame:
            k = index_of.get(str(bh.final_commit_id), n)
            for ln in range(bh.final_start_line_number, bh.final_start_line_number + bh.lines_in_hunk):
                if 0 <= ln - first < len(new):
                    out[len(old) + ln - first + 1] = k
    if old:
        text = repo.git("blame", "--reverse", "--porcelain", "-L", f"{h.old_start},+{len(old)}",
                        "main..feature", "--", h.path)
        lines = [ln.split()[0] for ln in text.splitlines() if re.match(r"^[0-9a-f]{40} \d+ \d+", ln)]
        for i, sha in enumerate(lines[: len(old)]):
            out[i + 1] = min(index_of.get(sha, 0) + 1, n)
    # A line without an owner goes with its hunk's first.
    first_owner = min(out.values(), default=n)
    return {i: out.get(i, first_owner) for i in range(1, len(old) + len(new) + 1)}


def _first_with(repo: GitRepo, pr: pygit2.Repository, fp: list[str], h: diff.Hunk) -> int:
    """The first commit whose tree has this whole-file change as the tip has it."""
    want = None if h.kind == "delete" else _blob(pr, repo.tree("feature"), h.path)
    for k, sha in enumerate(fp, start=1):
        have = _blob(pr, repo.tree(sha), h.path)
        gone = h.kind != "rename" or _blob(pr, repo.tree(sha), h.old_path or "") is None
        if have == want and gone:
            return k
    return len(fp)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--real", nargs=2, action="append", default=[], metavar=("REPO", "A..B"),
                        help="also measure a real history (a repository, a span of its first-parent commits); "
                        "$RETCON_BENCH_REAL holds more, as 'REPO A..B' separated by ';'")
    args = parser.parse_args(argv)
    spans = args.real + [e.split() for e in os.environ.get("RETCON_BENCH_REAL", "").split(";") if e.strip()]
    # (name, build, states, counts toward the goal): the goal is about histories whose states are
    # selections of source lines (what a cleaned history is); a history as committed also has
    # states with lines the source no longer has (churn), which any model must write out.
    cases = []
    for n, fn in CASES.items():
        cases.append((f"{n} cleaned", fn, cleaned, True))
        cases.append((f"{n} as committed", fn, as_committed, False))
    for path, span in spans:
        where = Path(path.rstrip("/"))
        name = f"{(where.parent if where.name in ('repo', '.git') else where).name.split('+')[-1]} {span[:7]}"
        cases.append((f"{name} cleaned", real(path, span), cleaned, True))
        cases.append((f"{name} as committed", real(path, span), as_committed, False))
    plugin = ModelPlugin("retcon-bench-cheapest", Cheapest())
    with tempfile.TemporaryDirectory(prefix="retcon-bench-output-") as tmp:
        root = Path(tmp)
        os.environ.update(hermetic_env(root / "home"))
        plugin.register()
        try:
            rows = [(measure(n, fn, root, False, states), measure(n, fn, root, True, states), goal)
                    for n, fn, states, goal in cases]
        finally:
            plugin.unregister()
    print("Model output on the cheapest correct path (characters of tool-call arguments; "
          "'file writes': whole-file write_file calls, in how many commits)")
    print(table(rows))
    counted = [a for _, a, goal in rows if goal]
    within = [a.case for a in counted if a.written <= 0.05 * a.diff_chars]
    print(f"after, over the histories whose states are selections of source lines: {_share(counted):.1%} of the "
          f"diff written in total (goal: at most 5%), {len(within)} of {len(counted)} within 5% each; "
          f"{sum(a.whole_writes for a in counted)} whole-file writes and {sum(a.edits for a in counted)} "
          f"edit_file calls (goal: 0 each where the states are selections of the remaining diff; "
          f"{sum(a.misses for a in counted)} file states are not); trees "
          + ("all right" if all(a.ok and b.ok for b, a, _ in rows) else "WRONG"))
    # One huge row (a large deletion taken whole) cannot carry the figure: the total without it.
    largest = max(counted, key=lambda a: a.diff_chars)
    rest = [a for a in counted if a is not largest]
    if rest:
        print(f"without {largest.case}: {_share(rest):.1%}")
    synthetic = [a for a in counted if a.case.removesuffix(" cleaned") in CASES]
    print(f"over the synthetic rows alone: {_share(synthetic):.1%}")
    messages = sum(a.messages for a in counted)
    print(f"of which create_commit: {messages} characters ({messages / sum(a.diff_chars for a in counted):.1%} "
          "of the diff; no message is the spec's and costs 2)")


def _share(rows: list[Row]) -> float:
    """Characters written over characters of diff, summed over the rows."""
    return sum(a.written for a in rows) / sum(a.diff_chars for a in rows)


if __name__ == "__main__":
    main()
