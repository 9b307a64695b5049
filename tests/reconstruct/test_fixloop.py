"""The fix loop end to end: the rework brief, escalation, steering, backoff, the token budget.

Real repositories, real build and test commands, the scripted model (and its flaky
and broken-backend variants in testing/flaky_model.py) making real tool calls.
"""
from __future__ import annotations

import json
import re
import sys

import pytest

from testing import flaky_model
from testing.fixcase import BRIEF_IDS, SPEC, make
from testing.flow import call, retcon, spec_with, take, turn


def entries(log):
    return [json.loads(line) for line in log.read_text().splitlines()]


def note(repo, rev):
    return json.loads(repo.git("notes", "--ref=refs/notes/retcon", "show", rev))


def status(repo):
    return json.loads(retcon(repo, "status", "--json").out)


def fix_round(out):
    """The lines of a run's output from its first fix attempt to the commit it made, the
    commands' timings and the commit's id left out (a command under 0.1 s prints no time: the
    timing says how fast the machine is, not what the run did)."""
    out = re.sub(r" \(\d+\.\ds\)", "", re.sub(r"Creating commit\.\.\. [0-9a-f]{9}", "Creating commit... SHA", out))
    lines = out.splitlines()
    return lines[lines.index("Fix attempt 1:"):lines.index("✓ Commit created (1 WIP)") + 1]


# -- the brief --------------------------------------------------------------------------


def test_the_brief_names_the_missing_helper_and_one_wip_commit_fixes_it(tmp_path, scripted):
    repo = make(tmp_path)
    # No fix turns: the brief's candidate passes on its own, and plain code commits it.
    log = scripted({"1/extract": take("app.py")})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    assert "Blame: 1 candidate hunk in the remaining diff (util.py)" in res.out
    assert repo.log("main..feature-clean") == ["docs: explain main", "WIP: take the definition of `two` from util.py",
                                               "app: use two()"]
    assert [e["keys"] for e in entries(log)] == [["1/extract/1"]] * 3     # the model made no fix
    # The brief is the WIP commit's diagnosis (ids whole), with the blame in machine-readable form.
    wip = note(repo, "feature-clean~1")
    assert wip["kind"] == "wip" and wip["test"] == "pass" and wip["model_calls"] == 0
    brief = wip["diagnosis"]
    assert "AttributeError: module 'util' has no attribute 'two'" in brief
    assert "Missing: `two`" in brief and "app.py:5: in this commit's change" in brief
    assert "Take what is missing from the remaining diff first" in brief
    (whole,) = wip["rework"]["candidates"]
    assert len(whole) == 10 and f"  {whole} util.py modify +4 -0: defines `two` (def two():)" in brief
    assert wip["rework"]["names"] == ["two"] and wip["rework"]["blamed"] == ["app.py"]


def test_candidates_that_pass_are_committed_by_plain_code_with_no_model(tmp_path, scripted):
    """The brief's candidates, applied and tried by plain code, pass: nothing is left to judge, so
    plain code commits them, named for what they take, and the model is not asked (the script has
    no fix turns: a model asked would say so in the log)."""
    repo = make(tmp_path, docs=0)
    log = scripted({"1/extract": take("app.py")})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    assert fix_round(res.out) == [
        "Fix attempt 1:",
        "Blame: 1 candidate hunk in the remaining diff (util.py)",
        "Trying the candidate hunks...",
        "Building... PASS",
        "Tests... PASS",
        "Computing diff (3 lines)...",
        "The candidate hunks pass: committing them as the fix (no model needed)...",
        "Creating WIP commit... WIP: take the definition of `two` from util.py",
        "Creating commit... SHA",
        "Building... PASS (cached)",
        "Tests... PASS (cached)",
        "✓ Commit created (1 WIP)",
    ]
    assert "Consulting diff for missing pieces" not in res.out
    assert [e["keys"] for e in entries(log)] == [["1/extract/1"]] * 3
    assert repo.git("log", "-1", "--format=%B", "feature-clean~1") == "WIP: take the definition of `two` from util.py"
    assert repo.git("diff", "--name-only", "feature-clean~2", "feature-clean~1") == "util.py"
    wip = note(repo, "feature-clean~1")
    assert (wip["kind"], wip["build"], wip["test"]) == ("wip", "pass", "pass")
    assert wip["model_calls"] == 0 and wip["tokens"] == {"input": 0, "output": 0}
    assert repo.tree("feature-clean") == repo.tree("feature")


