"""The build worktree lives outside the user's checkout (in the cache folder, keyed by repository),
so a tool that looks for its configuration in parent folders never finds the user's files; one of
the layout before (under .git/retcon/) moves there, warm, on the next run."""
from __future__ import annotations

from pathlib import Path

from testing.flow import SPEC, call, feature_repo, retcon, take, turn
from testing.gitrepo import GitRepo
from testing.sandboxes import worktrees


def stuck_at_two(tmp_path: Path, scripted) -> GitRepo:  # type: ignore[no-untyped-def]
    repo = feature_repo(tmp_path / "repo")
    (tmp_path / "s.toml").write_text(SPEC)
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "s.toml"), "--no-edit").code == 0
    scripted({"1/extract": take("util.py"), "2/extract": [turn(call("stuck", summary="pause"))]})
    assert retcon(repo, "run", "-m", "scripted").code == 3
    return repo


def test_no_folder_above_the_build_worktree_is_the_users_checkout(tmp_path, scripted):
    repo = stuck_at_two(tmp_path, scripted)
    (repo.path / "tsconfig.json").write_text("{}\n")   # the user's own, untracked
    wt = worktrees(repo.path) / "worktrees" / "feature-clean"
    assert (wt / "util.py").is_file()
    assert repo.path.resolve() not in wt.resolve().parents
    assert not any((d / "tsconfig.json").exists() for d in wt.resolve().parents)
    assert not (repo.path / ".git" / "retcon" / "worktrees").exists()


def test_a_worktree_of_the_layout_before_moves_out_warm(tmp_path, scripted):
    repo = stuck_at_two(tmp_path, scripted)
    new = worktrees(repo.path) / "worktrees" / "feature-clean"
    old = repo.path / ".git" / "retcon" / "worktrees" / "feature-clean"
    old.parent.mkdir(parents=True)
    repo.git("worktree", "move", str(new), str(old))   # as an older version left it
    (old / "node_modules").mkdir()
    (old / "node_modules" / "dep.txt").write_text("installed\n")   # ignored: kept warm across the move
    repo.git("config", "core.excludesFile", str(tmp_path / "ignore"))
    (tmp_path / "ignore").write_text("node_modules/\n")
    assert retcon(repo, "resolve", "-m", "go on").code == 0
    scripted({"2/extract": take("app.py")})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    assert not old.exists(), res.out
    assert "Kept the build worktree" in res.out, res.out
    kept = worktrees(repo.path) / "kept" / "worktrees" / "feature-clean"   # the spec is complete: set aside
    assert (kept / "node_modules" / "dep.txt").read_text() == "installed\n"
    assert repo.tree("feature-clean") == repo.tree("feature")
    assert "prunable" not in repo.git("worktree", "list", "--porcelain")
