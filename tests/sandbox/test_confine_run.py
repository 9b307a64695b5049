"""Confinement through `git retcon run`, as a user meets it: the header says which sandbox, the
husky case leaves the user's config alone, a setup that needs the network without it is a clear
error, a build the sandbox refused stops with how to allow it (no model asked), `require` refuses
before anything is written, and Ctrl-C ends a confined command's whole tree."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from git_retcon.sandbox.confine import FORCE_ENV
from testing.flow import ROOT, SPEC, feature_repo, retcon, spec_with, take, write_script
from testing.gitrepo import GitRepo
from testing.sandboxes import MECHANISMS, WHY, WORKS, Listener, sleepers

# What husky's install does from npm's `prepare` script: point git at hooks under node_modules.
PREPARE = """\
#!/bin/sh
mkdir -p node_modules/.husky
git config core.hooksPath node_modules/.husky || echo "husky - could not set core.hooksPath"
"""


def planned(tmp_path: Path, spec: str) -> GitRepo:
    repo = feature_repo(tmp_path / "repo")
    repo.commit("husky", {"prepare.sh": PREPARE, ".gitignore": "node_modules/\n"})
    repo.git("rebase", "-q", "main", "feature")
    repo.git("checkout", "-q", "main")
    (tmp_path / "spec.toml").write_text(spec)
    res = retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit")
    assert res.code == 0, res.text
    return repo


def refs(repo: GitRepo) -> str:
    return repo.git("for-each-ref", "--format=%(refname) %(objectname)")


@pytest.mark.parametrize("mech", MECHANISMS)
def test_a_prepare_script_that_sets_hooks_path_leaves_the_users_config_alone(tmp_path, mech, monkeypatch):
    monkeypatch.setenv(FORCE_ENV, mech)
    repo = planned(tmp_path, SPEC.replace('build = "', 'setup = "sh prepare.sh"\nbuild = "'))
    config = (repo.path / ".git" / "config").read_bytes()
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 0, res.text
    assert f"Sandbox: {mech}, network off (setup: network on)" in res.out
    assert (repo.path / ".git" / "config").read_bytes() == config
    assert repo.git("config", "--get", "core.hooksPath", check=False) == ""
    assert repo.tree("feature-clean") == repo.tree("feature")


def test_unconfined_the_prepare_script_cannot_rewire_the_users_config_either(tmp_path):
    """What the test above guards against, with --sandbox off: the config is put back, and said."""
    repo = planned(tmp_path, SPEC.replace('build = "', 'setup = "sh prepare.sh"\nbuild = "'))
    res = retcon(repo, "run", "-m", "retcon-paths", "--sandbox", "off")
    assert res.code == 0, res.text
    assert "Sandbox: off" in res.out
    assert repo.git("config", "--get", "core.hooksPath", check=False) == ""
    assert "core.hookspath=node_modules/.husky): put back as it was" in res.out.lower(), res.out


@pytest.mark.parametrize("mech", MECHANISMS)
def test_a_strict_prepare_script_fails_at_the_base_naming_the_denial(tmp_path, mech, monkeypatch):
    monkeypatch.setenv(FORCE_ENV, mech)
    repo = planned(tmp_path, SPEC.replace('build = "', 'setup = "git config core.hooksPath .husky"\nbuild = "'))
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 1
    first = res.err.splitlines()[0]
    assert "the setup command `git config core.hooksPath .husky` fails on the base" in first, res.err
    assert "the sandbox refused a write to" in first and "config" in first
    # the repository's git folder is never offered for `writable` (issue 38)
    assert "writable = [" not in first and "stays read-only" in first and "--sandbox off" in first
    assert repo.git("config", "--get", "core.hooksPath", check=False) == ""


@pytest.mark.parametrize("mech", MECHANISMS)
def test_a_setup_that_needs_the_network_without_it_is_a_clear_error(tmp_path, mech, monkeypatch):
    monkeypatch.setenv(FORCE_ENV, mech)
    server = Listener()
    try:
        fetch = f"python3 -c 'import urllib.request; urllib.request.urlopen(\\\"http://127.0.0.1:{server.port}/\\\")'"
        repo = planned(tmp_path, SPEC.replace('build = "', f'network = false\nsetup = "{fetch}"\nbuild = "'))
        res = retcon(repo, "run", "-m", "retcon-paths")
    finally:
        server.sock.close()
    assert res.code == 1
    first = res.err.splitlines()[0]
    assert "fails on the base" in first and "no network" in first, res.err
    assert f"127.0.0.1:{server.port}" in first and "network = true" in first
    assert server.got == []


@pytest.mark.parametrize("mech", MECHANISMS)
def test_a_build_the_sandbox_refused_stops_with_how_to_allow_it_and_no_model(tmp_path, mech, monkeypatch, scripted):
    monkeypatch.setenv(FORCE_ENV, mech)
    outside = tmp_path / "outside"
    outside.mkdir()
    leak = f"if grep -q two util.py; then echo x > {outside}/f; fi"
    repo = planned(tmp_path, SPEC.replace('build = "', f'build = "{leak} && '))
    log = scripted({"1/extract": take("util.py")})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 3, res.text
    assert f"Building... FAIL (sandbox refused a write to {outside}/f)" in res.out
    assert f"the sandbox refused a write to {outside}/f" in res.err
    # the folder to add, never the file (writable takes folders: issue 38)
    assert f'writable = ["{outside}"]' in res.err and "Fix attempt" not in res.out
    assert [json.loads(ln)["keys"] for ln in log.read_text().splitlines()] == [["1/extract/1"]] * 3   # no fix call
    assert not (outside / "f").exists()
    records = json.loads(repo.git("notes", "--ref=retcon-tests", "show", repo.tree("feature-clean")))
    (build,) = [r for r in records["commands"].values() if r["kind"] == "build"]
    assert build["sandbox"] == mech and build["network"] is False and "refused a write" in build["denied"]


def test_require_refuses_before_anything_is_written_where_no_sandbox_works(tmp_path, monkeypatch):
    monkeypatch.setenv(FORCE_ENV, "none")
    repo = planned(tmp_path, SPEC)
    before = refs(repo)
    res = retcon(repo, "run", "-m", "retcon-paths", "--sandbox", "require")
    assert res.code == 1 and res.out == ""
    assert len(res.err.strip().splitlines()) == 1
    assert "--sandbox require: no sandbox works on this machine" in res.err and "apt-get install bubblewrap" in res.err
    assert refs(repo) == before
    assert not (repo.path / ".git" / "worktrees").exists()
    res = retcon(repo, "run", "-m", "retcon-paths")   # auto: says so once, and runs
    assert res.code == 0, res.text
    assert res.out.count("Sandbox: none works on this machine") == 1


@pytest.mark.parametrize("mech", MECHANISMS)
def test_ctrl_c_ends_a_confined_commands_whole_tree(tmp_path, mech):
    marks = tmp_path / "marks"
    tag = f"{400 + os.getpid() % 1000}.{time.monotonic_ns() % 10**6}"
    repo = feature_repo(tmp_path / "repo")
    spec = SPEC.replace("test = \"python3 -c 'import app; app.main()'\"",
                        f'test = "if grep -q two util.py; then sleep {tag} & (setsid sleep {tag} &) ; '
                        f'touch {marks}/started; wait; fi"')
    (tmp_path / "spec.toml").write_text(spec_with(spec, writable=[marks]))
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit").code == 0
    script = write_script(tmp_path / "script.json", {"1/extract": take("util.py")})
    proc = subprocess.Popen([sys.executable, "-m", "testing.run_retcon", "run", "-m", "scripted"], cwd=repo.path,
                            env={**os.environ, "PYTHONPATH": str(ROOT), "RETCON_SCRIPT": str(script), FORCE_ENV: mech},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 60
        while not (marks / "started").exists() and time.monotonic() < deadline:
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        while not sleepers(tag) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sleepers(tag)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, out + err
    deadline = time.monotonic() + 30
    while sleepers(tag) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = sleepers(tag)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert left == [], "a confined command outlived the interrupted run"


@pytest.mark.skipif(not WORKS, reason=f"no sandbox works here: {WHY}")
def test_records_say_which_sandbox_and_are_trusted_only_under_the_same_or_not_with_retest(tmp_path, monkeypatch):
    """Issue 32: a result is reused only when what the command saw is the same: another sandbox (or
    network, or setup) runs it again, and --retest does whatever the records say."""
    monkeypatch.setenv(FORCE_ENV, WORKS[0])
    logs = tmp_path / "logs"
    logs.mkdir()
    repo = feature_repo(tmp_path / "repo")
    spec = SPEC.replace('build = "', f'build = "echo b >> {logs}/count && ')
    (tmp_path / "spec.toml").write_text(spec_with(spec, writable=[logs]))
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit").code == 0

    def builds() -> int:
        return len((logs / "count").read_text().split())

    def run(*args: str) -> str:
        assert retcon(repo, "abort", "feature-clean").code == 0
        res = retcon(repo, "run", "-m", "retcon-paths", *args)
        assert res.code == 0, res.text
        return res.out

    assert retcon(repo, "run", "-m", "retcon-paths", "--sandbox", "off").code == 0
    assert builds() == 4                                   # the base and three commits
    assert "Sandbox: off" in retcon(repo, "status").out
    assert run("--sandbox", "off").count("PASS (cached)") == 8 and builds() == 4
    run()                                                  # confined: what it saw differs
    assert builds() == 8
    assert f"Sandbox: {WORKS[0]}" in retcon(repo, "status").out
    assert json.loads(retcon(repo, "status", "--json").out)["commits"][0]["sandbox"] == WORKS[0]
    # And each created commit's note says what its build and tests ran under.
    note = json.loads(repo.git("notes", "--ref=retcon", "show", "feature-clean"))
    assert note["sandbox"] == WORKS[0] and note["build"] == "pass"
    assert run().count("PASS (cached)") == 8 and builds() == 8
    run("--retest")
    assert builds() == 12
