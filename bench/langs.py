"""retcon-paths on misordered specs of real code, per language: the share of logical commits it
completes with no human step, with the rework code at main (6cad0cf) and with this tree's.

Real code any machine can have: successive releases from PyPI (Python) and npm (JavaScript,
TypeScript) are the feature branch's commits, one per release; a crate's source from Debian's
librust-*-dev (Rust) and a Go module's from golang-*-dev are one commit. `main` holds only the
project's frame (its manifest, and for an interpreted language a loader that imports every
module there is), so every file of the code is in the diff. The spec is the one a user writes
from `git diff --stat`: a logical commit per module with its tests, in path order (a module
with no test rides with the one before it in its directory), docs and the rest last. Path
order is not dependency order: `__init__.py`, `lib.rs` and `index.js` come first and use
modules that later commits add, so the builds and tests fail the way a misordered spec does.

"before" runs this same bench with git-retcon's code as it is at main (extracted with git
archive, put first on PYTHONPATH); "after" with this tree's. A history that cannot be had (no
registry, no Debian) is skipped with a line. More histories: `--repo LANG PATH BASE TIP BUILD
TEST` takes a local clone's BASE..TIP (the frame is BASE's manifest; commits are its history), and
`--setup CMD` gives them a setup (`npm ci`: tests that need the project's dev dependencies).

    python -m bench.langs [--only LANG] [--repo LANG PATH BASE TIP BUILD TEST] [--setup CMD]
"""
from __future__ import annotations

import argparse
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from bench import releases
from bench._old import old_tree
from testing.gitrepo import GitRepo, hermetic_env

ROOT = Path(__file__).resolve().parent.parent
MAIN = "6cad0cf"
Files = dict[str, bytes]

_TEST = re.compile(r"(?:^|/)(?:tests?|__tests__|spec)/|(?:^|/)test_[^/]*$|[_.-](?:tests?|spec)\.\w+$|_tests?\.rs$")
_CODE = re.compile(r"\.(?:py|rs|go|[cm]?js|ts|tsx|d\.ts)$")

PY_LOADER = b'''"""Imports every module under src/ (a bench frame: passes while there are none)."""
import importlib
import pathlib
import sys

sys.path.insert(0, "src")
for path in sorted(pathlib.Path("src").rglob("*.py")):
    parts = path.relative_to("src").with_suffix("").parts
    importlib.import_module(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
'''
JS_LOADER = b'''// Imports every module of the package (a bench frame: passes while there are none).
import { readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const skip = new Set(["node_modules", ".git", "bench-frame", "bin"]);
function walk(dir) {
  return readdirSync(dir).sort().flatMap((name) => {
    const path = join(dir, name);
    if (skip.has(name)) return [];
    if (statSync(path).isDirectory()) return walk(path);
    return /\\.(c|m)?js$/.test(name) ? [path] : [];
  });
}
for (const path of walk(".")) await import(pathToFileURL(resolve(path)).href);
'''


@dataclass
class Case:
    lang: str
    name: str
    frame: Files                  # main: what builds before any code is there
    releases: list[Files]         # the feature branch, a commit each
    build: str | None
    test: str | None
    spec: list[tuple[str, list[str]]] = field(default_factory=list)
    setup: str | None = None      # the spec's setup (--setup, for --repo histories whose tests need packages)


# -- where the code comes from ------------------------------------------------------------


def _cache() -> Path:
    where = releases.cache_dir() / "langs"
    where.mkdir(parents=True, exist_ok=True)
    return where


def _tar(data: bytes, top: str | None = None) -> Files:
    """The files of a tarball, by path under its top folder (or under `top`)."""
    files: Files = {}
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        for member in tar.getmembers():
            parts = PurePosixPath(member.name).parts
            if top is not None:
                if parts[: len(PurePosixPath(top).parts)] != PurePosixPath(top).parts:
                    continue
                parts = parts[len(PurePosixPath(top).parts):]
            else:
                parts = parts[1:]
            f = tar.extractfile(member) if member.isfile() else None
            if f is not None and parts:
                files["/".join(parts)] = f.read()
    return files


def npm(package: str, version: str) -> Files:
    """A release's npm tarball, by `npm pack` (cached)."""
    where = _cache() / "npm"
    where.mkdir(exist_ok=True)
    name = f"{package.lstrip('@').replace('/', '-')}-{version}.tgz"
    if not (where / name).exists():
        subprocess.run(["npm", "pack", "--silent", "--pack-destination", str(where), f"{package}@{version}"],
                       check=True, capture_output=True, text=True, timeout=120)
    return _tar((where / name).read_bytes())


