"""`run --jobs 2`: commit k is built and tested in a pool worktree while the model extracts
commit k+1 on top of it; what ends up recorded is what `--jobs 1` records."""
from __future__ import annotations

import json
import signal

from testing.flow import SPEC, call, feature_repo, retcon, retcon_proc, take, turn
from testing.sandboxes import worktrees

# Commit 3 is the last: plain code takes it, so its script must never be played.
SCRIPT = {"1/extract": take("util.py"), "2/extract": take("app.py"), "3/extract": take("")}
# What feature_repo's source has besides app.py: a step that takes it all but LATER.md.
REST = "util.py|README|notes/"
# Commit 2 extracted ahead takes util.py's helper, outside its paths: it confirms when create_commit names it.
CONFIRM = turn(call("create_commit", message="commit", confirm="util.py's helper goes with the docs here"))


def planned(path):
    repo = feature_repo(path / "repo")
    (path / "spec.toml").write_text(SPEC)
    assert retcon(repo, "plan", "--from-file", str(path / "spec.toml"), "--no-edit").code == 0
    return repo


def needs_fix_then_later(tmp_path, spec: str = SPEC, extra: bool = False):
    """needs_fix_repo's case (commit 1, app.py, fails until a fix takes util.py's helper) with a
    last commit "later" (LATER.md) after it: plain code takes that one, so the commits before
    it are the model's, extracted ahead. extra: the helper needs extra.py too (feature_repo), so
    the fix is the model's."""
    repo = feature_repo(tmp_path / "repo", extra)
    repo.git("checkout", "-q", "feature")
    repo.commit("later", {"LATER.md": "later\n"})
    repo.git("checkout", "-q", "main")
    spec = spec.replace('message = "util: add two()"\nhints = "Only util.py."\npaths = ["util.py"]\n\n[[commit]]\n', "")
    (tmp_path / "s.toml").write_text(spec + '\n[[commit]]\nmessage = "later"\n')
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "s.toml"), "--no-edit").code == 0
    return repo


def steps(log):
    """The model's turns, per step key."""
    keys: dict[str, int] = {}
    for line in log.read_text().splitlines():
        for key in json.loads(line)["keys"][:1]:
            keys[key] = keys.get(key, 0) + 1
    return keys


def recorded(repo):
    """Everything a run leaves that a user or a tool reads: branch, spec history, notes."""
    shas = repo.git("rev-list", "--reverse", "main..feature-clean").split()
    commit_notes = [json.loads(repo.git("notes", "--ref=refs/notes/retcon", "show", s)) for s in shas]
    for note in commit_notes:   # how long a step took may differ; that it is noted may not
        seconds = note.pop("model_seconds")
        assert isinstance(seconds, float) and 0 <= seconds < 60, seconds
    tested = {}
    for line in repo.git("notes", "--ref=refs/notes/retcon-tests", "list").splitlines():
        _, tree = line.split()
        doc = json.loads(repo.git("notes", "--ref=refs/notes/retcon-tests", "show", tree))
        tested[tree] = {text: {k: v for k, v in r.items() if k != "seconds"} for text, r in doc["commands"].items()}
    status = json.loads(retcon(repo, "status", "--json").out)
    for c in status["commits"]:   # how long a command took is the one thing that may differ
        c.pop("seconds", None)
    return shas, commit_notes, tested, retcon(repo, "spec", "show").out, status


def test_jobs_2_records_what_jobs_1_records_with_the_same_model_calls(tmp_path, scripted):
    one, two = planned(tmp_path / "one"), planned(tmp_path / "two")
    log = scripted(SCRIPT)
    res1 = retcon(one, "run", "-m", "scripted", "--jobs", "1")
    assert res1.code == 0, res1.text
    calls1 = steps(log)
    log.write_text("")
    res2 = retcon(two, "run", "-m", "scripted", "--jobs", "2")
    assert res2.code == 0, res2.text
    assert "built and tested in the pool" in res2.out and "ahead" in res2.out
    assert steps(log) == calls1 == {"1/extract/1": 3, "2/extract/1": 3}     # commit 3: plain code
    assert recorded(two) == recorded(one)
    assert two.tree("feature-clean") == two.tree("feature")
    # A complete spec keeps no worktree: the pool went with the build worktree.
    assert "Removed the build worktree: the spec is complete" in res2.out
    assert not (worktrees(two.path) / "pool" / "feature-clean").exists()
    assert two.git("worktree", "list", "--porcelain").count("worktree ") == 1


def test_abort_removes_the_pool_of_a_run_that_stopped(tmp_path, scripted):
    """The pool worktree is ours, under the git dir; abort removes it with the build worktree."""
    repo = planned(tmp_path)
    scripted(SCRIPT)
    killed = retcon_proc(repo, "run", "-m", "scripted", "--jobs", "2", env={"RETCON_FAILPOINT": "spec-entry-held@2"})
    assert killed.code == -signal.SIGKILL
    pool = worktrees(repo.path) / "pool" / "feature-clean" / "1"
    assert (pool / "app.py").exists() or (pool / "util.py").exists()
    res = retcon(repo, "abort", "feature-clean")
    assert res.code == 0, res.text
    assert "Removed the --jobs pool (" in res.out and not pool.exists()
    assert "/pool/" not in repo.git("worktree", "list")


