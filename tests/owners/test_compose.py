"""Plain code checks the answers: definitions before their uses, tests with or after their code,
no empty commit kept silently, lock files with their manifest; the user's word is never moved."""
from __future__ import annotations

import pygit2

from git_retcon.owners.compose import compose
from git_retcon.owners.evidence import Decided, Evidence
from git_retcon.owners.place import ends
from git_retcon.owners.question import Answer
from git_retcon.state.specparse import parse
from testing.gitrepo import GitRepo

SPEC = """\
source = "feature"
remote = "main"
cleaned = "feature-clean"

[[commit]]
message = "One"

[[commit]]
message = "Two"

[[commit]]
message = "Three"
"""


def _repo(tmp_path) -> GitRepo:
    repo = GitRepo.init(tmp_path / "r")
    repo.commit("base", {"app/text.py": "def shout(s):\n    return s.upper()\n",
                         "app/core.py": "from app import text\n", "package.json": '{"a": 1}\n',
                         "package-lock.json": '{"lock": 1}\n'})
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("all", {
        "app/text.py": "def shout(s):\n    return s.upper()\n\n\ndef slugify(s):\n    return s.lower()\n",
        "app/core.py": "from app import text\n\n\ndef permalink(s):\n    return '/p/' + text.slugify(s)\n",
        "tests/test_core.py": "from app import core\n\n\ndef test_permalink():\n    assert core.permalink('A')\n",
        "package.json": '{"a": 2}\n', "package-lock.json": '{"lock": 2}\n'})
    return repo


def _compose(tmp_path, place: dict[str, tuple[int, str]]):
    repo = _repo(tmp_path)
    r = pygit2.Repository(str(repo.path))
    spec = parse(SPEC)
    base, tip = ends(r, spec)
    from git_retcon import diff

    hunks = diff.remaining(r, str(r[base].peel(pygit2.Commit).tree_id), str(r[tip].peel(pygit2.Commit).tree_id))
    by_path = {h.path: h for h in hunks}
    ev = Evidence(hunks)
    answers = {}
    for path, (k, who) in place.items():
        if who == "model" or who == "model, uncertain":
            answers[by_path[path].id] = Answer(k, who, (k, k))  # type: ignore[arg-type]
        else:
            ev.decided[by_path[path].id] = Decided(k, who, "test")  # type: ignore[arg-type]
    return by_path, compose(r, base, tip, len(spec.commits), ev, answers)


def test_a_definition_a_earlier_commit_uses_moves_down_and_a_test_up(tmp_path):
    by_path, out = _compose(tmp_path, {"app/text.py": (2, "model"), "app/core.py": (0, "model"),
                                       "tests/test_core.py": (0, "model, uncertain"),
                                       "package.json": (1, "model"), "package-lock.json": (0, "model")})
    owners = {p: out.owners[h.id] for p, h in by_path.items()}
    assert owners["app/text.py"].k == 0 and "defines slugify" in owners["app/text.py"].why
    assert owners["app/core.py"].k == 0
    assert owners["package-lock.json"].k == 1 and "lock file" in owners["package-lock.json"].why
    assert any("slugify" in m for m in out.moved)
    assert out.empty == [2]
    assert out.uncertain == [by_path["tests/test_core.py"].id]


def test_tests_go_with_or_after_the_code_they_test(tmp_path):
    by_path, out = _compose(tmp_path, {"app/text.py": (0, "model"), "app/core.py": (2, "model"),
                                       "tests/test_core.py": (0, "model"),
                                       "package.json": (1, "model"), "package-lock.json": (1, "model")})
    test = out.owners[by_path["tests/test_core.py"].id]
    assert test.k == 2 and "tests go with the code" in test.why
    assert out.empty == []


def test_what_the_user_decided_never_moves(tmp_path):
    by_path, out = _compose(tmp_path, {"app/text.py": (2, "user"), "app/core.py": (0, "model"),
                                       "tests/test_core.py": (0, "user"),
                                       "package.json": (1, "user"), "package-lock.json": (0, "user")})
    owners = {p: out.owners[h.id] for p, h in by_path.items()}
    assert owners["app/text.py"].k == 2 and owners["tests/test_core.py"].k == 0
    assert owners["package-lock.json"].k == 0