def debian(package: str, under: str) -> Files:
    """The files of a Debian package under a folder (apt-get download, cached)."""
    where = _cache() / "debian" / package
    if not (where / "done").exists():
        shutil.rmtree(where, ignore_errors=True)
        where.mkdir(parents=True)
        subprocess.run(["apt-get", "download", "-q", package], cwd=where, check=True, capture_output=True,
                       timeout=300)
        deb = next(where.glob("*.deb"))
        subprocess.run(["dpkg-deb", "-x", str(deb), str(where / "x")], check=True, timeout=120)
        (where / "done").write_text("ok\n")
    root = where / "x" / under
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def typescript() -> str:
    """tsc from the npm registry, installed once into the cache."""
    where = _cache() / "typescript"
    tsc = where / "node_modules" / "typescript" / "bin" / "tsc"
    if not tsc.exists():
        where.mkdir(exist_ok=True)
        subprocess.run(["npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", str(where),
                        "typescript@4.2.4"], check=True, capture_output=True, timeout=300)
    return f"node {tsc}"


# -- the histories ---------------------------------------------------------------------------


def _python(package: str, versions: list[str]) -> Case:
    snaps = [{p: d for p, d in releases._sdist(package, v).items() if not p.startswith("docs/")} for v in versions]
    frame = {"pyproject.toml": snaps[0].get("pyproject.toml", b"[project]\n"), "bench-frame/load.py": PY_LOADER}
    return Case("Python", f"{package} {versions[0]}..{versions[-1]} (PyPI)", frame, snaps,
                "python3 -m compileall -q src", "python3 bench-frame/load.py")


def _js(package: str, versions: list[str]) -> Case:
    snaps = [npm(package, v) for v in versions]
    pkg = json.loads(snaps[-1]["package.json"])
    frame = {"package.json": json.dumps({"name": pkg["name"], "type": pkg.get("type", "commonjs"),
                                         "private": True}, indent=2).encode() + b"\n",
             "bench-frame/load.mjs": JS_LOADER}
    return Case("JavaScript", f"{package} {versions[0]}..{versions[-1]} (npm)", frame, snaps, None,
                "node bench-frame/load.mjs")


def _ts(package: str, versions: list[str]) -> Case:
    snaps = [npm(package, v) for v in versions]
    frame = {"tsconfig.json": b'{\n  "compilerOptions": {"noEmit": true, "strict": true, "types": [], '
                              b'"target": "es2020", "lib": ["es2020", "dom"]},\n'
                              b'  "include": ["**/*.ts"], "exclude": ["node_modules", "test-d"]\n}\n',
             "bench-frame/empty.ts": b"export {};\n"}
    snaps = [{p: d for p, d in s.items() if not p.startswith("test-d/")} for s in snaps]
    return Case("TypeScript", f"{package} {versions[0]}..{versions[-1]} (npm)", frame, snaps,
                f"{typescript()} -p .", None)


_UNRESOLVABLE = re.compile(r"^\[\[?(?:(?:dev-|build-)?dependencies|bench|example|test|target\.)")


def _offline(manifest: bytes) -> bytes:
    """A Cargo.toml that builds offline with no registry: its dependencies (even optional ones,
    which cargo resolves all the same), dev-dependencies, benches and examples left out."""
    out: list[str] = []
    keep = True
    for line in manifest.decode().splitlines():
        if line.startswith("["):
            keep = not _UNRESOLVABLE.match(line)
        if keep:
            out.append(line)
    return ("\n".join(out) + "\n").encode()


def _rust(package: str, crate: str) -> Case:
    files = debian(package, f"usr/share/cargo/registry/{crate}")
    files = {p: d for p, d in files.items() if not p.startswith((".", "benches/", "examples/", "debian/"))}
    manifest = _offline(files.pop("Cargo.toml"))
    frame = {"Cargo.toml": manifest, "src/lib.rs": b""}
    files["Cargo.toml"] = manifest
    return Case("Rust", f"{crate} (Debian {package})", frame, [files], "cargo build --offline -q", None)


def _go(package: str, module: str) -> Case:
    files = debian(package, f"usr/share/gocode/src/{module}")
    files = {p: d for p, d in files.items() if not p.startswith(".")}
    frame = {"go.mod": files.get("go.mod", f"module {module}\n\ngo 1.19\n".encode()),
             "bench-frame/doc.go": b"// Package benchframe keeps ./... matching a package before any code.\n"
                                   b"package benchframe\n"}
    files["go.mod"] = frame["go.mod"]
    env = "GOFLAGS=-mod=mod GOPROXY=off"
    return Case("Go", f"{module} (Debian {package})", frame, [files], f"{env} go build ./...",
                f"{env} go test -count=1 ./...")


