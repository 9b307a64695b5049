"""Real consecutive commits of real open-source projects whose commits change the same files: the
histories the owners' questions are measured on (issue 30), the authors' commits being the truth.

No project's code is kept here: a history is named by its repository and its two ends, and its
commits are fetched at bench time, from $RETCON_BENCH_MIRRORS/<owner>+<name>/repo (a bare
repository holding them, for machines that reach no Git host) or else from GitHub into the bench
cache. A machine that can do neither skips them and says so.

    python -m bench.real_histories     # fetch each, print its commits, the files and hunks they share
"""
from __future__ import annotations

import json
import os
import pwd
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from bench.releases import cache_dir
from testing.gitrepo import GitRepo


@dataclass(frozen=True)
class RealHistory:
    name: str
    language: str
    repo: str       # owner/name on GitHub
    base: str       # the commit `main` is at: the parent of the first commit taken
    tip: str        # the last commit taken; base..tip is one line of single-parent commits
    test: str       # a test command that needs no network and no download
    what: str
    setup: str | None = None    # the spec's setup, run with the network: the packages the tests need


HISTORIES: list[RealHistory] = [
    RealHistory("tomli", "Python", "hukkin/tomli", "38297f82cd0ef067f1afd2ffb8dfa73b65c398da",
                "9eb2125ef49071e673d42e383b5221a268665193", "PYTHONPATH=src python3 -m unittest -q",
                "three TOML 1.1 features: each changes the parser, adds test data and takes its "
                "names out of one shared list of expected failures in tests/test_data.py"),
    RealHistory("tomli-2.4", "Python", "hukkin/tomli", "38297f82cd0ef067f1afd2ffb8dfa73b65c398da",
                "a678e6fdeffa89bd28e4ecc148b926a4e1bbbc7b", "PYTHONPATH=src python3 -m unittest -q",
                "the same three features and the release after them: readme, change log, pre-commit hooks, "
                "GitHub actions, a test helper, the version bump (nine commits; the planning-time case)"),
    RealHistory("pflag", "Go", "spf13/pflag", "3d32e71abc0bd7f78417460609bd5efca87508be",
                "c0bdd631c7115eaabfce7d6c38f09cb42da8909e", "GOTOOLCHAIN=local GOFLAGS=-mod=mod go test ./...",
                "a pull request's three commits: a new unknown-flags mode, both spellings of an option, "
                "and a rename of what the first added, all in flag.go and flag_test.go"),
    RealHistory("p-map", "JavaScript", "sindresorhus/p-map", "2ba3a002acac080c60c47ca1dfa2fad3e17f5b7c",
                "1af51b57534b284ead73cca65f26b56bb9390768", "node --check index.js && node --check test.js",
                "six commits between two releases: two fixes to index.js with tests, a tweak, a version bump, "
                "and two readme changes"),
    RealHistory("xmlparser", "Rust", "RazrFalcon/xmlparser", "953a9bddf96ff3cd6392e8558cbff742eb1a9b0a",
                "0dfb957e6aa6b47c89cb3301f6890ab36b4559c1", "cargo test --offline --tests",
                "four commits of one day: a readme and parser tweak, then three new stream errors, each a variant "
                "of one error enum, an arm of its Display match and an entry of one change log list (no dependency; "
                "--tests: a doc example on a private helper no longer compiles under today's rustdoc)"),
    RealHistory("is", "TypeScript", "sindresorhus/is", "ac46b5400d7ae00fcc001467ddfda5f9624c4ce8",
                "cb4ee0e92cd3bff8353bb6738bd1f54db87dc293", "node --import tsx --test test/test.ts",
                "three commits: two add number predicates, each to the same sorted lists (type names, "
                "assertions, the `is` object) in source/index.ts, the second also adding the names the first "
                "left out of one (so the first's tree fails `tsc`: the test is the package's own, run by node "
                "through tsx), then a fix",
                setup="npm install --ignore-scripts --no-audit --no-fund && "
                      "npm install --ignore-scripts --no-save --no-audit --no-fund tsx@4.23.15"),
]


class Unavailable(Exception):
    """The history's commits could not be had on this machine."""


def _git(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, text=True, capture_output=True,
                          env={**os.environ, "GIT_TERMINAL_PROMPT": "0"})