def test_the_model_is_asked_when_the_candidates_do_not_pass(tmp_path, scripted):
    """util.py's helper, the brief's candidate, needs extra.py too: applied and tried, it still
    fails, so the model is asked, with the brief (its ids as read_diff shows them), and told so."""
    repo = make(tmp_path, docs=0, extra=True)
    log = scripted({"1/extract": take("app.py"),
                    "1/fix/1": [turn(call("apply_hunks", hunk_ids="$ids:extra.py")),
                                turn(call("create_commit", message="take extra.py too"))]})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    assert fix_round(res.out) == [
        "Fix attempt 1:",
        "Blame: 1 candidate hunk in the remaining diff (util.py)",
        "Trying the candidate hunks...",
        "Building... PASS",
        "Tests... FAIL (ModuleNotFoundError: No module named 'extra')",
        "Computing diff (4 lines)...",
        "Consulting diff for missing pieces...",
        "Creating WIP commit... WIP: take extra.py too",
        "Creating commit... SHA",
        "Building... PASS",
        "Tests... PASS",
        "✓ Commit created (1 WIP)",
    ]
    assert repo.log("main..feature-clean") == ["docs: explain main", "WIP: take extra.py too", "app: use two()"]
    fix = [e for e in entries(log) if e["keys"] == ["1/fix/1"]]
    assert len(fix) == 2
    prompt = fix[0]["prompt"]
    assert "With them applied, it still fails (test: FAIL" in prompt
    brief = prompt.split("<brief>")[1].split("</brief>")[0]
    (shown,) = re.findall(r"^  ([0-9a-f]{4,10}) util\.py modify \+6 -0: defines `two` \(def two\(\):\)$", brief, re.M)
    assert 4 <= len(shown) < 10, shown   # the candidate's id as read_diff shows it, not whole
    assert fix[1]["results"] == ["Applied 1 hunks to 1 files: extra.py. 2 hunks remain."]
    # The brief is the WIP commit's diagnosis, its ids whole there.
    wip = note(repo, "feature-clean~1")
    assert wip["kind"] == "wip" and wip["test"] == "pass" and wip["model_calls"] == 2
    (whole,) = wip["rework"]["candidates"]
    assert len(whole) == 10 and whole.startswith(shown)
    assert wip["diagnosis"].replace(whole, shown) == brief.strip("\n") and whole not in brief
    assert repo.tree("feature-clean") == repo.tree("feature")


def test_the_fix_prompt_carries_the_brief_not_the_remaining_diff(tmp_path, scripted):
    """A model that follows the brief needs no read_diff: the prompt names the hunk that
    fixes the failure (applied for it already), and it is a fraction of the remaining diff it
    stands for. (extra: the candidate alone does not pass, so the model is asked.)"""
    repo = make(tmp_path, docs=30, doc_size=60, extra=True)
    log = scripted({"1/extract": take("app.py"), "1/fix/1": [
        turn(call("read_diff", page=1), call("read_diff", page=2)),
        turn(call("apply_hunks", hunk_ids=BRIEF_IDS)), turn(call("apply_hunks", hunk_ids="$ids:extra.py")),
        turn(call("create_commit", message="take two()"))]})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    fix = [e for e in entries(log) if e["keys"] == ["1/fix/1"]]
    prompt, (page1, page2, applied, extra) = fix[0]["prompt"], fix[-1]["results"]
    assert "page 1 of 2" in page1 and "page 2 of 2" in page2
    (candidate,) = re.findall(r"^  ([0-9a-f]{4,10}) util\.py modify .*: defines `two`", prompt, re.M)
    # The brief names it as the prompt lists it applied (abbreviated), so the model can match the two;
    # the remaining diff has it no more.
    (listed,) = re.findall(r"^  ([0-9a-f]{4,10}) util\.py modify \+6 -0$", prompt.split("Applied for you")[1], re.M)
    assert candidate == listed and "util.py" not in page1 + page2 and "extra.py" in page1 + page2
    assert applied.startswith(f"Nothing to apply: {candidate} (util.py) is in the worktree already")
    assert extra.startswith("Applied 1 hunks to 1 files: extra.py.")
    assert len(prompt) * 5 < len(page1) + len(page2), (len(prompt), len(page1) + len(page2))
    assert note(repo, "feature-clean~1")["test"] == "pass"


# -- escalation: each rule stops the loop whatever the model says ----------------------------