CASES = [
    (lambda: _python("itsdangerous", ["2.1.2", "2.2.0"])),
    (lambda: _python("tomli", ["2.0.1", "2.1.0", "2.2.1"])),
    (lambda: _rust("librust-base64-dev", "base64-0.13.0")),
    (lambda: _rust("librust-semver-dev", "semver-1.0.14")),
    (lambda: _js("semver", ["7.6.0", "7.6.1", "7.6.2", "7.6.3"])),
    (lambda: _js("nanoid", ["5.0.7", "5.0.9", "5.1.0"])),
    (lambda: _js("kleur", ["4.1.4", "4.1.5"])),
    (lambda: _ts("type-fest", ["0.20.2", "0.21.3"])),
    (lambda: _go("golang-github-davecgh-go-spew-dev", "github.com/davecgh/go-spew")),
    (lambda: _go("golang-github-google-go-cmp-dev", "github.com/google/go-cmp")),
]


# -- the misordered spec -------------------------------------------------------------------------


def units(paths: list[str]) -> list[tuple[str, list[str]]]:
    """Logical commits in path order: a module with its tests; a module with none rides with the
    module before it in its folder; tests of no module and everything else come last."""
    code = sorted(p for p in paths if _CODE.search(p) and not _TEST.search(p))
    tests = sorted(p for p in paths if _CODE.search(p) and _TEST.search(p))
    rest = sorted(p for p in paths if not _CODE.search(p))
    stem = {p: PurePosixPath(p).name.split(".")[0] for p in code}
    owned: dict[str, list[str]] = {p: [] for p in code}
    loose = []
    for t in tests:
        name = PurePosixPath(t).name.split(".")[0]
        best = max((p for p in code if stem[p] not in ("index", "lib", "mod", "__init__")
                    and re.search(rf"(?:^|[_-]){re.escape(stem[p])}(?:$|[_-])", name)),
                   key=lambda p: len(stem[p]), default=None)
        if best is None:
            loose.append(t)
        else:
            owned[best].append(t)
    out: list[tuple[str, list[str]]] = []
    for p in code:
        folder = str(PurePosixPath(p).parent)
        if owned[p] or not out or out[-1][0] != folder:
            out.append((folder, [p, *owned[p]]))
        else:
            out[-1][1].extend([p, *owned[p]])
    out.append(("the rest", loose + rest))
    return [(f"{folder}: {', '.join(PurePosixPath(p).name for p in files[:3])}"
             f"{'...' if len(files) > 3 else ''}", files) for folder, files in out if files]


# -- running it ------------------------------------------------------------------------------------


def build(root: Path, case: Case) -> GitRepo:
    repo = GitRepo.init(root)
    repo.commit("frame", dict(case.frame))
    repo.git("checkout", "-q", "-b", "feature")
    previous: Files = dict(case.frame)
    for i, snap in enumerate(case.releases):
        files: dict[str, str | bytes | None] = {**snap, **case.frame}
        files.update({p: None for p in previous if p not in files})
        repo.commit(f"release {i + 1}", files)
        previous = {**snap, **case.frame}
    repo.git("checkout", "-q", "main")
    changed = [p for p in repo.git("diff", "--name-only", "main", "feature").splitlines() if p]
    case.spec = units(changed)
    spec = 'source = "feature"\nremote = "main"\ncleaned = "clean"\ntimeout = 300\n'
    spec += f"setup = {json.dumps(case.setup)}\n" if case.setup else ""
    spec += f"build = {json.dumps(case.build)}\n" if case.build else ""
    spec += f"test = {json.dumps(case.test)}\n" if case.test else ""
    for message, paths in case.spec:
        spec += f"\n[[commit]]\nmessage = {json.dumps(message)}\npaths = {json.dumps(paths)}\n"
    (root.parent / f"{root.name}.toml").write_text(spec)
    return repo


def _retcon(repo: GitRepo, code: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bench._retcon", *args], cwd=repo.path, text=True,
                          capture_output=True, env={**os.environ, "PYTHONPATH": str(code)}, timeout=3600)


