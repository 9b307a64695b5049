"""State in git: the spec chain and notes are compare-and-swap; results are keyed by tree."""
from __future__ import annotations

import json
import multiprocessing

import pygit2
import pytest

from git_retcon.git.plumbing import ConcurrentUpdate
from git_retcon.state import specparse
from git_retcon.state.store import NOTES_REF, Store
from testing.flow import SPEC, call, feature_repo, retcon, spec_with, take, turn


def test_spec_saves_are_a_commit_chain_moved_compare_and_swap(repo):
    repo.commit("base", {"a": "1\n"})
    store = Store(pygit2.Repository(str(repo.path)))
    spec = specparse.parse(SPEC)
    first = store.save(spec, None, "plan")
    spec.commits[0].hints = "changed"
    second = store.save(spec, first, "edit")
    assert repo.git("log", "--format=%s", "refs/retcon/feature-clean").splitlines() == ["edit", "plan"]
    assert store.load("feature-clean").spec.commits[0].hints == "changed"
    # A writer holding a stale view loses and changes nothing.
    with pytest.raises(ConcurrentUpdate):
        store.save(spec, first, "stale")
    with pytest.raises(ConcurrentUpdate):
        store.save(spec, None, "create again")
    assert repo.rev("refs/retcon/feature-clean") == second


def _write_notes(path: str, prefix: str, shas: list[str]) -> None:
    store = Store(pygit2.Repository(path))
    for sha in shas:
        store.write_note(NOTES_REF, sha, {"writer": prefix})


def test_notes_written_by_racing_processes_are_all_kept(repo):
    shas = [repo.commit(f"c{i}", {"f": f"{i}\n"}) for i in range(24)]
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_write_notes, args=(str(repo.path), name, shas[i::3]))
             for i, name in enumerate("abc")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    listed = repo.git("notes", f"--ref={NOTES_REF}", "list").splitlines()
    assert len(listed) == 24
    assert json.loads(repo.git("notes", f"--ref={NOTES_REF}", "show", shas[4]))["writer"] == "b"
    assert "retcon-scratch" not in repo.git("for-each-ref")


def test_notes_go_into_a_notes_tree_that_git_fanned_out(repo):
    """Past a few hundred notes git stores them under xx/ subtrees; a note written
    then must land where git looks, and leave the others readable."""
    shas = [repo.commit(f"c{i}", {"f": f"{i}\n"}) for i in range(3)]
    # Notes as git writes them for a big notes tree: fanned out by the first two hex digits.
    lines = [f"M 100644 inline {sha[:2]}/{sha[2:]}\ndata 3\nold\n" for sha in shas[:2]]
    repo.git("fast-import", "--quiet", input=f"commit {NOTES_REF}\ncommitter T <t@e> 1700000000 +0000\n"
             "data 5\nnotes\n" + "".join(lines) + "\n")
    store = Store(pygit2.Repository(str(repo.path)))
    store.write_note(NOTES_REF, shas[0], {"v": 1})   # replaces a fanned-out note
    store.write_note(NOTES_REF, shas[2], {"v": 2})   # a new one
    assert json.loads(repo.git("notes", f"--ref={NOTES_REF}", "show", shas[0])) == {"v": 1}
    assert repo.git("notes", f"--ref={NOTES_REF}", "show", shas[1]) == "old"
    assert store.read_note(NOTES_REF, shas[2]) == {"v": 2}
    assert len(repo.git("notes", f"--ref={NOTES_REF}", "list").splitlines()) == 3


def test_a_note_is_one_commit_on_the_notes_ref_and_no_other_ref_is_written(repo):
    sha = repo.commit("c", {"f": "1\n"})
    store = Store(pygit2.Repository(str(repo.path)))
    store.write_note(NOTES_REF, sha, {"v": 1})
    store.write_note(NOTES_REF, sha, {"v": 2})
    assert json.loads(repo.git("notes", f"--ref={NOTES_REF}", "show", sha)) == {"v": 2}
    assert repo.git("rev-list", "--count", NOTES_REF) == "2"
    assert repo.git("for-each-ref", "--format=%(refname)").splitlines() == ["refs/heads/main", NOTES_REF]


