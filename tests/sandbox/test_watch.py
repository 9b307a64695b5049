"""After a build and a test, the next build starts on exactly its commit's tree (promise 3),
whether the worktree is scanned (git status) or watched (inotify on Linux) to know it: each
build here first checks that it finds nothing but its commit, then leaves something behind."""
from __future__ import annotations

import pytest

from testing.flow import retcon, spec_with
from testing.gitrepo import GitRepo

SPEC = """\
source = "feature"
remote = "main"
cleaned = "feature-clean"
build = '''test -z "$(git --no-optional-locks status --porcelain)" && test "$(cat pkg/a.py)" != junk && {mess}'''
test = "true"

[[commit]]
message = "new: a package in a new directory"
paths = ["newdir/"]

[[commit]]
message = "pkg: a grows"
paths = ["pkg/"]

[[commit]]
message = "docs"
paths = ["docs.txt"]
"""

# What a build leaves: each must be undone before the next build, or that build fails.
MESSES = {
    "a file in a directory the tools made": "if [ -d newdir/sub ]; then touch newdir/sub/stray.py; fi",
    "a new directory with a file": "mkdir -p deep/er && touch deep/er/x",
    "a tracked file that .gitignore matches": "echo junk >> app.log",
    "a mode change": "chmod +x pkg/a.py",
    "a deleted file": "rm pkg/a.py && mkdir pkg/a.py",
    "a changed file restored by name": "echo junk > pkg/a.py",
    "a staged deletion, no file touched": "git rm -q --cached pkg/a.py",
    "an untracked file moved in": "echo x > ../outside-$$ && mv ../outside-$$ moved.txt",
}
# Messes the sandbox refuses a build (the index is the repository's, ../ is outside): an unconfined
# build (--sandbox off) can still leave them.
UNCONFINED = ("a staged deletion, no file touched", "an untracked file moved in")


def repo_with_dirs(path) -> GitRepo:  # type: ignore[no-untyped-def]
    repo = GitRepo.init(path)
    repo.write("app.log", "tracked, though ignored\n")
    repo.git("add", "-f", "app.log")
    repo.commit("base", {".gitignore": "build/\n*.log\n__pycache__/\n", "pkg/a.py": "A = 1\n"})
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("everything", {"newdir/sub/b.py": "B = 2\n", "pkg/a.py": "A = 1\nA2 = 2\n", "docs.txt": "docs\n"})
    repo.git("checkout", "-q", "main")
    return repo


@pytest.mark.parametrize("mess", sorted(MESSES))
def test_what_a_build_leaves_is_gone_before_the_next_build(tmp_path, mess):
    repo = repo_with_dirs(tmp_path / "repo")
    spec = tmp_path / "spec.toml"
    text = SPEC.replace("{mess}", MESSES[mess])
    spec.write_text(spec_with(text, sandbox="off") if mess in UNCONFINED else text)
    assert retcon(repo, "plan", "--from-file", str(spec), "--no-edit").code == 0
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 0, res.text
    assert res.out.count("Building... PASS") == 4 and "FAIL" not in res.out   # the base and 3 commits
    assert repo.tree("feature-clean") == repo.tree("feature")
    assert repo.log("main..feature-clean") == ["docs", "pkg: a grows", "new: a package in a new directory"]


def test_ignored_files_a_build_makes_stay_warm_for_the_next(tmp_path):
    """Build outputs that git ignores are kept between builds (incremental builds stay warm),
    also in a directory the tools made: every build after the first finds the first's."""
    repo = repo_with_dirs(tmp_path / "repo")
    marker = tmp_path / "built-once"
    outputs = "build/count __pycache__/m.pyc x.log"
    spec = tmp_path / "spec.toml"
    spec.write_text(spec_with(SPEC.replace("{mess}", f"if [ -e {marker} ]; then ls {outputs} >/dev/null; fi "
                                                    f"&& mkdir -p build __pycache__ && touch {outputs} {marker}"),
                              writable=[tmp_path]))
    assert retcon(repo, "plan", "--from-file", str(spec), "--no-edit").code == 0
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 0, res.text
    assert res.out.count("Building... PASS") == 4 and "FAIL" not in res.out
    assert repo.tree("feature-clean") == repo.tree("feature")
