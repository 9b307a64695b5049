"""`git retcon plan` with a model: every hunk assigned, repaired, structured three ways, chunked."""
from __future__ import annotations

import json
import re

import llm
import pygit2
import pytest

from git_retcon.plan import propose
from testing.editor import scripted_editor
from testing.flow import feature_repo, retcon
from testing.gitrepo import GitRepo

ID = re.compile(r"^([0-9a-f]{10}) (\S+) ", re.M)


def answer(model: str, obj: dict) -> dict:
    """One scripted turn giving obj the way `model` gives structured output."""
    if model == "scripted":
        return {"calls": [{"name": "propose_plan", "arguments": obj}]}
    return {"json": obj}


def commit(message: str, files=(), hunks=(), hints: str = "") -> dict:
    return {"message": message, "hints": hints, "files": list(files), "hunks": hunks}


GOOD = {"commits": [
    commit("util: add two()", files=["util.py"], hints="Only util.py: two()."),
    commit("app: use two()", hunks="$ids:app.py"),
    commit("docs: explain main", files=["README", "notes/"]),
]}


def entries(log) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def stored(repo: GitRepo, name: str = "feature-clean") -> str:
    return repo.git("show", f"refs/retcon/{name}:spec.toml")


def remaining_ids(repo: GitRepo, source: str = "feature", remote: str = "main") -> dict[str, str]:
    from git_retcon.diff.remaining import remaining

    r = pygit2.Repository(str(repo.path))
    base = r.merge_base(r.revparse_single(source).id, r.revparse_single(remote).id)
    return {h.id: h.path for h in remaining(r, str(r[base].tree_id), str(r.revparse_single(source).tree_id))}


def assigned(text: str) -> list[list[str]]:
    """Each commit's hunk ids, from the stored TOML."""
    import tomli

    return [c.get("hunks", []) for c in tomli.loads(text)["commit"]]


@pytest.fixture
def project(tmp_path):
    repo = feature_repo(tmp_path / "repo")
    repo.git("checkout", "-q", "feature")
    return repo


def test_proposal_assigns_every_hunk_and_run_accepts_it_as_is(project, scripted):
    log = scripted({"*/plan": [answer("scripted", GOOD)]})
    res = retcon(project, "plan", "--whole", "-m", "scripted", "--no-edit", "--instructions", "keep docs last")
    assert res.code == 0, res.text
    # The prompt: the branch's messages, the log's style, the instructions, the whole index.
    (call,) = entries(log)
    prompt = call["prompt"]
    assert call["tools"] == ["propose_plan"] and not call["schema"]
    assert "- " in prompt and "docs wip" in prompt and "Instructions from the user: keep docs last" in prompt
    assert "write plain subjects like these" in prompt
    ids = remaining_ids(project)
    assert set(ID.findall(prompt)) == set(ids.items())
    # Saved with every hunk in exactly one commit, shown by `spec show`.
    text = stored(project)
    per_commit = assigned(text)
    assert sorted(i for c in per_commit for i in c) == sorted(ids)
    assert [ids[i] for i in per_commit[1]] == ["app.py"]
    assert 'paths = ["util.py"]' in text and 'paths = ["README", "notes/"]' in text
    assert f'hunks = ["{per_commit[1][0]}"]' in retcon(project, "spec", "show").out
    # The table and the tokens.
    assert re.search(r"2\s+1\s+1\s+\+1 -1\s+app: use two\(\)", res.out), res.out
    assert "Tokens used: " in res.out and "1 calls" in res.out
    assert 'model = "scripted"' in text
    # `run` takes the spec as it is, with the offline model.
    done = retcon(project, "run", "-m", "retcon-paths")
    assert done.code == 0, done.text
    assert project.log("main..feature-clean") == ["docs: explain main", "app: use two()", "util: add two()"]
    assert project.tree("feature-clean") == project.tree("feature")


