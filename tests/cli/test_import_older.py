"""`spec import` of an export older than the stored spec refuses to drop what was recorded since
(issue 38): a resolve, a stuck, commits. The refusal says what, and the two ways on."""
from __future__ import annotations

from testing.flow import SPEC, feature_repo, retcon
from testing.gitrepo import GitRepo


def stuck_then_resolved(tmp_path) -> tuple[GitRepo, str]:
    """Commit 2's test fails (a file outside the tree is missing): stuck; exported; then resolved."""
    repo = feature_repo(tmp_path / "repo")
    need = tmp_path / "needed"
    spec = SPEC.replace("test = \"python3 -c 'import app; app.main()'\"",
                        f'test = "! grep -q two app.py || test -e {need}"')
    (tmp_path / "s.toml").write_text(spec)
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "s.toml"), "--no-edit").code == 0
    assert retcon(repo, "run", "-m", "retcon-paths").code == 3
    old = tmp_path / "old.toml"
    assert retcon(repo, "spec", "export", "-o", str(old)).code == 0
    need.write_text("")
    assert retcon(repo, "resolve", "-m", "made the needed file").code == 0
    return repo, str(old)


def test_an_older_export_is_refused_naming_what_it_would_drop(tmp_path):
    repo, old = stuck_then_resolved(tmp_path)
    before = retcon(repo, "spec", "show").out
    res = retcon(repo, "spec", "import", old)
    assert res.code == 1, res.text
    assert "resolved = \"made the needed file\"" in before
    assert 'commit 2: resolved "made the needed file"' in res.err, res.err
    assert "git retcon spec export -o" in res.err and "--drop-history" in res.err
    assert retcon(repo, "spec", "show").out == before


def test_drop_history_drops_it_says_so_and_undo_puts_it_back(tmp_path):
    repo, old = stuck_then_resolved(tmp_path)
    before = retcon(repo, "spec", "show").out
    res = retcon(repo, "spec", "import", "--drop-history", old)
    assert res.code == 0, res.text
    assert 'Dropped what was recorded since the file was exported: commit 2: resolved "made the needed file"' \
        in res.out, res.out
    assert "git retcon undo feature-clean" in res.out
    assert "made the needed file" not in retcon(repo, "spec", "show").out
    assert retcon(repo, "undo").code == 0
    assert retcon(repo, "spec", "show").out == before


def test_an_export_of_the_current_spec_with_an_edit_imports_as_before(tmp_path):
    repo, _ = stuck_then_resolved(tmp_path)
    now = tmp_path / "now.toml"
    assert retcon(repo, "spec", "export", "-o", str(now)).code == 0
    now.write_text(now.read_text().replace('hints = "Only util.py."', 'hints = "Only util.py, nothing else."'))
    res = retcon(repo, "spec", "import", str(now))
    assert res.code == 0, res.text
    assert "made the needed file" in retcon(repo, "spec", "show").out