def source(h: RealHistory) -> str:
    """Where the history's commits can be fetched from: a mirror, or GitHub through the cache."""
    mirrors = os.environ.get("RETCON_BENCH_MIRRORS")
    if mirrors:
        local = Path(mirrors) / h.repo.replace("/", "+") / "repo"
        if _git("--git-dir", str(local), "cat-file", "-e", h.tip + "^{commit}").returncode == 0:
            return str(local)
    cached = cache_dir() / "real" / (h.repo.replace("/", "+") + ".git")
    if _git("--git-dir", str(cached), "cat-file", "-e", h.tip + "^{commit}").returncode == 0:
        return str(cached)
    cached.parent.mkdir(parents=True, exist_ok=True)
    if not cached.exists() and _git("init", "-q", "--bare", str(cached)).returncode != 0:
        raise Unavailable(f"cannot make {cached}")
    got = _git("--git-dir", str(cached), "fetch", "-q", "--no-tags", f"https://github.com/{h.repo}.git",
               f"{h.tip}:refs/heads/bench-tip")
    if got.returncode != 0:
        raise Unavailable(f"{h.repo}: {got.stderr.strip().splitlines()[-1] if got.stderr.strip() else 'fetch failed'}"
                          " (set RETCON_BENCH_MIRRORS to a folder of bare repositories)")
    return str(cached)


AUTHORS = "refs/bench/authors"     # the authors' commits, the truth; `feature` is their work squashed


def build(h: RealHistory, where: Path) -> GitRepo:
    """A fresh repository: `main` at the base; `feature` one commit "wip" on it with the tip's tree,
    as a branch looks before it is cleaned (so no source commit's subject tells where a hunk goes);
    the authors' commits at AUTHORS."""
    repo = GitRepo.init(where)
    got = _git("fetch", "-q", "--no-tags", source(h), f"{h.tip}:{AUTHORS}", cwd=where)
    if got.returncode != 0:
        raise Unavailable(f"{h.repo}: {got.stderr.strip()}")
    repo.git("update-ref", "refs/heads/main", h.base)
    repo.git("checkout", "-q", "main")
    for line in repo.git("rev-list", "--parents", f"main..{AUTHORS}").splitlines():
        if len(line.split()) != 2:
            raise Unavailable(f"{h.name}: {line.split()[0][:10]} is a merge; a history is one line of commits")
    wip = repo.git("commit-tree", f"{AUTHORS}^{{tree}}", "-p", "main", "-m", "wip")
    repo.git("update-ref", "refs/heads/feature", wip)
    return repo


def commits(repo: GitRepo) -> list[tuple[str, str, list[str]]]:
    """The authors' commits, oldest first: sha, subject, files."""
    out = []
    for sha in repo.git("rev-list", "--reverse", f"main..{AUTHORS}").split():
        subject = repo.git("log", "-1", "--format=%s", sha)
        files = repo.git("show", "--name-only", "--format=", "--no-renames", sha).split()
        out.append((sha, subject, files))
    return out


def spec_text(h: RealHistory, repo: GitRepo, owners: str | None = None, model: str | None = None,
              hints: bool = True) -> str:
    """The spec a new user writes: the authors' subjects, hints that name each commit's files (or
    none: the most a placement has to ask)."""
    lines = ['source = "feature"', 'remote = "main"', 'cleaned = "feature-clean"', f"test = {json.dumps(h.test)}",
             "timeout = 600"]
    if h.setup:
        lines.append(f"setup = {json.dumps(h.setup)}")
    if owners:
        lines.append(f'owners = "{owners}"')
    if model:
        lines.append(f"model = {json.dumps(model)}")
    for _, subject, files in commits(repo):
        lines += ["", "[[commit]]", f"message = {json.dumps(subject)}"]
        if hints:
            lines.append(f"hints = {json.dumps('Files: ' + ', '.join(files))}")
    return "\n".join(lines) + "\n"


def shared_files(repo: GitRepo) -> dict[str, int]:
    """Files more than one of the history's commits change, with how many."""
    count = Counter(f for _, _, files in commits(repo) for f in files)
    return {f: n for f, n in sorted(count.items()) if n > 1}