def test_repair_round_names_unassigned_and_doubled_ids(project, scripted):
    ids = remaining_ids(project)
    util, app = next(i for i, p in ids.items() if p == "util.py"), next(i for i, p in ids.items() if p == "app.py")
    bad = {"commits": [commit("util: add two()", hunks=[util]),
                       commit("app: use two()", hunks=[util, "deadbeef00"]),
                       commit("docs", files=["README", "notes/"])]}
    log = scripted({"*/plan/1": [answer("scripted", bad)], "*/plan/2": [answer("scripted", GOOD)]})
    res = retcon(project, "plan", "--whole", "-m", "scripted", "--no-edit")
    assert res.code == 0, res.text
    first, second = entries(log)
    assert "attempt" not in first["prompt"].splitlines()[0]
    assert second["prompt"].startswith("Step: plan (attempt 2)")
    steer = second["prompt"].split("Your previous answer was rejected:")[1]
    assert f"{app} (app.py)" in steer and "in no entry" in steer
    assert f"{util} (entries 1 and 2)" in steer
    assert "deadbeef00" in steer and "do not invent ids" in steer
    assert "1. util: add two() (1 ids)" in steer
    assert sorted(i for c in assigned(stored(project)) for i in c) == sorted(ids)
    assert "Warning" not in res.out


def test_what_stays_unassigned_is_listed_never_dropped(project, scripted, tmp_path, monkeypatch):
    ids = remaining_ids(project)
    readme = next(i for i, p in ids.items() if p == "README")
    partial = {"commits": [commit("util and app", files=["util.py", "app.py"]), commit("notes", files=["notes/"])]}
    log = scripted({"*/plan": [answer("scripted", partial)]})
    command, seen = scripted_editor(tmp_path / "editor", [["keep"]])
    monkeypatch.setenv("GIT_EDITOR", command)
    res = retcon(project, "plan", "--whole", "-m", "scripted", "--edit")
    assert res.code == 0, res.text
    assert len(entries(log)) == 3  # two repair rounds, then it gives up
    # In the editor as a comment, in the output, and in the stored spec's last commit.
    assert "# UNASSIGNED: the plan put these 1 hunks in no commit" in seen(0) and f"#   {readme} README" in seen(0)
    assert f"1 hunks are assigned to no commit (the last commit takes them): {readme} README" in res.out
    text = stored(project)
    assert readme not in [i for c in assigned(text) for i in c]
    assert "left 1 hunks unassigned" in text and readme in text


def test_doubled_ids_that_outlast_the_repairs_stay_with_the_first_commit_and_are_reported(project, scripted):
    ids = remaining_ids(project)
    util = next(i for i, p in ids.items() if p == "util.py")
    # A path in `files` yields to an entry naming the id; the same id named twice is doubled.
    doubled = {"commits": [commit("util", hunks=[util]), commit("rest", hunks=[util], files=["app.py"]),
                           commit("docs", files=["README", "notes/"])]}
    log = scripted({"*/plan": [answer("scripted", doubled)]})
    res = retcon(project, "plan", "--whole", "-m", "scripted", "--no-edit")
    assert res.code == 0, res.text
    assert len(entries(log)) == 3
    assert f"Warning: the plan: 1 hunk ids are in more than one entry: {util} (entries 1 and 2)" in res.out
    first, second, _ = assigned(stored(project))
    assert util in first and util not in second


