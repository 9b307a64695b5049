"""Every stop names the commands that go on from it, and each works from that state: these
tests read the commands out of what the stop printed and run them, literally, in order."""
from __future__ import annotations

import re
import shlex

import pytest

from testing import flaky_model
from testing.fixcase import make
from testing.flow import call, retcon, take, turn

# With make(extra=True): the brief's candidate alone fails, so the model is asked, and gives up.
STUCK = {"1/extract": take("app.py"), "1/fix": [turn(call("stuck", summary="app.py needs util.two()"))]}


def commands(text: str) -> list[str]:
    """The commands a message tells to run: its indented `git ...` lines, in order."""
    return [ln.strip() for ln in text.splitlines() if re.match(r"^  git ", ln)]


def follow(repo, command: str, **replace: str):
    """Run one suggested command as the user would (its placeholders filled in)."""
    for old, new in replace.items():
        command = command.replace(old, new)
    words = shlex.split(command)
    assert words[:2] == ["git", "retcon"], command
    return retcon(repo, *words[2:])


def not_refused(res) -> None:
    """A command that is accepted: done (0), or a run that goes on and stops again (3); never a refusal."""
    assert res.code in (0, 3), res.text
    assert "error:" not in res.err, res.text


@pytest.fixture
def stuck(tmp_path, scripted):
    repo = make(tmp_path, docs=0, extra=True)
    scripted(STUCK)
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 3, res.text
    return repo, res


def test_a_stuck_stop_names_resolve_and_run_and_they_work(stuck):
    repo, res = stuck
    resolve, run, redo, run_again = commands(res.err)
    assert resolve == 'git retcon resolve -m "what you changed" feature-clean'
    assert run == run_again == "git retcon run feature-clean -m scripted"
    assert redo == 'git retcon resolve --redo -m "what you changed" feature-clean'
    not_refused(follow(repo, resolve))
    not_refused(follow(repo, run))


def test_the_redo_way_works_too(stuck):
    repo, res = stuck
    *_, redo, run = commands(res.err)
    not_refused(follow(repo, redo))
    assert repo.rev("feature-clean") == repo.rev("main")
    not_refused(follow(repo, run))


def test_a_run_refused_while_stuck_names_the_same_ways_and_they_work(stuck):
    repo, _ = stuck
    res = retcon(repo, "run")
    assert res.code == 3
    resolve, run, *_ = commands(res.err)
    not_refused(follow(repo, resolve))
    not_refused(follow(repo, run))


def test_the_model_the_spec_names_is_not_repeated(tmp_path, scripted):
    repo = make(tmp_path, docs=0, extra=True)
    scripted(STUCK)
    exported = tmp_path / "s.toml"
    assert retcon(repo, "spec", "export", "-o", str(exported)).code == 0
    exported.write_text(exported.read_text().replace('cleaned = "feature-clean"\n',
                                                     'cleaned = "feature-clean"\nmodel = "scripted"\n'))
    assert retcon(repo, "spec", "import", str(exported)).code == 0
    res = retcon(repo, "run")
    assert res.code == 3
    assert "git retcon run feature-clean\n" in res.err and " -m scripted" not in res.err
    res = retcon(repo, "resolve", "-m", "x")
    assert res.out.splitlines()[-1] == "Next: git retcon run feature-clean"


def test_a_backend_that_gave_up_says_to_retry_and_that_works(tmp_path, scripted, monkeypatch):
    flaky_model.register()
    try:
        monkeypatch.setenv("RETCON_FLAKY_COUNT", str(tmp_path / "count"))
        monkeypatch.setenv("RETCON_RETRY_DELAY", "0.001")
        monkeypatch.setenv("RETCON_FLAKY_FAIL", ",".join(str(i) for i in range(1, 30)))
        repo = make(tmp_path, docs=0)
        scripted({"1/extract": take("app.py"), "1/fix": take("util.py"), "2/extract": take("README")})
        res = retcon(repo, "run", "-m", "scripted-flaky")
        assert res.code == 3, res.text
        assert "When the model's backend answers again" in res.err and "a fix committed on" not in res.err
        resolve, run = commands(res.err)
        assert resolve == 'git retcon resolve -m "retry" feature-clean'
        monkeypatch.setenv("RETCON_FLAKY_FAIL", "")
        not_refused(follow(repo, resolve))
        res = follow(repo, run)
        assert res.code == 0, res.text
    finally:
        flaky_model.unregister()


def test_a_command_timing_out_says_to_raise_the_timeout_and_that_works(tmp_path, scripted):
    repo = make(tmp_path, docs=0)
    scripted({"1/extract": take("app.py"), "1/fix": take("util.py"), "2/extract": take("README")})
    exported = tmp_path / "s.toml"
    assert retcon(repo, "spec", "export", "-o", str(exported)).code == 0
    slow = "test = \"if grep -q 'def two' util.py; then sleep 3; fi\"\ntimeout = 1\n"
    text = re.sub(r"^test = .*\n", slow, exported.read_text(), flags=re.M)
    exported.write_text(text)
    assert retcon(repo, "spec", "import", str(exported)).code == 0
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 3, res.text
    assert "timed out after 1s" in res.err and "raise `timeout`" in res.err
    resolve, run = commands(res.err)
    assert retcon(repo, "spec", "export", "-o", str(exported)).code == 0    # what the advice says to do
    exported.write_text(exported.read_text().replace("timeout = 1\n", "timeout = 10\n"))
    assert retcon(repo, "spec", "import", str(exported)).code == 0
    not_refused(follow(repo, resolve))
    assert follow(repo, run).code == 0


def test_the_token_budget_says_how_to_go_on_and_that_works(tmp_path, scripted):
    repo = make(tmp_path, docs=0)
    scripted({"1/extract": take("app.py"), "1/fix": take("util.py"), "2/extract": take("README")})
    res = retcon(repo, "run", "-m", "scripted", "--max-tokens", "1")
    assert res.code == 3, res.text
    (run,) = commands(res.err)
    assert run == "git retcon run feature-clean -m scripted --max-tokens N"
    assert follow(repo, run, N="100000").code == 0
