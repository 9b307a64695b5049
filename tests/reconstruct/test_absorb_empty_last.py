"""absorb on a spec whose last logical commit had no commit of its own (the fix of the commit
before it took its changes, as on a C history): the change is placed, the commits re-made, built and
tested, and undo takes back this absorb, not the run before it."""
from __future__ import annotations

import json

from testing.flow import feature_repo, retcon

SPEC = """\
source = "feature"
remote = "main"
cleaned = "feature-clean"
build = "python3 -m py_compile app.py util.py"
test = "python3 -c 'import app; app.main()'"

[[commit]]
message = "docs: explain main"
paths = ["README", "notes/"]

[[commit]]
message = "app: use two()"
paths = ["app.py"]

[[commit]]
message = "util: add two()"
paths = ["util.py"]
"""


def test_absorb_when_the_last_logical_commit_has_no_commit_of_its_own(tmp_path):
    repo = feature_repo(tmp_path / "repo")
    (tmp_path / "spec.toml").write_text(SPEC)
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit").code == 0
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 0, res.text
    doc = json.loads(retcon(repo, "status", "--json").out)
    assert [c["state"] for c in doc["commits"]] == ["complete"] * 3
    assert doc["commits"][2]["commits"] == []                    # complete with no commit of its own
    ran = repo.rev("feature-clean")
    repo.git("checkout", "-q", "feature")
    repo.commit("review", {"util.py": "def one():\n    return 1\n\n\ndef two():\n    return 1 + 1\n"})
    repo.git("checkout", "-q", "main")
    res = retcon(repo, "absorb")
    assert res.code == 0, res.text
    assert "internal error" not in res.err
    assert "util.py (modify) -> commit 2" in res.out
    assert repo.tree("feature-clean") == repo.tree("feature")
    assert retcon(repo, "check", "--allow-wip").code == 0
    # undo takes back this absorb, not the run before it.
    res = retcon(repo, "undo")
    assert res.code == 0 and res.out.startswith("Undid `absorb`"), res.text
    assert repo.rev("feature-clean") == ran