@pytest.mark.parametrize("model", ["scripted", "scripted-schema", "scripted-text"])
def test_three_structured_output_paths(project, scripted, model):
    log = scripted({"*/plan/1": [{"text": "Here is my plan: the commits are util, then app."}],
                    "*/plan/2": [answer(model, GOOD)]})
    res = retcon(project, "plan", "--whole", "-m", model, "--no-edit")
    assert res.code == 0, res.text
    first, second = entries(log)
    if model == "scripted":
        assert first["tools"] == ["propose_plan"] and not first["schema"]
    elif model == "scripted-schema":
        assert first["schema"] and first["tools"] == []
    else:
        assert not first["schema"] and first["tools"] == []
        assert "JSON schema of the reply" in first["prompt"] and "no code fence" in first["prompt"]
    # The validation error goes back as steering.
    assert "not valid JSON" in second["prompt"].split("rejected:")[1] or \
        'must be a JSON object with the key "commits"' in second["prompt"]
    assert len(assigned(stored(project))) == 3
    # The model that planned is kept for `run`: without tool calling it runs through the text protocol.
    assert f'model = "{model}"' in stored(project)


def test_shapeless_answers_are_an_error_that_saves_nothing(project, scripted):
    scripted({"*/plan": [answer("scripted-schema", {"commits": [{"message": "", "files": ["x"]}]})]})
    res = retcon(project, "plan", "--whole", "-m", "scripted-schema", "--no-edit")
    assert res.code == 1 and "gave no usable plan in 3 attempts" in res.err
    assert '"message" must be a non-empty string' in res.err and "Traceback" not in res.err
    assert project.git("for-each-ref", "refs/retcon/") == ""


def test_max_commits_is_enforced_by_steering(project, scripted):
    merged = {"commits": [commit("code", files=["util.py", "app.py"]), commit("docs", files=["README", "notes/"])]}
    log = scripted({"*/plan/1": [answer("scripted", GOOD)], "*/plan/2": [answer("scripted", merged)]})
    res = retcon(project, "plan", "--whole", "-m", "scripted", "--no-edit", "--max-commits", "2")
    assert res.code == 0, res.text
    first, second = entries(log)
    assert "Propose at most 2 commits." in first["prompt"]
    assert "3 entries, but at most 2 are allowed" in second["prompt"]
    assert len(assigned(stored(project))) == 2


def test_plan_refuses_the_offline_model_and_an_existing_spec_before_asking(project, scripted):
    log = scripted({"*/plan": [answer("scripted", GOOD)]})
    res = retcon(project, "plan", "--whole", "-m", "retcon-paths", "--no-edit")
    assert res.code == 1 and "cannot propose a plan" in res.err and "--from-commits" in res.err
    assert retcon(project, "plan", "--whole", "-m", "scripted", "--no-edit").code == 0
    again = retcon(project, "plan", "--whole", "-m", "scripted", "--no-edit")
    assert again.code == 1 and "exists: replace it with --force" in again.err
    assert len(entries(log)) == 1  # no tokens spent on the refused plan


def test_lock_and_generated_files_are_summarised_and_follow_their_manifest(tmp_path, scripted):
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("feat: start", {"package.json": '{"name": "x"}\n', "src/app.js": "run()\n"})
    repo.git("checkout", "-q", "-b", "feature")
    lock = "".join(f'    "dep{i}": {{"version": "1.0.{i}", "integrity": "sha512-{"ab" * 40}"}},\n' for i in range(3000))
    bundle = "var a=" + ";".join(f"f{i}()" for i in range(3000)) + "\n"
    repo.commit("stuff", {"package.json": '{"name": "x", "deps": {"dep": "1"}}\n',
                          "package-lock.json": "{\n" + lock + "}\n", "src/app.js": "run()\ngo()\n",
                          "dist/app.min.js": bundle,
                          "src/app_pb2.py": "# Code generated by protoc. DO NOT EDIT.\nx = 1\n"})
    log = scripted({"*/plan": [answer("scripted", {"commits": [
        commit("deps: add dep", files=["package.json"]), commit("feat: go", files=["src/app.js"])]})]})
    res = retcon(repo, "plan", "--whole", "-m", "scripted", "--no-edit")
    assert res.code == 0, res.text
    (call,) = entries(log)
    prompt = call["prompt"]
    assert "package-lock.json: lock file" in prompt and "goes with package.json" in prompt
    assert "dist/app.min.js: minified file" in prompt and "src/app_pb2.py: generated file" in prompt
    assert "dep2999" not in prompt and "f2999" not in prompt
    listed = {p for _, p in ID.findall(prompt)}
    assert listed == {"package.json", "src/app.js"}
    ids = remaining_ids(repo)
    first, second = assigned(stored(repo))
    assert {ids[i] for i in first} == {"package.json", "package-lock.json"}
    assert {ids[i] for i in second} == {"src/app.js", "dist/app.min.js", "src/app_pb2.py"}
    assert "package-lock.json (lock file; it follows package.json)" in stored(repo)
    assert "dist/app.min.js (minified file; it is built from src/app.js)" in stored(repo)
    assert len(prompt) < 20000


