"""A person's fix on the finished cleaned branch (a reviewer's, on the branch that was pushed) is
day two, not drift (issue 38): no run takes it back out to end on the source's tree. Every
command names the same way forward, and following it absorbs the fix into the logical commit it
belongs to, with the source holding it too."""
from __future__ import annotations

import re
import shlex
import subprocess

from testing.cleaned import bare_remote, git_push
from testing.flow import SPEC, feature_repo, retcon
from testing.gitrepo import GitRepo

FIXED = "demo\n\nmain() returns 3, always.\n"


def finished_with_a_fix(tmp_path) -> tuple[GitRepo, str, str]:
    repo = feature_repo(tmp_path / "repo")
    (tmp_path / "s.toml").write_text(SPEC)
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "s.toml"), "--no-edit").code == 0
    assert retcon(repo, "run", "-m", "retcon-paths").code == 0
    recorded = repo.rev("feature-clean")
    repo.git("switch", "-q", "feature-clean")
    repo.commit("review: say it always returns 3", {"README": FIXED})
    repo.git("switch", "-q", "main")
    return repo, recorded, repo.rev("feature-clean")


def way_forward(text: str) -> list[str]:
    """The commands a message gives, one per indented line."""
    return [ln.strip() for ln in text.splitlines() if re.match(r"^  (git|git retcon) ", ln)]


def test_run_never_undoes_a_persons_fix_and_every_command_names_the_same_way(tmp_path):
    repo, recorded, mine = finished_with_a_fix(tmp_path)
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 1, res.text
    assert "Complete!" not in res.out and "Adopting" not in res.out
    assert repo.rev("feature-clean") == mine and repo.git("show", "feature-clean:README") + "\n" == FIXED
    steps = way_forward(res.err)
    assert steps == [f"git switch feature && git cherry-pick {recorded[:12]}..feature-clean",
                     "git retcon absorb feature-clean"], res.err
    status = retcon(repo, "status")
    assert way_forward(status.out) == steps, status.out
    check = retcon(repo, "check")
    assert check.code == 1 and way_forward(check.out + check.err) == steps, check.text
    absorb = retcon(repo, "absorb")
    assert absorb.code == 1 and way_forward(absorb.err) == steps, absorb.text
    # the pre-push hook refuses the push with the same commands
    bare_remote(repo, tmp_path / "remote.git")
    assert retcon(repo, "hooks", "install").code == 0
    pushed = git_push(repo, "origin", "feature-clean")
    assert pushed.code == 1 and way_forward(pushed.err) == steps, pushed.err
    # Following it: the source gets the fix, absorb puts it in the docs commit, the tree is the source's.
    for step in steps[:-1]:
        subprocess.run(step, shell=True, cwd=repo.path, check=True, capture_output=True)
    repo.git("switch", "-q", "main")
    assert repo.git("show", "feature:README") + "\n" == FIXED
    res = retcon(repo, *shlex.split(steps[-1])[2:])
    assert res.code == 0, res.text
    assert repo.tree("feature-clean") == repo.tree("feature")
    assert repo.log("main..feature-clean", "%s") == ["docs: explain main", "app: use two()", "util: add two()"]
    assert retcon(repo, "check").code == 0
    # and undo puts the branch back as the person left it
    assert retcon(repo, "undo").code == 0
    assert repo.rev("feature-clean") == mine


def test_a_fix_the_source_has_too_is_absorbed_by_run_and_absorb_alike(tmp_path):
    repo, _, mine = finished_with_a_fix(tmp_path)
    repo.git("switch", "-q", "feature")
    repo.commit("say it always returns 3", {"README": FIXED})
    repo.git("switch", "-q", "main")
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 1 and way_forward(res.err) == ["git retcon absorb feature-clean"], res.text
    assert repo.rev("feature-clean") == mine
    assert way_forward(retcon(repo, "status").out) == ["git retcon absorb feature-clean"]
    res = retcon(repo, "absorb")
    assert res.code == 0, res.text
    assert repo.tree("feature-clean") == repo.tree("feature")
    assert len(repo.log("main..feature-clean", "%s")) == 3
