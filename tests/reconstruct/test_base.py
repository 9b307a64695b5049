"""Before commit 1, `run` builds and tests the base: a command that fails there is the
command's fault, not commit 1's, and no model is asked about it."""
from __future__ import annotations

import json

from testing.flow import SPEC, feature_repo, retcon, take


def by_kind(repo, tree):
    """The tree's build/test records (refs/notes/retcon-tests), by the kind they ran as."""
    note = json.loads(repo.git("notes", "--ref=refs/notes/retcon-tests", "show", tree))
    return {rec["kind"]: rec for rec in note["commands"].values()}


def planned(tmp_path, spec: str = SPEC):
    repo = feature_repo(tmp_path / "repo")
    (tmp_path / "spec.toml").write_text(spec)
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit").code == 0
    return repo


def test_a_test_command_that_fails_on_the_base_stops_before_any_model_call(tmp_path, scripted):
    # The test needs util.two(), which only the source has: it fails on the base too.
    spec = SPEC.replace("test = \"python3 -c 'import app; app.main()'\"",
                        "test = \"python3 -c 'import util; util.two()'\"")
    repo = planned(tmp_path, spec)
    spec_before = repo.rev("refs/retcon/feature-clean")
    log = scripted({"*/extract": take("")})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 1, res.text
    base = repo.git("merge-base", "main", "feature")
    assert f"the test command fails on the base (merge-base {base[:12]})" in res.err
    assert "AttributeError" in res.err   # its output, so the user sees why
    assert "Traceback" in res.err and len(res.err.splitlines()) < 40
    assert "spec edit" in res.err
    assert not log.exists()   # no model call
    # Nothing created on the cleaned branch, no history in the spec.
    assert repo.rev("feature-clean") == base
    assert repo.rev("refs/retcon/feature-clean") == spec_before
    # The failure is recorded on the base tree like any tree's.
    tested = by_kind(repo, repo.tree(base))
    assert tested["test"]["result"] == "fail"


def test_a_build_that_fails_on_the_base_is_named(tmp_path, scripted):
    repo = planned(tmp_path, SPEC.replace("build = \"python3 -m py_compile app.py util.py\"",
                                          "build = \"python3 -m py_compile two.py\""))
    log = scripted({"*/extract": take("")})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 1, res.text
    assert "the build command fails on the base (merge-base " in res.err
    assert not log.exists()


def test_the_base_is_checked_once_then_trusted(tmp_path, scripted):
    repo = planned(tmp_path)
    scripted({"1/extract": take("util.py"), "2/extract": take("app.py"), "3/extract": take("")})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    assert "Checking the base" in res.out
    base_tree = repo.tree(repo.git("merge-base", "main", "feature"))
    tested = by_kind(repo, base_tree)
    assert tested["build"]["result"] == "pass" and tested["test"]["result"] == "pass"
    # Four trees tested (the base and three commits), each once.
    assert res.out.count("Tests... PASS") == 4 and "(cached)" not in res.out


def test_a_command_that_hangs_on_the_base_is_named_and_killed(tmp_path, scripted):
    repo = planned(tmp_path, SPEC.replace("python3 -m py_compile app.py util.py", "sleep 30").replace(
        'remote = "main"', 'remote = "main"\ntimeout = 1'))
    log = scripted({"*/extract": take("")})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 1, res.text
    assert "the build command `sleep 30` timed out after 1s on the base (merge-base " in res.err
    assert "raise `timeout`" in res.err and not log.exists()
