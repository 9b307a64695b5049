"""Progress you can follow: on a terminal, a long build or test shows a live line with
the elapsed time and the command's last output line, then its verdict and duration;
off a terminal, plain lines; colour only on a terminal, never with NO_COLOR."""
from __future__ import annotations

import errno
import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

from testing.flow import SPEC, feature_repo, retcon

BIN = Path(sys.executable).parent
# A test command that talks while it works, slower than the live line's redraws.
CHATTY = ("python3 -c \"import time; [(print(s, flush=True), time.sleep(0.25)) "
          "for s in ('collecting', 'running 3 tests')]\"")


@pytest.fixture
def project(tmp_path):
    repo = feature_repo(tmp_path / "repo")
    # One logical commit with everything: one build and one test run to watch.
    header = re.sub(r"^test = .*$", lambda _: f"test = {json.dumps(CHATTY)}", SPEC.split("[[commit]]")[0], flags=re.M)
    spec = header + '[[commit]]\nmessage = "util, app and docs"\npaths = ["*"]\n'
    (tmp_path / "spec.toml").write_text(spec)
    res = retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit")
    assert res.code == 0, res.text
    return repo


def env(**changes: str | None) -> dict[str, str]:
    out = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", "TERM": "xterm"}
    for key, value in changes.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = value
    return out


def on_terminal(cwd: Path, args: list[str], environ: dict[str, str]) -> tuple[int, str]:
    """Run a command with a pseudo-terminal as its stdin, stdout and stderr."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(args, cwd=cwd, env=environ, stdin=slave, stdout=slave, stderr=slave)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError as exc:  # EIO: the terminal's other side is closed
            if exc.errno != errno.EIO:
                raise
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return proc.wait(timeout=120), b"".join(chunks).decode("utf-8", errors="replace")


def test_live_line_on_a_terminal_colour_only_there_and_never_with_no_color(project):
    code, out = on_terminal(project.path, ["git", "retcon", "run", "-m", "retcon-paths"], env(NO_COLOR="1"))
    assert code == 0, out
    # Redrawn in place: elapsed time, then the command's latest line beside it.
    assert re.search(r"\rTests\.\.\. 0\.\ds", out), out
    assert re.search(r"\rTests\.\.\. \d+\.\ds  collecting", out), out
    assert re.search(r"\rTests\.\.\. \d+\.\ds  running 3 tests", out), out
    # Then cleared and replaced by the verdict with its duration.
    assert re.search(r"\rTests\.\.\. PASS \(\d+\.\ds\)\r?\n", out), out
    assert "\x1b[" not in out, "NO_COLOR means no escape sequences"

    code, out = on_terminal(project.path, ["git", "retcon", "run"], env(NO_COLOR=None))
    assert code == 0 and "\x1b[1mComplete!" in out, out
    piped = subprocess.run(["git", "retcon", "run"], cwd=project.path, env=env(NO_COLOR=None),
                           capture_output=True, text=True, timeout=120)
    assert piped.returncode == 0 and "\nComplete!\n" in piped.stdout, piped.stdout + piped.stderr
    assert "\x1b[" not in piped.stdout and "\r" not in piped.stdout


def test_piped_output_keeps_the_durations_of_build_and_test(project):
    piped = subprocess.run(["git", "retcon", "run", "-m", "retcon-paths"], cwd=project.path, env=env(),
                           capture_output=True, text=True, timeout=120)
    assert piped.returncode == 0, piped.stdout + piped.stderr
    # The test talks for half a second: its verdict carries the time, on one plain line.
    assert re.search(r"^Tests\.\.\. PASS \(\d+\.\ds\)$", piped.stdout, flags=re.M), piped.stdout
    # A result already recorded for this tree takes no time and says none.
    again = subprocess.run(["git", "retcon", "check"], cwd=project.path, env=env(),
                           capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and "(0." not in again.stdout, again.stdout


def test_clip_cuts_what_a_person_reads_at_a_words_end():
    from git_retcon.ui import clip
    assert clip("short enough", 40) == "short enough"
    said = "Not committed: put back what belongs elsewhere, then call create_commit again"
    assert clip(said, 60) == "Not committed: put back what belongs elsewhere, then call..."
    assert clip("x" * 50, 20) == "x" * 20 + "..."     # one long word: cut where it must be
