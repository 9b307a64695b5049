"""What git-retcon owns, and nothing else (ARCHITECTURE.md): names refused at save time,
branches it did not make never moved or deleted, a checked-out branch never moved."""
from __future__ import annotations

import os
import signal
import subprocess

import pytest

from testing.cleaned import SPEC, finished, planned
from testing.flow import feature_repo, retcon, retcon_proc, spec_with
from testing.gitrepo import GitRepo


@pytest.fixture
def repo(tmp_path):
    return feature_repo(tmp_path / "repo")


def refs(repo: GitRepo) -> str:
    return repo.git("for-each-ref")


def plan(repo: GitRepo, text: str):
    path = repo.path.parent / "s.toml"
    path.write_text(text)
    return retcon(repo, "plan", "--from-file", str(path), "--no-edit")


def refused(res, *words: str) -> str:
    """One line on stderr, exit 1, no traceback."""
    assert res.code == 1, res.text
    assert "Traceback" not in res.text and "internal error" not in res.text
    lines = [ln for ln in res.err.splitlines() if ln.strip()]
    assert len(lines) == 1, res.err
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


def gc_works(repo: GitRepo) -> None:
    proc = subprocess.run(["git", "gc", "-q"], cwd=repo.path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def retcon_env(repo: GitRepo, env: dict[str, str], *args: str):
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        return retcon(repo, *args)
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def hand_written_spec(repo: GitRepo, text: str, name: str) -> None:
    """A spec stored by git plumbing alone (as an older version could save it), so that
    run and abort are tested on their own, without the save-time check."""
    blob = repo.git("hash-object", "-w", "--stdin", input=text)
    tree = repo.git("mktree", input=f"100644 blob {blob}\tspec.toml\n")
    commit = repo.git("commit-tree", tree, "-m", "by hand")
    repo.git("update-ref", f"refs/retcon/{name}", commit)


@pytest.mark.parametrize("name, words", [
    ("a..b", ["ref-name rules"]),
    ("x.lock", ["ref-name rules"]),
    ("a:b", ["ref-name rules"]),
    ("HEAD", ["special meaning"]),
    ("FETCH_HEAD", ["special meaning"]),
    ("@", ["special meaning"]),
    ("-x", ["cannot start with '-'"]),
    ("refs/heads/x", ["without 'refs/"]),
    ("heads/main", ["refs/heads/main"]),
    ("tags/v2", ["refs/tags/v2"]),
    ("feature/clean", ["refs/heads/feature exists", "directory"]),
])
def test_bad_cleaned_names_are_refused_when_the_spec_is_saved(repo, name, words):
    before = refs(repo)
    line = refused(plan(repo, SPEC.replace('cleaned = "feature-clean"', f'cleaned = "{name}"')), *words)
    assert "'cleaned'" in line
    assert refs(repo) == before    # nothing saved, no branch, no spec ref
    gc_works(repo)


def test_an_existing_branch_named_as_cleaned_is_refused(repo):
    """`cleaned = "main"` while the remote is another branch: main is the user's."""
    repo.git("branch", "upstream", "main")
    before = refs(repo)
    text = SPEC.replace('remote = "main"', 'remote = "upstream"').replace(
        'cleaned = "feature-clean"', 'cleaned = "main"')
    refused(plan(repo, text), "'main'", "already exists", "did not create it")
    assert refs(repo) == before


def test_a_name_another_ref_answers_to_is_refused(repo):
    """`git log v1` or `git log origin` would not show the cleaned branch: refused."""
    repo.git("tag", "v1", "main")
    repo.git("update-ref", "refs/remotes/origin/HEAD", "main")
    before = refs(repo)
    for name, other in (("v1", "refs/tags/v1"), ("origin", "refs/remotes/origin/HEAD")):
        refused(plan(repo, SPEC.replace('cleaned = "feature-clean"', f'cleaned = "{name}"')),
                f"'{name}' already names {other}")
    assert refs(repo) == before


def test_a_name_with_branches_under_it_is_refused(repo):
    repo.git("branch", "topic/x", "main")
    before = refs(repo)
    refused(plan(repo, SPEC.replace('cleaned = "feature-clean"', 'cleaned = "topic"')),
            "refs/heads/topic/x exists")
    assert refs(repo) == before


def test_a_spec_name_under_another_specs_name_is_refused(repo):
    assert plan(repo, SPEC.replace('cleaned = "feature-clean"', 'cleaned = "tidy"')).code == 0
    before = refs(repo)
    refused(plan(repo, SPEC.replace('cleaned = "feature-clean"', 'cleaned = "tidy/more"')),
            "refs/retcon/tidy exists")
    assert refs(repo) == before
    gc_works(repo)


def test_the_source_under_another_spelling_is_refused(repo):
    before = refs(repo)
    text = SPEC.replace('source = "feature"', 'source = "heads/feature"').replace(
        'cleaned = "feature-clean"', 'cleaned = "feature"')
    refused(plan(repo, text), "source branch ('heads/feature') under another spelling")
    assert refs(repo) == before


def test_spec_import_and_edit_check_the_name_too(repo, tmp_path):
    assert plan(repo, SPEC).code == 0
    bad = tmp_path / "bad.toml"
    bad.write_text(SPEC.replace('cleaned = "feature-clean"', 'cleaned = "main"'))
    before = refs(repo)
    refused(retcon(repo, "spec", "import", str(bad)), "'main'")
    assert refs(repo) == before
    repo.git("branch", "feature-clean", "feature~1")   # the user's, made after the plan
    repo.write("editor.sh", "#!/bin/sh\nsed -i 's/^build = .*/build = \"true\"/' \"$1\"\n", 0o755)
    before = refs(repo)
    res = retcon_env(repo, {"GIT_EDITOR": str(repo.path / "editor.sh")}, "spec", "edit")
    refused(res, "feature-clean", "did not make")
    assert refs(repo) == before


def test_run_refuses_a_branch_it_did_not_make_at_an_ancestor_of_the_source(tmp_path):
    repo = planned(tmp_path / "repo")
    repo.git("branch", "feature-clean", "feature~1")   # the user's, made after the plan
    before = refs(repo)
    res = retcon(repo, "run", "-m", "retcon-paths")
    line = refused(res, "feature-clean", "did not make")
    assert "Resuming" not in res.out, line
    assert refs(repo) == before
    # check and status agree with run: not "run to adopt them", which run would refuse.
    res = retcon(repo, "check")
    assert res.code == 1 and "did not make" in res.out and "to adopt and test them" not in res.out, res.text
    assert "feature-clean: branch not git-retcon's" in retcon(repo, "status").out
    # abort keeps it, and says so.
    res = retcon(repo, "abort", "feature-clean")
    assert res.code == 0, res.text
    assert "Kept branch feature-clean" in res.out and "Deleted" not in res.out
    assert repo.rev("feature-clean") == repo.rev("feature~1")


def test_run_and_abort_never_touch_main_named_as_cleaned(tmp_path):
    repo = feature_repo(tmp_path / "repo")
    repo.git("checkout", "-q", "feature")           # main is not checked out
    repo.git("branch", "upstream", "main")
    main = repo.rev("main")
    hand_written_spec(repo, SPEC.replace('remote = "main"', 'remote = "upstream"').replace(
        'cleaned = "feature-clean"', 'cleaned = "main"'), "main")
    refused(retcon(repo, "run", "main", "-m", "retcon-paths"), "'main'", "did not create it")
    assert repo.rev("main") == main
    res = retcon(repo, "abort", "main")
    assert res.code == 0, res.text
    assert "Kept branch main" in res.out
    assert repo.rev("main") == main


def test_abort_deletes_the_branch_it_made(tmp_path):
    repo = finished(tmp_path / "repo")
    res = retcon(repo, "abort", "feature-clean")
    assert res.code == 0, res.text
    assert "Deleted branch feature-clean" in res.out
    assert "refs/heads/feature-clean" not in refs(repo)


def test_abort_deletes_the_branch_it_made_after_the_source_is_gone(tmp_path):
    repo = finished(tmp_path / "repo")
    repo.git("branch", "-D", "feature")
    res = retcon(repo, "abort", "feature-clean")
    assert res.code == 0, res.text
    assert "Deleted branch feature-clean" in res.out
    assert "refs/heads/feature-clean" not in refs(repo)


@pytest.mark.parametrize("reflogs", ["on", "off"])
def test_a_killed_first_run_leaves_a_branch_the_next_run_owns(tmp_path, reflogs):
    """Killed right after it made the branch, at the merge base with no commit and no
    history yet: the branch's reflog says git-retcon made it, so the next run goes on.
    With core.logAllRefUpdates off the branch gets its reflog all the same (as
    `git update-ref --create-reflog` gives one)."""
    repo = planned(tmp_path / "repo")
    if reflogs == "off":
        repo.git("config", "core.logAllRefUpdates", "false")
    killed = retcon_proc(repo, "run", "-m", "retcon-paths", env={"RETCON_FAILPOINT": "after-branch-start"})
    assert killed.code == -signal.SIGKILL
    assert repo.rev("feature-clean") == repo.rev("main")
    assert repo.git("reflog", "show", "--format=%gs", "feature-clean").split("\n") == [
        "retcon: start feature-clean at merge-base"]
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 0, res.text
    assert repo.tree("feature-clean") == repo.tree("feature")


def test_status_says_branch_missing_and_check_fails(tmp_path):
    repo = finished(tmp_path / "repo")
    repo.git("branch", "-D", "feature-clean")
    res = retcon(repo, "status")
    assert res.code == 0, res.text
    assert "branch missing" in res.out.splitlines()[0]
    assert "complete" not in res.out.splitlines()[0]
    res = retcon(repo, "check")
    assert res.code == 1 and "does not exist" in res.text


def test_the_cleaned_branch_checked_out_during_a_run_is_not_moved(tmp_path):
    """The user checks the branch out while the run goes on (here: commit 1's build does it,
    once; the base's build, before it, does not): the next move is refused, the user's work
    tree is left as it is."""
    mine, once = tmp_path / "mine", tmp_path / "once"
    checkout = (f"if grep -q two util.py && ! test -e {once}; then touch {once}; "
                f"git -C {tmp_path / 'repo'} worktree add -q {mine} feature-clean; fi")
    # The build stands for the user, outside any sandbox, which would refuse it the repository.
    repo = planned(tmp_path / "repo", spec_with(SPEC.replace('build = "test -f app.py -a -f util.py"',
                                                             f'build = "{checkout}"'), sandbox="off"))
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code != 0 and "Traceback" not in res.text, res.text
    assert f"branch 'feature-clean' is checked out in {mine}" in res.err
    # Checked out after commit 1's move: it stays there, and so does the user's work tree.
    assert repo.log("main..feature-clean") == ["util: add two()"]
    assert GitRepo(mine).git("symbolic-ref", "HEAD") == "refs/heads/feature-clean"
    assert GitRepo(mine).rev("HEAD") == repo.rev("feature-clean")
    assert GitRepo(mine).status() == ""


def test_a_branch_the_user_is_rebasing_is_checked_out_and_never_touched(tmp_path):
    """Mid-rebase HEAD is detached, yet git counts the branch as checked out; so does git-retcon."""
    repo = finished(tmp_path / "repo")
    repo.git("checkout", "-q", "feature-clean")
    tip = repo.rev("feature-clean")
    proc = subprocess.run(["git", "rebase", "-q", "-i", "HEAD~2"], cwd=repo.path, capture_output=True, text=True,
                          env={**os.environ, "GIT_SEQUENCE_EDITOR": "sed -i 1s/^pick/edit/"})
    assert proc.returncode == 0, proc.stderr
    assert repo.git("status").startswith("interactive rebase in progress")
    for args in (["abort", "feature-clean"], ["squash", "feature-clean"]):
        refused(retcon(repo, *args), "branch 'feature-clean' is checked out in", str(repo.path))
    assert repo.rev("refs/heads/feature-clean") == tip
    repo.git("rebase", "--abort")
    assert repo.rev("HEAD") == tip


def test_a_ref_made_after_the_plan_in_the_way_of_the_branch_is_one_line(tmp_path):
    repo = planned(tmp_path / "repo", SPEC.replace('cleaned = "feature-clean"', 'cleaned = "topic/clean"'))
    repo.git("branch", "topic", "main")
    before = refs(repo)
    refused(retcon(repo, "run", "-m", "retcon-paths"), "cannot create branch 'topic/clean'",
            "refs/heads/topic exists")
    assert refs(repo) == before


def test_a_spec_an_older_version_saved_under_a_bad_name_can_be_kept_and_removed(tmp_path):
    """libgit2 wrote refs/retcon/a..b without a word, and then `git gc` failed; list says
    what it is, export keeps it, spec rm removes it, and git gc works again."""
    import pygit2

    repo = planned(tmp_path / "repo")
    kept = repo.rev("refs/retcon/feature-clean")
    blob = repo.git("hash-object", "-w", "--stdin", input=SPEC.replace('"feature-clean"', '"a..b"'))
    spec_commit = repo.git("commit-tree", repo.git("mktree", input=f"100644 blob {blob}\tspec.toml\n"), "-m", "plan")
    r = pygit2.Repository(str(repo.path))
    with r.transaction() as txn:   # what an older version's save did
        txn.lock_ref("refs/retcon/a..b")
        txn.set_target("refs/retcon/a..b", spec_commit, message="older version")
    assert subprocess.run(["git", "gc", "-q"], cwd=repo.path, capture_output=True).returncode != 0
    res = retcon(repo, "list")
    assert res.code == 0 and "a..b\tinvalid name" in res.out and "git retcon spec rm a..b" in res.out, res.text
    out = tmp_path / "kept.toml"
    assert retcon(repo, "spec", "export", "a..b", "-o", str(out)).code == 0
    assert 'source = "feature"' in out.read_text()
    refused(retcon(repo, "run", "a..b", "-m", "retcon-paths"), "a..b", "ref-name rules")
    res = retcon(repo, "spec", "rm", "a..b")
    assert res.code == 0 and "Deleted spec 'a..b'" in res.out, res.text
    gc_works(repo)
    assert repo.rev("refs/retcon/feature-clean") == kept
