"""git-retcon's own failures (a lost compare-and-swap, a ref git cannot write) are not the
model's mistakes: the step stops at once with the real error, one line, exit 1."""
from __future__ import annotations

import json

import pygit2
import pytest

from git_retcon.git.plumbing import ConcurrentUpdate
from git_retcon.state.store import NOTES_REF, Store
from testing.flow import SPEC, call, feature_repo, retcon, spec_with, turn


def planned(tmp_path, build: str = "", **fields: object):
    repo = feature_repo(tmp_path / "repo")
    spec = SPEC.replace('build = "python3 -m py_compile app.py util.py"\n', f"build = {json.dumps(build)}\n"
                        if build else "")
    spec = spec_with(spec, **fields) if fields else spec
    (tmp_path / "s.toml").write_text(spec)
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "s.toml"), "--no-edit").code == 0
    return repo


def model_turns(log) -> int:
    return len(log.read_text().splitlines())


def one_line(res) -> str:
    assert "Traceback" not in res.text
    lines = [ln for ln in res.err.splitlines() if ln.strip()]
    assert len(lines) == 1, res.err
    return lines[0]


def test_a_lost_compare_and_swap_in_create_commit_stops_the_run_not_the_model(tmp_path, scripted):
    # The build moves the cleaned branch behind git-retcon's back (as another process could)
    # once the model has written the trigger file.
    # The build stands for another process: unconfined, as the sandbox refuses it the repository.
    repo = planned(tmp_path, "test ! -f trigger || git update-ref refs/heads/feature-clean feature", sandbox="off")
    log = scripted({"1/extract": [
        turn(call("write_file", path="trigger", content="go\n"), call("run_build")),
        turn(call("create_commit", message="util: add two()")),
    ] + [turn(call("create_commit", message="again"))] * 20})

    res = retcon(repo, "run", "-m", "scripted")

    assert res.code == 1, res.text
    line = one_line(res)
    assert line.startswith("error: refs/heads/feature-clean moved while git-retcon was writing it"), line
    assert "stuck" not in res.text
    assert model_turns(log) == 2                 # no retries by the model after the failure
    assert repo.rev("feature-clean") == repo.rev("feature")   # what the other writer put there stays
    assert "stuck" not in retcon(repo, "spec", "show").out      # nothing recorded as the model's failure


def test_a_ref_git_cannot_write_fails_at_once_naming_the_ref_and_why(tmp_path, scripted):
    repo = planned(tmp_path)
    # A ref under refs/notes/retcon/ means refs/notes/retcon itself cannot exist (a file
    # cannot also be a directory): retrying cannot help.
    repo.git("update-ref", "refs/notes/retcon/other", "main")
    log = scripted({"1/extract": [
        turn(call("read_diff")),
        turn(call("apply_hunks", hunk_ids="$ids:util.py")),
        turn(call("create_commit", message="util: add two()")),
    ] + [turn(call("create_commit", message="again"))] * 20})

    res = retcon(repo, "run", "-m", "scripted")

    assert res.code == 1, res.text
    line = one_line(res)
    assert "refs/notes/retcon" in line and "refs/notes/retcon/other" in line, line
    assert "keeps changing" not in line and "run the command again" not in line
    assert model_turns(log) == 3


def test_a_ref_locked_by_another_git_is_retried_then_named_with_its_lock_file(tmp_path):
    repo = feature_repo(tmp_path / "repo")
    sha = repo.rev("main")
    store = Store(pygit2.Repository(str(repo.path)))
    store.write_note(NOTES_REF, sha, {"v": 1})
    lock = repo.path / ".git" / "refs" / "notes" / "retcon.lock"
    lock.write_text("")   # as a git command writing the notes ref holds it
    with pytest.raises(ConcurrentUpdate) as err:
        store.write_note(NOTES_REF, sha, {"v": 2})
    assert "refs/notes/retcon is locked by another git process" in str(err.value)
    assert str(lock) in str(err.value)
    lock.unlink()
    store.write_note(NOTES_REF, sha, {"v": 2})      # the lock gone, the same write goes through
    assert store.read_note(NOTES_REF, sha) == {"v": 2}