# Fixes that put back the candidate applied for them and take a docs page, which the docs commit's
# paths claim: named back by create_commit's guards, and confirmed.
UNRELATED = {f"1/fix/{a}": [turn(call("apply_hunks", hunk_ids="$back:util.py")),
                            turn(call("apply_hunks", hunk_ids=f"$ids:docs/page0{a - 1}")),
                            turn(call("create_commit", message=f"attempt {a}")),
                            turn(call("create_commit", message=f"attempt {a}",
                                      confirm="this test needs progress on the diff"))] for a in range(1, 6)}


def test_same_location_after_three_attempts_escalates(tmp_path, scripted):
    repo = make(tmp_path, extra=True)    # the candidate alone fails (on extra.py): the model is asked
    # Each attempt puts back the candidate applied for it and takes an unrelated hunk (progress on
    # the diff), so only persistence can stop it.
    fixes = UNRELATED
    log = scripted({"1/extract": take("app.py"), **fixes})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 3, res.text
    assert "escalated (persistent trouble spot): app.py:5 still fails after 3 rework attempts" in res.err
    assert "AttributeError: module 'util' has no attribute 'two'" in res.err    # the evidence
    assert [e["keys"][0] for e in entries(log) if "/fix/" in e["keys"][0] and e["turn"] == 0] == \
        ["1/fix/1", "1/fix/2", "1/fix/3"]
    doc = status(repo)
    assert doc["commits"][0]["state"] == "stuck" and doc["commits"][0]["wip"] == 3
    # The brief counted the attempts at that location.
    third = next(e for e in entries(log) if e["keys"] == ["1/fix/3"])
    assert "This is rework attempt 3 at app.py:5." in third["prompt"]


def test_no_progress_when_the_fix_takes_nothing_and_the_failure_repeats(tmp_path, scripted):
    repo = make(tmp_path, extra=True)    # the candidate alone fails (on extra.py): the model is asked
    log = scripted({
        "1/extract": take("app.py"),
        "1/fix/1": [turn(call("apply_hunks", hunk_ids="$back:util.py")),   # the candidate applied for it
                    turn(call("write_file", path="NOTES.txt", content="I think two() is missing\n")),
                    turn(call("create_commit", message="a note"))],
        "1/fix/2": [turn(call("apply_hunks", hunk_ids=BRIEF_IDS)), turn(call("create_commit", message="x"))],
    })
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 3, res.text
    assert "escalated (no progress): the last fix took nothing from the remaining diff" in res.err
    assert not [e for e in entries(log) if e["keys"] == ["1/fix/2"]]     # the model was not asked again
    assert status(repo)["commits"][0]["wip"] == 1


def test_no_location_twice_is_an_environment_problem(tmp_path, scripted):
    # Passes on the base (which has no two()), so the run gets as far as the fix loop.
    spec = SPEC.replace("test = \"python3 -c 'import app; app.main()'\"",
                        "test = \"sh -c 'grep -q two app.py || exit 0; echo could not resolve host: pypi.org >&2; "
                        "exit 1'\"")
    # With the network on: without it, the sandbox would be the cause, and the run stops at once saying so.
    spec = spec_with(spec, network=True)
    repo = make(tmp_path, spec)
    scripted({"1/extract": take("app.py"),
              "1/fix/1": [turn(call("apply_hunks", hunk_ids="$ids:util.py")),
                          turn(call("create_commit", message="x"))]})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 3, res.text
    assert "escalated (no location): twice in a row the failure named no file and line" in res.err
    assert "could not resolve host" in res.err


PYTEST_SPEC = f"""\
source = "feature"
remote = "main"
cleaned = "feature-clean"
test = "{sys.executable} -m pytest -q -p no:cacheprovider tests"

[[commit]]
message = "text: slugify"
paths = ["tests/test_slug.py"]

[[commit]]
message = "the rest"
paths = ["*"]
"""


