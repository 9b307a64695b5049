"""A denial's advice works when followed, and never widens the user's own repository (issue 38):
a refused write the command went on past is not named as its cause, the repository's git folder is
never offered for `writable`, the advice names a folder (never a file), `writable` never makes a
folder where a file is meant, and /tmp is the same under bubblewrap and Landlock."""
from __future__ import annotations

import re
import uuid

import pytest

from git_retcon.sandbox.confine import FORCE_ENV
from testing.flow import SPEC, feature_repo, retcon, spec_with
from testing.gitrepo import GitRepo
from testing.sandboxes import MECHANISMS

TEST = "test = \"python3 -c 'import app; app.main()'\""


def planned(tmp_path, spec: str) -> GitRepo:
    repo = feature_repo(tmp_path / "repo")
    (tmp_path / "s.toml").write_text(spec)
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "s.toml"), "--no-edit").code == 0
    return repo


def add_writable(repo: GitRepo, tmp_path, folder: str) -> None:
    export = tmp_path / "e.toml"
    assert retcon(repo, "spec", "export", "-o", str(export)).code == 0
    export.write_text(spec_with(export.read_text(), writable=[folder]))
    assert retcon(repo, "spec", "import", str(export)).code == 0


@pytest.mark.parametrize("mech", MECHANISMS)
def test_a_refused_write_the_setup_went_on_past_is_not_its_cause(tmp_path, mech, monkeypatch):
    """husky's write to .git/config is refused and harmless; the setup fails on a missing module."""
    monkeypatch.setenv(FORCE_ENV, mech)
    setup = "git config core.hooksPath .husky; python3 -c 'import nosuchmodule'"
    repo = planned(tmp_path, SPEC.replace('build = "', f'setup = "{setup}"\nbuild = "'))
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 1, res.text
    first = res.err.splitlines()[0]
    assert "the setup command fails on the base" in first and "sandbox refused" not in first, res.err
    assert "writable = [" not in res.err and "No module named 'nosuchmodule'" in res.err


@pytest.mark.parametrize("mech", MECHANISMS)
def test_the_advice_names_the_folder_and_following_it_passes(tmp_path, mech, monkeypatch):
    monkeypatch.setenv(FORCE_ENV, mech)
    out = tmp_path / "out"
    out.mkdir()
    repo = planned(tmp_path, SPEC.replace(TEST, f'test = "! grep -q two app.py || echo done > {out}/result.txt"'))
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 3 and "commit 2/3 is stuck" in res.err, res.text
    (folder,) = re.findall(r'writable = \["([^"]+)"\]', res.err)
    assert folder == str(out), res.err
    add_writable(repo, tmp_path, folder)
    assert retcon(repo, "resolve", "-m", "the test may write its result").code == 0
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 0, res.text
    assert (out / "result.txt").read_text() == "done\n"


@pytest.mark.parametrize("mech", MECHANISMS)
def test_writable_never_makes_a_folder_where_a_file_is_meant(tmp_path, mech, monkeypatch):
    monkeypatch.setenv(FORCE_ENV, mech)
    out = tmp_path / "out"
    out.mkdir()
    repo = planned(tmp_path, spec_with(SPEC, writable=[out / "result.txt", tmp_path / "cache"]))
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 0, res.text
    assert not (out / "result.txt").exists()
    assert (tmp_path / "cache").is_dir()   # a folder a tool fills is still made


@pytest.mark.parametrize("mech", MECHANISMS)
def test_a_write_directly_under_tmp_is_refused_alike_and_the_advice_says_tmpdir(tmp_path, mech, monkeypatch):
    monkeypatch.setenv(FORCE_ENV, mech)
    name = f"/tmp/retcon-38-{uuid.uuid4().hex}.txt"
    test = f'test = "echo ok > $TMPDIR/private.txt && (! grep -q two app.py || echo x > {name})"'
    repo = planned(tmp_path, SPEC.replace(TEST, test))
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 3 and f"sandbox refused a write to {name}" in res.err, res.text
    assert 'writable = ["/tmp"]' in res.err and "$TMPDIR" in res.err, res.err
