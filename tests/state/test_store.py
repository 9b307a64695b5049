"""State in git: the spec chain and notes are compare-and-swap; results are keyed by tree."""
from __future__ import annotations

import json
import multiprocessing

import pygit2
import pytest

from git_retcon.git.plumbing import ConcurrentUpdate
from git_retcon.state import spec as specmod
from git_retcon.state.store import NOTES_REF, Store
from testing.flow import SPEC, feature_repo, retcon, take


def test_spec_saves_are_a_commit_chain_moved_compare_and_swap(repo):
    repo.commit("base", {"a": "1\n"})
    store = Store(pygit2.Repository(str(repo.path)))
    spec = specmod.parse(SPEC)
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


def test_a_tree_is_never_built_or_tested_twice(tmp_path, scripted):
    repo = feature_repo(tmp_path / "repo")
    counter = tmp_path / "runs"
    text = SPEC.replace('build = "python3 -m py_compile app.py util.py"',
                        f'build = "echo build >> {counter}"').replace(
        "test = \"python3 -c 'import app; app.main()'\"", f'test = "echo test >> {counter}"')
    (tmp_path / "s.toml").write_text(text)
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "s.toml"), "--no-edit").code == 0
    scripted({"1/extract": take("util.py"), "2/extract": take("app.py"), "3/extract": take("")})
    assert retcon(repo, "run", "-m", "scripted").code == 0
    assert counter.read_text().split() == ["build", "test"] * 3
    # Start over: the same trees come out, and their records are trusted.
    assert retcon(repo, "abort", "feature-clean").code == 0
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    assert counter.read_text().split() == ["build", "test"] * 3
    assert res.out.count("PASS (cached)") == 6
    # A changed command is a different record: it runs.
    spec = retcon(repo, "spec", "show").out.replace("echo test", "echo test2")
    (tmp_path / "s2.toml").write_text(spec)
    assert retcon(repo, "spec", "import", str(tmp_path / "s2.toml")).code == 0
    assert retcon(repo, "check").code == 1


def test_commands_the_model_runs_mid_step_record_nothing(tmp_path, scripted):
    """Only the loop's runs, on a reset worktree, vouch for a tree: what the model
    runs mid-step may see files earlier commands left behind."""
    repo = feature_repo(tmp_path / "repo")
    (tmp_path / "s.toml").write_text(SPEC)
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "s.toml"), "--no-edit").code == 0
    log = scripted({"1/extract": [take("util.py")[0], take("util.py")[1],
                                  {"calls": [{"name": "run_tests", "arguments": {}}]},
                                  {"calls": [{"name": "stuck", "arguments": {"summary": "enough"}}]}]})
    assert retcon(repo, "run", "-m", "scripted").code == 3
    results = json.loads(log.read_text().splitlines()[-1])["results"]
    assert results[-1].startswith("test: PASS")
    assert repo.git("notes", "--ref=refs/notes/retcon-tests", "list") == ""