def test_a_fix_that_breaks_passing_tests_is_a_regression_cascade(tmp_path, scripted, repo):
    repo.commit("base", {"text.py": "def shout(s):\n    return s.upper()\n",
                         "tests/test_shout.py": "from text import shout\n\n\ndef test_shout():\n"
                                                "    assert shout('a') == 'A'\n"})
    repo.git("checkout", "-q", "-b", "feature")
    # slug() needs lower.py too: its hunk, the brief's candidate, fails alone, so the model is asked.
    repo.commit("slug", {"text.py": "def shout(s):\n    return s.upper()\n\n\ndef slug(s):\n"
                                    "    from lower import lower\n\n    return lower(s)\n",
                         "lower.py": "def lower(s):\n    return s.lower()\n",
                         "tests/test_slug.py": "import text\n\n\ndef test_slug():\n"
                                               "    assert text.slug('A') == 'a'\n"})
    repo.git("checkout", "-q", "main")
    (tmp_path / "s.toml").write_text(PYTEST_SPEC)
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "s.toml"), "--no-edit").code == 0
    scripted({
        "1/extract": take("tests/"),
        # The model writes its own text.py: slug() now works, shout() no longer does.
        "1/fix/1": [turn(call("write_file", path="text.py", content="def shout(s):\n    return s\n\n\n"
                                                                    "def slug(s):\n    return s.lower()\n")),
                    turn(call("create_commit", message="slug"))],
    })
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 3, res.text
    assert "escalated (regression cascade): the last fix made previously passing tests fail: " \
           "tests/test_shout.py::test_shout" in res.err, res.text
    assert "Before it, only these failed: tests/test_slug.py::test_slug" in res.err


def test_a_run_that_dies_in_the_fix_loop_resumes_with_its_attempts_counted(tmp_path, flaky, monkeypatch):
    repo = make(tmp_path, extra=True)    # the candidate alone fails (on extra.py): the model is asked
    log = flaky({"1/extract": take("app.py"), **UNRELATED})
    # Calls 1-3 extract, 4-7 make the first fix; the backend refuses call 8 (a 400 is not retried).
    monkeypatch.setenv("RETCON_FLAKY_FAIL", "8")
    monkeypatch.setenv("RETCON_FLAKY_STATUS", "400")
    res = retcon(repo, "run", "-m", "scripted-flaky")
    assert res.code == 1 and "failed: APIStatusError: Error code: 400" in res.err, res.text
    assert (tmp_path / "flaky-count").read_text() == "8"
    assert status(repo)["commits"][0]["wip"] == 1 and status(repo)["commits"][0]["state"] == "in-progress"
    log.write_text("")
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 3 and "persistent trouble spot" in res.err, res.text
    # The attempt made before the crash counts: two more, numbered on from it.
    assert [e["keys"][0] for e in entries(log) if "/fix/" in e["keys"][0] and e["turn"] == 0] == \
        ["1/fix/2", "1/fix/3"]


# -- steering -----------------------------------------------------------------------------


def test_bad_tool_calls_get_a_diagnosis_and_the_model_recovers(tmp_path, flaky, monkeypatch):
    repo = make(tmp_path, docs=0)
    users = tmp_path / "users.jsonl"
    monkeypatch.setenv("RETCON_USER_LOG", str(users))
    log = flaky({
        "1/extract": [
            turn(call("apply_hunks", hunk_ids=["README:1-2"])),       # lines of a path, not of a hunk
            turn(call("apply_hunks", hunk_ids=["0123456789"])),       # made up
            turn(call("write_file", path="../outside.py", content="x")),
            turn(text="Done, I think."),                               # neither commit nor stuck
            turn(call("read_diff")),
            turn(call("apply_hunks", hunk_ids="$ids:app.py")),
            turn(call("create_commit", message="app")),
        ],
        "1/fix/1": [turn(call("apply_hunks", hunk_ids=BRIEF_IDS)), turn(call("create_commit", message="x"))],
        "2/extract": take(""),
    })
    res = retcon(repo, "run", "-m", "scripted-listen")
    assert res.code == 0, res.text
    results = [e for e in entries(log) if e["keys"] == ["1/extract/1"]][-1]["results"]
    assert "README:1-2: a path takes its hunks whole; to take some lines, name a hunk id" in results[0]
    assert "Steering: 2 calls in a row failed; 10 more failures end this step as stuck" in results[1]
    assert "'..' is refused" in results[2] and "Steering: 3 calls in a row failed" in results[2]
    # The one steering message after the empty turn carries the diagnosis of the failed calls.
    steer = [json.loads(line) for line in users.read_text().splitlines()
             if "You ended your turn without calling create_commit" in line]
    assert steer and "3 of your tool calls and turns in this step failed (at most 12 may); the last ones:" in steer[0]
    assert "write_file: Error: ../outside.py: '..' is refused" in steer[0]
    assert repo.log("main..feature-clean")[-1] == "app: use two()"


# -- transient model errors ------------------------------------------------------------------


@pytest.fixture
def flaky(tmp_path, monkeypatch, scripted):
    flaky_model.register()
    monkeypatch.setenv("RETCON_FLAKY_COUNT", str(tmp_path / "flaky-count"))
    monkeypatch.setenv("RETCON_RETRY_DELAY", "0.001")
    yield scripted
    flaky_model.unregister()