def test_an_empty_commit_takes_the_hunk_in_doubt_that_scores_best_for_it(tmp_path):
    by_path, _ = _compose(tmp_path, {})
    repo_path = tmp_path / "r"
    r = pygit2.Repository(str(repo_path))
    spec = parse(SPEC)
    base, tip = ends(r, spec)
    hunks = list(by_path.values())
    ev = Evidence(hunks)
    # Every hunk answered into commits 1 and 2; commit 3 is plausible for the test and for text.py,
    # which scores better for it but defines slugify, which core.py (commit 1) uses: moving it would
    # only be undone. The lock file holds nothing of its own: it follows package.json.
    ev.ranked = {by_path["tests/test_core.py"].id: [(0, 4.0), (2, 3.0)],
                 by_path["app/text.py"].id: [(0, 2.0), (2, 2.0)]}
    answers = {by_path[p].id: Answer(k, "model", (k, k)) for p, k in
               (("app/core.py", 0), ("app/text.py", 0), ("tests/test_core.py", 0), ("package.json", 1))}
    out = compose(r, base, tip, len(spec.commits), ev, answers)
    test = out.owners[by_path["tests/test_core.py"].id]
    assert test.k == 2 and "had no hunk" in test.why
    assert out.owners[by_path["app/text.py"].id].k == 0
    assert out.owners[by_path["package-lock.json"].id].k == 1
    assert out.empty == []
    assert any("which had no hunk" in m for m in out.moved)


def test_no_hunk_is_taken_from_a_commit_it_would_leave_empty(tmp_path):
    by_path, _ = _compose(tmp_path, {})
    r = pygit2.Repository(str(tmp_path / "r"))
    spec = parse(SPEC)
    base, tip = ends(r, spec)
    ev = Evidence(list(by_path.values()))
    ev.ranked = {by_path["package.json"].id: [(1, 4.0), (2, 3.0)]}
    answers = {by_path[p].id: Answer(k, "model", (k, k)) for p, k in
               (("app/core.py", 0), ("app/text.py", 0), ("tests/test_core.py", 0), ("package.json", 1))}
    out = compose(r, base, tip, len(spec.commits), ev, answers)
    assert out.owners[by_path["package.json"].id].k == 1
    assert out.empty == [2]


def test_a_renamed_names_uses_go_with_the_renamed_definition(tmp_path):
    """p-map's concurrency fix renamed runningMappersCount: a hunk still using the old name placed
    after the hunk that renames its definition would leave the commits between broken."""
    from git_retcon import diff

    filler = "".join(f"    step{i}()\n" for i in range(10))
    before = f"let running = 0\n\n\ndef spawn():\n{filler}    running += 1\n"
    after = f"let pending = 0\n\n\ndef spawn():\n{filler}    pending += 1\n"
    repo = GitRepo.init(tmp_path / "r")
    repo.commit("base", {"pool.py": before})
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("wip", {"pool.py": after})
    r = pygit2.Repository(str(repo.path))
    spec = parse(SPEC)
    base, tip = ends(r, spec)
    definition, use = diff.remaining(r, repo.tree("main"), repo.tree("feature"))
    ev = Evidence([definition, use])
    out = compose(r, base, tip, 3, ev, {definition.id: Answer(0, "model", (0, 0)), use.id: Answer(2, "model", (2, 2))})
    assert out.owners[use.id].k == 0 and "removes a use of running" in out.owners[use.id].why
    assert out.owners[definition.id].k == 0


def test_an_empty_commit_takes_no_hunk_its_function_needs(tmp_path):
    """pflag: commit 3 was empty and took `var errUnknownFlagAll ...`, whose uses stayed in commit
    1, which then failed to build (and a repair would have emptied commit 3 again). A hunk that
    declares a local variable another hunk uses, or uses one another declares, is not taken: a
    hunk that stands alone is, else the commit is left empty and said so."""
    repo = GitRepo.init(tmp_path / "r")
    body = "  // a\n  // b\n  // c\n  // d\n"
    repo.commit("base", {"app.js": f"function total(xs) {{\n{body}  return 0;\n}}\n\nfunction other() {{\n"
                                   f"  return 1;\n}}\n"})
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("all", {"app.js": f"function total(xs) {{\n  let running = 0;\n{body}"
                                  f"  for (const x of xs) running += x;\n  return running;\n}}\n\n"
                                  f"function other() {{\n  return 2;\n}}\n"})
    r = pygit2.Repository(str(repo.path))
    spec = parse(SPEC)
    base, tip = ends(r, spec)
    from git_retcon import diff

    declares, uses, alone = diff.remaining(r, str(r[base].peel(pygit2.Commit).tree_id),
                                           str(r[tip].peel(pygit2.Commit).tree_id))
    assert b"let running" in declares.added and b"return running" in uses.added and b"return 2" in alone.added
    ev = Evidence([declares, uses, alone])
    ev.ranked = {declares.id: [(0, 2.0), (1, 1.9), (2, 1.9)], uses.id: [(0, 2.0), (1, 1.0), (2, 1.0)],
                 alone.id: [(0, 2.0), (1, 1.0), (2, 1.0)]}
    answers = {h.id: Answer(0, "model", (0, 0)) for h in (declares, uses, alone)}
    out = compose(r, base, tip, len(spec.commits), ev, answers)
    assert [out.owners[h.id].k for h in (declares, uses, alone)] == [0, 0, 1]
    assert out.empty == [2]


