"""Tool answers an imperfect model recovers from (issue 11, part 2): each failure of the
issue as a run with the scripted model, asserting what the model read back and the tree
that was committed."""
from __future__ import annotations

import json

import pytest

from testing import flaky_model
from testing.flow import call, retcon, turn
from testing.gitrepo import GitRepo

CI = "name: ci\non: push\n"
UTIL = "def one():\n    return 1\n\n\ndef two():\n    return 2\n"


@pytest.fixture
def listen(tmp_path, monkeypatch, scripted):
    """The scripted model that also logs every user message (prompts and steering)."""
    flaky_model.register()
    users = tmp_path / "users.jsonl"
    monkeypatch.setenv("RETCON_USER_LOG", str(users))

    def install(script):
        return scripted(script), users

    yield install
    flaky_model.unregister()


# The hunks of the step under test: LATER.md's is left to the last commit (plain code takes it).
MINE = "$ids:.github/|util.py"


def small(tmp_path) -> GitRepo:
    """Commit 1 (the step under test): a CI file under .github/ and a changed util.py, as
    feature~1 holds them; the last commit, taken by plain code, adds LATER.md."""
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("base", {"util.py": "def one():\n    return 1\n", "README": "r\n"})
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("mess", {".github/workflows/ci.yml": CI, "util.py": UTIL})
    repo.commit("later", {"LATER.md": "later\n"})
    repo.git("checkout", "-q", "main")
    (tmp_path / "spec.toml").write_text('source = "feature"\nremote = "main"\ncleaned = "clean"\n'
                                        'owners = "conversation"\n\n'
                                        '[[commit]]\nmessage = "util: two() and CI"\n\n'
                                        '[[commit]]\nmessage = "the rest"\n')
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit").code == 0
    return repo


def results(log, key="1/extract/1"):
    """The tool results the model had read by its last turn of that step."""
    return [json.loads(ln) for ln in log.read_text().splitlines() if json.loads(ln)["keys"] == [key]][-1]["results"]


def users(path):
    return [json.loads(ln) for ln in path.read_text().splitlines()]


def test_a_leading_dot_is_part_of_the_name_and_dot_slash_paths_work(tmp_path, scripted):
    repo = small(tmp_path)
    log = scripted({"1/extract": [
        turn(call("read_diff", path=".github/")),
        turn(call("read_diff", path="./util.py")),
        turn(call("read_file", path="./README")),
        turn(call("apply_hunks", hunk_ids=MINE)),
        turn(call("create_commit", message="x")),
    ]})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    out = results(log)
    assert "hunk " in out[0] and ".github/workflows/ci.yml" in out[0] and "util.py" not in out[0]
    assert "util.py" in out[1] and ".github" not in out[1]
    assert out[2] == "r\n"
    assert repo.tree("clean~1") == repo.tree("feature~1")


def test_absolute_paths_are_refused_with_the_name_to_use(tmp_path, scripted):
    import pygit2

    from git_retcon.sandbox.worktree import Worktree

    repo = small(tmp_path)
    inside = Worktree.location(pygit2.Repository(str(repo.path)), "clean") / "README"
    log = scripted({"1/extract": [
        turn(call("read_file", path=str(inside))),
        turn(call("read_file", path="/workspace/project/util.py")),
        turn(call("stuck", summary="paths")),
    ]})
    assert retcon(repo, "run", "-m", "scripted").code == 3
    out = results(log)
    assert "absolute paths are refused: call it 'README'" in out[0]
    assert "absolute paths are refused" in out[1] and "did you mean 'util.py'?" in out[1]


