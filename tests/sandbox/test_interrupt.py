"""Ctrl-C during a build or test: the command's process group goes, and the user is told
how to resume (exit 130), as ARCHITECTURE.md promises."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from testing.flow import ROOT, SPEC, feature_repo, retcon_proc, spec_with, take, write_script


def gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")  # a zombie waits only for its (new) parent to reap it


@pytest.mark.parametrize(("jobs", "sig", "code", "said"), [
    ("1", signal.SIGINT, 130, "Interrupted"), ("2", signal.SIGINT, 130, "Interrupted"),
    ("2", signal.SIGTERM, 143, "Terminated")])
def test_ctrl_c_kills_the_test_command_and_says_how_to_resume(tmp_path, jobs, sig, code, said):
    """With --jobs 2 the command runs in a pool worktree, from a thread the interrupt never reaches.
    `kill PID` (SIGTERM) ends the run the same way."""
    repo = feature_repo(tmp_path / "repo")
    pidfile = tmp_path / "test.pid"
    # The command sleeps on commit 1's tree, not on the base's (checked before commit 1).
    spec = SPEC.replace("test = \"python3 -c 'import app; app.main()'\"",
                        f'test = "if grep -q two util.py; then sleep 60 & echo $! > {pidfile}; wait; fi"')
    # Unconfined: the test reads the command's pid (bubblewrap gives it one of its own namespace).
    # test_confine.py interrupts a confined one.
    (tmp_path / "spec.toml").write_text(spec_with(spec, sandbox="off"))
    assert retcon_proc(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit").code == 0
    script = write_script(tmp_path / "script.json", {"1/extract": take("util.py"), "2/extract": take("app.py"),
                                                     "3/extract": take("")})
    proc = subprocess.Popen([sys.executable, "-m", "testing.run_retcon", "run", "-m", "scripted", "--jobs", jobs],
                            cwd=repo.path, env={**os.environ, "PYTHONPATH": str(ROOT), "RETCON_SCRIPT": str(script)},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            # As from a terminal: a suite started with `&` by a non-interactive shell has SIGINT
                            # ignored, which children inherit (and Python then raises no KeyboardInterrupt).
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 60
        while not (pidfile.exists() and pidfile.read_text().strip()) and time.monotonic() < deadline:
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        child = int(pidfile.read_text())
        assert not gone(child)
        proc.send_signal(sig)  # SIGINT: what the terminal sends to the foreground process
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == code, out + err
    assert f"{said}: run the same command again to resume." in err
    assert "Aborted" not in err and "Traceback" not in err
    deadline = time.monotonic() + 5
    while not gone(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert gone(child), "the test command outlived the interrupted run"
