"""`check` vouches only for commits with a passing record: a human's commit on the cleaned
branch that a run adopted (not a WIP:) and that fails its build is named, even when a fix after
it makes the logical commit's last tree pass."""
from __future__ import annotations

from testing.flow import SPEC, feature_repo, retcon


def test_check_names_an_adopted_commit_that_fails_its_build(tmp_path):
    repo = feature_repo(tmp_path / "repo")
    (tmp_path / "spec.toml").write_text(SPEC)
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit").code == 0
    assert retcon(repo, "run", "-m", "retcon-paths").code == 0
    # A human's commit on the cleaned branch breaks the build, and their WIP: after it mends it; the
    # next run adopts both (together they change nothing: no fix of a person's is undone, issue 38).
    repo.git("checkout", "-q", "feature-clean")
    util = repo.git("show", "feature-clean:util.py") + "\n"
    tweak = repo.commit("tweak", {"util.py": "def one(:\n    return 1\n\n\ndef two():\n    return 2\n"})
    repo.commit("WIP: mend util.py", {"util.py": util})
    repo.git("checkout", "-q", "main")
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 0 and f"Adopting {tweak[:9]} into commit 3/3" in res.out, res.text
    res = retcon(repo, "check", "--allow-wip")
    assert res.code == 1, res.text
    assert f"✗ adopted commit {tweak[:9]} (tweak) of commit 3/3 has no passing build record" in res.out, res.out
    assert "git retcon squash feature-clean" in res.out
    # Squashed, the fix is part of it: every commit left has a passing record.
    assert retcon(repo, "squash").code == 0
    res = retcon(repo, "check")
    assert res.code == 0, res.text
