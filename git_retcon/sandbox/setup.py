"""The spec's `setup` command: a project's dependencies installed in a build worktree (`npm ci`,
`cargo fetch`, `pip install -e .`), run when the worktree is new and again when a file it depends
on changed, never otherwise.

Its results are files git ignores (node_modules/, target/, .venv/), which stay in the worktree
across resets and, once the spec is complete, across runs (sandbox/keep.py). Whether they are
still good is a stamp per worktree under the git dir: the setup command and the tree it last
ran on. The worktree's tree differs from that one in a watched file (a lockfile or a manifest,
anywhere in the tree, or a file the command names), or setup failed there: setup runs again.
The stamp is removed before setup runs, so a kill leaves none: the next command sets up again.
"""
from __future__ import annotations

import fnmatch
import json
import os
import shlex
from collections.abc import Callable, Iterable
from pathlib import PurePosixPath

import pygit2

from git_retcon.sandbox.admin import stamp_path
from git_retcon.sandbox.confine import UNCONFINED, Sandbox
from git_retcon.sandbox.runner import DEFAULT_TIMEOUT, Result, run_command
from git_retcon.sandbox.worktree import Worktree
from git_retcon.state.notes import CommandKind

# Lockfiles and manifests, by file name anywhere in the tree: a change to one of these is what
# makes installed dependencies stale (ARCHITECTURE.md and the man page's THE HISTORY SPEC list them).
WATCHED = (
    # JavaScript, TypeScript
    "package.json", "package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml",
    "pnpm-workspace.yaml", "bun.lockb", "bun.lock", ".npmrc", ".yarnrc.yml",
    # Rust
    "Cargo.toml", "Cargo.lock", "rust-toolchain", "rust-toolchain.toml",
    # Go
    "go.mod", "go.sum", "go.work", "go.work.sum",
    # Python
    "pyproject.toml", "setup.py", "setup.cfg", "requirements*.txt", "constraints*.txt", "poetry.lock",
    "uv.lock", "Pipfile", "Pipfile.lock",
    # Ruby, PHP, Elixir, Dart, Swift
    "Gemfile", "Gemfile.lock", "*.gemspec", "composer.json", "composer.lock", "mix.exs", "mix.lock",
    "pubspec.yaml", "pubspec.lock", "Package.swift", "Package.resolved",
    # Java, Kotlin, .NET
    "pom.xml", "build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts",
    "gradle.properties", "libs.versions.toml", "*.csproj", "packages.lock.json",
)

# What installs a project's dependencies, by the lockfile or manifest at its root: the first found
# is the suggestion shown when a command is not found and the spec has no setup.
SUGGESTIONS = (
    ("package-lock.json", "npm ci"), ("npm-shrinkwrap.json", "npm ci"),
    ("pnpm-lock.yaml", "pnpm install --frozen-lockfile"),
    ("yarn.lock", "yarn install --frozen-lockfile"), ("bun.lockb", "bun install --frozen-lockfile"),
    ("bun.lock", "bun install --frozen-lockfile"), ("package.json", "npm install"),
    ("Cargo.toml", "cargo fetch"), ("go.mod", "go mod download"),
    ("uv.lock", "uv sync"), ("poetry.lock", "poetry install"), ("Pipfile.lock", "pipenv sync --dev"),
    ("requirements-dev.txt", "pip install -r requirements-dev.txt"),
    ("requirements.txt", "pip install -r requirements.txt"), ("pyproject.toml", "pip install -e ."),
    ("setup.py", "pip install -e ."), ("Gemfile.lock", "bundle install"), ("Gemfile", "bundle install"),
    ("composer.lock", "composer install"), ("mix.lock", "mix deps.get"), ("pubspec.yaml", "dart pub get"),
    ("pom.xml", "mvn -q dependency:go-offline"), ("build.gradle", "gradle dependencies"),
    ("build.gradle.kts", "gradle dependencies"),
)


