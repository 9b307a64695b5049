"""Logical commits with nothing left to take: one whose changes an earlier fix took is
complete with no commit of its own (the run says who took them, and goes on); one whose
paths match no change of the source is refused before anything is written."""
from __future__ import annotations

import json
from pathlib import Path

from testing.flow import SPEC, feature_repo, retcon
from testing.gitrepo import GitRepo

# app first: its test needs util.two(), which the fix takes; util's own commit is then empty.
MISORDERED = SPEC.replace('''[[commit]]
message = "util: add two()"
hints = "Only util.py."
paths = ["util.py"]

[[commit]]
message = "app: use two()"
paths = ["app.py"]
''', '''[[commit]]
message = "app: use two()"
paths = ["app.py"]

[[commit]]
message = "util: add two()"
hints = "Only util.py."
paths = ["util.py"]
''')


def planned(tmp_path, spec):
    repo = feature_repo(tmp_path / "repo")
    (tmp_path / "spec.toml").write_text(spec)
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit").code == 0
    return repo


def test_a_commit_whose_changes_a_fix_took_is_complete_with_none_of_its_own(tmp_path):
    assert MISORDERED != SPEC
    repo = planned(tmp_path, MISORDERED)
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 0, res.text
    assert ("Nothing left for it: every change under its paths ['util.py'] is taken already, by commit 1 "
            "(WIP: take the definition of `two` from util.py)") in res.out, res.out
    rows = json.loads(retcon(repo, "status", "--json").out)["commits"]
    assert [(r["state"], len(r["commits"])) for r in rows] == [("complete", 2), ("complete", 0), ("complete", 1)]
    # A finding, not a success: said at the step that emptied it, and in the closing report.
    fix = repo.rev("feature-clean~1")[:9]
    assert (f"! {fix} took every change left for commit 2/3 (util: add two()): it will have no commit of "
            "its own") in res.out, res.out
    assert "! Empty: no commit of its own (merge or drop it: git retcon spec edit feature-clean)" in res.out
    assert "✓ Complete with no commit" not in res.out
    assert ("Complete, with empty logical commits\n3 commits for 3 logical commits; 1 empty (2): their changes "
            "are in the commits before them.") in res.out
    assert repo.tree("feature-clean") == repo.tree("feature")
    assert retcon(repo, "squash").code == 0
    assert retcon(repo, "check").code == 0


def test_paths_that_match_no_change_of_the_source_are_refused_before_anything_is_written(tmp_path):
    repo = planned(tmp_path, SPEC.replace('paths = ["app.py"]', 'paths = ["ap.py"]'))
    spec = repo.rev("refs/retcon/feature-clean")
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 1, res.text
    assert res.err.strip() == ("error: commit 2/3 (app: use two()): its paths ['ap.py'] match no file that "
                               "'feature' changes: fix them (git retcon spec edit feature-clean), then run again")
    assert repo.rev("refs/retcon/feature-clean") == spec
    assert repo.git("rev-parse", "-q", "--verify", "feature-clean", check=False) == ""
    # The advice works: the spec fixed, the run goes through.
    exported = tmp_path / "fixed.toml"
    assert retcon(repo, "spec", "export", "-o", str(exported)).code == 0
    exported.write_text(exported.read_text().replace('"ap.py"', '"app.py"'))
    assert retcon(repo, "spec", "import", str(exported)).code == 0
    assert retcon(repo, "run", "-m", "retcon-paths").code == 0


def test_plan_says_before_it_saves_which_commits_would_take_nothing(tmp_path):
    repo = feature_repo(tmp_path / "repo")
    spec = SPEC.replace('paths = ["app.py"]', 'paths = ["ap.py"]').replace(
        '[[commit]]\nmessage = "docs: explain main"', '[[commit]]\nmessage = "util again"\npaths = ["util.py"]\n\n'
        '[[commit]]\nmessage = "docs: explain main"')
    (tmp_path / "spec.toml").write_text(spec)
    res = retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit")
    assert res.code == 0, res.text
    lines = res.out.splitlines()
    saved = next(i for i, ln in enumerate(lines) if ln.startswith("Saved spec"))
    warnings = [ln for ln in lines[:saved] if ln.startswith("Warning: ")]
    assert warnings == [
        "Warning: commit 2 (app: use two()): its paths ['ap.py'] match no file the source changes; `run` refuses "
        "it until they do (git retcon spec edit feature-clean)",
        "Warning: commit 3 (util again): an earlier commit takes every change it names; a run completes it with "
        "no commit of its own (merge or drop it: git retcon spec edit feature-clean)"]


def test_a_commit_whose_paths_take_everything_left_stops_saying_so_with_a_clean_worktree(tmp_path):
    """Commit 1 of 3 with paths = ["*"]: plan warns before saving, and run stops before applying
    anything, saying what is true (the later commits would have nothing), not "no remaining hunk
    matches this commit's paths", with the build worktree as clean as the branch."""
    repo = feature_repo(tmp_path / "repo")
    (tmp_path / "spec.toml").write_text(SPEC.replace('paths = ["util.py"]', 'paths = ["*"]'))
    res = retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit")
    assert res.code == 0, res.text
    assert ("Warning: commit 1 (util: add two()): its paths and hunks take every change left, though it is "
            "commit 1 of 3: the commits after it would have nothing left (narrow them: git retcon spec edit "
            "feature-clean)") in res.out
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 3, res.text
    assert ("commit 1/3 is stuck: its paths ['*'] take every change left (4 hunks), though this is commit 1 of 3: "
            "the 2 commits after it would have nothing. Narrow them (git retcon spec edit feature-clean), then "
            "redo this commit") in res.err
    assert "no remaining hunk matches" not in res.text
    worktrees = [line.split()[1] for line in repo.git("worktree", "list", "--porcelain").splitlines()
                 if line.startswith("worktree ")][1:]
    assert len(worktrees) == 1
    assert GitRepo(Path(worktrees[0])).git("status", "--porcelain") == ""
    # The way out the stop names works: paths narrowed, the commit redone, the run completes.
    exported = tmp_path / "fixed.toml"
    assert retcon(repo, "spec", "export", "-o", str(exported)).code == 0
    exported.write_text(exported.read_text().replace('paths = ["*"]', 'paths = ["util.py"]'))
    assert retcon(repo, "spec", "import", str(exported)).code == 0
    assert retcon(repo, "resolve", "--redo", "-m", "narrowed the paths").code == 0
    assert retcon(repo, "run", "-m", "retcon-paths").code == 0
    assert repo.tree("feature-clean") == repo.tree("feature")


def test_paths_dot_means_the_whole_tree(tmp_path):
    """`paths = ["."]` was refused as matching no file the source changes."""
    repo = feature_repo(tmp_path / "repo")
    spec = SPEC.replace(
        'paths = ["README", "notes/"]', 'paths = ["."]')
    (tmp_path / "spec.toml").write_text(spec)
    res = retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit")
    assert res.code == 0 and "match no file" not in res.out, res.text
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 0, res.text
    assert repo.tree("feature-clean") == repo.tree("feature")