def test_a_failing_commit_sets_the_work_ahead_aside_and_redoes_it_without_the_model(tmp_path, scripted):
    # Commit 1 (app.py) fails until the fix takes util.py's helper (the brief's candidate, which
    # plain code commits); commit 2, extracted ahead on the failing commit, took everything left
    # but LATER.md (util.py too): it still merges on the fixed tip.
    repo = needs_fix_then_later(tmp_path)
    log = scripted({
        "1/extract": take("app.py"),
        "2/extract": [*take(REST), CONFIRM],
    })
    res = retcon(repo, "run", "-m", "scripted", "--jobs", "2")
    assert res.code == 0, res.text
    assert "Tests... FAIL" in res.out and "Fix attempt 1:" in res.out
    assert "The candidate hunks pass: committing them as the fix (no model needed)..." in res.out
    assert "on the fixed commit, without the model" in res.out
    assert steps(log) == {"1/extract/1": 3, "2/extract/1": 4}   # commit 2 asked once, the fix not at all
    assert repo.log("main..feature-clean") == ["later", "docs: explain main",
                                               "WIP: take the definition of `two` from util.py", "app: use two()"]
    assert repo.tree("feature-clean") == repo.tree("feature")
    assert repo.git("diff", "--name-only", "feature-clean~2", "feature-clean~1") == "README\nnotes/todo.txt"
    status = json.loads(retcon(repo, "status", "--json").out)
    assert [c["state"] for c in status["commits"]] == ["complete"] * 3
    assert retcon(repo, "check", "--allow-wip").code == 0


def test_work_ahead_that_no_longer_applies_is_extracted_again(tmp_path, scripted):
    # The fix (the model's: util.py's helper alone fails, it needs extra.py) writes its own two()
    # into util.py: the work done ahead (util.py as the source has it) conflicts with it, so the
    # model extracts commit 2 again on the fixed tip.
    repo = needs_fix_then_later(tmp_path, extra=True)
    helper = "def one():\n    return 1\n\n\ndef two():\n    return 1 + 1\n"
    log = scripted({
        "1/extract": take("app.py"),
        "1/fix/1": [turn(call("write_file", path="util.py", content=helper)),
                    turn(call("create_commit", message="a helper of my own"))],
        "2/extract": [*take(REST + "|extra.py"), CONFIRM],
    })
    res = retcon(repo, "run", "-m", "scripted", "--jobs", "2")
    assert res.code == 0, res.text
    assert "does not apply on the fixed commit: extracting it again" in res.out
    assert steps(log)["2/extract/1"] == 8     # twice: ahead, then again
    assert repo.tree("feature-clean") == repo.tree("feature")
    assert repo.log("main..feature-clean") == ["later", "docs: explain main", "WIP: a helper of my own",
                                               "app: use two()"]
    # What the set-aside step spent is on the spec's chain, not lost.
    chain = repo.git("rev-list", "refs/retcon/feature-clean").split()
    spent = [s for sha in chain if (text := repo.git("notes", "--ref=refs/notes/retcon", "show", sha, check=False))
             for s in json.loads(text).get("spent", [])]
    assert [(s["why"], s["index"], s["calls"]) for s in spent] == [("set aside", 2, 4)]


def test_a_stuck_answer_given_ahead_stops_once_the_commit_before_passes(tmp_path, scripted):
    repo = planned(tmp_path)
    log = scripted({"1/extract": take("util.py"),
                    "2/extract": [turn(call("stuck", summary="app.py needs a decision"))]})
    res = retcon(repo, "run", "-m", "scripted", "--jobs", "2")
    assert res.code == 3, res.text
    assert "app.py needs a decision" in res.err
    status = json.loads(retcon(repo, "status", "--json").out)
    assert [c["state"] for c in status["commits"]] == ["complete", "stuck", "pending"]
    assert steps(log) == {"1/extract/1": 3, "2/extract/1": 1}


def test_two_commits_made_ahead_of_a_failing_one_are_both_redone_without_the_model(tmp_path, scripted):
    repo = needs_fix_then_later(tmp_path, SPEC.replace(
        'paths = ["README", "notes/"]', 'paths = ["README"]\n\n[[commit]]\nmessage = "notes"\npaths = ["notes/"]'))
    log = scripted({   # commit 1's fix is plain code's: the brief's candidate passes
        "1/extract": take("app.py"),
        "2/extract": take("README"),
        "3/extract": [*take("notes/|util.py"), CONFIRM],   # ahead, on the failing commit 1: util.py's helper too
    })
    res = retcon(repo, "run", "-m", "scripted", "--jobs", "2")
    assert res.code == 0, res.text
    assert res.out.count("on the fixed commit, without the model") == 2
    assert steps(log) == {"1/extract/1": 3, "2/extract/1": 3, "3/extract/1": 4}
    wip = "WIP: take the definition of `two` from util.py"
    assert repo.log("main..feature-clean") == ["later", "notes", "docs: explain main", wip, "app: use two()"]
    assert repo.tree("feature-clean") == repo.tree("feature")
    assert repo.git("diff", "--name-only", "feature-clean~2", "feature-clean~1") == "notes/todo.txt"
    status = json.loads(retcon(repo, "status", "--json").out)
    assert [c["state"] for c in status["commits"]] == ["complete"] * 4
    # Every recorded commit's note has the verdict of its own tree: commit 1's test failed where it
    # stands (its fix came after it), every other commit passed.
    verdicts = {}
    for sha in repo.git("rev-list", "main..feature-clean").split():
        note = json.loads(repo.git("notes", "--ref=refs/notes/retcon", "show", sha))
        verdicts[repo.git("log", "-1", "--format=%s", sha)] = (note["build"], note["test"])
    assert verdicts == {"app: use two()": ("pass", "fail"), wip: ("pass", "pass"),
                        "docs: explain main": ("pass", "pass"), "notes": ("pass", "pass"), "later": ("pass", "pass")}
