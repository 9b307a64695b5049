"""A spec saved with its logical commits reordered, inserted or removed keeps the history of
the unchanged prefix only; the cleaned branch is cut back to the last commit still in order
(what is cut stays reachable from a backup ref the output names), and the next run rebuilds
from there: never a commit built on the wrong parent."""
from __future__ import annotations

import json
import re

import pytest

from testing.flow import SPEC, feature_repo, retcon


def status(repo):
    return json.loads(retcon(repo, "status", "--json").out)


@pytest.fixture
def done(tmp_path):
    repo = feature_repo(tmp_path / "repo")
    (tmp_path / "spec.toml").write_text(SPEC)
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit").code == 0
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 0, res.text
    assert repo.log("main..feature-clean") == ["docs: explain main", "app: use two()", "util: add two()"]
    return repo


def blocks(text):
    """The spec's head and its [[commit]] blocks, as exported."""
    head, *commits = re.split(r"\n(?=\[\[commit\]\])", text)
    return head, commits


def import_blocks(repo, tmp_path, order):
    exported = tmp_path / "s.toml"
    assert retcon(repo, "spec", "export", "-o", str(exported)).code == 0
    head, commits = blocks(exported.read_text())
    exported.write_text("\n".join([head, *[commits[i] if isinstance(i, int) else i for i in order]]))
    return retcon(repo, "spec", "import", str(exported))


def test_commits_swapped_with_their_history_are_rebuilt_in_the_new_order(done, tmp_path):
    repo = done
    first, old_tip = repo.rev("feature-clean~2"), repo.rev("feature-clean")
    res = import_blocks(repo, tmp_path, [0, 2, 1])
    assert res.code == 0, res.text
    assert "refs/retcon-backup/feature-clean" in res.out, res.text
    assert repo.rev("feature-clean") == first
    assert repo.rev("refs/retcon-backup/feature-clean") == old_tip
    assert [c["state"] for c in status(repo)["commits"]] == ["complete", "pending", "pending"]
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 0, res.text
    assert repo.log("main..feature-clean") == ["app: use two()", "docs: explain main", "util: add two()"]
    assert repo.tree("feature-clean") == repo.tree("feature")
    assert retcon(repo, "check").code == 0


def test_a_commit_inserted_before_others_cuts_them_and_undo_puts_it_back(done, tmp_path):
    repo = done
    first, old_tip = repo.rev("feature-clean~2"), repo.rev("feature-clean")
    spec_before = repo.rev("refs/retcon/feature-clean")
    new = '[[commit]]\nmessage = "notes first"\npaths = ["notes/"]\n'
    res = import_blocks(repo, tmp_path, [0, new, 1, 2])
    assert res.code == 0, res.text
    assert repo.rev("feature-clean") == first
    assert [c["state"] for c in status(repo)["commits"]] == ["complete", "pending", "pending", "pending"]
    res = retcon(repo, "undo")
    assert res.code == 0, res.text
    assert repo.rev("feature-clean") == old_tip and repo.rev("refs/retcon/feature-clean") == spec_before


def test_a_commit_removed_cuts_the_ones_after_it(done, tmp_path):
    repo = done
    first = repo.rev("feature-clean~2")
    res = import_blocks(repo, tmp_path, [0, 2])
    assert res.code == 0, res.text
    assert repo.rev("feature-clean") == first
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 0, res.text
    assert repo.log("main..feature-clean") == ["docs: explain main", "util: add two()"]
    assert repo.tree("feature-clean") == repo.tree("feature")


def test_an_unchanged_order_keeps_everything(done, tmp_path):
    repo = done
    tip = repo.rev("feature-clean")
    res = import_blocks(repo, tmp_path, [0, 1, 2])
    assert res.code == 0, res.text
    assert "backup" not in res.out and repo.rev("feature-clean") == tip
    assert [c["state"] for c in status(repo)["commits"]] == ["complete"] * 3


def test_a_reorder_is_refused_while_the_branch_is_checked_out(done, tmp_path):
    repo = done
    repo.git("worktree", "add", "-q", str(tmp_path / "there"), "feature-clean")
    spec_before, tip = repo.rev("refs/retcon/feature-clean"), repo.rev("feature-clean")
    res = import_blocks(repo, tmp_path, [0, 2, 1])
    assert res.code == 1 and "is checked out in" in res.err, res.text
    assert repo.rev("refs/retcon/feature-clean") == spec_before and repo.rev("feature-clean") == tip


def test_a_spec_imported_without_its_history_cuts_the_branch_to_the_base(done, tmp_path):
    """The spec exported before the run and imported after it: the branch agrees with it again
    (not adopted commit by commit into logical commit 1)."""
    repo = done
    old_tip = repo.rev("feature-clean")
    (tmp_path / "before.toml").write_text(SPEC)
    res = retcon(repo, "spec", "import", str(tmp_path / "before.toml"))
    assert res.code == 0, res.text
    assert repo.rev("feature-clean") == repo.rev("main")
    assert repo.rev("refs/retcon-backup/feature-clean") == old_tip
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 0 and "Adopting" not in res.out, res.text
    assert repo.log("main..feature-clean") == ["docs: explain main", "app: use two()", "util: add two()"]