def test_rate_limits_are_retried_with_backoff(project, scripted):
    from testing.scripted_model import register

    register()
    log = scripted({"*/plan": [{**answer("scripted", GOOD), "rate_limit": 2}]})
    model = llm.get_model("scripted")
    repo = pygit2.Repository(str(project.path))
    limits = propose.Limits(backoff=0.01)
    p = propose.propose(repo, model, propose.Request("feature", "main", "feature-clean"), limits)
    assert [e.get("rate_limited", False) for e in entries(log)] == [True, True, False]
    assert len(p.spec.commits) == 3 and p.tally.calls == 1 and not p.leftovers


def test_errors_other_than_rate_limits_fail_at_once_with_one_line(project, scripted):
    log = scripted({"*/plan": [{"error": "connection reset by peer"}]})
    res = retcon(project, "plan", "--whole", "-m", "scripted", "--no-edit")
    assert res.code == 1 and len(res.err.strip().splitlines()) == 1
    assert "model 'scripted' failed: RuntimeError: connection reset by peer" in res.err
    assert len(entries(log)) == 1 and project.git("for-each-ref", "refs/retcon/") == ""


# --- a diff of several megabytes ---------------------------------------------------


def big_repo(path, dirs: int = 12, files: int = 25, lines: int = 120) -> GitRepo:
    """A branch whose diff is a few MB: every third line of every file changed."""
    repo = GitRepo.init(path)
    for d in range(dirs):
        for f in range(files):
            body = "".join(f"line {n} of file {f} in pkg{d}: " + "x" * 70 + "\n" for n in range(lines))
            repo.write(f"pkg{d}/sub{f % 3}/mod{f}.py", body)
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    for d in range(dirs):
        for f in range(files):
            body = "".join((f"changed {n} of file {f} in pkg{d}: " + "y" * 200 if n % 3 == 0 else
                            f"line {n} of file {f} in pkg{d}: " + "x" * 70) + "\n" for n in range(lines))
            repo.write(f"pkg{d}/sub{f % 3}/mod{f}.py", body)
    repo.commit("rewrite everything")
    return repo


