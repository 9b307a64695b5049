"""Real histories any machine can rebuild: a package's releases on PyPI as commits.

`make bench` measures on real histories (issue 11), but a fresh machine reaches no Git host,
only the package registries. So a history is made of a package's successive source
distributions: the first release is `main`, each later one a commit on `feature` with the
release's files (PKG-INFO and *.egg-info left out: generated, not written by anyone). The
repositories are kept in a cache ($RETCON_BENCH_CACHE, else ~/.cache/git-retcon-bench), and a
machine that cannot reach PyPI skips them and says so.

    python -m bench.releases         # prints the `--real REPO SPAN` arguments for model_output
"""
from __future__ import annotations

import io
import json
import os
import shutil
import sys
import tarfile
import urllib.request
from pathlib import Path, PurePosixPath
from urllib.parse import urljoin

import pygit2

# (package, releases in order): spans whose releases change code, not only the version.
HISTORIES: list[tuple[str, list[str]]] = [
    ("tomli", ["1.2.3", "2.0.0", "2.0.1", "2.1.0", "2.2.1"]),
    ("itsdangerous", ["2.0.1", "2.1.0", "2.1.2", "2.2.0"]),
]
_SKIPPED = {"PKG-INFO"}


def cache_dir() -> Path:
    where = os.environ.get("RETCON_BENCH_CACHE")
    if where:
        return Path(where)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "git-retcon-bench"


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=30) as answer:   # noqa: S310  # https from a constant
        return bytes(answer.read())


def _sdist(package: str, version: str) -> dict[str, bytes]:
    """The files of a release's source distribution, by path inside it (its top folder dropped)."""
    index = os.environ.get("RETCON_BENCH_PYPI", "https://pypi.org/pypi")    # PyPI's JSON API, or one like it
    page = f"{index}/{package}/json"     # the package's page (a mirror may have no per-release one)
    meta = json.loads(_get(page))
    urls = [urljoin(page, u["url"]) for u in meta["releases"].get(version, [])
            if u["packagetype"] == "sdist"]
    if not urls:
        raise OSError(f"{package} {version} has no source distribution")
    files: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(_get(urls[0]))) as tar:
        for member in tar.getmembers():
            parts = PurePosixPath(member.name).parts[1:]
            if not member.isfile() or not parts or parts[-1] in _SKIPPED \
                    or any(p.endswith(".egg-info") for p in parts):
                continue
            data = tar.extractfile(member)
            if data is not None:
                files["/".join(parts)] = data.read()
    return files


def build(package: str, versions: list[str], root: Path) -> tuple[Path, str]:
    """The repository of these releases (made once, then found in root) and its span A..B."""
    where = root / f"pypi+{package}" / "repo"
    span = f"{versions[0]}..{versions[-1]}"
    if (where / "done").exists():
        return where, span
    if where.exists():
        shutil.rmtree(where)    # a build cut short: start over
    repo = pygit2.init_repository(str(where))
    who = pygit2.Signature("PyPI", "pypi@example.com", 1700000000, 0)
    parents: list[pygit2.Oid] = []
    for version in versions:
        index = pygit2.Index()
        for path, data in sorted(_sdist(package, version).items()):
            index.add(pygit2.IndexEntry(path, repo.create_blob(data), pygit2.enums.FileMode.BLOB))
        commit = repo.create_commit(None, who, who, f"{package} {version}\n", index.write_tree(repo), parents)
        repo.references.create(f"refs/tags/{version}", commit)
        parents = [commit]
    (where / "done").write_text(span + "\n")
    return where, span


def real_args(histories: list[tuple[str, list[str]]] = HISTORIES) -> list[str]:
    """model_output's `--real REPO SPAN` arguments for every history that can be had."""
    args: list[str] = []
    for package, versions in histories:
        try:
            repo, span = build(package, versions, cache_dir())
        except (OSError, pygit2.GitError, tarfile.TarError, ValueError, KeyError) as exc:
            print(f"(skipped the PyPI releases of {package}: {exc})", file=sys.stderr)
            continue
        args += ["--real", str(repo), span]
    return args


if __name__ == "__main__":
    print(" ".join(real_args()))
