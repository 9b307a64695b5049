"""A complete spec's build worktree keeps what git ignores there (dependencies, build outputs) for
the next run, out of `git worktree list`; `free` deletes it, refused while a run holds the spec."""
from __future__ import annotations

import fcntl
import os

from testing.cleaned import edit_spec
from testing.flow import SPEC, feature_repo, retcon, spec_with
from testing.gitrepo import GitRepo
from testing.sandboxes import shown, worktrees

# The build leaves an ignored build output; it counts its builds outside the repository.
BUILD_SPEC = SPEC.replace('build = "python3 -m py_compile app.py util.py"',
                          'build = "echo built >> {log} && mkdir -p out && echo x > out/cache"')


def finished(tmp_path) -> tuple[GitRepo, str]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    repo = feature_repo(tmp_path / "repo")
    repo.git("checkout", "-q", "main")
    repo.commit("ignore out", {".gitignore": "out/\n"})
    repo.git("rebase", "-q", "main", "feature")
    repo.git("checkout", "-q", "main")
    (tmp_path / "spec.toml").write_text(spec_with(BUILD_SPEC.format(log=tmp_path / "builds.log"), writable=[tmp_path]))
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit").code == 0
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 0, res.text
    return repo, res.out


def kept(repo: GitRepo):
    return worktrees(repo.path) / "kept" / "worktrees" / "feature-clean"


def listed(repo: GitRepo) -> list[str]:
    out = repo.git("worktree", "list", "--porcelain")
    return [ln.removeprefix("worktree ") for ln in out.splitlines() if ln.startswith("worktree ")]


def test_a_complete_spec_keeps_its_ignored_files_aside_and_the_next_run_takes_them_back(tmp_path):
    repo, out = finished(tmp_path)
    assert ("Kept the build worktree for the next run, with the files git ignores there (out/; " in out
            and f"): {shown(kept(repo))}. Free it with `git retcon free feature-clean`." in out)
    assert (kept(repo) / "out" / "cache").is_file() and listed(repo) == [str(repo.path)]
    (kept(repo) / "stray.txt").write_text("left by hand\n")      # not ignored: gone when it comes back
    (kept(repo) / "util.py").write_text("changed by hand\n")     # tracked: as committed again
    repo.git("checkout", "-q", "feature")
    repo.commit("news", {"NEWS": "news\n"})
    repo.git("checkout", "-q", "main")
    edit_spec(repo, lambda text: text + '\n[[commit]]\nmessage = "news"\npaths = ["NEWS"]\n')
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 0, res.text
    assert repo.log("main..feature-clean")[0] == "news" and repo.tree("feature-clean") == repo.tree("feature")
    assert not (kept(repo) / "stray.txt").exists()
    assert (kept(repo) / "util.py").read_bytes() == repo.git("show", "feature:util.py").encode() + b"\n"
    assert (kept(repo) / "out" / "cache").is_file() and listed(repo) == [str(repo.path)]


def test_a_worktree_with_nothing_ignored_is_removed_as_before(tmp_path):
    repo = feature_repo(tmp_path / "repo")
    (tmp_path / "spec.toml").write_text(SPEC)
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit").code == 0
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 0, res.text
    assert "Removed the build worktree: the spec is complete" in res.out and "Kept" not in res.out
    assert not (worktrees(repo.path) / "kept").exists() and listed(repo) == [str(repo.path)]


def test_free_deletes_it_keeps_the_spec_and_branch_and_is_refused_under_a_runs_lock(tmp_path):
    repo, _ = finished(tmp_path)
    refs = repo.git("for-each-ref")
    lock = repo.path / ".git" / "retcon" / "locks" / "feature-clean.lock"
    fd = os.open(lock, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.write(fd, b"4242\n")
        res = retcon(repo, "free", "feature-clean")
        assert res.code == 1 and "another git-retcon (pid 4242) is working on 'feature-clean'" in res.err
        every = retcon(repo, "free", "--all")
        assert every.code == 1 and "not freed: feature-clean (another git-retcon (pid 4242)" in every.err
        assert (kept(repo) / "out" / "cache").is_file()
    finally:
        os.close(fd)
    res = retcon(repo, "free", "feature-clean")
    assert res.code == 0, res.text
    assert res.out.startswith("Freed ") and ("B: deleted the build worktree of 'feature-clean' "
                                             f"({shown(kept(repo))})") in res.out
    assert not kept(repo).exists() and repo.git("for-each-ref") == refs and retcon(repo, "check").code == 0
    again = retcon(repo, "free")
    assert again.code == 0 and again.out == "Nothing to free: 'feature-clean' has no build worktree.\n"


def test_abort_and_spec_rm_delete_the_kept_worktree(tmp_path):
    repo, _ = finished(tmp_path / "a")
    res = retcon(repo, "abort", "feature-clean")
    assert res.code == 0 and "Removed the build worktree." in res.out, res.text
    assert not kept(repo).exists() and listed(repo) == [str(repo.path)]
    repo, _ = finished(tmp_path / "b")
    assert kept(repo).is_dir()
    res = retcon(repo, "spec", "rm", "feature-clean")
    assert res.code == 0 and "removed its build worktree" in res.out, res.text
    assert not kept(repo).exists() and listed(repo) == [str(repo.path)]


def test_killed_while_it_is_set_aside_or_taken_back_then_run_again(tmp_path):
    import signal

    from testing.flow import retcon_proc

    repo = feature_repo(tmp_path / "repo")
    repo.commit("ignore out", {".gitignore": "out/\n"})
    repo.git("rebase", "-q", "main", "feature")
    repo.git("checkout", "-q", "main")
    (tmp_path / "spec.toml").write_text(spec_with(BUILD_SPEC.format(log=tmp_path / "builds.log"), writable=[tmp_path]))
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit").code == 0
    # Killed as the admin dir goes: moved aside already, git may list it as prunable for now.
    killed = retcon_proc(repo, "run", "-m", "retcon-paths", env={"RETCON_FAILPOINT": "worktree-discarding@2"})
    assert killed.code == -signal.SIGKILL
    res = retcon_proc(repo, "run", "-m", "retcon-paths")
    assert res.code == 0 and "Nothing to do" in res.out, res.text
    assert (kept(repo) / "out" / "cache").is_file() and listed(repo) == [str(repo.path)]
    # Killed as the next run brings it back: the files still kept are taken back on the rerun.
    repo.git("checkout", "-q", "feature")
    repo.commit("news", {"NEWS": "news\n"})
    repo.git("checkout", "-q", "main")
    edit_spec(repo, lambda text: text + '\n[[commit]]\nmessage = "news"\npaths = ["NEWS"]\n')
    killed = retcon_proc(repo, "run", "-m", "retcon-paths", env={"RETCON_FAILPOINT": "worktree-added"})
    assert killed.code == -signal.SIGKILL
    res = retcon_proc(repo, "run", "-m", "retcon-paths")
    assert res.code == 0, res.text
    assert repo.tree("feature-clean") == repo.tree("feature") and retcon(repo, "check").code == 0
    assert (kept(repo) / "out" / "cache").is_file() and listed(repo) == [str(repo.path)]
    assert not (repo.path / ".git" / "retcon" / "trash").exists() and not (worktrees(repo.path) / "trash").exists()
