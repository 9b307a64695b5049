"""`plan --outline`: a proposed commit that holds only tests or their data goes into the code
commit they test, where the evidence says which one.

The outline's prompt asks for tests with their code; the 1.5B model made tomli's three features
nine commits, five of them test data or the list of expected failures alone: commits that test
nothing yet, or fail, on their own. Plain code checks the answer: each test-only commit's words
(its message, its files' folders and names, its lines) against each code commit's (its message,
its files' names, the names its lines define and use), a word counting more the fewer code
commits say it; the code commit that scores best, clearly (plan/clusters.CLEAR times the next),
takes it, its message kept in the hints. A test-only commit no code commit clearly speaks for (a
test helper's cleanup) stays as it is; configuration (a CI workflow) is neither tests nor code.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from git_retcon import diff
from git_retcon.owners import names
from git_retcon.plan.clusters import CLEAR
from git_retcon.plan.ties import config, norm, prose, test
from git_retcon.state import spec as specmod


def _words(c: specmod.LogicalCommit, hunks: list[diff.Hunk]) -> set[str]:
    out = names.words(c.message)
    for h in hunks:
        out |= names.words(h.path)     # its folders' and its name's words
        removed, added = names.hunk_lines(h)
        out |= names.words(" ".join((added or removed)[:200]))
    return norm(out)


def merges(spec: specmod.Spec, owner_of: dict[str, int], hunks: list[diff.Hunk],
           doc: Callable[[diff.Hunk], bool] = lambda h: prose(h.path)) -> dict[int, int]:
    """Each commit that holds only test files -> the code commit (not prose alone) its words speak for.
    doc: whether a hunk is prose (plan/ties.Files.doc: a comment's lines too)."""
    n = len(spec.commits)
    mine: list[list[diff.Hunk]] = [[] for _ in range(n)]
    for h in hunks:
        mine[owner_of[h.id]].append(h)
    # Code is what tests test: a commit of prose alone is none (p-map: the test-only commit went
    # into the readme's, whose words and the model's name for it both said "pMapIterable"; then into
    # the commit of the readme and index.d.ts's JSDoc, which says it again).
    # Nor is configuration: tomli's CI workflow (tests.yaml) is no test, nor what a test tests.
    def is_code(h: diff.Hunk) -> bool:
        return not test(h.path) and not config(h.path) and not doc(h)

    code = [k for k in range(n) if any(is_code(h) for h in mine[k])]
    tests = [k for k in range(n) if mine[k] and all(test(h.path) for h in mine[k])]
    # A code commit's own tests would speak for it to every test-only commit (plain code's clusters
    # hold their test data), and its prose to any (p-map's JSDoc said the out-of-order test's words):
    # its code alone speaks for it.
    said = {k: _words(spec.commits[k], [h for h in mine[k] if is_code(h)]) for k in code}
    how_many = Counter(w for k in code for w in said[k])
    out: dict[int, int] = {}
    for t in tests:
        theirs = _words(spec.commits[t], mine[t])
        scores = sorted(((sum(1 / how_many[w] for w in theirs & said[k]), k) for k in code), reverse=True)
        # Clearly: tomli's cleanup of a test helper ("burntsushi" format conversion) is a commit of
        # its own, and its words spoke for two features' commits nearly alike (3.1 and 2.6).
        if scores and scores[0][0] > 0 and (len(scores) == 1 or scores[0][0] >= CLEAR * scores[1][0]):
            out[t] = scores[0][1]
    return out


def merge(spec: specmod.Spec, into: dict[int, int]) -> tuple[list[int], list[str]]:
    """The commits of `into` dropped from the spec, each one's message kept in its code commit's
    hints; the new number of every old commit, and what was done, in words."""
    keep = [k for k in range(len(spec.commits)) if k not in into]
    place = {k: i for i, k in enumerate(keep)}
    said = []
    for t, k in sorted(into.items()):
        c = spec.commits[k]
        c.hints = (c.hints + "\n" if c.hints else "") + f"With its tests: {spec.commits[t].summary}"
        said.append(f"'{spec.commits[t].summary[:50]}' holds only tests: they go with "
                    f"'{c.summary[:50]}', the code they test")
    spec.commits = [spec.commits[k] for k in keep]
    return [place[into.get(k, k)] for k in range(len(keep) + len(into))], said