def test_a_multi_megabyte_diff_is_chunked_within_budget_and_combined(tmp_path, scripted):
    repo = big_repo(tmp_path / "repo")
    diff_bytes = len(repo.git("diff", "main", "feature").encode())
    assert diff_bytes > 2_000_000
    log = scripted({
        "*/plan-chunk": [{"json": {"groups": [{"message": "chunk work", "hints": "why " * 80, "files": [],
                                               "hunks": "$ids:"}]}, "sleep": 0.05}],
        "*/plan-combine": [{"json": {"commits": [{"message": "merged", "hints": "", "groups": "$match:^(g\\d+) "}]}}],
    })
    budget = 8000
    res = retcon(repo, "plan", "--whole", "-m", "scripted-schema", "--no-edit", "--budget", str(budget), "--jobs", "3")
    assert res.code == 0, res.text
    calls = entries(log)
    limit = propose.Limits(context_tokens=budget).prompt_chars
    assert max(c["chars"] for c in calls) <= limit
    chunks = [c for c in calls if c["keys"][0].endswith("plan-chunk/1")]
    combines = [c for c in calls if "plan-combine" in c["keys"][0]]
    n = int(re.search(r"^Chunk \d+/(\d+)", chunks[0]["prompt"], re.M).group(1))
    assert len(chunks) == n > 20
    # Chunks cover the whole index, each hunk once, cut by directory.
    ids = remaining_ids(repo)
    seen = [i for c in chunks for i, _ in ID.findall(c["prompt"])]
    assert sorted(seen) == sorted(ids)
    assert all(len({p.split("/")[0] for _, p in ID.findall(c["prompt"])}) <= 2 for c in chunks)
    # The combine, itself in parts here, sees every chunk's group.
    assert len(combines) > 1
    firsts = [c for c in combines if "[chunk " in c["prompt"]]
    found = {int(k) for c in firsts for k in re.findall(r"^g\d+ \[chunk (\d+): ", c["prompt"], re.M)}
    assert found == set(range(1, n + 1))
    assert {g for c in firsts for g in re.findall(r"^(g\d+) ", c["prompt"], re.M)} == {f"g{k}" for k in range(1, n + 1)}
    final = [c for c in combines if "Part 1/1" in c["prompt"]]
    assert len(final) == 1
    # Parallel, but never more than --jobs at once.
    assert 1 < max(c["in_flight"] for c in chunks) <= 3
    (hunks,) = assigned(stored(repo))
    assert sorted(hunks) == sorted(ids)
    assert f"({n} chunks, then combined)" in res.out


def test_a_failing_chunk_stops_the_others_and_saves_nothing(tmp_path, scripted):
    repo = big_repo(tmp_path / "repo", dirs=3, files=6, lines=60)
    log = scripted({"*/plan-chunk": [{"error": "HTTP 500", "sleep": 0.05}]})
    res = retcon(repo, "plan", "--whole", "-m", "scripted", "--no-edit", "--budget", "4000", "--jobs", "2")
    assert res.code == 1 and "model 'scripted' failed: RuntimeError: HTTP 500" in res.err
    n = int(re.search(r"about (\d+) chunks", res.out).group(1))
    # Chunks not yet started when one fails are never asked; calls under way may finish.
    assert n > 4 and len(entries(log)) < n
    assert repo.git("for-each-ref", "refs/retcon/") == ""


def test_a_reply_cut_off_at_the_length_limit_is_read_up_to_its_last_whole_entry(project, scripted):
    """The 1.5B model, sampling greedily, repeated its commits until the server's reply limit cut
    the JSON: three attempts of 'not valid JSON', and no plan. The whole entries before the cut are
    an answer: here, every hunk is in one, so the plan stands at the first attempt."""
    obj = {"commits": [commit("util: add two()", files=["util.py"]), commit("app: use two()", files=["app.py"]),
                       commit("docs: explain main", files=["README", "notes/"]),
                       commit("util: add two()", files=["util.py"])]}
    text = json.dumps(obj, indent=2)
    cut = text[:text.rindex('"util.py"')]          # mid-way through the repeated fourth entry
    log = scripted({"*/plan": [{"text": cut}]})
    res = retcon(project, "plan", "--whole", "-m", "scripted-text", "--no-edit")
    assert res.code == 0, res.text
    assert len(entries(log)) == 1
    import tomli
    spec = tomli.loads(stored(project))["commit"]
    assert [c["message"] for c in spec] == ["util: add two()", "app: use two()", "docs: explain main"]


def test_a_reply_cut_before_its_first_whole_entry_is_still_not_valid_json(project, scripted):
    log = scripted({"*/plan": [{"text": '{"commits": [{"message": "util: add'}]})
    res = retcon(project, "plan", "--whole", "-m", "scripted-text", "--no-edit")
    assert res.code == 1
    assert "gave no usable plan in 3 attempts (last: the reply is not valid JSON)" in res.err
    assert "Traceback" not in res.err and len(entries(log)) == 3