def test_wrong_types_name_the_parameter_and_lists_may_be_strings(tmp_path, scripted):
    repo = small(tmp_path)
    log = scripted({"1/extract": [
        turn(call("read_diff", page="1")),
        turn(call("create_commit", message={"subject": "x", "body": "y"})),
        turn(call("apply_hunks", hunk_ids="$ids_json:.github/")),
        turn(call("apply_hunks", hunk_ids=42)),
        turn(call("apply_hunks", hunk_ids="$ids_csv:util.py")),
        turn(call("write_file", file_path="notes.txt", content="n\n")),
        turn({"name": "write_file", "arguments": {"filename": "a", "text": "b"}}),
        turn(call("delete_file", path="notes.txt")),
        turn(call("create_commit", message="x")),
    ]})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    out = results(log)
    assert "Remaining diff:" in out[0]
    assert out[1].startswith("Error: create_commit: message must be a string (the commit message), "
                             "not an object"), out[1]
    assert "Applied 1 hunks" in out[2]
    assert "hunk_ids must be an array of strings" in out[3] and "not an integer" in out[3]
    assert "Applied 1 hunks" in out[4]
    assert out[5].startswith("(read 'file_path' as 'path') Wrote notes.txt")
    assert "write_file has no parameter 'filename', 'text': call write_file(path: string, content: string)" in out[6]
    assert repo.tree("clean~1") == repo.tree("feature~1")


def test_a_tool_name_slightly_off_is_answered_with_the_tool_it_means(tmp_path, scripted):
    """Mid-size models prefix a namespace, change the case, drop a plural or mistype: the
    answer names the real tool, and the model that calls it then finishes the step."""
    repo = small(tmp_path)
    log = scripted({"1/extract": [
        turn(call("functions.read_diff")),
        turn(call("ApplyHunks", hunk_ids=MINE)),
        turn(call("apply_hunk", hunk_ids=MINE)),
        turn(call("git_commit", message="x")),
        turn(call("apply_hunks", hunk_ids=MINE)),
        turn(call("create_commit")),
    ]})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    out = results(log)
    assert 'there is no tool "functions.read_diff": did you mean read_diff? Call it by that exact name' in out[0]
    assert "did you mean apply_hunks?" in out[1] and "did you mean apply_hunks?" in out[2]
    assert 'there is no tool "git_commit"; the tools are read_diff, ' in out[3]
    assert repo.tree("clean~1") == repo.tree("feature~1")


def test_steering_after_failures_names_the_remedy_for_that_kind_of_error(tmp_path, scripted):
    repo = small(tmp_path)
    log = scripted({"1/extract": [
        turn(call("create_commit", message=["x"])),
        turn(call("create_commit", message=42)),
        turn(call("stuck", summary="types")),
    ]})
    assert retcon(repo, "run", "-m", "scripted").code == 3
    out = results(log)
    assert "Steering: 2 calls in a row failed" in out[1]
    assert "messages and contents are strings" in out[1]


def test_every_text_only_turn_is_steered_and_the_model_recovers(tmp_path, listen):
    repo = small(tmp_path)
    log, user_log = listen({"1/extract": [
        turn(text="I will look at the diff."),
        turn(text="The change is in util.py and the CI file."),
        turn(text="Let me think about it some more."),
        turn(call("apply_hunks", hunk_ids=MINE)),
        turn(call("create_commit", message="x")),
    ]})
    res = retcon(repo, "run", "-m", "scripted-listen")
    assert res.code == 0, res.text
    steer = sorted({u for u in users(user_log) if u.startswith("Commit 1/2") and "ended your turn" in u})
    assert len(steer) == 3
    last = next(u for u in steer if "(9 more turns or failed calls end this step as stuck.)" in u)
    assert "2 of your tool calls and turns in this step failed" in last
    assert "End every turn with a tool call" in last
    assert repo.tree("clean~1") == repo.tree("feature~1")