def complete(repo: GitRepo, code: Path, spec: Path) -> tuple[int, str]:
    """(logical commits complete with a commit of their own when the run stopped (an empty one is not
    done), why it stopped, if stuck)."""
    _retcon(repo, code, "plan", "--from-file", str(spec), "--no-edit")
    run = _retcon(repo, code, "run", "-m", "retcon-paths")
    if run.returncode not in (0, 3):
        return 0, f"run failed ({run.returncode}): {(run.stderr or run.stdout).strip().splitlines()[-1:]}"
    doc = json.loads(_retcon(repo, code, "status", "--json").stdout)
    done = sum(1 for c in doc["commits"] if c["state"] == "complete" and c["commits"])
    why = ""
    if run.returncode == 3:
        stuck = next(c for c in doc["commits"] if c["state"] == "stuck")
        said = re.search(r"is stuck: (.*)", run.stdout + run.stderr)
        why = f"{stuck['index']}: {said.group(1)[:70] if said else stuck['message'][:30]}"
    return done, why


def local(lang: str, path: str, base: str, tip: str, build_cmd: str, test_cmd: str, setup: str | None = None) -> Case:
    """A local clone's history base..tip: each commit a release; the frame is base's tree."""
    def tree(rev: str) -> Files:
        names = subprocess.run(["git", "-C", path, "ls-tree", "-r", "--name-only", rev], check=True,
                               capture_output=True, text=True).stdout.split("\n")
        return {n: subprocess.run(["git", "-C", path, "show", f"{rev}:{n}"], check=True,
                                  capture_output=True).stdout for n in names if n}
    revs = subprocess.run(["git", "-C", path, "rev-list", "--reverse", f"{base}..{tip}"], check=True,
                          capture_output=True, text=True).stdout.split()
    return Case(lang, f"{Path(path).name} {base}..{tip} (local clone)", tree(base), [tree(r) for r in revs],
                build_cmd or None, test_cmd or None, setup=setup)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.langs")
    ap.add_argument("--only", help="one language (Python, Rust, JavaScript, TypeScript, Go)")
    ap.add_argument("--repo", nargs=6, action="append", default=[], metavar=("LANG", "PATH", "BASE", "TIP", "BUILD",
                                                                               "TEST"))
    ap.add_argument("--setup", help="the spec's setup for the --repo histories (npm ci): main's spec has none")
    args = ap.parse_args(argv)
    cases: list[Case] = []
    for make in CASES:
        try:
            cases.append(make())
        except (OSError, subprocess.SubprocessError, tarfile.TarError, ValueError, KeyError, StopIteration) as exc:
            print(f"(skipped a history: {type(exc).__name__}: {str(exc)[:200]})")
    for lang, path, base, tip, build_cmd, test_cmd in args.repo:
        if Path(path).exists():
            cases.append(local(lang, path, base, tip, build_cmd, test_cmd, args.setup))
        else:
            print(f"(skipped {lang} {path}: no such clone)")
    cases = [c for c in cases if not args.only or c.lang.lower() == args.only.lower()]
    rows = []
    with tempfile.TemporaryDirectory(prefix="retcon-bench-langs-") as tmp:
        root = Path(tmp)
        # The toolchains stay where they are installed (rustup finds them from HOME otherwise).
        home = Path.home()
        os.environ.setdefault("RUSTUP_HOME", str(home / ".rustup"))
        os.environ.setdefault("CARGO_HOME", str(home / ".cargo"))
        os.environ.update(hermetic_env(root / "home"))
        before = old_tree(MAIN, root / "main", also=("bench", "testing"))
        for i, case in enumerate(cases):
            counts = []
            for label, code in (("before", before), ("after", ROOT)):
                repo = build(root / f"{i}-{label}", case)
                counts.append(complete(repo, code, root / f"{i}-{label}.toml"))
            rows.append((case, counts))
            print(f"  {case.lang:<11} {case.name:<48} {len(case.spec):>3} commits: before {counts[0][0]:>3}, "
                  f"after {counts[1][0]:>3}  {counts[1][1]}", flush=True)
    print("\nretcon-paths on misordered specs of real code: logical commits completed with no human step")
    print(f"{'language':<12}{'histories':>10}{'commits':>9}{'before':>14}{'after':>14}")
    for lang in dict.fromkeys(c.lang for c, _ in rows):
        mine = [(c, n) for c, n in rows if c.lang == lang]
        total = sum(len(c.spec) for c, _ in mine)
        b = sum(n[0][0] for _, n in mine)
        a = sum(n[1][0] for _, n in mine)
        print(f"{lang:<12}{len(mine):>10}{total:>9}{b:>8} ({b / total:>3.0%}){a:>8} ({a / total:>3.0%})")


if __name__ == "__main__":
    main(sys.argv[1:])
