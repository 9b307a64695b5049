"""Repair as a search (reconstruct/repair.py): the brief's candidates are tried one at a time,
smallest first, and the first that passes and leaves every later logical commit something of its
own is the fix, committed by plain code; what each tried alone failed with is said. Real
repository, real commands, the scripted model (never asked here)."""
from __future__ import annotations

from testing.flow import retcon, take
from testing.gitrepo import GitRepo

SPEC = """\
source = "feature"
remote = "main"
cleaned = "feature-clean"
test = "python3 -c 'import app; app.main()'"

[[commit]]
message = "app: use two()"
paths = ["app.py"]

[[commit]]
message = "helpers: a two of their own"
paths = ["helpers.py"]

[[commit]]
message = "util: two, and say what it is"
paths = ["util.py"]
"""


def make(tmp_path) -> GitRepo:
    """app.py's commit calls util.two(). Two candidates define a `two`: helpers.py's (smaller, and
    the whole of commit 2: taking it would leave commit 2 empty) and util.py's (one of util.py's
    two hunks: the other, its docstring, stays for commit 3)."""
    repo = GitRepo.init(tmp_path / "repo")
    util = "\n".join(f"# line {i}" for i in range(12)) + "\n\n\ndef one():\n    return 1\n"
    repo.commit("base", {"app.py": "import util\n\n\ndef main():\n    return util.one()\n", "util.py": util})
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("all", {"app.py": "import util\n\n\ndef main():\n    assert util.two() == 2\n",
                        "util.py": '"""Small numbers."""\n' + util + "\n\ndef two():\n    x = 2\n    return x\n",
                        "helpers.py": "def two():\n    return 'b'\n"})
    repo.git("checkout", "-q", "main")
    (tmp_path / "spec.toml").write_text(SPEC)
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit").code == 0
    return repo


def test_the_smallest_candidate_that_passes_and_empties_nothing_is_the_fix(tmp_path, scripted):
    repo = make(tmp_path)
    log = scripted({"1/extract": take("app.py")})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    assert "Trying the candidate util.py alone" in res.out, res.out
    subjects = repo.log("main..feature-clean")[::-1]
    assert subjects[0] == "app: use two()" and subjects[1].startswith("WIP:") and len(subjects) == 4, subjects
    wip = repo.git("show", "--name-only", "--format=", "feature-clean~2").split()
    assert wip == ["util.py"]                                   # util's two(), not helpers.py's
    assert repo.git("show", "--name-only", "--format=", "feature-clean~1").split() == ["helpers.py"]
    assert repo.git("show", "feature-clean~2:util.py").startswith("# line 0")   # the docstring stays for 3
    assert not log.exists() or "1/fix" not in log.read_text()   # no model was asked to fix