def test_a_lists_frame_goes_with_the_commit_that_empties_it(tmp_path):
    """tomli: the block of expected failures is gone once the last feature takes its last name
    out; a question about its `if valid.stem in {` can only guess (the tie went to commit 1)."""
    from git_retcon import diff
    from git_retcon.owners import atoms

    block = 'def check(name):\n    if name in {\n        "alpha",\n        "beta",\n    }:\n        return "xfail"\n' \
            '    return name\n'
    repo = GitRepo.init(tmp_path / "r")
    repo.commit("base", {"test_check.py": block})
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("all", {"test_check.py": 'def check(name):\n    return name\n'})
    r = pygit2.Repository(str(repo.path))
    spec = parse(SPEC)
    base, tip = ends(r, spec)
    whole = diff.remaining(r, str(r[base].peel(pygit2.Commit).tree_id), str(r[tip].peel(pygit2.Commit).tree_id))
    frames: set[str] = set()
    hunks = atoms.split(r, base, tip, whole, set(), frames)
    (frame,) = [h for h in hunks if h.id in frames]
    alpha, beta = [h for h in hunks if h.id not in frames]
    assert b"if name in {" in frame.removed and b'"alpha"' in alpha.removed and b'"beta"' in beta.removed
    ev = Evidence(hunks)
    ev.ranked = {h.id: [(0, 1.0), (1, 1.0), (2, 1.0)] for h in hunks}
    answers = {frame.id: Answer(0, "model, uncertain", (2, 0)), alpha.id: Answer(0, "model", (0, 0)),
               beta.id: Answer(1, "model", (1, 1))}
    out = compose(r, base, tip, len(spec.commits), ev, answers, frames)
    assert out.owners[frame.id].k == 1 and "empties it" in out.owners[frame.id].why
    assert any("a list's frame goes with its entries" in m for m in out.moved)


def test_an_edited_expectation_goes_with_the_code_that_writes_it(tmp_path):
    """xmlparser: the arm writing "expected quote mark not '{}' at {}" went to commit 2 and a test
    line edited to expect that text to commit 4, so commit 2's old expectation failed. Edited test
    lines go to the commit whose code writes what they now expect, from after it or before it."""
    from git_retcon import diff

    check = "import errors\nassert str(errors.quote('x')) == {!r}\n"
    repo = GitRepo.init(tmp_path / "r")
    repo.commit("base", {"errors.py": "def quote(c):\n    return f\"expected '\\\"' not {c}\"\n",
                         "test_a.py": check.format("expected '\"' not x"), "test_b.py": check.format("bad x")})
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("all", {"errors.py": "def quote(c):\n    return f\"expected a quote mark not {c}\"\n",
                        "test_a.py": check.format("expected a quote mark not x"),
                        "test_b.py": check.format("expected a quote mark not x")})
    r = pygit2.Repository(str(repo.path))
    spec = parse(SPEC)
    base, tip = ends(r, spec)
    hunks = diff.remaining(r, str(r[base].peel(pygit2.Commit).tree_id), str(r[tip].peel(pygit2.Commit).tree_id))
    code, a, b = (next(h for h in hunks if h.path == p) for p in ("errors.py", "test_a.py", "test_b.py"))
    ev = Evidence(hunks)
    answers = {code.id: Answer(1, "model", (1, 1)), a.id: Answer(2, "model", (2, 2)), b.id: Answer(0, "model", (0, 0))}
    out = compose(r, base, tip, len(spec.commits), ev, answers)
    assert [out.owners[h.id].k for h in (code, a, b)] == [1, 1, 1]
    assert out.owners[a.id].why == "expects what commit 2's code writes"