def test_a_tree_is_never_built_or_tested_twice(tmp_path, scripted):
    repo = feature_repo(tmp_path / "repo")
    counter = tmp_path / "runs"
    text = SPEC.replace('build = "python3 -m py_compile app.py util.py"',
                        f'build = "echo build >> {counter}"').replace(
        "test = \"python3 -c 'import app; app.main()'\"", f'test = "echo test >> {counter}"')
    (tmp_path / "s.toml").write_text(spec_with(text, writable=[tmp_path]))
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "s.toml"), "--no-edit").code == 0
    scripted({"1/extract": take("util.py"), "2/extract": take("app.py"), "3/extract": take("")})
    assert retcon(repo, "run", "-m", "scripted").code == 0
    assert counter.read_text().split() == ["build", "test"] * 4   # the base and three commits
    # Start over: the same trees come out, and their records are trusted.
    assert retcon(repo, "abort", "feature-clean").code == 0
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    assert counter.read_text().split() == ["build", "test"] * 4
    assert res.out.count("PASS (cached)") == 8
    # A changed command is a different record: it runs.
    spec = retcon(repo, "spec", "show").out.replace("echo test", "echo test2")
    (tmp_path / "s2.toml").write_text(spec)
    assert retcon(repo, "spec", "import", str(tmp_path / "s2.toml")).code == 0
    assert retcon(repo, "check").code == 1


def test_a_test_the_model_ran_mid_step_is_recorded_and_not_run_again(tmp_path, scripted):
    """A mid-step run_tests on exactly the tree the tools made records its result: the
    loop trusts it once that tree is committed, instead of testing it a second time."""
    repo = feature_repo(tmp_path / "repo")
    tested = tmp_path / "tested"
    spec = SPEC.replace('build = "python3 -m py_compile app.py util.py"', 'build = "true"').replace(
        "test = \"python3 -c 'import app; app.main()'\"", f'test = "git write-tree >> {tested}"')
    (tmp_path / "s.toml").write_text(spec_with(spec, writable=[tmp_path]))
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "s.toml"), "--no-edit").code == 0
    scripted({"1/extract": [take("util.py")[0], take("util.py")[1],
                            {"calls": [{"name": "run_tests", "arguments": {}}]}, take("util.py")[2]],
              "2/extract": take("app.py"), "3/extract": take("")})
    first = retcon(repo, "run", "-m", "scripted")
    assert first.code == 0, first.text
    trees = tested.read_text().split()
    assert len(trees) == len(set(trees)), "a tree was tested twice"
    assert repo.git("rev-parse", "feature-clean~1^{tree}") in trees  # commit 1's: tested mid-step
    notes = repo.git("notes", "--ref=refs/notes/retcon-tests", "list")
    assert repo.git("rev-parse", "feature-clean~1^{tree}") in notes


def test_a_mid_step_run_sees_only_the_tree_not_what_earlier_commands_left(tmp_path, scripted):
    """run_build leaves an untracked file and changes a tracked one; a later run_tests
    (whose result is recorded for the tree) runs on the tree alone, as the loop's would."""
    repo = feature_repo(tmp_path / "repo")
    spec = SPEC.replace('build = "python3 -m py_compile app.py util.py"',
                        'build = "echo built >> build.out && echo junk >> README"').replace(
        "test = \"python3 -c 'import app; app.main()'\"",
        "test = \"test $(wc -l < build.out) = 1 && test $(wc -l < README) = 2\"")
    (tmp_path / "s.toml").write_text(spec)
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "s.toml"), "--no-edit").code == 0
    log = scripted({"1/extract": [take("util.py")[0], take("util.py")[1],
                                  turn(call("run_build")), turn(call("run_tests")),
                                  turn(call("stuck", summary="enough"))]})
    assert retcon(repo, "run", "-m", "scripted").code == 3
    results = json.loads(log.read_text().splitlines()[-1])["results"]
    assert results[-1].startswith("test: PASS"), results
    assert repo.git("notes", "--ref=refs/notes/retcon-tests", "list") != ""


