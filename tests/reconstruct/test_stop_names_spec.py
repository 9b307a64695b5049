"""A stop's advice names the spec in every command it suggests: with several specs, a bare
`git retcon spec edit` is a usage error."""
from __future__ import annotations

from testing.flow import SPEC, feature_repo, retcon


def test_a_timeout_stop_names_the_spec_to_edit_when_several_exist(tmp_path):
    repo = feature_repo(tmp_path / "repo")
    repo.git("branch", "other", "feature")
    (tmp_path / "other.toml").write_text(SPEC.replace('cleaned = "feature-clean"', 'cleaned = "other-clean"')
                                         .replace('source = "feature"', 'source = "other"'))
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "other.toml"), "--no-edit").code == 0
    # The base passes at once; commit 1's tree (util.py with two()) sleeps past the timeout.
    spec = SPEC.replace("test = \"python3 -c 'import app; app.main()'\"",
                        "test = \"sh -c 'grep -q two util.py || exit 0; sleep 5'\"\ntimeout = 1")
    (tmp_path / "spec.toml").write_text(spec)
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit").code == 0
    res = retcon(repo, "run", "feature-clean", "-m", "retcon-paths")
    assert res.code == 3, res.text
    assert "timed out" in res.err
    assert "git retcon spec edit feature-clean)" in res.err and "spec edit)" not in res.err, res.err
