"""The evidence: what plain code decides about each hunk, on real histories."""
from __future__ import annotations

import pygit2

from git_retcon.owners import evidence, names
from git_retcon.owners.place import ends, place
from git_retcon.state.specparse import parse
from testing.gitrepo import GitRepo
from testing.histories import KEYWORD_SPEC, keyword_repo

REPHRASED = (KEYWORD_SPEC.replace("add: accept strings", "Let add take text")
             .replace("scale: accept a float factor", "Scale by fractions")
             .replace("clamp: swap bounds given in the wrong order", "Clamp with reversed limits"))

SPEC2 = 'source = "feature"\nremote = "main"\ncleaned = "c"\n\n[[commit]]\nmessage = "First"\n\n' \
    '[[commit]]\nmessage = "Second change"\n'


def _gather(repo, text):
    r = pygit2.Repository(str(repo.path))
    spec = parse(text)
    base, tip = ends(r, spec)
    return spec, evidence.gather(r, spec, base, tip)


def test_the_source_commit_that_wrote_a_hunk_decides_when_its_subject_is_a_message(tmp_path):
    repo = keyword_repo(tmp_path / "r")
    _, ev = _gather(repo, KEYWORD_SPEC)
    assert not ev.ranked
    by_path = {(h.path, h.added.decode().strip().splitlines()[0]): ev.decided[h.id] for h in ev.hunks}
    assert by_path[("calc.py", "a = int(a)")].k == 0
    assert by_path[("calc.py", "k = float(k)")].k == 1
    assert by_path[("calc.py", "if lo > hi:")].k == 2
    assert all(d.who == "rule" and "written by" in d.why for d in ev.decided.values())


def test_the_function_a_message_names_decides_its_hunks(tmp_path):
    repo = keyword_repo(tmp_path / "r")
    _, ev = _gather(repo, REPHRASED)
    calc = [h for h in ev.hunks if h.path == "calc.py"]
    assert [ev.decided[h.id].k for h in calc] == [0, 1, 2]
    assert all("message names" in ev.decided[h.id].why for h in calc)


def test_paths_and_planned_hunks_are_the_users_and_hints_naming_a_file_a_rule(tmp_path):
    repo = keyword_repo(tmp_path / "r")
    text = (REPHRASED.replace('message = "Let add take text"', 'message = "Let add take text"\npaths = ["calc.py"]')
            .replace('message = "Clamp with reversed limits"',
                     'message = "Clamp with reversed limits"\nhints = "the test in test_calc.py"'))
    _, ev = _gather(repo, text)
    for h in ev.hunks:
        d = ev.decided[h.id]
        assert (d.k, d.who) == ((0, "user") if h.path == "calc.py" else (2, "rule")), (h.path, d)


def test_a_hunk_nothing_speaks_for_keeps_every_commit_as_plausible(tmp_path):
    repo = keyword_repo(tmp_path / "r")
    text = (KEYWORD_SPEC.replace("add: accept strings", "First").replace("scale: accept a float factor", "Second")
            .replace("clamp: swap bounds given in the wrong order", "Third"))
    _, ev = _gather(repo, text)
    assert len(ev.ranked) == 4
    for ranked in ev.ranked.values():
        assert sorted(k for k, _ in ranked) == [0, 1, 2]
        assert all(score == 0 for _, score in ranked)


def test_whitespace_only_hunks_go_to_the_one_style_commit(tmp_path):
    repo = keyword_repo(tmp_path / "r")
    repo.commit("Style: whitespace", {"README": "calc \n"})
    text = REPHRASED + '\n[[commit]]\nmessage = "Style: strip trailing spaces"\n'
    spec, ev = _gather(repo, text)
    ws = [h for h in ev.hunks if names.whitespace_only(h)]
    assert ws and all(ev.decided[h.id].k == 3 and "whitespace" in ev.decided[h.id].why for h in ws)


def test_without_a_model_the_placement_takes_the_evidence_and_the_last_commit_the_rest(tmp_path):
    repo = keyword_repo(tmp_path / "r")
    r = pygit2.Repository(str(repo.path))
    p = place(r, parse(REPHRASED), None)
    assert p.tally is None
    assert sorted({o.k for o in p.owners.values()}) == [0, 1, 2]
    assert not p.composed.empty


def test_a_word_on_many_lines_of_the_file_decides_nothing_alone(tmp_path):
    """p-map's index.js: "promise" is on eleven of its lines, so the one message that says
    "promise" does not take every hunk inside a block that names one."""
    def file(few: int, extra: str) -> str:
        body = "".join(f"    p{i} = make_promise(x)\n" for i in range(few))
        return f"def promise_all(x):\n{body}{extra}    return x\n"

    spec = SPEC2.replace("First", "Fix out-of-order promise inputs")
    for few, decided in ((1, True), (6, False)):
        repo = GitRepo.init(tmp_path / str(few))
        repo.commit("base", {"run.py": file(few, "")})
        repo.git("checkout", "-q", "-b", "feature")
        repo.commit("wip", {"run.py": file(few, "    x += 1\n")})
        _, ev = _gather(repo, spec)
        (h,) = ev.hunks
        assert (h.id in ev.decided) is decided and (h.id in ev.ranked) is not decided, few


def test_test_js_and_tests_py_are_tests():
    assert names.is_test("test.js") and names.is_test("pkg/tests.py") and names.is_test("test/a.js")
    assert not names.is_test("contest.js") and not names.is_test("testing.py")
