"""The per-step shortcuts (answers kept per list and per hunk, worked out from the last
answer, found by bisection) give exactly what straightforward references give, on random
inputs: short ids, read_diff's filter and pages, the prompts' index, path items."""
from __future__ import annotations

import dataclasses
import importlib
import os
import random

import pytest

from git_retcon import diff
from git_retcon.diff.ids import covers
from git_retcon.diff.sums import Sums

R = importlib.import_module("git_retcon.diff.render")   # the package's `render` is the function
X = importlib.import_module("git_retcon.diff.index")


def ref_short_ids(ids: list[str]) -> dict[str, str]:
    """Each id's shortest prefix, at least 4 digits, that no other id begins with and that has a
    letter when shorter than 6 (else it could be a line number)."""
    order = sorted(set(ids))
    out = {}
    for i, full in enumerate(order):
        need = 4
        for j in (i - 1, i + 1):
            if 0 <= j < len(order):
                need = max(need, len(os.path.commonprefix([full, order[j]])) + 1)
        while need < 6 and full[:need].isdigit():
            need += 1
        out[full] = full[:need]
    return out


def random_id(rnd: random.Random) -> str:
    # Few digits: ids that share long prefixes, so that names grow and shrink as neighbours go.
    return "".join(rnd.choice("0a1") for _ in range(10))


@pytest.mark.parametrize("seed", range(5))
def test_short_ids_worked_out_from_the_last_answer_equal_those_worked_out_whole(seed):
    rnd = random.Random(seed)
    ids = list({random_id(rnd) for _ in range(300)})
    seen: list[list[str]] = []
    for _ in range(200):
        r = rnd.random()
        if r < 0.05:                                   # another list altogether
            ids = list({random_id(rnd) for _ in range(rnd.randint(0, 300))})
        elif r < 0.15 and seen:                        # a list asked for before
            ids = list(rnd.choice(seen))
        else:                                          # a step: a few go, a few come
            ids = [i for i in ids if rnd.random() > 0.03] + [random_id(rnd) for _ in range(rnd.randint(0, 4))]
            ids = list(dict.fromkeys(ids))
            rnd.shuffle(ids)
        seen.append(ids)
        assert diff.short_ids(ids) == ref_short_ids(ids)
        assert diff.short_ids(i for i in ids) == ref_short_ids(ids)


PATHS = ["src/a.py", "src/b.py", "src/sub/c.py", "srcx/d.py", "src", "src.txt", ".github/ci.yml",
         "docs/x.md", "docs/y/z.md", "README", "a-b/c", "a/b", "a.b/c", "Src/Up.py", "é/ü.txt"]


def random_hunks(rnd: random.Random, n: int) -> list[diff.Hunk]:
    """Hunks of every kind on a few paths, renames among them, in remaining()'s path order."""
    out = []
    ids = set()
    while len(out) < n:
        hid = random_id(rnd)
        if hid in ids:
            continue
        ids.add(hid)
        path = rnd.choice(PATHS)
        kind = rnd.choice(["modify", "modify", "modify", "add", "delete", "rename", "mode", "binary"])
        body = "".join(f"line {rnd.randint(0, 9)}\n" for _ in range(rnd.randint(0, 4))).encode()
        fields: dict = {"id": hid, "path": path, "kind": kind}
        if kind == "modify":
            fields.update(old_start=rnd.randint(1, 50), old_lines=1, new_start=1, new_lines=1,
                          removed=b"old\n", added=body, old_mode=0o100644, new_mode=0o100644)
        elif kind == "add":
            fields.update(added=body, new_mode=0o100644)
        elif kind == "delete":
            fields.update(removed=body, old_mode=0o100644)
        elif kind == "rename":
            fields.update(old_path=rnd.choice(PATHS) + ".old", added=body, old_mode=0o100644,
                          new_mode=0o100644, similarity=rnd.randint(50, 100))
        elif kind == "mode":
            fields.update(old_mode=0o100644, new_mode=0o100755)
        else:
            fields.update(added=b"\0bin", old_mode=0o100644, new_mode=0o100644, old_size=3)
        out.append(diff.Hunk(**fields))
    return sorted(out, key=lambda h: h.path)