def test_a_tool_call_written_as_json_in_text_is_executed_and_the_model_told_so(tmp_path, listen):
    """A tool-calling model that writes its call as text (fenced JSON, <tool_call>) has it run, and
    reads what it did; broken JSON is answered with what is wrong, and nothing runs."""
    repo = small(tmp_path)
    log, user_log = listen({"1/extract": [
        turn(call("read_diff")),
        turn(text='I will apply them now:\n```json\n{"name": "apply_hunks", "arguments": {"hunk_ids": [}}\n```'),
        {"written": [call("apply_hunks", hunk_ids=MINE)], "text": "I will apply them now:"},
        {"written": [call("create_commit", message="x")], "form": "tool_call"},
    ]})
    res = retcon(repo, "run", "-m", "scripted-listen")
    assert res.code == 0, res.text
    said = users(user_log)
    assert any(u.startswith("Not executed: your reply wrote a call to apply_hunks as text, but the call to "
                            "apply_hunks is not valid JSON") for u in said)
    ran = [u for u in said if u.startswith("Executed: your reply wrote apply_hunks(")]
    assert len(ran) == 1 and "Result:\nApplied 2 hunks to 2 files" in ran[0]
    assert repo.tree("clean~1") == repo.tree("feature~1")
    assert repo.git("log", "-1", "--format=%s", "clean~1").strip() == "util: two() and CI"


def test_calls_written_after_one_that_cannot_be_read_are_not_run(tmp_path, listen):
    """The 1.5B model wrote a script: read_diff(), apply_hunks(ids) (a name it never assigned),
    create_commit(). The create_commit ran, without the apply it was written after."""
    repo = small(tmp_path)
    log, user_log = listen({"1/extract": [
        turn(text="```python\ndiff = read_diff()\napply_hunks(ids)\ncreate_commit(message=\"x\")\n```"),
        turn(call("apply_hunks", hunk_ids=MINE)), turn(call("create_commit", message="x")),
    ]})
    res = retcon(repo, "run", "-m", "scripted-listen")
    assert res.code == 0, res.text
    answer = next(u for u in users(user_log) if u.startswith("Executed: your reply wrote read_diff({})"))
    assert "Not executed: your reply wrote a call to apply_hunks as text, but the arguments of apply_hunks(...) " \
           "are not literal values" in answer
    assert answer.endswith("Not run: create_commit (the call before could not be read). Send it again if still "
                           "needed.")
    assert repo.tree("clean~1") == repo.tree("feature~1")


def test_write_file_warns_when_only_line_endings_or_the_final_newline_differ(tmp_path, scripted):
    repo = small(tmp_path)
    log = scripted({"1/extract": [
        turn(call("apply_hunks", hunk_ids="$ids:.github/")),
        turn(call("write_file", path="util.py", content=UTIL.replace("\n", "\r\n"))),
        turn(call("write_file", path="util.py", content=UTIL.rstrip("\n"))),
        turn(call("write_file", path="util.py", content=UTIL)),
        turn(call("create_commit", message="x")),
    ]})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    out = results(log)
    assert "Warning: util.py now differs from the source branch's version only in line endings: " \
           "you wrote CRLF" in out[1]
    assert "only in the final newline: the source ends with a newline and yours does not" in out[2]
    assert out[3] == f"Wrote util.py ({len(UTIL)} characters)."
    assert repo.tree("clean~1") == repo.tree("feature~1")


def test_reading_a_file_the_source_adds_says_apply_hunks_makes_it(tmp_path, scripted):
    """A model that reads (or edits) a file the source adds before applying it is told that
    apply_hunks makes it, rather than left to write it out whole; a file nobody adds is
    answered as before."""
    repo = small(tmp_path)
    ci = ".github/workflows/ci.yml"
    log = scripted({"1/extract": [
        turn(call("read_file", path=ci)),
        turn(call("edit_file", path=ci, old="on: push\n", new="on: pull_request\n")),
        turn(call("read_file", path="nope.py")),
        turn(call("apply_hunks", hunk_ids=[ci, "util.py"])),
        turn(call("read_file", path=ci)),
        turn(call("create_commit", message="")),
    ]})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    out = results(log)
    for answer in out[:2]:
        assert answer.startswith(f"Error: {ci}: no such file in the worktree: the source adds it, and this step "
                                 f"has not applied it yet: apply_hunks(['{ci}']) makes it, exactly (hunk "), answer
    assert out[2].startswith("Error: nope.py: no such file in the worktree\n") and "adds" not in out[2], out[2]
    assert out[4] == CI, out[4]
    assert repo.tree("clean~1") == repo.tree("feature~1")
