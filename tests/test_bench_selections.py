"""bench/selections.py: the model_output bench's search for the selection that makes a state
(issue 11), against hunks of real remaining diffs (libgit2's, as read_diff shows them)."""
from __future__ import annotations

import random

import pygit2
import pytest

from bench import selections as S
from git_retcon import diff
from git_retcon.diff.select import compact, numbered

# Few distinct lines, so that diffs have repeated lines to align (blank lines, `): ...`).
WORDS = ["\n", "    ): ...\n", "    @t.overload\n", "x = 1\n", "def f(\n", "    return a\n", "# note\n", "y = 2\n"]


@pytest.fixture
def pr(tmp_path) -> pygit2.Repository:
    return pygit2.init_repository(str(tmp_path / "objects.git"), bare=True)


def _tree(pr: pygit2.Repository, data: bytes | None) -> str:
    tb = pr.TreeBuilder()
    if data is not None:
        tb.insert("f.py", pr.create_blob(data), pygit2.GIT_FILEMODE_BLOB)
    return str(tb.write())


def _hunks(pr: pygit2.Repository, w: bytes | None, s: bytes) -> list[diff.Hunk]:
    return [h for h in diff.remaining(pr, _tree(pr, w), _tree(pr, s)) if h.kind in ("modify", "add")]


def _text(rng: random.Random, n: int) -> bytes:
    return b"".join(rng.choice(WORDS).encode() for _ in range(n))


def _cost(found: list[S.Choice]) -> int:
    """What naming them costs, priced as the test's price (10 per hunk) prices them."""
    return sum(10 + (0 if len(n) == sum(map(len, numbered(h))) else len(compact(n)) + 1) for h, n in found)


def test_a_selection_of_the_remaining_hunks_is_found_and_makes_the_state(pr):
    rng = random.Random(11)
    for _ in range(300):
        w = _text(rng, rng.randint(0, 25)) if rng.random() < 0.9 else None
        s = _text(rng, rng.randint(1, 30))
        hunks = _hunks(pr, w, s)
        chosen = [(h, frozenset(x for x in range(1, sum(map(len, numbered(h))) + 1) if rng.random() < 0.5))
                  for h in hunks]
        chosen = [(h, n) for h, n in chosen if n]
        t = S.splice(w or b"", [diff.select(h, n) for h, n in chosen])
        found = S.cheapest(w or b"", t, hunks, lambda h: 10)
        assert found is not None, (w, s, t)
        assert S.splice(w or b"", [diff.select(h, n) for h, n in found]) == t
        assert _cost(found) <= _cost(chosen)        # the cheapest to name
        # The nearest selection of a state that is one is that state.
        near = S.nearest(w or b"", t, hunks)
        assert near is not None and S.splice(w or b"", [diff.select(h, n) for h, n in near]) == t


def test_whole_hunks_only_when_asked(pr):
    w = b"a = 1\nb = 2\nc = 3\n"
    s = b"a = 1\nB = 20\nc = 3\nd = 4\n"
    hunks = _hunks(pr, w, s)
    found = S.cheapest(w, b"a = 1\nB = 20\nc = 3\n", hunks, lambda h: 10)
    assert found is not None and [len(n) for _, n in found] == [2]
    assert S.cheapest(w, b"a = 1\nb = 2\nB = 20\nc = 3\n", hunks, lambda h: 10, whole_only=True) is None
    assert S.cheapest(w, b"a = 1\nb = 2\nB = 20\nc = 3\n", hunks, lambda h: 10) is not None


def test_a_state_that_is_no_selection_gets_the_nearest_one(pr):
    """t has a line the source lacks: no selection makes it, the nearest one makes all but it."""
    w = b"def f(\n    return a\n\nx = 1\n"
    s = b"def f(\n    @t.overload\n    return a\n\n# note\nx = 1\ny = 2\n"
    hunks = _hunks(pr, w, s)
    t = b"def f(\n    @t.overload\n    return a\nINVENTED\n\n# note\nx = 1\n"
    assert S.cheapest(w, t, hunks, lambda h: 10) is None
    near = S.nearest(w, t, hunks)
    assert near is not None
    assert S.splice(w, [diff.select(h, n) for h, n in near]) == t.replace(b"INVENTED\n", b"")


def test_naming_takes_exactly_the_items_and_costs_least_of_every_choice_of_paths():
    """S.naming against apply_hunks' own reading (diff.expand, merge) and against every set of
    paths, on random trees: what it writes takes the very hunks and lines, and nothing is cheaper."""
    import itertools
    import json

    from git_retcon.diff.ids import covers
    from git_retcon.diff.select import merge

    rng = random.Random(5)
    files = ["a.py", "src/b.py", "src/c.py", "src/lib/d.py", "src/lib/e.py", "docs/f.md"]
    for n in range(200):
        hs = [diff.Hunk(id=f"{rng.getrandbits(40):010x}", path=p, kind="modify")
              for p in files for _ in range(rng.randint(0, 3))]
        if not hs:
            continue
        fate = {h.id: rng.choice(["whole", "whole", "part", "none"]) for h in hs}
        items = [h.id if fate[h.id] == "whole" else f"{h.id}:1-2" for h in hs if fate[h.id] != "none"]
        if not items:
            continue
        names = diff.short_ids(h.id for h in hs)
        written = S.naming(items, hs, names)
        got, _ = diff.expand(diff.parse_items(written), hs, lambda p: p)
        want = {h.id: (None if fate[h.id] == "whole" else frozenset({1, 2})) for h in hs if fate[h.id] != "none"}
        assert {i.id: i.lines for i in merge(got)} == want, (n, written)
        # No choice of paths (each with its exclusions) is cheaper.
        dirs = [".", "a.py", "src", "src/b.py", "src/c.py", "src/lib", "src/lib/d.py", "src/lib/e.py", "docs",
                "docs/f.md"]
        cost = len(json.dumps(written))
        for k in range(3):
            for paths in itertools.combinations(dirs, k):
                under = {h.id for h in hs if any(covers(h, p) for p in paths)}
                if any(not any(covers(h, p) and fate[h.id] == "whole" for h in hs) for p in paths):
                    continue
                other = (list(paths) + [f"-{names[i]}" for i in under if fate[i] == "none"]
                         + [names[i] if fate[i] == "whole" else f"{names[i]}:1-2" for i in fate
                            if fate[i] == "part" or (fate[i] == "whole" and i not in under)])
                assert cost <= len(json.dumps(other)), (n, written, other)