def fresh(hunks: list[diff.Hunk]) -> list[diff.Hunk]:
    """Equal hunks that are other objects: nothing kept for them."""
    return [dataclasses.replace(h) for h in hunks]


PREFIXES = ["", ".", "src", "src/", "./src/sub", "/src", "src.txt", "a", "a/", ".github/", "docs/y/z.md",
            "docs/x.md.old", "nothing/", "é/"]


@pytest.mark.parametrize("seed", range(4))
def test_read_diff_filters_and_pages_a_shrinking_diff_as_worked_out_afresh(seed):
    rnd = random.Random(seed)
    hunks = random_hunks(rnd, 120)
    while hunks:
        for prefix in rnd.sample(PREFIXES, 4):
            p = prefix.strip()
            while p.startswith("./"):
                p = p[2:]
            p = p.lstrip("/")
            assert R._filtered(hunks, prefix) == [
                h for h in hunks if p in ("", ".") or h.path.startswith(p) or (h.old_path or "").startswith(p)]
            for page, budget in ((1, 24000), (rnd.randint(1, 3), 900), (2, 300)):
                got = diff.render(hunks, path_prefix=prefix, page=page, budget=budget)
                assert got == diff.render(fresh(hunks), path_prefix=prefix, page=page, budget=budget)
        hunks = [h for h in hunks if rnd.random() > 0.15]


def ref_index_lines(hunks: list[diff.Hunk], budget: int, short: bool) -> str:
    """The first form whose whole text fits, each built in full."""
    if not hunks:
        return "no remaining changes"[:budget]
    names = ref_short_ids([h.id for h in hunks]) if short else {h.id: h.id for h in hunks}
    text = "\n".join(f"{names[h.id]} {h.path} {h.kind} +{h.added_lines} -{h.removed_lines} "
                     f"{X._trim(X._first_change(h))}".rstrip() for h in hunks)
    if len(text) <= budget:
        return text
    files: dict[str, list[diff.Hunk]] = {}
    for h in hunks:
        files.setdefault(h.path, []).append(h)
    lead = R.summary_text(len(hunks), len(files), sum(h.added_lines for h in hunks),
                           sum(h.removed_lines for h in hunks))
    text = "\n".join([lead + ", by file:"] + [
        f"{p}: {len(hs)} hunk{'s' if len(hs) != 1 else ''} +{sum(h.added_lines for h in hs)} "
        f"-{sum(h.removed_lines for h in hs)} ids: {' '.join(names[h.id] for h in hs)}" for p, hs in files.items()])
    if len(text) <= budget:
        return text
    final = "call read_diff(path=...) for details"
    rows: list[str] = []
    for depth in (3, 2, 1):
        groups: dict[str, list[diff.Hunk]] = {}
        for h in hunks:
            parts = h.path.split("/")[:-1][:depth]
            groups.setdefault("/".join(parts) + "/" if parts else "(top level)", []).append(h)
        rows = [f"{d}: {len({h.path for h in hs})} files, {len(hs)} hunks +{sum(h.added_lines for h in hs)} "
                f"-{sum(h.removed_lines for h in hs)}" for d, hs in groups.items()]
        text = "\n".join([lead + ", by directory:", *rows, final])
        if len(text) <= budget:
            return text
    for head in ([lead + ", by directory:"], []):
        kept = list(head)
        for i, row in enumerate(rows):
            more = f"... and {len(rows) - i} more directories"
            if len("\n".join([*kept, row, more, final])) > budget:
                kept.append(more)
                break
            kept.append(row)
        text = "\n".join([*kept, final])
        if len(text) <= budget:
            return text
    return final[:budget]


