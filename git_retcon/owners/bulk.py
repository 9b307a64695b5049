"""Lock, generated and minified files: summarised to the model, assigned by rule (plan and
the questions both: plan/bulk.py says them to a model).

Their hunks are noise to a reader and huge in a prompt, so the model sees one line
per file (path, kind, size, counts) and plain code puts the file in the commit
that changes its manifest (package.json for package-lock.json) or its source
(src/app.js for dist/app.min.js), else where most of its directory's changes go.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import pygit2

from git_retcon.diff.hunk import Hunk

# Lock file -> the manifests whose change it follows.
LOCKS = {
    "package-lock.json": ("package.json",), "npm-shrinkwrap.json": ("package.json",),
    "yarn.lock": ("package.json",), "pnpm-lock.yaml": ("package.json",), "bun.lockb": ("package.json",),
    "Cargo.lock": ("Cargo.toml",), "poetry.lock": ("pyproject.toml",), "uv.lock": ("pyproject.toml",),
    "pdm.lock": ("pyproject.toml",), "Pipfile.lock": ("Pipfile",), "composer.lock": ("composer.json",),
    "Gemfile.lock": ("Gemfile",), "go.sum": ("go.mod",), "mix.lock": ("mix.exs",),
    "pubspec.lock": ("pubspec.yaml",), "Podfile.lock": ("Podfile",), "flake.lock": ("flake.nix",),
    "Package.resolved": ("Package.swift",), "gradle.lockfile": ("build.gradle", "build.gradle.kts"),
}
# Generated file name -> (kind, the name of the source it is made from).
GENERATED = (
    (re.compile(r"^(.*)\.min\.(js|mjs|css)$"), "minified", r"\1.\2"),
    (re.compile(r"^(.*)\.map$"), "generated", r"\1"),
    (re.compile(r"^(.*)_pb2(_grpc)?\.pyi?$"), "generated", r"\1.proto"),
    (re.compile(r"^(.*)\.pb(\.gw)?\.go$"), "generated", r"\1.proto"),
    (re.compile(r"^(.*)\.pb\.(cc|h)$"), "generated", r"\1.proto"),
    (re.compile(r"^(.*)\.g\.dart$"), "generated", r"\1.dart"),
    (re.compile(r"^(.*)[._-]generated\.(\w+)$"), "generated", r"\1.\2"),
)
# Header lines that tools write into what they generate.
_MARKER = re.compile(rb"@generated|Code generated .{0,80}DO NOT EDIT|(?i:(auto-?|automatically )generated"
                     rb"[^\n]{0,80}do not (edit|modify))|(?i:this file (is|was) (auto-?|automatically )generated)")
_HEAD_BYTES = 1024


@dataclass
class Bulk:
    """A file summarised to the model and assigned by rule, never listed hunk by hunk."""

    path: str
    kind: str                         # "lock", "generated" or "minified"
    follows: tuple[str, ...]          # paths whose commit it joins
    size: int
    hunks: list[Hunk]

    def describe(self) -> str:
        added = sum(h.added_lines for h in self.hunks)
        removed = sum(h.removed_lines for h in self.hunks)
        joins = f"; goes with {' or '.join(self.follows)}" if self.follows else ""
        return (f"{self.path}: {self.kind} file, {self.size} bytes, {len(self.hunks)} hunks "
                f"+{added} -{removed}{joins}")


def _blob(repo: pygit2.Repository, tree: pygit2.Tree, path: str) -> bytes | None:
    try:
        obj = repo[tree[path].id]
    except (KeyError, ValueError):
        return None
    return obj.data if isinstance(obj, pygit2.Blob) else None


def _minified(data: bytes) -> bool:
    """Long lines in a sizeable text file: a bundle, not something a person wrote."""
    if len(data) < 4096 or b"\0" in data[:8000]:
        return False
    return len(data) / (data.count(b"\n") + 1) > 300


def classify(repo: pygit2.Repository, tip: pygit2.Tree, base: pygit2.Tree, hunks: list[Hunk]) -> dict[str, Bulk]:
    by_path: dict[str, list[Hunk]] = {}
    for h in hunks:
        by_path.setdefault(h.path, []).append(h)
    out: dict[str, Bulk] = {}
    for path, hs in by_path.items():
        d, _, name = path.rpartition("/")
        prefix = d + "/" if d else ""
        data = _blob(repo, tip, path)
        if data is None:
            data = _blob(repo, base, path) or b""
        kind = ""
        follows: tuple[str, ...] = ()
        if name in LOCKS:
            kind, follows = "lock", tuple(prefix + m for m in LOCKS[name])
        else:
            for rx, what, src in GENERATED:
                if rx.match(name):
                    kind, follows = what, (prefix + rx.sub(src, name),)
                    break
            if not kind and _MARKER.search(data[:_HEAD_BYTES]):
                kind = "generated"
            elif not kind and _minified(data):
                kind = "minified"
        if kind:
            out[path] = Bulk(path, kind, follows, len(data), hs)
    return out


def owner_by_rule(b: Bulk, owner_of_path: dict[str, int], owners_in_dir: Callable[[str], list[int]],
                   last: int) -> tuple[int, str]:
    """The commit that changes the file's manifest (or source), else the directory's, else the last."""
    for p in b.follows:
        if p in owner_of_path:
            return owner_of_path[p], f"it follows {p}"
    if b.kind != "lock":
        # A build output sits apart from its source (dist/app.min.js, src/app.js).
        for f in b.follows:
            name = f.rsplit("/", 1)[-1]
            for p, k in owner_of_path.items():
                if p.rsplit("/", 1)[-1] == name:
                    return k, f"it is built from {p}"
    if b.kind == "lock":
        # A workspace lock file: its manifest may sit in any ancestor directory.
        parts = b.path.split("/")[:-1]
        name = b.path.rsplit("/", 1)[-1]
        for k in range(len(parts) - 1, -1, -1):
            for m in LOCKS[name]:
                p = "/".join(parts[:k] + [m])
                if p in owner_of_path:
                    return owner_of_path[p], f"it follows {p}"
    d = b.path.rpartition("/")[0]
    while True:
        owners = owners_in_dir(d)
        if owners:
            best = max(set(owners), key=lambda o: (owners.count(o), -o))
            return best, f"most changes in {d or 'the top directory'} are there"
        if not d:
            return last, "nothing else decides"
        d = d.rpartition("/")[0]

