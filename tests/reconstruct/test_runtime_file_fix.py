"""End to end: a test reads a data file that a later commit of the source adds, by its absolute
path in the build worktree (Python's FileNotFoundError). Blame maps the path back to the
repository, the hunk that adds the file is the candidate, and plain code commits it as the fix."""
from __future__ import annotations

import sys

from testing.flow import retcon
from testing.gitrepo import GitRepo

SPEC = f"""\
source = "feature"
remote = "main"
cleaned = "feature-clean"
test = "{sys.executable} -m unittest -q"

[[commit]]
message = "loader: read the rates"
paths = ["pkg/loader.py", "test_loader.py"]

[[commit]]
message = "data: the rates"
paths = ["pkg/data/", "README"]
"""


def test_a_file_read_at_runtime_is_offered_and_taken_by_the_fix(tmp_path):
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("base", {"pkg/__init__.py": "", "README": "rates\n"})
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("all", {
        "pkg/loader.py": "import json\nfrom pathlib import Path\n\nDATA = Path(__file__).parent / \"data\"\n\n\n"
                         "def rates():\n    with open(DATA / \"x.json\") as f:\n        return json.load(f)\n",
        "test_loader.py": "import unittest\n\nfrom pkg.loader import rates\n\n\nclass LoaderTest(unittest.TestCase):\n"
                          "    def test_rates(self):\n        self.assertEqual(rates()[\"eur\"], 1)\n",
        "pkg/data/x.json": '{"eur": 1}\n',
        "README": "rates, read from pkg/data\n",
    })
    repo.git("checkout", "-q", "main")
    (tmp_path / "spec.toml").write_text(SPEC)
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit").code == 0
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 0, res.text
    assert "FileNotFoundError" in res.out
    assert "Blame: 1 candidate hunk in the remaining diff (pkg/data/x.json)" in res.out
    assert repo.log("main..feature-clean") == ["data: the rates", "WIP: take the missing pieces from pkg/data/x.json",
                                               "loader: read the rates"], res.out
