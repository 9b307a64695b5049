"""The questions: replies read strictly, the order that favours none, and asking twice, with real
llm model classes (testing/owners_model.py) that favour the last choice as the 1.5B model does."""
from __future__ import annotations

import json

import llm
import pygit2

from git_retcon.owners import evidence, question
from git_retcon.owners.place import ends
from git_retcon.state.specparse import parse
from testing.histories import KEYWORD_SPEC, keyword_repo

PLAIN = (KEYWORD_SPEC.replace("add: accept strings", "First").replace("scale: accept a float factor", "Second")
         .replace("clamp: swap bounds given in the wrong order", "Third"))


def test_a_reply_is_one_of_the_choices_or_nothing():
    assert question.read_reply('{"commit": 2}', [0, 1], True) == 1
    assert question.read_reply("2", [0, 1], False) == 1
    assert question.read_reply("Commit 2.", [0, 1], False) == 1
    assert question.read_reply("2 because it scales", [0, 1], False) is None
    assert question.read_reply("3", [0, 1], False) is None
    assert question.read_reply('{"commit": true}', [0, 1], True) is None
    assert question.read_reply("I think the second", [0, 1], True) is None


def test_the_order_is_a_shuffle_fixed_by_the_hunk():
    orders = {tuple(question.order(f"{i:010x}", [0, 1, 2, 3])) for i in range(40)}
    assert all(sorted(o) == [0, 1, 2, 3] for o in orders)
    assert len({o[-1] for o in orders}) == 4          # every commit is last for some hunk
    assert question.order("0123456789", [0, 1, 2]) == question.order("0123456789", [0, 1, 2])


def test_the_schema_names_the_choices_as_people_count():
    assert question.schema([2, 0])["properties"]["commit"]["enum"] == [3, 1]


def _setup(tmp_path):
    repo = keyword_repo(tmp_path / "r")
    r = pygit2.Repository(str(repo.path))
    spec = parse(PLAIN)
    base, tip = ends(r, spec)
    return spec, evidence.gather(r, spec, base, tip)


def _log(path):
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_a_model_that_favours_the_last_choice_is_asked_twice_and_left_uncertain(tmp_path, owners_models):
    spec, ev = _setup(tmp_path)
    asker = question.Asker(llm.get_model("owners-last"), spec)
    answers = question.ask_all(asker, ev, jobs=2)
    assert set(answers) == set(ev.ranked)
    asked = _log(owners_models)
    assert all(e["schema"] for e in asked)
    for hid, a in answers.items():
        first, second = a.replies
        shown = question.order(hid, [k for k, _ in ev.ranked[hid]])
        assert (first, second) == (shown[-1], shown[0])          # the last offered, each time
        assert a.who == "model, uncertain"
    assert asker.tally.questions == 4 and asker.tally.calls == 8
    # Every question is asked once before any is asked again, and each round shares one prefix:
    # the commits in order, then listed from the last to the first.
    prefixes = [e["prompt"].split("Part ", 1)[0] for e in asked]
    assert len(set(prefixes[:4])) == 1 and "1. First\n" in prefixes[0] and "in order" in prefixes[0]
    assert len(set(prefixes[4:])) == 1 and "3. Third\n2. Second\n1. First" in prefixes[4]


def test_a_model_that_favours_the_commit_listed_last_is_left_uncertain(tmp_path, owners_models):
    """The 1.5B model put 47 of pflag's 62 atoms in its third and last commit, asked twice with the
    choices reversed: asked again with the commits listed from the last to the first, it answers
    otherwise, and the evidence's best of its two answers is taken."""
    spec, ev = _setup(tmp_path)
    h = ev.hunks[0]
    asker = question.Asker(llm.get_model("owners-recent"), spec)
    got = asker.answer(h, [(0, 2.0), (2, 1.0)], 0)
    assert got.replies == (2, 0) and (got.k, got.who) == (0, "model, uncertain")
    # Where the evidence's best is the commit it favours, one asking settles it.
    got = asker.answer(h, [(2, 2.0), (0, 1.0)], 2)
    assert (got.k, got.who, got.replies) == (2, "model", (2,))


