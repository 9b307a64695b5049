"""A run killed at any instant resumes without losing or duplicating work."""
from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time

import pytest

from testing.flow import ROOT, SPEC, call, feature_repo, retcon, retcon_proc, spec_with, take, turn, write_script
from testing.gitrepo import GitRepo
from testing.sandboxes import worktrees

SCRIPT = {"1/extract": take("util.py"), "2/extract": take("app.py"), "3/extract": take("")}


@pytest.fixture
def project(tmp_path, monkeypatch):
    repo = feature_repo(tmp_path / "repo")
    (tmp_path / "spec.toml").write_text(SPEC)
    assert retcon_proc(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit").code == 0
    monkeypatch.setenv("RETCON_SCRIPT", str(write_script(tmp_path / "script.json", SCRIPT)))
    return repo


def assert_clean_result(repo):
    """Exactly one commit per logical commit, in order, recorded once, ending on the source tree."""
    assert repo.log("main..feature-clean") == ["docs: explain main", "app: use two()", "util: add two()"]
    assert repo.tree("feature-clean") == repo.tree("feature")
    spec = retcon_proc(repo, "status", "--json")
    doc = json.loads(spec.out)
    recorded = [sha for c in doc["commits"] for sha in c["commits"]]
    assert recorded == repo.git("rev-list", "--reverse", "main..feature-clean").split()
    assert all(c["state"] == "complete" for c in doc["commits"])
    assert retcon_proc(repo, "check").code == 0
    assert "retcon-scratch" not in repo.git("for-each-ref")


@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize("point", ["after-commit-object", "after-branch-ref", "spec-entry-held",
                                   # commit 2's writes: with --jobs 2, of the commit made ahead
                                   "after-branch-ref@2", "spec-entry-held@2"])
def test_killed_between_the_writes_of_one_commit(project, point, jobs):
    killed = retcon_proc(project, "run", "-m", "scripted", "--jobs", jobs, env={"RETCON_FAILPOINT": point})
    assert killed.code == -signal.SIGKILL
    res = retcon_proc(project, "run", "-m", "scripted", "--jobs", jobs)
    assert res.code == 0, res.text
    if point.startswith("after-branch-ref"):
        assert "Adopting" in res.out
    assert_clean_result(project)


def test_a_commit_made_and_not_yet_recorded_shows_in_status_and_is_adopted(project):
    """A created commit's spec entry is written with its verdict: killed in between (here
    right after the branch moved), status already counts the commit where the next run
    adopts it."""
    killed = retcon_proc(project, "run", "-m", "scripted", env={"RETCON_FAILPOINT": "spec-entry-held"})
    assert killed.code == -signal.SIGKILL
    made = project.rev("feature-clean")
    first = json.loads(retcon_proc(project, "status", "--json").out)["commits"][0]
    assert (first["state"], first["commits"]) == ("in-progress", [made])
    assert "commit_created" not in retcon_proc(project, "spec", "show").out
    res = retcon_proc(project, "run", "-m", "scripted")
    assert res.code == 0 and f"Adopting {made[:7]}" in res.out, res.text
    assert_clean_result(project)


def test_a_verdict_killed_before_its_note_was_written_is_noted_on_resume(project):
    """A commit's verdicts go into its note with the next notes write (one write per commit):
    killed in between, they are in the tree's records and the spec, status shows them, and the
    next run copies them into the note."""
    killed = retcon_proc(project, "run", "-m", "scripted", env={"RETCON_FAILPOINT": "after-complete"})
    assert killed.code == -signal.SIGKILL
    made = project.rev("feature-clean")
    assert "test" not in json.loads(project.git("notes", "--ref=retcon", "show", made))
    first = json.loads(retcon_proc(project, "status", "--json").out)["commits"][0]
    assert (first["state"], first["build"], first["test"]) == ("complete", "pass", "pass")
    res = retcon_proc(project, "run", "-m", "scripted")
    assert res.code == 0, res.text
    note = json.loads(project.git("notes", "--ref=retcon", "show", made))
    assert (note["build"], note["test"]) == ("pass", "pass")
    assert_clean_result(project)


def test_lock_files_left_by_a_killed_git_are_cleared(project):
    killed = retcon_proc(project, "run", "-m", "scripted", env={"RETCON_FAILPOINT": "spec-entry-held"})
    assert killed.code == -signal.SIGKILL
    # What a kill in the middle of a ref update or of `git reset` leaves behind.
    git_dir = project.path / ".git"
    admin = next((git_dir / "worktrees").iterdir())
    stale = [git_dir / "refs/heads/feature-clean.lock", admin / "index.lock"]
    for path in stale:
        path.write_text("")
        os.utime(path, (time.time() - 60, time.time() - 60))
    res = retcon_proc(project, "run", "-m", "scripted")
    assert res.code == 0, res.text
    assert not any(p.exists() for p in stale)
    assert_clean_result(project)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_killed_during_the_build_then_resumed(project, jobs):
    # A build that announces itself, so the kill lands while it runs.
    marker = project.path.parent / "building"
    project.git("config", "retcon.model", "scripted")
    spec = retcon_proc(project, "spec", "show").out.replace(
        'build = "python3 -m py_compile app.py util.py"',
        f'build = "touch {marker} && sleep 2 && python3 -m py_compile app.py util.py"')
    spec = spec_with(spec, writable=[marker.parent])
    (project.path.parent / "s2.toml").write_text(spec)
    assert retcon_proc(project, "spec", "import", str(project.path.parent / "s2.toml")).code == 0
    proc = subprocess.Popen([sys.executable, "-m", "testing.run_retcon", "run", "--jobs", jobs], cwd=project.path,
                            env={**os.environ, "PYTHONPATH": str(ROOT)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 60
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    # A second run is not refused by a stale lock, and finishes the work.
    res = retcon_proc(project, "run", "--jobs", jobs)
    assert res.code == 0, res.text
    assert_clean_result(project)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_killed_at_random_instants_until_done(project, jobs, tmp_path):
    project.git("config", "retcon.model", "scripted")
    # The instants are spread over the work of a whole run on this machine, measured on a copy
    # (fixed ones would all fall after its end on a faster machine, or with faster code): past the
    # start-up a command without work takes, the first two early enough that both land in the work.
    spare = GitRepo(shutil.copytree(project.path, tmp_path / "spare"))
    start = time.monotonic()
    assert retcon_proc(spare, "status").code == 0
    startup = time.monotonic() - start
    assert retcon_proc(spare, "run", "--jobs", jobs).code == 0
    work = max(time.monotonic() - start - 2 * startup, 0.1)
    rng = random.Random(1234)
    pristine = shutil.copytree(project.path, tmp_path / "pristine")
    kills = 0
    for attempt in range(60):
        proc = subprocess.Popen([sys.executable, "-m", "testing.run_retcon", "run", "--jobs", jobs],
                                cwd=project.path, env={**os.environ, "PYTHONPATH": str(ROOT)},
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        try:
            # Later instants grow, so that the loop ends however slow the machine is now.
            share = 0.2 if kills < 2 else rng.uniform(0.1, 0.9) * (1 + attempt / 8)
            out, err = proc.communicate(timeout=startup + work * share)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            kills += 1
            continue
        assert proc.returncode == 0, (out + err).decode()
        if kills >= 2:
            break
        # The run ended before two kills: the machine was slower while it was measured than now.
        # Count what happened, not what was assumed: start again from the untouched copy, earlier.
        shutil.rmtree(project.path)
        shutil.copytree(pristine, project.path)
        kills, work, startup = 0, work / 2, startup / 2
    else:
        pytest.fail("the run never finished")
    assert kills >= 2, f"the instants were too late to test anything ({kills} kills, {startup:.1f}s + {work:.1f}s)"
    assert_clean_result(project)


def test_scratch_refs_of_dead_processes_are_swept_and_a_live_ones_kept(project, scripted):
    """A process killed while writing a note leaves refs/retcon-scratch/<pid>-*; the next run
    drops those of dead processes, and leaves alone one whose process still runs."""
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        head = project.rev("main")
        for name in (f"{dead.pid}-0badc0de", f"{dead.pid}-1badc0de", f"{alive.pid}-2badc0de", "notes-of-mine"):
            project.git("update-ref", f"refs/retcon-scratch/{name}", head)
        scripted(SCRIPT)
        assert retcon(project, "run", "-m", "scripted").code == 0
        left = project.git("for-each-ref", "--format=%(refname)", "refs/retcon-scratch/").split()
        assert left == [f"refs/retcon-scratch/{alive.pid}-2badc0de", "refs/retcon-scratch/notes-of-mine"]
    finally:
        alive.kill()
        alive.wait()


# Every instant a run writes something, in the order a run reaches them.
POINTS = ["worktree-added", "worktree-checked-out", "after-commit-object", "after-branch-ref",
          "spec-entry-held", "squash-commit-made", "squash-before-branch", "squash-after-branch",
          "worktree-discarding"]   # the last: the complete spec's worktree removed


def test_killed_at_random_instants_and_at_every_write_including_worktree_and_squash(tmp_path, monkeypatch):
    """`run --squash-wip` with a fix loop, killed at random instants and at each failpoint
    in turn (the worktree's making, each commit's writes, the squash), ends as one clean run."""
    from testing.fixcase import BRIEF_IDS, make

    repo = make(tmp_path, docs=1)
    script = {"1/extract": take("app.py"),
              "1/fix/1": [turn(call("apply_hunks", hunk_ids=BRIEF_IDS)), turn(call("create_commit", message="fix"))],
              "2/extract": take("")}
    monkeypatch.setenv("RETCON_SCRIPT", str(write_script(tmp_path / "script.json", script)))
    repo.git("config", "retcon.model", "scripted")
    rng = random.Random(4321)
    fired: list[str] = []
    timed = 0
    for attempt in range(80):
        point = next((p for p in POINTS if p not in fired), "")
        proc = subprocess.Popen([sys.executable, "-m", "testing.run_retcon", "run", "--squash-wip"],
                                cwd=repo.path, env={**os.environ, "PYTHONPATH": str(ROOT), "RETCON_FAILPOINT": point},
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        try:
            out, err = proc.communicate(timeout=rng.uniform(0.2, 1.5) * (1 + attempt / 6))
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            timed += 1
            continue
        if proc.returncode == -signal.SIGKILL:
            fired.append(point)
            continue
        assert proc.returncode == 0, (out + err).decode()
        break
    else:
        pytest.fail(f"the run never finished (failpoints fired: {fired})")
    assert fired == POINTS
    assert timed >= 2, "the random instants were too late to test anything"
    assert repo.log("main..feature-clean") == ["docs: explain main", "app: use two()"]
    assert repo.tree("feature-clean") == repo.tree("feature")
    doc = json.loads(retcon_proc(repo, "status", "--json").out)
    assert [c["state"] for c in doc["commits"]] == ["complete", "complete"]
    assert [sha for c in doc["commits"] for sha in c["commits"]] == \
        repo.git("rev-list", "--reverse", "main..feature-clean").split()
    assert retcon_proc(repo, "check").code == 0                       # no WIP left, tested, same tree
    listed = repo.git("worktree", "list", "--porcelain").count("worktree ")
    assert listed == 1                      # the user's: the build worktree went when the spec completed
    assert not (repo.path / ".git" / "retcon" / "trash").exists() and not (worktrees(repo.path) / "trash").exists()
    assert "retcon-scratch" not in repo.git("for-each-ref")