def suggest(names: Iterable[str]) -> tuple[str, str] | None:
    """(file, setup command) for a repository with these files at its root, if one is known."""
    have = set(names)
    return next(((f, cmd) for f, cmd in SUGGESTIONS if f in have), None)


def is_watched(path: str, named: frozenset[str] = frozenset()) -> bool:
    """Whether a change to path makes installed dependencies stale: a lockfile or a manifest,
    or a file the setup command names."""
    name = PurePosixPath(path).name
    return path in named or any(fnmatch.fnmatchcase(name, pattern) for pattern in WATCHED)


def named_files(command: str) -> frozenset[str]:
    """Paths the setup command names (`pip install -r requirements/dev.txt`): watched too."""
    try:
        words = shlex.split(command)
    except ValueError:
        return frozenset()
    return frozenset(w.removeprefix("./") for w in words if "." in w.strip("./") and not w.startswith("-")
                     and not w.startswith("/") and ".." not in w.split("/"))


class Setup:
    """The spec's setup command for one worktree: what says whether it must run, and running it."""

    def __init__(self, wt: Worktree, command: str, timeout: int, sandbox: Sandbox | None = None):
        self.wt = wt
        self.sandbox = (sandbox or UNCONFINED).for_setup()   # setup has the network unless the spec says no
        self.command = command
        self.timeout = timeout
        self.named = named_files(command)
        self.stamp = stamp_path(wt.repo, wt.path)

    @classmethod
    def of(cls, wt: Worktree, command: str | None, timeout: int | None, sandbox: Sandbox | None = None) -> Setup | None:
        """The spec's setup for wt; None when the spec has none."""
        return cls(wt, command, timeout or DEFAULT_TIMEOUT, sandbox) if command else None

    def fresh(self) -> bool:
        """Whether setup never ran in this worktree (a new one, or one whose setup was killed)."""
        return not self.stamp.exists()

    def needed(self) -> str | None:
        """Why setup must run before a command now (the worktree as it is: its index's tree), or
        None when the installed dependencies are those of its lockfiles and manifests."""
        try:
            doc = json.loads(self.stamp.read_text())
        except (OSError, ValueError):
            return "new worktree"
        if not isinstance(doc, dict) or doc.get("command") != self.command:
            return "the setup command changed" if isinstance(doc, dict) and doc.get("command") else "new worktree"
        if doc.get("failed"):
            return "it failed last time"
        tree = self.wt.tree()
        before = doc.get("tree")
        if before == tree:
            return None
        try:
            changed = self._changed(str(before), tree)
        except (KeyError, ValueError, pygit2.GitError):
            return "new worktree"   # the stamp's tree is gone (gc): install again
        return f"{', '.join(changed[:3])}{' ...' if len(changed) > 3 else ''} changed" if changed else None

    def _changed(self, before: str, after: str) -> list[str]:
        repo = self.wt.repo
        old, new = repo[before], repo[after]
        if not isinstance(old, pygit2.Tree) or not isinstance(new, pygit2.Tree):
            raise ValueError(before)
        diff = old.diff_to_tree(new)
        paths = dict.fromkeys(p for d in diff.deltas for p in (d.old_file.path, d.new_file.path))
        return [p for p in paths if is_watched(p, self.named)]

    def run(self, kind: CommandKind, why: str, on_output: Callable[[str], None] | None = None) -> Result:
        """Run setup on the worktree as it is; on a pass, stamp it. Whatever it left that git does
        not ignore is undone after it (a lockfile it rewrote, a file it made): the build sees
        exactly the tree. A failure stands for kind's result (Result.setup says so)."""
        tree = self.wt.tree()
        self.stamp.unlink(missing_ok=True)
        self.wt.touched_by_command()
        res = run_command(kind, self.command, self.wt.path, self.timeout, on_output, self.sandbox)
        res.setup = why
        self.wt.make_exact()
        self.stamp.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.stamp.with_name(f".{self.stamp.name}.{os.getpid()}")
        tmp.write_text(json.dumps({"command": self.command, "tree": tree, "failed": not res.passed}) + "\n")
        tmp.replace(self.stamp)
        return res
