"""A build/test record is reused only when everything that ran before and around the command is the
same (issue 38): the setup and build before a test, the spec's writable and network, the sandbox.
A record made for one spec never changes another spec's verdict."""
from __future__ import annotations

import json

from testing.flow import SPEC, feature_repo, retcon, spec_with
from testing.gitrepo import GitRepo

BUILT_TEST = "test -f .dl/built"


def plan(repo: GitRepo, spec: str, name: str) -> None:
    path = repo.path.parent / f"{name}.toml"
    path.write_text(spec)
    res = retcon(repo, "plan", "--from-file", str(path), "--no-edit")
    assert res.code == 0, res.text


def x_and_y(tmp_path) -> GitRepo:
    """Spec X builds the marker its test looks for; spec Y has the same test and no build."""
    repo = feature_repo(tmp_path / "repo")
    x = SPEC.replace('cleaned = "feature-clean"', 'cleaned = "feature-x"') \
        .replace('build = "python3 -m py_compile app.py util.py"', 'build = "mkdir -p .dl && touch .dl/built"') \
        .replace("test = \"python3 -c 'import app; app.main()'\"", f'test = "{BUILT_TEST}"')
    y = x.replace('cleaned = "feature-x"', 'cleaned = "feature-y"') \
        .replace('build = "mkdir -p .dl && touch .dl/built"\n', "")
    plan(repo, x, "x")
    plan(repo, y, "y")
    return repo


def test_a_test_passed_after_a_build_is_not_a_pass_without_it(tmp_path):
    repo = x_and_y(tmp_path)
    res = retcon(repo, "run", "-m", "retcon-paths", "feature-x")
    assert res.code == 0, res.text
    res = retcon(repo, "run", "-m", "retcon-paths", "feature-y")
    # Y's test never saw X's build: it runs on the base, and fails there (X's pass is not Y's).
    assert res.code == 1, res.text
    assert "Tests... FAIL (exit 1)" in res.out and "the test command fails on the base" in res.text
    # X's records still say what X ran: its check passes, its verdicts unchanged.
    res = retcon(repo, "check", "feature-x")
    assert res.code == 0, res.text
    status = json.loads(retcon(repo, "status", "--json", "feature-x").out)
    assert [c["test"] for c in status["commits"]] == ["pass"] * 3


def test_one_specs_rerun_never_changes_anothers_verdict(tmp_path):
    """X and Y test the same trees with the same command, Y with a folder of its own to write. What
    Y's rerun finds (the world changed: a file its test refuses appeared) is Y's record, not X's."""
    repo = feature_repo(tmp_path / "repo")
    marker = tmp_path / "marker"
    test = f"test ! -e {marker}"
    x = SPEC.replace("test = \"python3 -c 'import app; app.main()'\"", f'test = "{test}"')
    plan(repo, x, "x")
    plan(repo, spec_with(x.replace('cleaned = "feature-clean"', 'cleaned = "feature-y"')
                         .replace("util: add two()", "util: add a helper"), writable=[tmp_path / "w"]), "y")
    for name in ("feature-clean", "feature-y"):
        res = retcon(repo, "run", "-m", "retcon-paths", name)
        assert res.code == 0, res.text
    marker.write_text("")
    res = retcon(repo, "check", "--rerun", "feature-y")
    assert res.code == 1, res.text
    res = retcon(repo, "check", "feature-clean")
    assert res.code == 0, res.text
    status = json.loads(retcon(repo, "status", "--json", "feature-clean").out)
    assert [c["test"] for c in status["commits"]] == ["pass"] * 3
    status = json.loads(retcon(repo, "status", "--json", "feature-y").out)
    assert [c["test"] for c in status["commits"]] == ["fail"] * 3


def test_a_spec_with_other_writable_folders_tests_again(tmp_path):
    repo = feature_repo(tmp_path / "repo")
    plan(repo, SPEC, "clean")
    assert retcon(repo, "run", "-m", "retcon-paths").code == 0
    plan(repo, spec_with(SPEC.replace('cleaned = "feature-clean"', 'cleaned = "feature-w"')
                         .replace("util: add two()", "util: add a helper"),
                         writable=[tmp_path / "w"]), "w")
    res = retcon(repo, "run", "-m", "retcon-paths", "feature-w")
    assert res.code == 0, res.text
    assert "(cached)" not in res.out, res.out
    # and a second run of the same spec trusts its own records
    res = retcon(repo, "run", "--retest", "-m", "retcon-paths", "feature-w")
    assert res.code == 0, res.text


def test_a_recorded_failure_shown_again_says_how_to_retest(tmp_path):
    repo = feature_repo(tmp_path / "repo")
    marker = tmp_path / "marker"
    marker.write_text("")
    plan(repo, SPEC.replace("test = \"python3 -c 'import app; app.main()'\"", f'test = "test ! -e {marker}"'), "x")
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 1 and "the test command fails on the base" in res.text, res.text
    marker.unlink()   # the world changed; the tree did not
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 1, res.text
    assert "Tests... FAIL (exit 1) (cached; --retest runs it again)" in res.out, res.out
    assert "git retcon run --retest feature-clean" in res.err, res.err
    res = retcon(repo, "run", "--retest", "-m", "retcon-paths", "feature-clean")
    assert res.code == 0, res.text


def test_a_denial_mended_in_the_spec_is_tested_again(tmp_path):
    """The stop names a refused folder; the user adds it to `writable`, resolves and runs: the test
    runs again with the folder writable (never the recorded refusal again)."""
    repo = feature_repo(tmp_path / "repo")
    outside = tmp_path / "outside"
    outside.mkdir()
    plan(repo, SPEC.replace("test = \"python3 -c 'import app; app.main()'\"",
                            f'test = "! grep -q two app.py || touch {outside}/mark"'), "x")
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 3 and "commit 2/3 is stuck" in res.text and str(outside) in res.text, res.text
    export = tmp_path / "spec.toml"
    assert retcon(repo, "spec", "export", "-o", str(export)).code == 0
    export.write_text(spec_with(export.read_text(), writable=[outside]))
    res = retcon(repo, "spec", "import", str(export))
    assert res.code == 0, res.text
    assert retcon(repo, "resolve", "-m", "allowed the folder").code == 0
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 0, res.text
    assert "(cached" not in res.out.split("Commit 2/3")[1].split("Commit 3/3")[0], res.out
    assert (outside / "mark").exists()


def test_status_says_what_this_specs_results_ran_under(tmp_path):
    """Another spec's `--sandbox off` run on the same trees adds its records beside this spec's:
    this spec's status still says what its own build and test ran under."""
    from testing.sandboxes import WORKS

    if not WORKS:
        import pytest
        pytest.skip("no sandbox mechanism works here")
    repo = feature_repo(tmp_path / "repo")
    plan(repo, SPEC, "clean")
    # (another first message: the same commits, made at the tests' fixed dates, would be one object)
    plan(repo, SPEC.replace('cleaned = "feature-clean"', 'cleaned = "feature-off"')
         .replace("util: add two()", "util: add a helper"), "off")
    assert retcon(repo, "run", "-m", "retcon-paths", "feature-clean").code == 0
    res = retcon(repo, "run", "--sandbox", "off", "-m", "retcon-paths", "feature-off")
    assert res.code == 0 and "(cached)" not in res.out, res.text
    assert f"Sandbox: {WORKS[0]}" in retcon(repo, "status", "feature-clean").out
    assert "Sandbox: off" in retcon(repo, "status", "feature-off").out