def test_rate_limited_twice_then_the_backend_answers(tmp_path, flaky, monkeypatch):
    repo = make(tmp_path, docs=0)
    # Calls 2 and 3 fail: the first mid-step, after read_diff ran, the second at the retry's start.
    monkeypatch.setenv("RETCON_FLAKY_FAIL", "2,3")
    log = flaky({"1/extract": take("app.py"),
                 "1/fix/1": [turn(call("apply_hunks", hunk_ids=BRIEF_IDS)), turn(call("create_commit", message="x"))],
                 "2/extract": take("")})
    res = retcon(repo, "run", "-m", "scripted-flaky")
    assert res.code == 0, res.text
    assert res.out.count("Model error (RateLimitError: Error code: 429") == 2
    assert "retrying in" in res.out and "Traceback" not in res.text
    assert repo.tree("feature-clean") == repo.tree("feature")
    # The step started over: the scripted model played its first turn three times.
    assert [e["turn"] for e in entries(log) if e["keys"] == ["1/extract/1"]][:2] == [0, 0]
    assert note(repo, "feature-clean~2")["model_retries"] == 2


def test_a_backend_that_stays_down_stops_as_stuck_with_the_state_saved(tmp_path, flaky, monkeypatch):
    repo = make(tmp_path, docs=0, extra=True)    # the candidate alone fails: the fix needs the model
    flaky({"1/extract": take("app.py")})
    # Commit 1 is made by a working model; then the backend goes down.
    assert retcon(repo, "run", "-m", "scripted", "--max-fix", "0").code == 3
    assert retcon(repo, "resolve", "-m", "try again").code == 0
    before = repo.rev("feature-clean")
    res = retcon(repo, "run", "-m", "scripted-down")
    assert res.code == 3, res.text
    assert "kept failing (6 tries with backoff); last error: APIStatusError: Error code: 503" in res.err
    assert "Traceback" not in res.text
    assert (tmp_path / "flaky-count").read_text() == "6"
    assert repo.rev("feature-clean") == before            # nothing lost, nothing half-made
    doc = status(repo)
    assert doc["commits"][0]["state"] == "stuck"
    assert "kept failing" in retcon(repo, "status").out


def test_an_error_that_is_not_transient_is_not_retried(tmp_path, flaky, monkeypatch):
    from git_retcon.model.retry import transient

    class BadRequestError(Exception):
        status_code = 400

    class APIConnectionError(Exception):
        pass

    assert not transient(BadRequestError("invalid request"))
    assert transient(APIConnectionError("Connection error."))
    assert transient(ConnectionResetError(104, "Connection reset by peer"))
    wrapped = RuntimeError("request failed")
    wrapped.__cause__ = TimeoutError("timed out")
    assert transient(wrapped)


# -- the token budget -----------------------------------------------------------------------------


def test_max_tokens_stops_cleanly_and_the_run_resumes(tmp_path, scripted):
    repo = make(tmp_path, docs=0)
    scripted({"1/extract": take("app.py"),
              "1/fix/1": [turn(call("apply_hunks", hunk_ids=BRIEF_IDS)), turn(call("create_commit", message="x"))],
              "2/extract": take("")})
    res = retcon(repo, "run", "-m", "scripted", "--max-tokens", "1500")
    assert res.code == 3, res.text
    assert "token budget reached:" in res.err and "(--max-tokens 1500)" in res.err
    assert "Nothing is stuck" in res.err and "Tokens this run:" in res.out
    doc = status(repo)
    assert doc["state"] != "stuck" and all(c["state"] != "stuck" for c in doc["commits"])
    assert doc["runs"][-1]["stop"] == "budget" and doc["runs"][-1]["tokens"]["input"] >= 1000
    spent_first = sum(c["tokens"]["input"] + c["tokens"]["output"] for c in doc["commits"])
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    assert "Tokens this run:" in res.out and "  commit 1:" in res.out
    doc = status(repo)
    assert doc["state"] == "complete" and [r["stop"] for r in doc["runs"]] == ["budget", "complete"]
    total = sum(c["tokens"]["input"] + c["tokens"]["output"] for c in doc["commits"])
    runs = sum(r["tokens"]["input"] + r["tokens"]["output"] for r in doc["runs"])
    assert total == runs > spent_first          # every token spent is counted once, per commit and per run
    text = retcon(repo, "status").out
    assert "in 2 runs; last run:" in text
