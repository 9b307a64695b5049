"""`git retcon check`: the checklist on cleaned branches in every state, made by real runs."""
from __future__ import annotations

import json
import time

from testing.cleaned import NEEDS_PATHS, SPEC, TEST, edit_spec, finished, give_paths, planned, stuck
from testing.flow import call, needs_fix_repo, retcon, spec_with, take, turn
from testing.gitrepo import GitRepo


def lines(out: str) -> list[str]:
    return [ln for ln in out.splitlines() if ln.startswith(("✓", "✗"))]


def test_finished_run_passes_every_check(tmp_path):
    repo = finished(tmp_path / "repo")
    res = retcon(repo, "check")
    assert res.code == 0, res.text
    assert lines(res.out) == [
        "✓ all 3 logical commits are complete",
        f"✓ 'feature-clean' holds exactly the 3 recorded commits on {repo.rev('main')[:9]}",
        f"✓ final tree equals 'feature' ({repo.rev('feature')[:9]})",
        "✓ every logical commit's last tree passed build and test",
        "✓ no WIP: commits",
    ]


def test_stuck_run_names_the_commit_the_reason_and_the_missing_paths(tmp_path):
    repo = stuck(tmp_path / "repo")
    res = retcon(repo, "check")
    assert res.code == 1
    assert ("✗ commit 2/3 is stuck: app: use two(): fix what it says, then "
            "`git retcon resolve -m \"...\" feature-clean` and run again") in res.out
    assert "stuck because: " + NEEDS_PATHS in res.out
    assert "(and 1 later logical commit not complete)" in res.out
    # The tree check says which paths differ, git diff --stat style.
    assert "✗ final tree differs from 'feature' in 3 paths (the run is not finished):" in res.out
    assert "app.py         | 2 +-" in res.out and "notes/todo.txt | 1 +" in res.out
    assert "commits 2, 3 (not built yet)" in res.out


def test_resolved_but_unfinished_says_to_run(tmp_path):
    repo = stuck(tmp_path / "repo")
    assert retcon(repo, "resolve", "-m", "will fix").code == 0
    res = retcon(repo, "check")
    assert res.code == 1
    assert ("✗ commit 2/3 is resolved: app: use two(): resolved but not finished: "
            "run `git retcon run feature-clean`") in res.out
    edit_spec(repo, give_paths)
    assert retcon(repo, "run", "-m", "retcon-paths").code == 0
    assert retcon(repo, "check").code == 0


def test_spec_never_run_has_no_branch(tmp_path):
    repo = planned(tmp_path / "repo")
    res = retcon(repo, "check")
    assert res.code == 1
    assert "✗ commit 1/3 is pending" in res.out
    assert "✗ branch 'feature-clean' does not exist: run `git retcon run feature-clean`" in res.out


def test_source_that_moved_on_since_the_run_is_named(tmp_path):
    repo = finished(tmp_path / "repo")
    repo.git("checkout", "-q", "feature")
    new = repo.commit("late fix", {"app.py": "import util\n\n\ndef main():\n    return util.two()\n"})
    repo.git("checkout", "-q", "main")
    res = retcon(repo, "check")
    assert res.code == 1
    assert ("✗ 'feature' has moved on since the run: 1 new commit not in 'feature-clean': absorb them into the "
            "logical commits they belong to (what status and run say): git retcon absorb feature-clean") in res.out
    assert "git retcon absorb feature-clean" in retcon(repo, "status").out
    assert f"    {new[:9]} late fix" in res.out
    assert "✓ all 3 logical commits are complete" in res.out


def test_rewritten_source_shows_the_differing_paths(tmp_path):
    repo = finished(tmp_path / "repo")
    repo.git("checkout", "-q", "feature")
    repo.write("notes/todo.txt", "something else\nand more\n")
    repo.git("commit", "-q", "--amend", "-a", "-m", "fix")
    repo.git("checkout", "-q", "main")
    res = retcon(repo, "check")
    assert res.code == 1
    assert "✗ final tree differs from 'feature' in 1 path:" in res.out
    assert "notes/todo.txt | 3 ++-" in res.out and "1 file changed, 2 insertions(+), 1 deletion(-)" in res.out


def test_branch_that_lost_or_gained_commits(tmp_path):
    repo = finished(tmp_path / "repo")
    tip = repo.rev("feature-clean")
    repo.git("branch", "-f", "feature-clean", "feature-clean~1")
    res = retcon(repo, "check")
    assert res.code == 1
    assert f"✗ 'feature-clean' does not hold the recorded commits (first missing: {tip[:9]}" in res.out
    assert f"git branch -f feature-clean {tip[:12]}" in res.out
    extra = repo.git("commit-tree", f"{tip}^{{tree}}", "-p", tip, "-m", "WIP: poke")
    repo.git("branch", "-f", "feature-clean", extra)
    res = retcon(repo, "check")
    assert res.code == 1
    assert (f"✗ 'feature-clean' has 1 commit the spec does not record ({extra[:9]}): "
            "run `git retcon run feature-clean` to adopt and test them") in res.out
    assert f"✗ 1 WIP: commit left ({extra[:9]})" in res.out


