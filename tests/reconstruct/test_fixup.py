"""Fix commits in git's convention (issue 13): `wip = "fixup"` in the spec, or `run --fixup`,
makes them `fixup! <the logical commit's subject>`, which `git rebase -i --autosquash`
folds; everything that counts or refuses WIP commits counts these too."""
from __future__ import annotations

import json
import os
import subprocess

import pytest

from testing.fixcase import SPEC, make
from testing.flow import retcon, take

# No fix turns: the brief's candidate passes on its own, and plain code commits it, named for what
# it takes.
SCRIPT = {"1/extract": take("app.py")}
FIXUP_SPEC = SPEC.replace('test = "', 'wip = "fixup"\ntest = "', 1)


def messages(repo) -> list[str]:
    return [repo.git("log", "-1", "--format=%B", s) for s in repo.git("rev-list", "--reverse",
                                                                      "main..feature-clean").split()]


@pytest.mark.parametrize("how", ["spec", "option"])
def test_fix_commits_are_fixup_commits_that_autosquash_folds_as_squash_does(tmp_path, scripted, how):
    repo = make(tmp_path, FIXUP_SPEC if how == "spec" else SPEC, docs=1)
    scripted(SCRIPT)
    res = retcon(repo, "run", "-m", "scripted", *(["--fixup"] if how == "option" else []))
    assert res.code == 0, res.text
    assert "Commit created (1 WIP)" in res.out and "1 WIP fix commit" in res.out
    assert messages(repo) == ["app: use two()", "fixup! app: use two()\n\ntake the definition of `two` from util.py",
                              "docs: explain main"]
    assert "The candidate hunks pass: committing them as the fix (no model needed)..." in res.out
    doc = json.loads(retcon(repo, "status", "--json").out)
    assert [c["wip"] for c in doc["commits"]] == [1, 0]
    chk = retcon(repo, "check")
    assert chk.code == 1 and "✗ 1 fixup! commit left" in chk.out, chk.out
    assert retcon(repo, "check", "--allow-wip").code == 0

    # git's own tool folds it: the same trees as `git retcon squash` makes.
    repo.git("branch", "by-git", "feature-clean")
    env = {**os.environ, "GIT_SEQUENCE_EDITOR": "true"}
    subprocess.run(["git", "rebase", "-q", "-i", "--autosquash", "main", "by-git"], cwd=repo.path, env=env,
                   check=True, capture_output=True)
    res = retcon(repo, "squash")
    assert res.code == 0 and "Squashed 1 WIP commit into" in res.out, res.text
    trees = [repo.git("log", "--format=%T", "--reverse", f"main..{b}").split() for b in ("by-git", "feature-clean")]
    assert trees[0] == trees[1] and len(trees[0]) == 2
    assert messages(repo) == ["app: use two()", "docs: explain main"]
    assert retcon(repo, "check").code == 0


def test_an_unknown_wip_style_is_a_spec_error_naming_its_line(tmp_path):
    repo = make(tmp_path, docs=0)
    bad = tmp_path / "bad.toml"
    bad.write_text(SPEC.replace('test = "', 'wip = "squash"\ntest = "', 1).replace("feature-clean", "other"))
    res = retcon(repo, "plan", "--from-file", str(bad), "--no-edit")
    assert res.code == 1 and "bad.toml line 5:" in res.err and "'wip' must be \"wip\"" in res.err, res.text
    assert "Traceback" not in res.err


def test_wip_fixup_survives_a_spec_round_trip(tmp_path):
    repo = make(tmp_path, FIXUP_SPEC, docs=0)
    assert 'wip = "fixup"' in retcon(repo, "spec", "show").out
