"""Confinement against the real mechanisms (ARCHITECTURE.md, "Promises", 5): each test runs a command that
does what a model-written test could do (write outside, change the repository's config, install a
hook, read a secret, reach a server outside, leave a process behind) under bubblewrap and under
Landlock, and checks that it could not; the same command unconfined (`off`) does it, so each test
fails without the confinement. A mechanism's tests are skipped only where it does not work here."""
from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pygit2
import pytest

from git_retcon.errors import RetconError
from git_retcon.git.plumbing import common_dir
from git_retcon.sandbox import choice, confine
from git_retcon.sandbox.confine import FORCE_ENV, Sandbox
from git_retcon.sandbox.runner import Result, run_command
from git_retcon.sandbox.worktree import Worktree
from testing.gitrepo import GitRepo
from testing.sandboxes import MECHANISMS, WORKS, Listener, sleepers


@pytest.fixture
def wt(tmp_path) -> Worktree:
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("base", {"a.txt": "a\n"})
    repo.git("tag", "v1")
    return Worktree.ensure(pygit2.Repository(str(repo.path)), "spec", repo.rev("HEAD"))


def box(mech: str, monkeypatch: pytest.MonkeyPatch, network: bool | None = None,
        writable: tuple[str, ...] = ()) -> Sandbox:
    monkeypatch.setenv(FORCE_ENV, mech)
    sandbox = choice.choose(None, "require", network=network, writable=writable)
    assert sandbox.mechanism == mech
    return sandbox


OFF = choice.choose(None, "off")


def run(wt: Worktree, command: str, sandbox: Sandbox) -> Result:
    return run_command("test", command, wt.path, 60, sandbox=sandbox)


def user_repo(wt: Worktree) -> GitRepo:
    return GitRepo(common_dir(wt.repo).parent)


@pytest.mark.parametrize("mech", MECHANISMS)
def test_a_command_writes_in_its_worktree_and_temp_and_reads_the_repository(wt, mech, monkeypatch):
    res = run(wt, 'echo made > out.txt && echo t > "$TMPDIR/t" && git describe --tags && git log --oneline -1',
              box(mech, monkeypatch))
    assert res.passed, res.output
    assert "v1" in res.output
    assert (wt.path / "out.txt").read_text() == "made\n"
    assert res.sandbox == mech and res.network is False


@pytest.mark.parametrize("mech", MECHANISMS)
def test_a_write_outside_is_refused_and_named(wt, tmp_path, mech, monkeypatch):
    outside = tmp_path / "outside"
    outside.mkdir()
    command = f"echo leak > {outside}/f"
    res = run(wt, command, box(mech, monkeypatch))
    assert not res.passed
    assert not (outside / "f").exists()
    assert res.denied is not None and res.denied.kind == "write" and res.denied.what == f"{outside}/f"
    assert f"the sandbox refused a write to {outside}/f" in res.output
    assert res.reason() == f"sandbox refused a write to {outside}/f"
    assert run(wt, command, OFF).passed and (outside / "f").exists()   # unconfined, it writes


@pytest.mark.parametrize("mech", MECHANISMS)
def test_a_writable_folder_of_the_spec_may_be_written(wt, tmp_path, mech, monkeypatch):
    extra = tmp_path / "cache" / "tool"
    res = run(wt, f"echo kept > {extra}/f", box(mech, monkeypatch, writable=(str(extra),)))
    assert res.passed, res.output
    assert (extra / "f").read_text() == "kept\n"


@pytest.mark.parametrize("mech", MECHANISMS)
def test_the_repository_config_and_hooks_cannot_be_changed(wt, mech, monkeypatch):
    user = user_repo(wt)
    hooks = Path(user.git("rev-parse", "--git-common-dir"))
    hooks = (hooks if hooks.is_absolute() else user.path / hooks) / "hooks"
    commands = ["git config core.hooksPath node_modules/.husky",
                'printf "#!/bin/sh\\nexit 0\\n" > "$(git rev-parse --git-common-dir)/hooks/pre-push"',
                "git update-ref refs/heads/planted HEAD"]
    for command in commands:
        res = run(wt, command, box(mech, monkeypatch))
        assert not res.passed, command
        assert res.denied is not None and res.denied.kind == "write", (command, res.output)
    assert user.git("config", "--get", "core.hooksPath", check=False) == ""
    assert not (hooks / "pre-push").exists()
    assert user.git("branch", "--list", "planted") == ""
    for command in commands:   # unconfined, each gets through; the config is put back after it (gitconfig.py)
        res = run(wt, command, OFF)
        assert res.passed, command
        assert ("core.hookspath=node_modules/.husky" in res.restored.lower()) == ("hooksPath" in command)
    assert user.git("config", "--get", "core.hooksPath", check=False) == ""
    assert (hooks / "pre-push").exists()


