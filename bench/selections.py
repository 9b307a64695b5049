"""Whether a file's state is a selection of the source's hunks, and the cheapest one to name
(bench/model_output's cheapest path, issue 11).

select.select keeps a hunk's lines in the order of select.interleave (old and new lines as
the diff pairs them) and drops the unchosen `+` lines and the chosen `-` lines: what a
selection puts in the hunk's range is a subsequence of that order, any one. So t is w with
a selection of each hunk exactly when t is w's unchanged segments, in order, with such a
subsequence in each hunk's range between them: an alignment, found here by dynamic
programming, the cost of a selection being the characters of its `compact()` form.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from git_retcon import diff
from git_retcon.diff.hunk import Lines, split_lines, start_index
from git_retcon.diff.ids import looks_like_id
from git_retcon.diff.select import compact, interleave, numbered

Choice = tuple[diff.Hunk, frozenset[int]]
_MAX_STATES = 3_000_000     # (line of the hunk x line of t) pairs explored per hunk at most
_MAX_STARTS = 64            # places in t where a hunk's range may begin, kept at most


def cheapest(w: bytes, t: bytes, hunks: Sequence[diff.Hunk], price: Callable[[diff.Hunk], int],
             whole_only: bool = False) -> list[Choice] | None:
    """The chosen lines of each hunk (only hunks with some) that turn w into t, the cheapest to
    name; None when t is no selection of these hunks (or the search is too large). price(h): the
    characters of naming h whole (its id as shown, quotes, separator); a selection adds `:SEL`.
    whole_only: each hunk whole or not at all (today's tools)."""
    W, T = split_lines(w), split_lines(t)
    hs = sorted(hunks, key=lambda h: (h.old_start, h.old_lines))
    if not hs:
        return [] if W == T else None
    spans = [(start_index(h.old_start, h.old_lines), start_index(h.old_start, h.old_lines) + h.old_lines)
             for h in hs]
    fixed = [W[a:b] for a, b in zip([0] + [e for _, e in spans], [b for b, _ in spans] + [len(W)], strict=True)]
    # Lines t must still hold after segment k: its fixed lines (hunks may yield none).
    after = [sum(len(f) for f in fixed[k + 1:]) for k in range(len(fixed))]
    # reach: place in t -> (cost so far, the choices that got there)
    reach: dict[int, tuple[int, list[Choice]]] = {}
    if T[: len(fixed[0])] == fixed[0]:
        reach[len(fixed[0])] = (0, [])
    for k, h in enumerate(hs):
        nxt, ahead = fixed[k + 1], after[k + 1]
        new_reach: dict[int, tuple[int, list[Choice]]] = {}
        for p, (cost, chosen) in sorted(reach.items(), key=lambda kv: kv[1][0])[:_MAX_STARTS]:
            last = min(p + sum(map(len, numbered(h))), len(T) - len(nxt) - ahead)
            ends = [e for e in range(p, last + 1) if (not nxt or T[e] == nxt[0]) and T[e:e + len(nxt)] == nxt]
            if k == len(hs) - 1:
                ends = [e for e in ends if e + len(nxt) == len(T)]
            if not ends:
                continue
            regions = _regions(h, T, p, ends, price(h), whole_only)
            if regions is None:
                return None
            for e, (c, numbers) in regions.items():
                q = e + len(nxt)
                total = cost + c
                if q not in new_reach or total < new_reach[q][0]:
                    new_reach[q] = (total, chosen + ([(h, numbers)] if numbers else []))
        reach = new_reach
    done = reach.get(len(T))
    return None if done is None else done[1]


def splice(text: bytes, hunks: list[diff.Hunk]) -> bytes:
    """text with these modify hunks applied (what apply does, without the index)."""
    lines = Lines(text)
    pieces, prev = [], 0
    for h in sorted(hunks, key=lambda h: (h.old_start, h.old_lines)):
        begin = start_index(h.old_start, h.old_lines)
        pieces += [lines.slice(prev, begin), h.added]
        prev = begin + h.old_lines
    pieces.append(lines.slice(prev, lines.count))
    return b"".join(pieces)


def _regions(h: diff.Hunk, T: list[bytes], p: int, ends: list[int], price: int,
             whole_only: bool) -> dict[int, tuple[int, frozenset[int]]] | None:
    """For each end e in ends that h's range can reach from p (t[p:e] a selection of h): the
    cheapest selection's cost and numbers (empty: h not taken). None: too large to search."""
    old, new = numbered(h)
    m, n = len(old), len(new)
    out: dict[int, tuple[int, frozenset[int]]] = {}
    for e in ends:
        if T[p:e] == old:
            out[e] = (0, frozenset())
        elif T[p:e] == new:
            out[e] = (price, frozenset(range(1, m + n + 1)))
    if whole_only:
        return out
    order = [(old[i], True, i + 1) if sign == "-" else (new[i], False, m + i + 1) for sign, i in interleave(old, new)]
    lo, hi = _band(order, T, p, ends)
    if sum(max(0, b - a + 1) for a, b in zip(lo, hi, strict=True)) > _MAX_STATES:
        return None
    # A state: (place in t, run state of the `-` numbers, of the `+` numbers, a); a run state is
    # 0 (the previous number of that sign not chosen), 1 (chosen, a run of one), 2 (a longer run).
    # The first `+` number follows the last `-` one (m, m + 1): a is the run state guessed at m,
    # which the `+` numbers start from and the `-` numbers must end with.
    State = tuple[int, int, int, int]
    layer: dict[State, int] = {(p, 0, a, a): 0 for a in ((0, 1, 2) if m and n else (0,))}
    back: list[dict[State, tuple[State, bool]]] = []
    for i, (line, is_old, x) in enumerate(order):
        nxt: dict[State, int] = {}
        came: dict[State, tuple[State, bool]] = {}
        for (q, ro, rn, a), cost in layer.items():
            run = ro if is_old else rn
            grow = len(str(x)) + 1 if run < 2 else len(str(x)) - len(str(x - 1))
            # An old line stays (not chosen) or goes (chosen); a new line comes (chosen) or not.
            for chosen, q2 in ((False, q + 1 if is_old else q), (True, q if is_old else q + 1)):
                if q2 != q and not (q < len(T) and _same(line, T[q])):
                    continue
                if not lo[i + 1] <= q2 <= hi[i + 1]:
                    continue
                r2 = (min(run + 1, 2) if chosen else 0)
                key = (q2, r2, rn, a) if is_old else (q2, ro, r2, a)
                c2 = cost + (grow if chosen else 0)
                if key not in nxt or c2 < nxt[key]:
                    nxt[key] = c2
                    came[key] = ((q, ro, rn, a), chosen)
        layer = nxt
        back.append(came)
    for e in ends:
        finals = [(c, s) for s, c in layer.items() if s[0] == e and (s[1] == s[3] or not (m and n))]
        if not finals:
            continue
        cost, state = min(finals)
        numbers = set()
        for i in range(len(order) - 1, -1, -1):
            state, chosen = back[i][state]
            if chosen:
                numbers.add(order[i][2])
        if not numbers or len(numbers) == m + n:
            continue            # none or all: as found above, when t has it
        assert cost == len(compact(numbers)) + 1, (cost, compact(numbers))
        c = price + cost
        if e not in out or c < out[e][0]:
            out[e] = (c, frozenset(numbers))
    return out


def _band(order: list[tuple[bytes, bool, int]], T: list[bytes], p: int,
          ends: list[int]) -> tuple[list[int], list[int]]:
    """For each count i of the hunk's lines gone through, the places q in t worth a state
    (lo[i] <= q <= hi[i]): t[p:q] must be a subsequence of the first i lines (at most the
    greedy match from the front) and t[q:e] of the others for some end e (at least the
    greedy match from the back)."""
    k, top = len(order), max(ends)
    hi = [p] * (k + 1)
    for i, (line, _, _) in enumerate(order):
        q = hi[i]
        hi[i + 1] = q + 1 if q < top and _same(line, T[q]) else q
    lo = [top] * (k + 1)
    for e in ends:
        q = e
        lo[k] = min(lo[k], q)
        for i in range(k - 1, -1, -1):
            if q > p and _same(order[i][0], T[q - 1]):
                q -= 1
            lo[i] = min(lo[i], q)
    return lo, hi


def _same(line: bytes, have: bytes) -> bool:
    """A hunk's line as t has it: a last line without a newline gets one when more follows."""
    return line == have or (not line.endswith(b"\n") and line + b"\n" == have)


# -- the nearest selection, for a state that is none ----------------------------------

_MAX_CELLS = 600_000        # (line of w and its hunks x line of t) at most: larger files keep the old guess
_EDIT = 40                  # what starting an edit_file costs beyond its lines (its JSON, a line of context)
_PICK = 1                   # what choosing a line costs (its number in a selection, roughly)


def nearest(w: bytes, t: bytes, hunks: Sequence[diff.Hunk]) -> list[Choice] | None:
    """The selection of these hunks after which edit_file has the least to write to make t of
    w: an alignment of t against w with every hunk's lines (in interleave order) where a hunk's
    line may be left out for free, a line of w only by an edit, and a line of t that nothing
    gives is written by an edit. None when the alignment is too large to search."""
    W, T = split_lines(w), split_lines(t)
    # Z: w's lines with each hunk's lines in its range: (line, the hunk or None, number, is old)
    Z: list[tuple[bytes, diff.Hunk | None, int, bool]] = []
    prev = 0
    for h in sorted(hunks, key=lambda h: (h.old_start, h.old_lines)):
        begin = start_index(h.old_start, h.old_lines)
        old, new = numbered(h)
        Z += [(line, None, 0, False) for line in W[prev:begin]]
        Z += [(old[i], h, i + 1, True) if sign == "-" else (new[i], h, len(old) + i + 1, False)
              for sign, i in interleave(old, new)]
        prev = begin + h.old_lines
    Z += [(line, None, 0, False) for line in W[prev:]]
    # What t shares with w at both ends is matched as is (it lies outside every hunk).
    head = 0
    while head < min(len(Z), len(T)) and Z[head][1] is None and Z[head][0] == T[head]:
        head += 1
    tail = 0
    while (tail < min(len(Z), len(T)) - head and Z[len(Z) - 1 - tail][1] is None
           and Z[len(Z) - 1 - tail][0] == T[len(T) - 1 - tail]):
        tail += 1
    z, tt = Z[head:len(Z) - tail], T[head:len(T) - tail]
    if (len(z) + 1) * (len(tt) + 1) > _MAX_CELLS:
        return None
    ops = _align(z, tt)
    numbers: dict[str, set[int]] = {}
    by_id: dict[str, diff.Hunk] = {}
    for i in ops:
        _, hunk, x, _ = z[i]
        assert hunk is not None
        numbers.setdefault(hunk.id, set()).add(x)
        by_id[hunk.id] = hunk
    return [(by_id[k], frozenset(v)) for k, v in numbers.items()]


def _align(z: list[tuple[bytes, diff.Hunk | None, int, bool]], T: list[bytes]) -> list[int]:
    """The indices of z whose hunk line is chosen (an old line removed, a new line added) in the
    cheapest alignment. A state is (i, q, e): z[:i] and T[:q] gone through, e whether the last
    step was an edit (an edit next to it costs only its lines)."""
    n = len(T)
    inf = float("inf")
    # cost[e][q] for the current i; how[i][e][q]: (step, e before) that reached it
    steps: list[list[list[tuple[int, int]]]] = []
    cost = [[inf] * (n + 1), [inf] * (n + 1)]
    cost[0][0] = 0.0
    how: list[list[tuple[int, int]]] = [[(-1, 0)] * (n + 1), [(-1, 0)] * (n + 1)]

    def inserts(cost: list[list[float]], how: list[list[tuple[int, int]]]) -> None:
        """Lines of t written by an edit: (i, q) -> (i, q + 1)."""
        for q in range(n):
            for e in (0, 1):
                c = cost[e][q] + len(T[q]) + 1 + (0 if e else _EDIT)
                if c < cost[1][q + 1]:
                    cost[1][q + 1], how[1][q + 1] = c, (6, e)

    inserts(cost, how)
    steps.append(how)
    for line, h, _, is_old in z:
        nc = [[inf] * (n + 1), [inf] * (n + 1)]
        nh: list[list[tuple[int, int]]] = [[(-1, 0)] * (n + 1), [(-1, 0)] * (n + 1)]
        for e in (0, 1):
            row = cost[e]
            for q in range(n + 1):
                c = row[q]
                if c == inf:
                    continue
                # step: 0 w's line kept, 1 w's line removed by an edit, 2 an old line kept,
                # 3 an old line chosen (removed), 4 a new line chosen (added), 5 a new line left
                matches = q < n and line == T[q]
                if h is None:
                    moves = [(0, 1, 0, 0.0)] if matches else []
                    moves.append((1, 0, 1, len(line) + 1 + (0 if e else _EDIT)))
                elif is_old:
                    moves = ([(2, 1, 0, 0.0)] if matches else []) + [(3, 0, e, _PICK)]
                else:
                    moves = ([(4, 1, 0, _PICK)] if matches else []) + [(5, 0, e, 0.0)]
                for step, dq, e2, add in moves:
                    if c + add < nc[e2][q + dq]:
                        nc[e2][q + dq], nh[e2][q + dq] = c + add, (step, e)
        inserts(nc, nh)
        cost, how = nc, nh
        steps.append(how)
    # Back from the end: which steps chose a hunk's line.
    e = 0 if cost[0][n] <= cost[1][n] else 1
    q, chosen = n, []
    for i in range(len(z), -1, -1):
        while True:
            step, before = steps[i][e][q]
            if step == 6:
                q, e = q - 1, before
                continue
            break
        if i == 0:
            break
        if step in (3, 4):
            chosen.append(i - 1)
        q -= 1 if step in (0, 2, 4) else 0
        e = before
    return chosen


# -- naming the items: ids, or paths with exclusions ----------------------------------------

def naming(items: list[str], remaining: Sequence[diff.Hunk], names: dict[str, str]) -> list[str]:
    """The items (whole ids, `id:SEL`) as the cheapest model writes them: the ids as read_diff shows
    them, or paths (a file, a directory, '.') each taking every remaining hunk under it, with `-id`
    for those of them not taken (a hunk taken in part is named with its lines either way, and a
    path takes only those). The cheapest choice of paths over the tree of directories: at each one, itself (with its
    exclusions) or the best of what lies below (a rename counts where its new path is; its old
    path only makes a choice dearer, never wrong)."""
    whole = {i for i in items if ":" not in i}
    part = {i.partition(":")[0] for i in items if ":" in i}
    look = diff.lookup(list(remaining))
    children: dict[str, set[str]] = {".": set()}
    own: dict[str, int] = {}        # a file: what naming its hunks taken whole by id costs
    for h in remaining:
        parent, parts = ".", h.path.split("/")
        for k in range(1, len(parts) + 1):
            node = "/".join(parts[:k])
            children.setdefault(parent, set()).add(node)
            children.setdefault(node, set())
            parent = node
        if h.id in whole:
            own[h.path] = own.get(h.path, 0) + _price(names[h.id])
    best: dict[str, tuple[int, list[str]]] = {}
    for node in sorted(children, key=lambda p: -1 if p == "." else p.count("/"), reverse=True):
        below = sum(best[c][0] for c in children[node]) + own.get(node, 0)
        chosen = [p for c in sorted(children[node]) for p in best[c][1]]
        under = list(remaining) if node == "." else look.covered(node)
        ids = {h.id for h in under}
        if ids & whole and not looks_like_id(node.lstrip("-")):
            alone = _price(node) + sum(_price("-" + names[i]) for i in ids - whole - part)
            if alone < below:
                below, chosen = alone, [node]
        best[node] = (below, chosen)
    paths = best["."][1]
    covered = {h.id for p in paths for h in (remaining if p == "." else look.covered(p))}
    left_out = [names[h.id] for h in remaining if h.id in covered - whole - part]
    return paths + ["-" + n for n in left_out] + [names[i.partition(":")[0]] + i[len(i.partition(":")[0]):]
                                                  for i in items if ":" in i or i not in covered]


def _price(item: str) -> int:
    """What an item adds to apply_hunks' JSON: the string and its separator."""
    return len(json.dumps(item)) + 2