def test_an_answer_that_agrees_with_the_evidence_is_asked_once(tmp_path, owners_models):
    spec, ev = _setup(tmp_path)
    h = ev.hunks[0]
    shown = question.order(h.id, [0, 1, 2])
    asker = question.Asker(llm.get_model("owners-last"), spec)
    got = asker.answer(h, [(shown[-1], 2.0), *((k, 0.0) for k in shown[:-1])], shown[-1])
    assert (got.k, got.who, got.replies) == (shown[-1], "model", (shown[-1],))


def test_a_plain_reply_that_is_not_a_number_is_asked_once_more(tmp_path, owners_models, monkeypatch):
    monkeypatch.setenv("RETCON_OWNERS_CHATTY", "1")
    spec, ev = _setup(tmp_path)
    h = ev.hunks[0]
    asker = question.Asker(llm.get_model("owners-last-text"), spec)
    got = asker.choose(h, [2, 0, 1])
    assert got == 1
    asked = _log(owners_models)
    assert [e["reply"] for e in asked] == ["I think it is the last one.", "2"]
    assert "named none of them" in asked[1]["prompt"] and not asked[0]["schema"]


def test_a_long_hunk_is_shown_by_its_head_tail_and_names():
    from git_retcon.diff import Hunk

    body = "".join(f"def f{i}():\n    return {i}\n" for i in range(40)).encode()
    text = question.hunk_text(Hunk(id="0" * 10, path="m.py", kind="add", added=body, new_mode=0o100644))
    assert len(text.splitlines()) <= question.HEAD + question.TAIL + 1
    assert "lines not shown; it defines f0, f1" in text


def test_adjacent_hunks_inside_one_function_are_one_question(tmp_path, owners_models):
    """Two edits a few lines apart inside `report`, one in `other`: two questions, the first showing
    both of report's hunks; its answer places both."""
    from testing.gitrepo import GitRepo

    body = "".join(f"    line{i} = {i}\n" for i in range(12))
    repo = GitRepo.init(tmp_path / "g")
    base = f"def report(x):\n{body}    return x\n\n\ndef other(x):\n{body}    return x\n"
    repo.commit("base", {"r.py": base})
    repo.git("checkout", "-q", "-b", "feature")
    changed = base.replace("    line1 = 1\n", "    line1 = 100\n", 1).replace("    line6 = 6\n", "    line6 = 600\n", 1)
    changed = changed[:changed.index("def other")] + changed[changed.index("def other"):].replace(
        "    line5 = 5\n", "    line5 = 500\n", 1)
    repo.commit("wip", {"r.py": changed})
    r = pygit2.Repository(str(repo.path))
    spec = parse('source = "feature"\nremote = "main"\ncleaned = "c"\n\n[[commit]]\nmessage = "One"\n\n'
                 '[[commit]]\nmessage = "Two"\n')
    base_id, tip = ends(r, spec)
    ev = evidence.gather(r, spec, base_id, tip)
    assert len(ev.hunks) == 3 and len(ev.ranked) == 3
    asker = question.Asker(llm.get_model("owners-last"), spec)
    answers = question.ask_all(asker, ev)
    asked = [e["prompt"] for e in _log(owners_models)]
    firsts = [a for a in asked if "Part 1/2" in a]
    assert firsts and all("line1 = 100" in a and "line6 = 600" in a and "line5 = 500" not in a for a in firsts)
    assert any("Part 2/2" in a and "line5 = 500" in a for a in asked)
    first, second, third = ev.hunks
    assert answers[first.id] == answers[second.id]
    assert asker.tally.questions == 2


def test_two_answers_and_no_evidence_between_them_take_the_evidences_order(tmp_path, owners_models):
    """Where the evidence scores the choices alike and the model answers two ways (the list's
    order led both), the evidence's order decides, not the first answer."""
    spec, ev = _setup(tmp_path)
    h = ev.hunks[0]
    asker = question.Asker(llm.get_model("owners-recent"), spec)
    got = asker.answer(h, [(0, 1.0), (2, 1.0)], None)
    assert got.replies == (2, 0) and (got.k, got.who) == (0, "model, uncertain")
    got = asker.answer(h, [(2, 1.0), (0, 1.0)], None)
    assert (got.k, got.who) == (2, "model, uncertain")