def test_untested_tree_fails_until_rerun_records_a_pass(tmp_path):
    marker = tmp_path / "built"
    spec = spec_with(SPEC.replace('build = "', f'build = "touch {marker} && '), writable=[tmp_path])
    repo = finished(tmp_path / "repo", spec)
    # A new test command: what was recorded no longer proves anything.
    edit_spec(repo, lambda t: t.replace("grep -q 'def two'", "grep -q 'def two()'"))
    res = retcon(repo, "check")
    assert res.code == 1
    shas = [repo.rev(f"feature-clean~{n}")[:9] for n in (2, 1, 0)]
    assert (f"✗ no passing build/test record for commits 1 {shas[0]}, 2 {shas[1]}, 3 {shas[2]} "
            "(test never ran)") in res.out
    marker.unlink()
    assert retcon(repo, "check").code == 1 and not marker.exists()  # no build without --rerun
    res = retcon(repo, "check", "--rerun")
    assert res.code == 0, res.text
    assert marker.exists()
    assert f"commit 3/3 {shas[2]}: test pass" in res.out
    assert "✓ --rerun: build and test passed again for 3 logical commits" in res.out
    # It ran in a build worktree made for it, removed again: the spec is complete.
    assert repo.git("worktree", "list", "--porcelain").count("worktree ") == 1
    note = json.loads(repo.git("notes", "--ref=retcon-tests", "show", repo.tree("feature-clean")))
    (rec,) = [rec for text, rec in note["commands"].items() if "def two()" in text]
    assert rec["kind"] == "test" and rec["result"] == "pass"
    assert retcon(repo, "check").code == 0  # the fresh record is trusted from now on


def test_rerun_that_fails_records_the_failure(tmp_path):
    repo = finished(tmp_path / "repo")
    edit_spec(repo, lambda t: t.replace(TEST, TEST + " && test -f nowhere"))
    res = retcon(repo, "check", "--rerun")
    assert res.code == 1
    assert "✗ --rerun: failed for commits 1 (test: exit 1), 2 (test: exit 1), 3 (test: exit 1)" in res.out
    again = retcon(repo, "check")
    assert again.code == 1 and "(test fail)" in again.out


def test_wip_commits_fail_unless_allowed(tmp_path, scripted):
    repo = needs_fix_repo(tmp_path, SPEC)
    scripted({
        "1/extract": take("app.py"),
        "1/fix/1": [turn(call("write_file", path="util.py",
                                content="def one():\n    return 1\n\n\ndef two():\n    return 2\n")),
                    turn(call("create_commit", message="add the missing helper"))],
        "2/extract": take(""),
    })
    assert retcon(repo, "run", "-m", "scripted").code == 0
    wip = repo.rev("feature-clean~1")
    res = retcon(repo, "check")
    assert res.code == 1
    assert (f"✗ 1 WIP: commit left ({wip[:9]}): squash them into their logical commits, "
            "or pass --allow-wip") in res.out
    allowed = retcon(repo, "check", "--allow-wip")
    assert allowed.code == 0 and "✓ 1 WIP: commit (allowed)" in allowed.out


def fast_import(repo: GitRepo, commits: list[tuple[str, str | None, dict[str, str]]]) -> None:
    """Write commits (branch, parent, files) with `git fast-import`: thousands of files
    without writing them to a work tree. No parent: the branch goes on (or starts)."""
    stream = []
    for branch, parent, files in commits:
        stream += [f"commit refs/heads/{branch}", "committer T <t@example.com> 1700000000 +0000",
                   f"data {len(branch)}", branch]
        stream += [f"from {parent}"] if parent else []
        for path, text in files.items():
            stream += [f"M 100644 inline {path}", f"data {len(text.encode())}", text]
    repo.git("fast-import", "--quiet", input="\n".join(stream) + "\n")


def test_check_is_fast_on_thousands_of_files(tmp_path):
    repo = GitRepo.init(tmp_path / "repo")
    fast_import(repo, [
        ("main", None, {f"pkg{d}/mod{f}.py": f"X = {d * 100 + f}\n" for d in range(25) for f in range(100)}),
        ("feature", "refs/heads/main", {"pkg1/mod1.py": "X = -1\n", "pkg2/new.py": "Y = 2\n"}),
        ("feature", None, {"pkg3/mod3.py": "X = -3\n"}),
    ])
    (tmp_path / "s.toml").write_text(
        'source = "feature"\nremote = "main"\ncleaned = "feature-clean"\ntest = "test -f pkg1/mod1.py"\n\n'
        '[[commit]]\nmessage = "one"\npaths = ["pkg1/*", "pkg2/*"]\n\n'
        '[[commit]]\nmessage = "two"\npaths = ["pkg3/*"]\n')
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "s.toml"), "--no-edit").code == 0
    assert retcon(repo, "run", "-m", "retcon-paths").code == 0
    # Every check, including the final-tree one, stays far from the size of the tree.
    timings = []
    for _ in range(3):
        start = time.perf_counter()
        res = retcon(repo, "check")
        timings.append(time.perf_counter() - start)
        assert res.code == 0, res.text
    assert min(timings) < 0.5, timings
    # The moved-on source costs no more: no diff of the whole tree is needed.
    fast_import(repo, [("feature", repo.rev("feature"), {"pkg4/mod4.py": "X = -4\n"})])
    start = time.perf_counter()
    res = retcon(repo, "check")
    assert res.code == 1 and "has moved on since the run" in res.out
    assert time.perf_counter() - start < 0.5


def test_check_rerun_says_setups_time_beside_the_commands(tmp_path):
    """A rerun's wall time is setup's and the commands': setup has its own line (issue 38)."""
    import re

    repo = finished(tmp_path / "repo", spec_with(SPEC, setup="true"))
    res = retcon(repo, "check", "--rerun")
    assert res.code == 0, res.text
    assert re.search(r"^commit 1/3 [0-9a-f]+: setup `true` \(new worktree\) pass \(\d+\.\ds\)$", res.out, re.M), res.out
