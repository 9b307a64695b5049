"""A fix is committed only when it changes the failure for the better: candidate hunks that plain
code tried and that left the failure as it was are not committed when a model confirms them; the
stop says what was tried. Real repository, real commands, the scripted model."""
from __future__ import annotations

import json

from testing.flow import call, retcon, take, turn
from testing.gitrepo import GitRepo

SPEC = """\
source = "feature"
remote = "main"
cleaned = "feature-clean"
build = "python3 -m py_compile app.py util.py"
test = "python3 -c 'import app; app.main()'"

[[commit]]
message = "app: use two()"
paths = ["app.py"]

[[commit]]
message = "the rest"
paths = ["util.py", "extra.py", "notes/"]
"""


def make(tmp_path) -> GitRepo:
    """app.py's commit misses util.two, which util.py imports from extra.py: nothing blame reads as
    defining it. notes/two.py defines a `two` of its own: the brief's only candidate, which does not
    mend the failure."""
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("base", {"app.py": "import util\n\n\ndef main():\n    return util.one()\n",
                         "util.py": "def one():\n    return 1\n"})
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("all", {"app.py": "import util\n\n\ndef main():\n    return util.one() + util.two()\n",
                        "util.py": "from extra import two\n\n\ndef one():\n    return 1\n",
                        "extra.py": "TWO = 2\n\n\ndef two() -> int:\n    return TWO\n",
                        "notes/two.py": "def two():\n    return 'the second note'\n"})
    repo.git("checkout", "-q", "main")
    (tmp_path / "spec.toml").write_text(SPEC)
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit").code == 0
    return repo


def test_candidates_that_leave_the_failure_as_it_was_are_not_committed(tmp_path, scripted):
    repo = make(tmp_path)
    scripted({"1/extract": take("app.py"),
              # The model confirms the candidate plain code applied (and tried) for it.
              "1/fix/1": [turn(call("create_commit", message="take the candidate"))]})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 3, res.text
    assert "Blame: 2 candidate hunks in the remaining diff (extra.py, notes/two.py)" in res.out, res.text
    assert "Trying the candidate hunks..." in res.out
    assert "Creating WIP commit" not in res.out
    assert repo.log("main..feature-clean") == ["app: use two()"]          # no WIP that fixed nothing
    assert "did not change the failure for the better, so nothing was committed" in res.err, res.err
    assert "notes/two.py" in res.err                                      # what was tried
    assert "AttributeError: module 'util' has no attribute 'two'" in res.err
    doc = json.loads(retcon(repo, "status", "--json").out)
    assert doc["commits"][0]["state"] == "stuck" and doc["commits"][0]["wip"] == 0
    assert repo.git("status", "--porcelain") == ""
