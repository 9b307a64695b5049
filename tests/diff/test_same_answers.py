"""The per-step shortcuts (answers kept per list and per hunk, worked out from the last
answer, found by bisection) give exactly what straightforward references give, on random
inputs."""
from __future__ import annotations

import os
import random

import pytest

from git_retcon import diff as H
from git_retcon.diff.ids import covers


def ref_short_ids(ids: list[str]) -> dict[str, str]:
    """Each id's shortest prefix, at least 6 digits, that no other id begins with."""
    order = sorted(set(ids))
    out = {}
    for i, full in enumerate(order):
        need = 6
        for j in (i - 1, i + 1):
            if 0 <= j < len(order):
                need = max(need, len(os.path.commonprefix([full, order[j]])) + 1)
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
        assert H.short_ids(ids) == ref_short_ids(ids)
        assert H.short_ids(i for i in ids) == ref_short_ids(ids)


PATHS = ["src/a.py", "src/b.py", "src/sub/c.py", "srcx/d.py", "src", "src.txt", ".github/ci.yml",
         "docs/x.md", "docs/y/z.md", "README", "a-b/c", "a/b", "a.b/c", "Src/Up.py", "é/ü.txt"]


def random_hunks(rnd: random.Random, n: int) -> list[H.Hunk]:
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
        out.append(H.Hunk(**fields))
    return sorted(out, key=lambda h: h.path)


@pytest.mark.parametrize("seed", range(3))
def test_a_path_item_takes_what_covers_says(seed):
    rnd = random.Random(seed)
    hunks = random_hunks(rnd, 80)
    for path in ["src", "src/", "src/sub", "a", "a/b", "docs", "docs/y/", "srcx/d.py", "src.txt.old", "Src",
                 "é", ".github", "sr", "README", "nothing"]:
        want = [h.id for h in hunks if covers(h, path)]
        if not want:
            with pytest.raises(H.SelectionError, match="no remaining hunk is under"):
                H.expand(H.parse_items([path]), hunks, lambda p: p)
            continue
        got, _ = H.expand(H.parse_items([path]), hunks, lambda p: p)
        assert [i.id for i in got] == want
