"""bench/releases.py: a package's releases become a history the benchmarks can rebuild, from an
index laid out as PyPI's JSON API (here a file:// one: the suite has no network)."""
from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pygit2
import pytest

from bench import releases

PKG = [("pkg", ["1.0", "1.1"])]


def _sdist(name: str, files: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for path, data in files.items():
            info = tarfile.TarInfo(f"{name}/{path}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An index with pkg 1.0 and 1.1 (sdists and a wheel), as PyPI's JSON describes them:
    file URLs relative to the package's page."""
    root = tmp_path / "index"
    (root / "pypi" / "pkg").mkdir(parents=True)
    (root / "files").mkdir()
    versions = {
        "1.0": {"PKG-INFO": b"Version: 1.0\n", "src/pkg/__init__.py": b"x = 1\n", "pkg.egg-info/SOURCES.txt": b"a\n"},
        "1.1": {"PKG-INFO": b"Version: 1.1\n", "src/pkg/__init__.py": b"x = 2\n", "README.md": b"# pkg\n"},
    }
    page: dict[str, dict[str, list[dict[str, str]]]] = {"releases": {}}
    for version, files in versions.items():
        (root / "files" / f"pkg-{version}.tar.gz").write_bytes(_sdist(f"pkg-{version}", files))
        page["releases"][version] = [
            {"packagetype": "bdist_wheel", "url": f"../../files/pkg-{version}-py3-none-any.whl"},
            {"packagetype": "sdist", "url": f"../../files/pkg-{version}.tar.gz"},
        ]
    (root / "pypi" / "pkg" / "json").write_text(json.dumps(page))
    monkeypatch.setenv("RETCON_BENCH_PYPI", (root / "pypi").as_uri())
    monkeypatch.setenv("RETCON_BENCH_CACHE", str(tmp_path / "cache"))
    return root


def _files(repo: pygit2.Repository, ref: str) -> dict[str, bytes]:
    tree = repo.revparse_single(ref).peel(pygit2.Tree)
    out: dict[str, bytes] = {}

    def walk(t: pygit2.Tree, prefix: str) -> None:
        for e in t:
            if e.type_str == "tree":
                walk(repo[e.id].peel(pygit2.Tree), f"{prefix}{e.name}/")
            else:
                out[prefix + e.name] = repo[e.id].peel(pygit2.Blob).data
    walk(tree, "")
    return out


def test_releases_become_commits_without_generated_files(index: Path, tmp_path: Path) -> None:
    args = releases.real_args(PKG)
    repo_path = tmp_path / "cache" / "pypi+pkg" / "repo"
    assert args == ["--real", str(repo_path), "1.0..1.1"]
    repo = pygit2.Repository(str(repo_path))
    assert _files(repo, "1.0") == {"src/pkg/__init__.py": b"x = 1\n"}
    assert _files(repo, "1.1") == {"src/pkg/__init__.py": b"x = 2\n", "README.md": b"# pkg\n"}
    tip = repo.revparse_single("1.1").peel(pygit2.Commit)
    assert [str(p) for p in tip.parent_ids] == [str(repo.revparse_single("1.0").peel(pygit2.Commit).id)]
    assert tip.message == "pkg 1.1\n"


def test_a_built_history_is_found_again_without_the_index(index: Path, tmp_path: Path, capsys) -> None:
    first = releases.real_args(PKG)
    (index / "pypi" / "pkg" / "json").unlink()
    assert releases.real_args(PKG) == first
    assert "skipped" not in capsys.readouterr().err


def test_an_unreachable_index_is_skipped_and_said(index: Path, capsys) -> None:
    (index / "files" / "pkg-1.1.tar.gz").unlink()
    assert releases.real_args(PKG) == []
    err = capsys.readouterr().err
    assert "skipped the PyPI releases of pkg" in err
    # A build cut short is started over next time, not taken as done.
    (index / "files" / "pkg-1.1.tar.gz").write_bytes(_sdist("pkg-1.1", {"a": b"b\n"}))
    assert releases.real_args(PKG)[-1] == "1.0..1.1"
