"""Commit messages git can keep: a NUL is refused (spec save: with the line; the model:
a tool error it can recover from), and a blank message never makes an empty one."""
from __future__ import annotations

import json
import subprocess

import pytest

from testing.fixcase import make
from testing.flow import SPEC, call, feature_repo, retcon, take, turn


def plan(repo, tmp_path, text):
    (tmp_path / "s.toml").write_text(text)
    return retcon(repo, "plan", "--from-file", str(tmp_path / "s.toml"), "--no-edit")


@pytest.mark.parametrize("message, words", [
    ('"util: add\\u0000 two()"', ["s.toml line 9", "'message'", "NUL character"]),
    ('"   "', ["s.toml line 9", "'message'", "not blank"]),
    ('"""\n\n  \n"""', ["'message'", "not blank"]),
])
def test_a_message_git_cannot_keep_is_refused_when_the_spec_is_saved(tmp_path, message, words):
    repo = feature_repo(tmp_path / "repo")
    before = repo.git("for-each-ref")
    res = plan(repo, tmp_path, SPEC.replace('message = "util: add two()"', f"message = {message}"))
    assert res.code == 1, res.text
    lines = [ln for ln in res.err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in res.text, res.err
    for w in words:
        assert w in lines[0], lines[0]
    assert repo.git("for-each-ref") == before


def test_a_nul_in_the_models_message_is_a_tool_error_and_never_cuts_the_message(tmp_path, scripted):
    repo = make(tmp_path, docs=1, extra=True)    # the brief's candidate alone fails: the model is asked
    log = scripted({
        "1/extract": take("app.py"),
        "1/fix/1": [turn(call("apply_hunks", hunk_ids="$ids:extra.py")),
                    turn(call("create_commit", message="WIP: take\x00 two() and more")),
                    turn(call("create_commit", message="   \n\t "))],
        "2/extract": take(""),
    })

    res = retcon(repo, "run", "-m", "scripted")

    assert res.code == 0, res.text
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    answers = [e["results"][-1] for e in entries if e["keys"][0] == "1/fix/1" and e["results"]]
    assert answers[1].startswith("Error: message contains a NUL character"), answers
    made = repo.git("rev-list", "main..feature-clean").split()
    assert len(made) == 3
    assert all(repo.git("log", "-1", "--format=%B", sha) for sha in made)   # no empty commit message
    wip = repo.log("main..feature-clean", "%s")[1]
    assert wip.startswith("WIP: ") and len(wip) > len("WIP: "), wip   # the failure's summary, not a cut text


def test_a_models_message_is_stored_as_git_commit_m_would_store_it(tmp_path, scripted):
    repo = make(tmp_path, docs=1, extra=True)    # the brief's candidate alone fails: the model is asked
    raw = "WIP: take two()   \r\n\r\n\r\n\r\nutil.two() was missing.\t \r\n\n\n"
    scripted({
        "1/extract": take("app.py"),
        "1/fix/1": [turn(call("apply_hunks", hunk_ids="$ids:extra.py")), turn(call("create_commit", message=raw))],
        "2/extract": take(""),
    })

    assert retcon(repo, "run", "-m", "scripted").code == 0

    wip = repo.git("rev-list", "main..feature-clean").split()[1]
    stored = subprocess.run(["git", "cat-file", "commit", wip], cwd=repo.path, capture_output=True,
                            text=True, check=True).stdout.split("\n\n", 1)[1]
    by_git = subprocess.run(["git", "stripspace"], input=raw, capture_output=True, text=True, check=True).stdout
    assert stored == by_git == "WIP: take two()\n\nutil.two() was missing.\n"


def test_source_commits_without_a_message_are_planned_with_one_that_names_their_files(tmp_path):
    repo = feature_repo(tmp_path / "repo")
    repo.git("checkout", "-q", "feature")
    repo.write("later.txt", "x\n")
    repo.git("add", "later.txt")
    repo.git("commit", "-q", "--allow-empty-message", "-m", "  ")
    repo.git("checkout", "-q", "main")

    res = retcon(repo, "plan", "--from-commits", "--source", "feature", "--onto", "main", "--no-edit")

    assert res.code == 0, res.text
    shown = retcon(repo, "spec", "show").out
    assert 'message = "Update later.txt"' in shown
    assert "The source commit has no message" in shown
    assert retcon(repo, "run", "-m", "retcon-paths").code == 0
    assert repo.log("main..feature-clean")[0] == "Update later.txt"
