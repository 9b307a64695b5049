"""`git retcon demo [DIR]`: the whole idea in one command, offline, in seconds.

Builds a small Python package whose feature branch has a messy history (three
concerns interleaved in "wip" and "fix" commits), writes a spec with `paths`
per logical commit, and runs the real commands on it with the built-in
`retcon-paths` model: plan, run (build and tests really run), then the log of
both branches and check. DIR is left for the user to explore.
"""
from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shlex
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

import tomli

from git_retcon.errors import RetconError
from git_retcon.git.plumbing import git
from git_retcon.ui import UI

if TYPE_CHECKING:
    from importlib.abc import Traversable

Invoke = Callable[[list[str]], None]   # runs a git-retcon command line in this process

SOURCE, REMOTE, CLEANED = "feature", "main", "feature-clean"
SPEC_FILE = "spec.toml"          # left untracked in DIR, for the user to edit and re-import
HOUR = 3600

# -- the project: package data (demoproject/ in the source tree) ---------------------

DATA = "git_retcon.demoproject"


def _data() -> Traversable:
    try:
        return resources.files(DATA)
    except ModuleNotFoundError:
        raise RetconError(f"the demo's project files ({DATA}) are missing from this installation: "
                          "reinstall git-retcon (in a checkout: make venv)") from None


def _tree(where: Traversable, prefix: str = "") -> dict[str, str]:
    """Every file under where, by its path relative to it."""
    files: dict[str, str] = {}
    for entry in sorted(where.iterdir(), key=lambda e: e.name):
        if entry.name == "__pycache__":
            continue
        if entry.is_dir():
            files.update(_tree(entry, f"{prefix}{entry.name}/"))
        else:
            files[prefix + entry.name] = entry.read_text(encoding="utf-8")
    return files


def base_files() -> dict[str, str]:
    """The project as it is on main."""
    return _tree(_data() / "main")


def feature_commits() -> list[tuple[str, dict[str, str]]]:
    """The messy history on the feature branch: each commit's message and the files it writes."""
    data = _data()
    messages = tomli.loads((data / "feature.toml").read_text(encoding="utf-8"))["messages"]
    return [(message, _tree(data / "feature" / str(n))) for n, message in enumerate(messages, 1)]


def spec_template() -> str:
    return (_data() / "spec.toml.in").read_text(encoding="utf-8")


def spec_text() -> str:
    """The demo's spec; build and test run with the Python running git-retcon."""
    python = shlex.quote(sys.executable)
    # json.dumps writes a valid TOML basic string, whatever the interpreter's path holds.
    return spec_template().format(source=SOURCE, remote=REMOTE, cleaned=CLEANED,
                       build=json.dumps(f"{python} -m compileall -q invoicing"),
                       test=json.dumps(f"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {python} -m pytest -q"))


# -- building the repository -------------------------------------------------------


def target_dir(given: str | None) -> Path:
    """DIR, created if new and refused unless empty; without DIR, a new temporary directory."""
    if given is None:
        return Path(tempfile.mkdtemp(prefix="retcon-demo-"))
    path = Path(given).expanduser().absolute()
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise RetconError(f"{given} exists and is not an empty directory: "
                          "give a new or empty directory for the demo")
    path.mkdir(parents=True, exist_ok=True)
    return path


def write_files(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")


def commit(root: Path, message: str, when: int) -> None:
    git(root, "add", "-A")
    # --no-verify: the user's global hooks have no say in a demo repository.
    git(root, "commit", "-q", "--no-verify", "-m", message, f"--date={when} +0000")


def build_repo(root: Path) -> None:
    """main with the package; `feature` with the messy history, checked out."""
    git(root, "init", "-q", "-b", REMOTE)
    # A local identity, so the demo works on a machine where git has none yet.
    for key, value in (("user.name", "Demo Developer"), ("user.email", "dev@example.com"),
                       ("commit.gpgsign", "false")):
        git(root, "config", key, value)
    when = int(time.time()) - 7 * 24 * HOUR
    write_files(root, base_files())
    commit(root, "invoicing: lines, totals and exact money", when)
    git(root, "checkout", "-q", "-b", SOURCE)
    for i, (message, files) in enumerate(feature_commits()):
        write_files(root, files)
        commit(root, message, when + (i + 1) * 19 * HOUR)


# -- the flow ------------------------------------------------------------------------


@contextlib.contextmanager
def cwd(path: Path) -> Iterator[None]:
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def retcon(ui: UI, invoke: Invoke, *args: str) -> None:
    """Run a git-retcon command in-process, shown as the user would type it."""
    ui.command("git retcon " + " ".join(shlex.quote(a) for a in args))
    invoke(list(args))


def show_git(ui: UI, root: Path, *args: str) -> None:
    ui.command("git " + " ".join(args))
    color = ["--color=always"] if ui.color else ["--color=never"]
    ui.line(git(root, *args[:1], *color, *args[1:]).rstrip())


def run(directory: str | None, ui: UI, invoke: Invoke) -> None:
    """invoke runs a git-retcon command line in this process (the cli passes its own)."""
    if importlib.util.find_spec("pytest") is None:
        raise RetconError(f"the demo's tests run with pytest, which {sys.executable} lacks: "
                          f"install it with `{shlex.quote(sys.executable)} -m pip install pytest`")
    started = time.monotonic()
    root = target_dir(directory)
    build_repo(root)
    ui.heading(f"1. A project with a messy feature branch, in {root}")
    show_git(ui, root, "log", "--oneline", "--stat=60", f"{REMOTE}..{SOURCE}")
    ui.heading(f"2. The history you want: a spec with `paths` per logical commit, in {SPEC_FILE}")
    (root / SPEC_FILE).write_text(spec_text(), encoding="utf-8")
    ui.line(spec_text().rstrip())
    with cwd(root):
        retcon(ui, invoke, "plan", "--from-file", SPEC_FILE, "--no-edit")
        ui.heading("3. Rebuild it, one logical commit at a time, building and testing each")
        retcon(ui, invoke, "run")
        ui.heading("4. The result: a reviewable branch with the same final tree")
        show_git(ui, root, "log", "--oneline", "--graph", "--decorate", SOURCE, CLEANED)
        retcon(ui, invoke, "check")
    ui.heading(f"Done in {time.monotonic() - started:.1f}s. The repository is yours to explore:")
    tips = [(f"cd {shlex.quote(str(root))}", ""),
            (f"git log --notes=retcon --stat {CLEANED}", "each commit, with what git-retcon recorded"),
            ("git retcon status", "build, tests and tokens per logical commit"),
            ("git retcon spec show", "the spec, with the run's history"),
            (f"git diff {SOURCE} {CLEANED}", "nothing: the same final tree")]
    width = max(len(cmd) for cmd, _ in tips)
    for cmd, why in tips:
        ui.line(f"  {cmd:<{width}}   # {why}" if why else f"  {cmd}")
