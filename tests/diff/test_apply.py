"""hunks.apply is all-or-nothing: a failure half way leaves index and worktree exactly as before."""
from __future__ import annotations

import os

import pytest

from git_retcon import diff
from testing.rebuild import Rebuild, make, workdir_entries


def test_an_apply_that_fails_half_way_changes_neither_index_nor_worktree(repo):
    rb = make(repo, {"a.txt": "a\n", "b.txt": "one\ntwo\n", "keep/x": "x\n"},
              {"b.txt": "one\n2\n", "new.txt": "new\n", "keep/x": "x\n", "zz": "a file\n"},
              modes={"new.txt": 0o755})
    # An untracked, non-empty directory where the source adds the file `zz` (as a build's
    # ignored output would be): only writing the worktree can find it.
    (rb.workdir / "zz").mkdir()
    (rb.workdir / "zz" / "obj").write_bytes(b"warm\n")
    hs = rb.remaining()
    assert [(h.path, h.kind) for h in hs] == [("a.txt", "delete"), ("b.txt", "modify"), ("new.txt", "add"),
                                             ("zz", "add")]
    before_tree = rb.current()
    before_files = workdir_entries(rb.workdir)

    with pytest.raises(ValueError) as err:
        diff.apply(rb.repo, rb.index, rb.workdir, hs)

    assert rb.current() == before_tree                      # the index did not change
    assert workdir_entries(rb.workdir) == before_files      # nor did a single file
    assert (rb.workdir / "a.txt").read_bytes() == b"a\n"
    assert not (rb.workdir / "new.txt").exists()
    # The error names the item that failed and why.
    assert str(err.value).startswith(f"hunk {hs[3].id} (add of zz)"), err.value
    assert "non-empty directory" in str(err.value)

    # Once the way is clear, the same hunks apply: nothing was half done.
    os.unlink(rb.workdir / "zz" / "obj")
    os.rmdir(rb.workdir / "zz")
    rb.finish()


def test_an_apply_undone_restores_files_modes_and_symlinks_it_had_replaced(repo):
    base = repo.commit("base", {"tool": "#!/bin/sh\n", "link": "placeholder\n", "d/f": "in d\n"})
    repo.git("rm", "-q", "d/f")
    target = repo.commit("target", {"tool": "#!/bin/sh\necho hi\n", "d": "d is now a file\n", "m/zz": "late\n"})
    rb = Rebuild(repo, base, target)
    os.chmod(rb.workdir / "tool", 0o755)
    (rb.workdir / "link").unlink()
    os.symlink("tool", rb.workdir / "link")           # the worktree differs from the index here
    (rb.workdir / "m").mkdir()
    (rb.workdir / "m" / "zz").mkdir()
    (rb.workdir / "m" / "zz" / "obj").write_bytes(b"warm\n")
    before_tree = rb.current()
    before_files = workdir_entries(rb.workdir)

    with pytest.raises(ValueError, match=r"\(add of m/zz\).*non-empty directory"):
        diff.apply(rb.repo, rb.index, rb.workdir, rb.remaining())

    assert rb.current() == before_tree
    assert workdir_entries(rb.workdir) == before_files
    assert os.readlink(rb.workdir / "link") == "tool"
    assert os.stat(rb.workdir / "tool").st_mode & 0o111
