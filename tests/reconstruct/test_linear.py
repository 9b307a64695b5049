"""A run's cost per commit does not grow with the number of commits: what is left for every later
logical commit is known from one remaining diff per commit (reconstruct/left.py), and `paths` are
looked up, not tried one commit at a time (state/spec.PathsIndex). Counted, not timed."""
from __future__ import annotations

import importlib

import pytest

from git_retcon.diff.hunk import Hunk
from git_retcon.reconstruct.left import under
from git_retcon.state.spec import PathsIndex, paths_match
from testing.flow import retcon
from testing.gitrepo import GitRepo

# the module (git_retcon.diff exports a function of the same name)
remaining_mod = importlib.import_module("git_retcon.diff.remaining")

PATHS = ["a", "a/b.py", "a/b/c.py", "a-x/y.py", "a.py", "ab/c", "b/a/c.py", "docs/x.md", ".github/w.yml",
         "src/pkg/mod.py", "src/pkg.py", "x[1].txt", "z"]
PATTERNS = [["a"], ["a/"], ["./a"], ["a/b"], ["."], ["./"], ["*.py"], ["src/*"], ["src/pkg"], ["docs/", "z"],
            ["a/b.py"], [".github/"], ["./.github"], [""], ["/"], ["x[1].txt"], ["b/*/c.py"], ["nothing"],
            ["a", "*.md"], ["  a  "]]


def test_the_index_and_the_bisection_answer_as_paths_match_does():
    index = PathsIndex(enumerate(PATTERNS))
    hunks = [Hunk(id=f"{i:010x}", path=p, kind="modify") for i, p in enumerate(sorted(PATHS))]
    for path in PATHS:
        assert index.which(path) == {j for j, pats in enumerate(PATTERNS) if paths_match(path, pats)}, path
    for pats in PATTERNS:
        assert under(hunks, pats) == [h for h in hunks if paths_match(h.path, pats)], pats


def _branch(tmp_path, commits: int) -> GitRepo:
    """main with 40 files; feature: `commits` commits, each changing one file and adding one."""
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("base", {f"pkg{i % 4}/mod{i}.py": "".join(f"line {j}\n" for j in range(12)) for i in range(40)})
    repo.git("checkout", "-q", "-b", "feature")
    for c in range(commits):
        repo.commit(f"step {c}", {f"pkg{c % 4}/mod{c}.py": "".join(f"line {j}\n" for j in range(12)) + f"# {c}\n",
                                  f"new/file{c}.py": f"x = {c}\n"})
    repo.git("checkout", "-q", "main")
    repo.git("config", "retcon.owners", "conversation")
    res = retcon(repo, "plan", "--from-commits", "--source", "feature", "--onto", "main", "--cleaned", "clean",
                 "--build", "true", "--test", "true", "--no-edit")
    assert res.code == 0, res.text
    return repo


@pytest.mark.parametrize("commits", [6, 18])
def test_the_remaining_diff_is_computed_whole_a_fixed_number_of_times(tmp_path, monkeypatch, commits):
    """Each commit adds a file, which the remaining diff cannot follow a path at a time going
    backwards: asking it about the tree before a commit once per later logical commit recomputed
    the whole diff K times per commit (a 50-commit run spent 7 of its 12 s there)."""
    calls: list[int] = []
    whole = remaining_mod.remaining

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        return whole(*args, **kwargs)

    repo = _branch(tmp_path, commits)
    monkeypatch.setattr(remaining_mod, "remaining", counted)
    res = retcon(repo, "run", "-m", "retcon-paths", "--sandbox", "off")
    assert res.code == 0, res.text
    assert repo.tree("clean") == repo.tree("feature")
    assert len(calls) <= 3, len(calls)