@pytest.mark.parametrize("mech", MECHANISMS)
def test_a_secret_in_the_home_folder_is_hidden(wt, hermetic, mech, monkeypatch):
    ssh = hermetic / ".ssh"
    ssh.mkdir(exist_ok=True)
    (ssh / "id_ed25519").write_text("PRIVATE-KEY-TEXT\n")
    command = "cat ~/.ssh/id_ed25519"
    res = run(wt, command, box(mech, monkeypatch))
    assert not res.passed
    assert "PRIVATE-KEY-TEXT" not in res.output
    assert res.denied is not None and res.denied.kind == "read"
    assert "PRIVATE-KEY-TEXT" in run(wt, command, OFF).output


@pytest.fixture
def listener() -> Iterator[Listener]:
    server = Listener()
    yield server
    server.sock.close()


def _send(port: int) -> str:
    return (f"python3 -c 'import socket; s = socket.create_connection((\"127.0.0.1\", {port}), 5); "
            "s.sendall(b\"LEAK\"); s.close()'")


@pytest.mark.parametrize("mech", MECHANISMS)
def test_a_server_on_the_loopback_address_is_out_of_reach(wt, listener, mech, monkeypatch):
    res = run(wt, _send(listener.port), box(mech, monkeypatch))
    assert not res.passed
    assert res.denied is not None and res.denied.kind == "network", res.output
    assert f"127.0.0.1:{listener.port}" in res.denied.what
    assert "network = true" in res.denied.allow()
    assert listener.got == []
    assert run(wt, _send(listener.port), box(mech, monkeypatch, network=True)).passed   # network = true
    assert run(wt, _send(listener.port), OFF).passed
    deadline = time.monotonic() + 30
    while len(listener.got) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert listener.got == [b"LEAK", b"LEAK"]


@pytest.mark.parametrize("mech", MECHANISMS)
def test_nothing_a_command_starts_outlives_it(wt, mech, monkeypatch):
    tag = f"{300 + os.getpid() % 1000}.{time.monotonic_ns() % 10**6}"
    command = f"(setsid sleep {tag} > /dev/null 2>&1 &); sleep {tag} > /dev/null 2>&1 & echo started"
    res = run(wt, command, box(mech, monkeypatch))
    assert res.passed, res.output
    deadline = time.monotonic() + 30
    while sleepers(tag) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sleepers(tag) == []
    assert run(wt, command, OFF).passed
    deadline = time.monotonic() + 30   # unconfined, both outlive it: wait for them to be seen
    while len(sleepers(tag)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    left = sleepers(tag)
    for pid in left:   # unconfined, they outlive it (and are ended here)
        os.kill(pid, 9)
    assert len(left) == 2


def test_require_refuses_where_no_sandbox_works(monkeypatch):
    monkeypatch.setenv(FORCE_ENV, "none")
    with pytest.raises(RetconError, match=r"--sandbox require: no sandbox works on this machine .*bubblewrap"):
        choice.choose(None, "require")
    auto = choice.choose(None, "auto")
    assert auto.mechanism is None and auto.label == "none"
    assert "apt-get install bubblewrap" in auto.describe()


def test_off_is_unconfined_and_auto_takes_the_strongest(monkeypatch):
    assert OFF.mechanism is None and OFF.label == "off"
    monkeypatch.delenv(FORCE_ENV, raising=False)
    auto = choice.choose(None, "auto")
    assert auto.mechanism == (WORKS[0] if WORKS else None)
    if auto.mechanism:
        assert auto.describe() == f"{auto.mechanism}, network off (setup: network on)"


def test_the_mode_comes_from_the_option_the_spec_then_git_config(tmp_path):
    repo = GitRepo.init(tmp_path / "r")
    handle = pygit2.Repository(str(repo.path))
    assert choice.mode_of(handle, None, None) == "auto"
    repo.git("config", "retcon.sandbox", "off")
    handle = pygit2.Repository(str(repo.path))
    assert choice.mode_of(handle, None, None) == "off"
    assert choice.mode_of(handle, None, "require") == "require"
    assert choice.mode_of(handle, "auto", "require") == "auto"
    repo.git("config", "retcon.sandbox", "sometimes")
    with pytest.raises(RetconError, match="use auto, require or off"):
        choice.mode_of(pygit2.Repository(str(repo.path)), None, None)


def test_setup_has_the_network_unless_the_spec_says_no():
    assert choice.choose(None, "off", network=None).for_setup().network is True
    assert choice.choose(None, "off", network=None).network is False
    assert choice.choose(None, "off", network=False).for_setup().network is False
    assert choice.choose(None, "off", network=True).network is True


def test_temp_folders_a_killed_run_left_are_swept(tmp_path, monkeypatch):
    """A kill -9 leaves a command's private temp folder; the next process removes those of dead ones."""
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(confine, "_swept", [])
    dead = tmp_path / "git-retcon-tmp-999999-x"   # no such process
    alive = tmp_path / f"git-retcon-tmp-{os.getppid()}-x"
    dead.mkdir()
    alive.mkdir()
    monkeypatch.setenv(FORCE_ENV, "none")
    box = Sandbox("require", WORKS[0]) if WORKS else None
    if box is None:
        pytest.skip("no sandbox works here")
    launch = box.launch("true", tmp_path, dict(os.environ))
    launch.done()
    assert not dead.exists() and alive.exists()