@pytest.mark.parametrize("seed", range(4))
def test_the_index_of_a_shrinking_diff_is_the_first_form_that_fits(seed):
    rnd = random.Random(seed)
    hunks = random_hunks(rnd, 150)
    deep = [dataclasses.replace(h, id=random_id(rnd), path=f"d{i % 7}/e{i % 3}/f{i % 2}/g/{h.path}")
            for i, h in enumerate(random_hunks(rnd, 150))]
    hunks = list({h.id: h for h in hunks + deep}.values())
    rnd.shuffle(hunks)     # the plan's lists are in any order
    while hunks:
        for budget in (40, 120, 400, 1500, 4000, 12000, 10 ** 6):
            for short in (True, False):
                assert diff.index_lines(hunks, budget=budget, short=short) == ref_index_lines(hunks, budget, short)
        hunks = [h for h in hunks if rnd.random() > 0.1]


@pytest.mark.parametrize("seed", range(6))
def test_sums_kept_up_to_date_path_by_path_equal_those_counted_afresh(seed):
    """A path-sorted diff whose paths' hunks go, change, or come (a file new to the diff, or
    the first of its directory, sorts in its place): the counts kept and the index by file and by
    directory made from them are those of the list counted afresh."""
    rnd = random.Random(seed)
    pool = random_hunks(rnd, 150) + [
        dataclasses.replace(h, id=random_id(rnd), path=f"d{i % 7}/e{i % 3}/f{i % 2}/g/{h.path}")
        for i, h in enumerate(random_hunks(rnd, 150))]
    pool = [h for h in pool if h.kind != "rename"]     # RemainingDiff diffs renames whole
    hunks = sorted(rnd.sample(pool, 120), key=lambda h: h.path)
    sums = Sums(hunks)
    for step in range(120):
        if step == 20:
            sums.groups(2)      # a depth first asked for after some steps
        paths = sorted({h.path for h in pool})
        for path in rnd.sample(paths, rnd.randint(1, 3)):
            old = [h for h in hunks if h.path == path]
            new = [h for h in pool if h.path == path and rnd.random() < 0.3]
            new = new if rnd.random() < 0.7 else []
            sums.change(path, old, new)
            hunks = sorted([h for h in hunks if h.path != path] + new, key=lambda h: h.path)
        assert sums == Sums(hunks)
        for budget in (120, 400, 1500, 4000, 12000):
            assert diff.index_lines(hunks, budget=budget, short=True, sums=sums) == ref_index_lines(hunks, budget, True)


@pytest.mark.parametrize("seed", range(6))
def test_lookups_index_is_every_path_and_old_path_sorted_with_its_position(seed):
    """The index put together from a path-sorted list (old paths put in their place, ties by
    position), or sorted whole for any other list, is the sorted pairs."""
    rnd = random.Random(seed)
    pool = random_hunks(rnd, 200)
    for _ in range(30):
        hunks = sorted(rnd.sample(pool, rnd.randint(0, 200)), key=lambda h: h.path)
        if rnd.random() < 0.2:
            rnd.shuffle(hunks)
        keys = sorted([(h.path, i) for i, h in enumerate(hunks)]
                      + [(h.old_path, i) for i, h in enumerate(hunks) if h.old_path])
        assert diff.lookup(fresh(hunks))._index == ([k for k, _ in keys], [i for _, i in keys])


@pytest.mark.parametrize("seed", range(3))
def test_a_path_item_takes_what_covers_says(seed):
    rnd = random.Random(seed)
    hunks = random_hunks(rnd, 80)
    for path in ["src", "src/", "src/sub", "a", "a/b", "docs", "docs/y/", "srcx/d.py", "src.txt.old", "Src",
                 "é", ".github", "sr", "README", "nothing"]:
        want = [h.id for h in hunks if covers(h, path)]
        if not want:
            with pytest.raises(diff.SelectionError, match="no remaining hunk is under"):
                diff.expand(diff.parse_items([path]), hunks, lambda p: p)
            continue
        got, _ = diff.expand(diff.parse_items([path]), hunks, lambda p: p)
        assert [i.id for i in got] == want
