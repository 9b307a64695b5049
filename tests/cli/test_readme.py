"""The README cannot drift: its shell blocks are run, in order, as a reader runs them.

Every ```sh block carries a tag in its info string:
  `runnable [exit=N]`  run with bash in a temporary HOME, each block where the last one left
                       off, expecting exit status N (default 0);
  `install`            the first command: a fresh virtualenv and `pip install . pytest`, then
                       the demo. Installing needs the network and most of a minute, so the
                       test checks the line's syntax and its install steps, and runs its demo
                       part with the package under test (the git-retcon installed next to
                       this Python), which the later blocks then use;
  `not-run`            needs an API key, an installed model or the test suite itself.
In every block, each `git retcon` command and option must exist in the CLI, and each `make`
target in the Makefile.
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import click

from git_retcon.cli import cli
from testing.gitrepo import GitRepo

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
BIN = Path(sys.executable).parent
FENCE = re.compile(r"^```(\w+)([^\n]*)\n(.*?)^```$", re.M | re.S)


@dataclass
class Block:
    line: int
    tags: list[str]
    text: str

    @property
    def exit(self) -> int:
        return next((int(t[5:]) for t in self.tags if t.startswith("exit=")), 0)


def shell_blocks() -> list[Block]:
    text = README.read_text(encoding="utf-8")
    return [Block(text.count("\n", 0, m.start()) + 1, m.group(2).split(), m.group(3))
            for m in FENCE.finditer(text) if m.group(1) == "sh"]


def commands(block: Block) -> list[list[str]]:
    """The simple commands of a block, as words (heredoc bodies and comments left out)."""
    out: list[list[str]] = []
    heredoc = None
    for line in block.text.splitlines():
        if heredoc is not None:
            heredoc = None if line.strip() == heredoc else heredoc
            continue
        m = re.search(r"<<-?\s*'?(\w+)'?", line)
        if m:
            heredoc = m.group(1)
            line = line[: m.start()]
        words = shlex.split(line, comments=True)
        current: list[str] = []
        for w in words + ["&&"]:
            if w in ("&&", "||", ";", "|"):
                if current:
                    out.append(current)
                current = []
            else:
                current.append(w)
    return out


def check_retcon_words(words: list[str]) -> None:
    """`git retcon SUB [SUB2] [--opt ...]`: the command path and long options exist."""
    cmd: click.Command = cli
    where = "git retcon"
    for w in words:
        if w.startswith("-"):
            name = w.split("=")[0]
            known = {o for p in cmd.params for o in getattr(p, "opts", []) + getattr(p, "secondary_opts", [])}
            known |= {"-h", "--help"} | ({"--version"} if cmd is cli else set())
            assert name in known, f"`{where}` has no option {name}"
        elif isinstance(cmd, click.Group):
            assert w in cmd.commands, f"`{where}` has no command {w}"
            cmd = cmd.commands[w]
            where += f" {w}"


def test_every_shell_block_is_tagged_and_names_real_commands():
    blocks = shell_blocks()
    assert [b.tags[0] if b.tags else None for b in blocks][0] == "install", "the README starts with the install"
    targets = set(re.findall(r"^([\w-]+):", (ROOT / "Makefile").read_text(), re.M))
    seen = 0
    for b in blocks:
        assert b.tags and b.tags[0] in ("install", "runnable", "not-run"), \
            f"README line {b.line}: tag the block `sh runnable`, `sh install` or `sh not-run`"
        for words in commands(b):
            if words[:2] == ["git", "retcon"]:
                check_retcon_words(words[2:])
                seen += 1
            elif words[0] == "make":
                assert all(t in targets for t in words[1:] if "=" not in t), f"README line {b.line}: {words}"
    assert seen > 15  # the parser found the commands


def run_block(script: str, cwd: Path, env: dict[str, str], state: Path) -> subprocess.CompletedProcess[str]:
    """bash -e in cwd; the directory the block ends in is written to state."""
    wrapped = f"trap 'pwd > {shlex.quote(str(state))}' EXIT\nset -euo pipefail\n{script}"
    return subprocess.run(["bash", "-c", wrapped], cwd=cwd, env=env, text=True,
                          capture_output=True, timeout=300)


def test_the_readme_runs(hermetic: Path, tmp_path: Path):
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env['PATH']}"
    env["GIT_EDITOR"] = "true"       # `spec edit` in an editor that changes nothing
    home = hermetic
    state = tmp_path / "cwd"
    blocks = shell_blocks()

    install = blocks[0]
    line = install.text.strip()
    assert "\n" not in line, "the first command is one line"
    assert subprocess.run(["bash", "-n", "-c", line]).returncode == 0
    steps = [s.strip() for s in line.split("&&")]
    venv = shlex.split(steps[0])
    assert venv[:3] == ["python3", "-m", "venv"], steps[0]
    assert steps[1] == f". {venv[3]}/bin/activate", steps[1]
    assert shlex.split(steps[2])[:3] == ["pip", "install", "."] and "pytest" in steps[2], steps[2]
    demo = " && ".join(steps[3:])
    assert demo.startswith("git retcon demo "), demo
    res = run_block(demo, home, env, state)
    assert res.returncode == 0, f"README line {install.line}: {demo}\n{res.stdout}{res.stderr}"

    cwd = home
    for b in blocks[1:]:
        if b.tags[0] != "runnable":
            continue
        res = run_block(b.text, cwd, env, state)
        assert res.returncode == b.exit, (
            f"README line {b.line}: exit {res.returncode}, expected {b.exit}\n{b.text}\n"
            f"--- stdout\n{res.stdout}\n--- stderr\n{res.stderr}")
        cwd = Path(state.read_text().strip())

    # Where the walkthrough leaves the reader: the clean branch pushed, and a colleague's
    # clone that verified it from the shared state.
    practice = GitRepo(home / "retcon-demo")
    assert practice.log("main..feature-tidy") == [
        "discounts and CSV export, with their docs", "invoice: the summary says total",
        "money: add percent_of() with half-even rounding",
        "tax: VAT per invoice, rounded on each line"]
    assert practice.tree("feature-tidy") == practice.tree("feature")
    origin = GitRepo(home / "retcon-demo-origin.git")
    assert origin.rev("refs/heads/feature-tidy") == practice.rev("feature-tidy")
    assert cwd == home / "colleague"
