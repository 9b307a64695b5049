"""The remaining diff kept up to date path by path equals the remaining diff computed whole."""
from __future__ import annotations

import random

import pygit2
import pytest

from git_retcon import diff
from git_retcon.diff.remaining import RemainingDiff
from git_retcon.diff.sums import Sums
from testing.gitrepo import GitRepo


def _lines(tag: str, n: int) -> str:
    return "".join(f"{tag} line {i}\n" for i in range(n))


def _repo(repo: GitRepo) -> tuple[str, str]:
    """base and target commits whose diff has every kind of hunk."""
    base = {f"mod/m{i}.py": _lines(f"m{i}", 30) for i in range(8)}
    base.update({
        "gone.txt": _lines("gone", 5), "moved/a.py": _lines("moved", 20), "moved/b.py": _lines("edit-moved", 20),
        "exec.sh": "echo hi\n", "blob.bin": "\0\1\2base", "link": "", ".gitattributes": "*.txt text\n",
        "sub/.gitattributes": "*.dat binary\n", "sub/x.dat": "one\n",
    })
    repo.commit("base", {k: v for k, v in base.items() if k != "link"})
    (repo.path / "link").symlink_to("exec.sh")
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "link")
    b = repo.rev("HEAD")
    files: dict[str, str | bytes | None] = {}
    for i in range(8):
        lines = _lines(f"m{i}", 30).splitlines(keepends=True)
        lines[3] = "changed\n"
        lines[15:17] = ["replaced\n"]
        lines.append("appended\n")
        if i % 2:
            lines.insert(0, "top\n")
        files[f"mod/m{i}.py"] = "".join(lines)
    files.update({"gone.txt": None, "moved/a.py": None, "moved/b.py": None,
                  "renamed/a.py": _lines("moved", 20), "renamed/b.py": _lines("edit-moved", 20) + "more\n",
                  "new/n.py": _lines("new", 4), "blob.bin": "\0\1\2target", ".gitattributes": "*.txt -text\n",
                  "sub/x.dat": "two\n"})
    repo.commit("target", files)
    (repo.path / "exec.sh").chmod(0o755)
    (repo.path / "link").unlink()
    (repo.path / "link").symlink_to("blob.bin")
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "modes")
    return b, repo.rev("HEAD")


@pytest.mark.parametrize("seed", range(6))
def test_kept_up_to_date_it_always_equals_remaining(repo, seed):
    base, target = _repo(repo)
    prepo = pygit2.Repository(str(repo.path))
    workdir = repo.path.parent / "wt"
    repo.git("worktree", "add", "-q", "--detach", str(workdir), base)
    index = pygit2.Index()
    index.read_tree(prepo[pygit2.Oid(hex=repo.tree(base))])
    target_tree = repo.tree(target)
    inc = RemainingDiff(prepo, target_tree)
    rnd = random.Random(seed)
    steps = 0
    while True:
        tree = str(index.write_tree(prepo))
        whole = diff.remaining(prepo, tree, target_tree)
        assert inc.at(tree) == whole
        assert inc.sums_of(inc.hunks) == Sums(whole)
        assert inc.sums_of(whole) is None      # another list: its own counts
        if not whole:
            break
        # A step applies a few hunks, as a model does; sometimes one of a file's several.
        diff.apply(prepo, index, workdir, rnd.sample(whole, min(len(whole), rnd.randint(1, 3))))
        steps += 1
    assert steps >= 5
    assert str(index.write_tree(prepo)) == target_tree


def test_it_follows_a_tree_that_moved_away_and_back(repo):
    base, target = _repo(repo)
    prepo = pygit2.Repository(str(repo.path))
    inc = RemainingDiff(prepo, repo.tree(target))
    for tree in (repo.tree(base), repo.tree(target), repo.tree(f"{target}~1"), repo.tree(base)):
        assert inc.at(tree) == diff.remaining(prepo, tree, repo.tree(target))


def test_many_paths_each_replaced_where_it_sorts(repo):
    """Paths that sort close together ('a/b' < 'a-b' < 'a.b' < 'a/b/c' ...), several hunks each:
    each step's changed paths give way to their fresh hunks in remaining()'s order, and a path
    with no hunks left gets some again (a hand edit) in its place."""
    names = [f"{d}{s}" for d in ("a/b", "a-b", "a.b", "a", "A", "a/b/c", "z", "é") for s in ("", "/x.py", "-y.py")]
    names = [n for n in names if not any(m.startswith(n + "/") for m in names)]   # a file is no directory
    base = {n: _lines(n, 30) for n in names}
    repo.commit("base", base)
    b = repo.rev("HEAD")
    target = {}
    for n in names:
        lines = _lines(n, 30).splitlines(keepends=True)
        lines[2], lines[12], lines[22] = "two\n", "twelve\n", "twenty-two\n"
        target[n] = "".join(lines)
    repo.commit("target", target)
    prepo = pygit2.Repository(str(repo.path))
    workdir = repo.path.parent / "wt"
    repo.git("worktree", "add", "-q", "--detach", str(workdir), b)
    index = pygit2.Index()
    index.read_tree(prepo[pygit2.Oid(hex=repo.tree(b))])
    target_tree = repo.tree("HEAD")
    inc = RemainingDiff(prepo, target_tree)
    rnd = random.Random(7)
    for _ in range(60):
        tree = str(index.write_tree(prepo))
        whole = diff.remaining(prepo, tree, target_tree)
        assert inc.at(tree) == whole
        # Its counts, kept up to date path by path (files that come back included), are those of
        # the list counted afresh; so is the prompt's index by directory made from them.
        assert inc.sums_of(inc.hunks) == Sums(whole)
        for budget in (300, 12000):
            kept = diff.index_lines(whole, budget=budget, sums=inc.sums_of(inc.hunks))
            assert kept == diff.index_lines(whole, budget=budget)
        if not whole:
            break
        diff.apply(prepo, index, workdir, rnd.sample(whole, min(len(whole), rnd.randint(1, 4))))
        if rnd.random() < 0.3:   # a hand edit: some path, done or not, gets a line of its own
            n = rnd.choice(names)
            index.add(pygit2.IndexEntry(n, prepo.create_blob(target[n] + "mine\n"), pygit2.GIT_FILEMODE_BLOB))
    else:
        raise AssertionError("the hand edits kept it from ever being done")
