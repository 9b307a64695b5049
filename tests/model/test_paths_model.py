"""retcon-paths in a fix step: it takes the rework brief's candidate hunks, and stops
stuck only when there is none (real git, the real flow, no API key)."""
from __future__ import annotations

import json

from testing.flow import SPEC, feature_repo, retcon
from testing.gitrepo import GitRepo

# app.py (which calls util.two()) is asked for before util.py, which defines it.
MISORDERED = SPEC.replace(
    '[[commit]]\nmessage = "util: add two()"\nhints = "Only util.py."\npaths = ["util.py"]\n\n'
    '[[commit]]\nmessage = "app: use two()"\npaths = ["app.py"]\n',
    '[[commit]]\nmessage = "app: use two()"\npaths = ["app.py"]\n\n'
    '[[commit]]\nmessage = "util: add two(), and notes"\npaths = ["util.py", "notes/"]\n'
).replace('paths = ["README", "notes/"]', 'paths = ["README"]')


def plan(repo: GitRepo, spec: str) -> None:
    path = repo.path.parent / "spec.toml"
    path.write_text(spec)
    res = retcon(repo, "plan", "--from-file", str(path), "--no-edit")
    assert res.code == 0, res.text


def test_pulls_the_definition_forward_in_a_wip_commit(tmp_path):
    assert MISORDERED != SPEC
    repo = feature_repo(tmp_path / "repo")
    plan(repo, MISORDERED)
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 0, res.text
    assert repo.tree("feature-clean") == repo.tree("feature")
    log = repo.git("log", "--reverse", "--format=%s", "main..feature-clean").splitlines()
    assert log[0] == "app: use two()"
    assert log[1].startswith("WIP: ") and "two" in log[1], log
    # The WIP commit took util.py's definition of two() from the source: each commit passes.
    wip = repo.git("rev-list", "-n1", "--grep=^WIP:", "feature-clean")
    assert repo.git("diff", "--name-only", f"{wip}^", wip) == "util.py"
    status = json.loads(retcon(repo, "status", "--json").out)
    assert [c["state"] for c in status["commits"]] == ["complete"] * 3
    assert status["commits"][0]["wip"] == 1
    # Squashed, every logical commit holds what it needs, and check agrees.
    assert retcon(repo, "squash").code == 0
    shas = repo.git("rev-list", "main..feature-clean").split()
    assert len(shas) == 3
    for sha in shas:
        app = repo.git("show", f"{sha}:app.py")
        util = repo.git("show", f"{sha}:util.py")
        assert "util.two" not in app or "def two" in util, sha
    res = retcon(repo, "check")
    assert res.code == 0, res.text


def test_stuck_when_the_brief_names_no_candidate(tmp_path):
    """A failure that no hunk of the remaining diff can fix: the test wants what the source never has."""
    repo = feature_repo(tmp_path / "repo")
    plan(repo, SPEC.replace("app.main()'", "assert app.main() in (1, 4), app.main()'"))
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 3, res.text
    assert "no candidate" in res.err and "Rework brief" in res.err, res.err
    assert "WIP" not in repo.git("log", "--format=%s", "main..feature-clean")


def test_the_last_commit_takes_what_no_commit_named(tmp_path):
    """Leftovers of the final tree go to the last commit: plain code takes every remaining
    change whatever its paths say, so no WIP is needed for them."""
    repo = feature_repo(tmp_path / "repo")
    plan(repo, SPEC.replace('paths = ["README", "notes/"]', 'paths = ["README"]'))
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 0, res.text
    assert repo.tree("feature-clean") == repo.tree("feature")
    assert "WIP" not in repo.git("log", "--format=%s", "main..feature-clean")
    assert repo.git("diff", "--name-only", "feature-clean~1", "feature-clean").split() == ["README", "notes/todo.txt"]
    assert repo.git("log", "-1", "--format=%s", "feature-clean") == "docs: explain main"