def _blocks(repo: GitRepo) -> Iterator[tuple[str, range, str, range]]:
    """Each change block of the branch's diff, without context as git-retcon cuts them: the base's
    path and the line numbers it removes there, the tip's path and those it adds."""
    old = new = ""
    for line in repo.git("diff", "--unified=0", "--no-renames", "main", AUTHORS).splitlines():
        if line.startswith(("--- ", "+++ ")):
            path = "" if line.endswith("/dev/null") else line[6:]
            old, new = (path, new) if line.startswith("-") else (old, path)
            continue
        m = re.match(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", line)
        if m:
            a, b, c, d = int(m[1]), int(m[2] or 1), int(m[3]), int(m[4] or 1)
            yield old, range(a, a + b if old else a), new, range(c, c + d if new else c)


def line_owners(repo: GitRepo) -> dict[tuple[str, str, int], int]:
    """Each line of the branch's diff by where it is -> the authors' commit (1-based) that wrote it:
    an added line, (path, "+", its number at the tip), the commit `git blame` names; a removed one,
    (path, "-", its number at the base), the commit after the last that still had it (`git blame
    --reverse`). By place, not by text: xmlparser's "Values: actual, expected, pos." and p-map's
    `pendingPromisesCount--;` are lines of two commits each, told apart only by where they are."""
    chain = [sha for sha, _, _ in commits(repo)]
    number = {sha: k for k, sha in enumerate(chain, start=1)}
    after = {sha: k + 1 for sha, k in number.items()}
    blames: dict[tuple[str, bool], dict[int, str]] = {}

    def blame(path: str, reverse: bool) -> dict[int, str]:
        if (path, reverse) not in blames:
            out = repo.git("blame", "--porcelain", *(["--reverse"] if reverse else []), f"main..{AUTHORS}", "--",
                           path)
            blames[path, reverse] = {int(m[2]): m[1] for m in re.finditer(r"^([0-9a-f]{40}) \d+ (\d+)", out, re.M)}
        return blames[path, reverse]

    def gone(path: str) -> int:
        """The first commit without path: a line blame --reverse follows into the file a rename
        made "still exists" at the tip, yet that commit took it from this path."""
        return next((k for sha, k in number.items() if not repo.git("ls-tree", "--name-only", sha, "--", path)),
                    len(chain))

    owners: dict[tuple[str, str, int], int] = {}
    for old, removed, new, added in _blocks(repo):
        owners.update({(new, "+", n): number.get(blame(new, False).get(n, ""), 0) for n in added})
        # the last commit that had it is the base (no commit of the chain): the first removed it
        kept = {n: after.get(blame(old, True).get(n, ""), 1) for n in removed}
        owners.update({(old, "-", n): gone(old) if k > len(chain) else k for n, k in kept.items()})
    return {where: k for where, k in owners.items() if k}


def shared_hunks(repo: GitRepo) -> tuple[int, int]:
    """The hunks of the branch's diff that hold lines of two or more of the authors' commits
    (line_owners), and all its hunks."""
    owners = line_owners(repo)
    shared = total = 0
    for old, removed, new, added in _blocks(repo):
        who = {owners.get((new, "+", n)) for n in added} | {owners.get((old, "-", n)) for n in removed}
        total += 1
        shared += len(who - {None}) > 1
    return shared, total


def toolchains() -> dict[str, str]:
    """The variables that keep the Rust toolchains found under a temporary HOME, as the benches run
    (rustup looks for them under HOME): RUSTUP_HOME as set, else the user's own."""
    home = Path(pwd.getpwuid(os.getuid()).pw_dir)
    return {"RUSTUP_HOME": os.environ.get("RUSTUP_HOME", str(home / ".rustup"))}


def main() -> None:
    import tempfile
    where = Path(tempfile.mkdtemp(prefix="retcon-real-"))
    for h in HISTORIES:
        try:
            repo = build(h, where / h.name)
        except Unavailable as e:
            print(f"{h.name}: skipped: {e}")
            continue
        print(f"{h.name} ({h.language}, {h.repo}): {h.what}")
        for sha, subject, files in commits(repo):
            print(f"  {sha[:10]} {subject[:60]}  [{', '.join(files[:4])}{' ...' if len(files) > 4 else ''}]")
        print("  shared: " + ", ".join(f"{f} ({n})" for f, n in shared_files(repo).items()))
        shared, total = shared_hunks(repo)
        print(f"  hunks holding lines of two or more commits: {shared}/{total}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
