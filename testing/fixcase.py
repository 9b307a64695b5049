"""A repository whose first logical commit misses a helper that the remaining diff
defines: the case the fix loop's tests (and the squash tests) start from."""
from __future__ import annotations

from pathlib import Path

from testing.flow import feature_repo, retcon
from testing.gitrepo import GitRepo

SPEC = """\
source = "feature"
remote = "main"
cleaned = "feature-clean"
build = "python3 -m py_compile app.py util.py"
test = "python3 -c 'import app; app.main()'"
owners = "conversation"

[[commit]]
message = "app: use two()"
paths = ["app.py"]

[[commit]]
message = "docs: explain main"
paths = ["README", "notes/", "docs/"]
"""

# The rework brief lists candidates as "  <id> <path> ...", ids as read_diff shows them: what a
# model reading the brief applies.
BRIEF_IDS = "$match:^  ([0-9a-f]{4,10}) util\\.py "


def make(tmp_path: Path, spec: str = SPEC, docs: int = 4, doc_size: int = 40, extra: bool = False) -> GitRepo:
    """feature_repo, plus `docs` documentation files on the feature branch (more remaining
    diff that has nothing to do with the failure). The brief's candidate (util.py's hunk) fixes
    the failure on its own, and plain code commits it with no model; with extra, it still fails
    (no module named 'extra': feature_repo), and the model is asked."""
    repo = feature_repo(tmp_path / "repo", extra)
    if docs:
        repo.git("checkout", "-q", "feature")
        repo.commit("more docs", {f"docs/page{i:02}.md": f"# Page {i}\n" + f"Text of page {i}.\n" * doc_size
                                  for i in range(docs)})
        repo.git("checkout", "-q", "main")
    (tmp_path / "spec.toml").write_text(spec)
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit").code == 0
    return repo
