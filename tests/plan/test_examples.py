"""Examples and suggestions speak the repository's language: a `paths` example is made of the
files the branch touches (a Rust crate's `src/*.rs`, never a Python `src/*.py`), in the editor's
header and in a spec's errors; a missing program suggests the setup its lockfile calls for."""
from __future__ import annotations

import pytest

from git_retcon.state.spec import SpecError
from git_retcon.state.specparse import example_glob, parse
from testing.editor import scripted_editor
from testing.flow import retcon
from testing.gitrepo import GitRepo


@pytest.mark.parametrize(("paths", "glob"), [
    (["src/lib.rs", "src/parse.rs", "tests/parse.rs", "Cargo.toml"], "src/*.rs"),
    (["index.js", "lib/a.js", "lib/b.mjs", "lib/c.js", "test/a.test.js"], "lib/*.js"),
    (["cmd/tool/main.go", "pkg/x/x.go", "pkg/x/y.go", "go.mod"], "pkg/x/*.go"),
    (["Makefile", "docs/README"], "docs/"),
    (["src/*.kt", "src/*.kt"], "src/*.kt"),
    ([], "src/"),
])
def test_the_example_glob_follows_the_files(paths, glob):
    assert example_glob(paths) == glob


SPEC = 'source = "feature"\nremote = "main"\ncleaned = "clean"\n\n[[commit]]\nmessage = "m"\npaths = "src"\n'


def test_a_paths_error_shows_the_specs_own_kind_of_path_without_a_repository():
    with pytest.raises(SpecError) as err:
        parse(SPEC + '\n[[commit]]\nmessage = "n"\npaths = ["lib/a.ts", "lib/b.ts"]\n')
    assert 'e.g. paths = ["lib/*.ts"]' in str(err.value) and ".py" not in str(err.value)


@pytest.fixture
def crate(tmp_path) -> GitRepo:
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("frame", {"Cargo.toml": '[package]\nname = "x"\n', "src/lib.rs": "mod a;\n"})
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("wip", {"src/a.rs": "pub fn a() {}\n", "src/b.rs": "pub fn b() {}\n", "tests/t.rs": "\n"})
    return repo


def test_a_spec_error_on_a_rust_crate_suggests_its_own_files(crate, tmp_path):
    (tmp_path / "spec.toml").write_text(SPEC)
    res = retcon(crate, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit")
    assert res.code == 1
    assert "spec.toml line 7: commit 1: 'paths' must be an array of strings, not a string: " \
           'e.g. paths = ["src/*.rs"]' in res.err and ".py" not in res.err
    (tmp_path / "spec.toml").write_text(SPEC.replace('paths = "src"', 'paths = [""]'))
    res = retcon(crate, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit")
    assert res.code == 1 and 'write a glob such as "src/*.rs"' in res.err


def test_the_editors_header_shows_the_branchs_own_kind_of_path(crate, tmp_path, monkeypatch):
    command, seen = scripted_editor(tmp_path / "editor", [["keep"]])
    monkeypatch.setenv("GIT_EDITOR", command)
    res = retcon(crate, "plan", "--from-commits", "--edit")
    assert res.code == 0, res.text
    assert '#   paths = ["src/*.rs"]   globs of its files' in seen(0)
    assert "# Top level: source, remote, cleaned, and optional setup (installs dependencies" in seen(0)
    assert ".py" not in seen(0)


def test_plan_takes_a_setup_command(crate):
    res = retcon(crate, "plan", "--from-commits", "--no-edit", "--setup", "cargo fetch", "--test", "cargo test")
    assert res.code == 0, res.text
    shown = retcon(crate, "spec", "show").out
    assert 'setup = "cargo fetch"\ntest = "cargo test"\n' in shown
