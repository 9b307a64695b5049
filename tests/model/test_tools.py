"""The model's tools as a model meets them: a scripted llm model calling them in a real run."""
from __future__ import annotations

import json
import re

import pygit2

from git_retcon import diff
from testing.flow import call, retcon, turn
from testing.gitrepo import GitRepo

ONE_COMMIT = """\
source = "feature"
remote = "main"
cleaned = "feature-clean"
owners = "conversation"
{extra}
[[commit]]
message = "the change"

[[commit]]
message = "the rest"
"""


def planned(repo: GitRepo, tmp_path, extra: str = "", third: bool = False) -> GitRepo:
    """third: a third commit, so that commit 2 is a model's step too (the last is plain code's)."""
    spec = ONE_COMMIT.format(extra=extra) + ('\n[[commit]]\nmessage = "later"\n' if third else "")
    (tmp_path / "spec.toml").write_text(spec)
    res = retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit")
    assert res.code == 0, res.text
    return repo


def results(log, step: str = "1/extract/1") -> list[str]:
    """The tool results the model saw in a step, as of its last turn there."""
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    return [e for e in entries if e["keys"] == [step]][-1]["results"]


def test_delete_write_and_read_file_do_what_they_say(tmp_path, scripted):
    repo = GitRepo.init(tmp_path / "repo")
    repo.write("run.sh", "#!/bin/sh\necho old\n", mode=0o755)
    big = "".join(f"line {i:05d} of a long generated file\n" for i in range(2000))   # ~70 000 characters
    repo.commit("base", {"old.txt": "to go\n", "data.bin": b"\x89PNG\r\n\x00\x01binary", "big.txt": big})
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("run.sh", "#!/bin/sh\necho new\n", mode=0o755)
    repo.commit("messy", {"old.txt": None})
    repo.git("checkout", "-q", "main")
    planned(repo, tmp_path)
    log = scripted({"1/extract": [
        turn(call("read_file", path="data.bin"), call("read_file", path="big.txt"),
             call("write_file", path="run.sh", content="#!/bin/sh\necho new\n"),
             call("delete_file", path="old.txt")),
        # Every change of the source in commit 1 of 2: create_commit's guard names it, then takes a reason.
        turn(call("create_commit", message="the change")),
        turn(call("create_commit", message="the change", confirm="the second commit is a leftover"))]})

    assert retcon(repo, "run", "-m", "scripted").code == 0   # commit 2 has nothing left: complete, no commit
    binary, truncated, wrote, deleted = results(log)[:4]
    assert binary == "data.bin: binary file, 14 bytes"
    assert truncated.startswith("line 00000 of a long")
    assert truncated.endswith(f"[... cut: {len(big) - 24000} more characters not shown ...]")
    assert wrote.startswith("Wrote run.sh") and deleted == "Deleted old.txt."
    first = repo.git("rev-list", "--reverse", "main..feature-clean").split()[0]
    assert repo.git("ls-tree", first, "run.sh").split()[0] == "100755"     # the executable bit is kept
    assert repo.git("show", f"{first}:run.sh") == "#!/bin/sh\necho new"
    assert repo.git("ls-tree", "--name-only", first).split() == ["big.txt", "data.bin", "run.sh"]


def test_a_failed_apply_changes_nothing_and_says_which_hunk_and_why(tmp_path, scripted):
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("base", {".gitignore": "zz/\n", "a.txt": "one\ntwo\n"})
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("messy", {"a.txt": "one\n2\n", "zz": "now a file\n"})
    repo.git("checkout", "-q", "main")
    # The build leaves an ignored directory `zz/` in the build worktree, where the source adds a file.
    planned(repo, tmp_path, 'build = "mkdir -p zz && echo warm > zz/obj"\n')
    log = scripted({"1/extract": [
        turn(call("write_file", path="b.txt", content="so the build runs on a new tree\n"), call("run_build")),
        turn(call("apply_hunks", hunk_ids="$ids:")),
        turn(call("read_diff"), call("read_file", path="a.txt")),
        turn(call("create_commit", message="the change"))]})

    assert retcon(repo, "run", "-m", "scripted").code == 3
    out = results(log)
    assert out[1].startswith("build: PASS"), out[1]
    applied, diff_read, a_txt = out[2:5]
    assert applied.startswith("Error:") and "(add of zz)" in applied and "non-empty directory" in applied
    assert "nothing was applied" in applied
    assert "a.txt (modify)" in diff_read and "zz (add)" in diff_read       # the index kept neither hunk
    assert a_txt == "one\ntwo\n"                                 # nor did the file
    # What the commit holds is what the worktree holds: b.txt, and no half of the failed apply.
    first = repo.git("rev-list", "--reverse", "main..feature-clean").split()[0]
    assert repo.git("diff", "--name-only", "main", first).split() == ["b.txt"]


def test_a_model_that_keeps_calling_tools_stops_at_the_chain_limit(tmp_path, scripted):
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("base", {"a.txt": "a\n"})
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("messy", {"a.txt": "b\n"})
    repo.git("checkout", "-q", "main")
    planned(repo, tmp_path)
    # Reads that differ (the same read twice counts as a failed turn, and would end the step first).
    log = scripted({"1/extract": [turn(call("read_diff", path=f"elsewhere{i}/"), text="let me look again")
                                  for i in range(60)]})

    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 3, res.text
    turns = [json.loads(line)["turn"] for line in log.read_text().splitlines()]
    assert max(turns) + 1 == 40            # 40 responses, then the step stopped: no 41st
    assert "the model used 40 responses without finishing the step" in res.text
    assert "let me look again" in res.text
    shown = retcon(repo, "spec", "show").out
    assert "the model used 40 responses without finishing the step" in shown
    assert repo.git("rev-list", "main..feature-clean", check=False) == ""


def test_ids_are_shown_abbreviated_and_an_item_may_be_an_id_prefix_or_the_whole_id(tmp_path, scripted):
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("base", {"src/a.py": "a\n", "src/lib/b.py": "b\n", "README": "r\n", "Docs/x.md": "x\n"})
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("messy", {"src/a.py": "A\n", "src/lib/b.py": "B\n", "src/lib/c.py": "c\n", "README": "R\n",
                          "Docs/x.md": "X\n", "LATER.md": "later\n"})
    repo.git("checkout", "-q", "main")
    planned(repo, tmp_path, third=True)     # LATER.md is left to commit 3 (plain code)
    pr = pygit2.Repository(str(repo.path))
    ids = {h.path: h.id for h in diff.remaining(pr, repo.tree("main"), repo.tree("feature"))}
    log = scripted({
        "1/extract": [
            turn(call("read_diff")),
            # A prefix too short among good items: nothing of them is applied.
            turn(call("apply_hunks", hunk_ids=[ids["src/a.py"][:4], ids["README"][:3]])),
            turn(call("apply_hunks", hunk_ids=[ids["src/a.py"][:4], ids["src/lib/b.py"][:7], ids["src/lib/c.py"][:6],
                                               ids["README"]])),
            turn(call("create_commit"))],
        "2/extract": [turn(call("read_diff")), turn(call("apply_hunks", hunk_ids="$ids:Docs/")),
                      turn(call("create_commit"))],
    })
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    diff_read, unknown, applied = results(log)[:3]
    shown = re.findall(r"^hunk (\S+) (\S+) ", diff_read, re.M)
    assert [p for _, p in shown] == sorted(ids)
    names = diff.short_ids(ids.values())
    assert [s for s, _ in shown] == [names[ids[p]] for _, p in shown]
    assert all(4 <= len(s) < 10 and ids[p].startswith(s) for s, p in shown)
    assert unknown.startswith(f"Error: unknown hunk ids: {ids['README'][:3]} (an id needs at least 4 of its hex "
                              "digits); nothing was applied")
    assert applied.startswith("Applied 4 hunks to 4 files: README, src/a.py, src/lib/b.py, src/lib/c.py. "
                              "2 hunks remain.")
    first, second, third = repo.git("rev-list", "--reverse", "main..feature-clean").split()
    assert repo.git("diff", "--name-only", "main", first).split() == ["README", "src/a.py", "src/lib/b.py",
                                                                     "src/lib/c.py"]
    assert repo.git("diff", "--name-only", first, second).split() == ["Docs/x.md"]
    assert repo.git("diff", "--name-only", second, third).split() == ["LATER.md"]
    # The second step's prompt shows the hunks left (the whole diff: it is short), their ids abbreviated,
    # and Docs/x.md's was applied as shown.
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    step2 = [e for e in entries if e["keys"] == ["2/extract/1"]]
    last = diff.short_ids([ids["Docs/x.md"], ids["LATER.md"]])[ids["Docs/x.md"]]
    assert len(last) < 10 and f"\nhunk {last} Docs/x.md (modify)" in step2[-1]["prompt"]
    assert step2[1]["calls"][0]["arguments"] == {"hunk_ids": [last]}


def test_a_path_item_takes_every_remaining_hunk_under_it_and_all_items_apply_or_none(tmp_path, scripted):
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("base", {"src/a.py": "a\n", "src/lib/b.py": "b\n", "README": "r\n", "Docs/x.md": "x\n"})
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("messy", {"src/a.py": "A\n", "src/lib/b.py": "B\n", "src/lib/c.py": "c\n", "README": "R\n",
                          "Docs/x.md": "X\n", "LATER.md": "later\n"})
    repo.git("checkout", "-q", "main")
    planned(repo, tmp_path, third=True)     # LATER.md is left to commit 3 (plain code)
    pr = pygit2.Repository(str(repo.path))
    ids = {h.path: h.id for h in diff.remaining(pr, repo.tree("main"), repo.tree("feature"))}
    log = scripted({
        "1/extract": [
            # An unknown path among good items: nothing of them is applied.
            turn(call("apply_hunks", hunk_ids=["./src/", "src/missing.py"])),
            turn(call("apply_hunks", hunk_ids=["/src/lib"])),
            turn(call("apply_hunks", hunk_ids=["docs/"])),                 # a path's case is kept
            turn(call("apply_hunks", hunk_ids=["./src/", "src/lib/b.py", ids["README"][:6]])),
            turn(call("create_commit"))],
        "2/extract": [turn(call("apply_hunks", hunk_ids=["Docs"])), turn(call("create_commit"))],
    })
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    unknown, absolute, case, applied = results(log)[:4]
    assert unknown.startswith("Error: no remaining hunk is under 'src/missing.py'") and "nothing was applied" in unknown
    assert "absolute paths are refused" in absolute
    assert case.startswith("Error: no remaining hunk is under 'docs/'")
    assert applied.startswith("Applied 4 hunks to 4 files: README, src/a.py, src/lib/b.py, src/lib/c.py. "
                              "2 hunks remain.")
    first, second, _ = repo.git("rev-list", "--reverse", "main..feature-clean").split()
    assert repo.git("diff", "--name-only", "main", first).split() == ["README", "src/a.py", "src/lib/b.py",
                                                                     "src/lib/c.py"]
    assert repo.git("diff", "--name-only", first, second).split() == ["Docs/x.md"]
    assert results(log, "2/extract/1")[0].startswith("Applied 1 hunks to 1 files: Docs/x.md.")


def test_a_file_named_like_a_hunk_id_is_reached_with_dot_slash(tmp_path, scripted):
    first = GitRepo.init(tmp_path / "probe")
    first.commit("base", {"a.txt": "a\n"})
    first.commit("change", {"a.txt": "A\n"})
    pr = pygit2.Repository(str(first.path))
    [ha] = diff.remaining(pr, first.tree("HEAD~1"), first.tree("HEAD"))
    name = ha.id[:6]            # a file named as a.txt's hunk is shown
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("base", {"a.txt": "a\n"})
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("messy", {"a.txt": "A\n", name: "x\n", "LATER.md": "later\n"})
    repo.git("checkout", "-q", "main")
    planned(repo, tmp_path, third=True)     # LATER.md is left to commit 3 (plain code)
    log = scripted({
        "1/extract": [turn(call("apply_hunks", hunk_ids=[f"./{name}"])), turn(call("create_commit"))],
        "2/extract": [turn(call("apply_hunks", hunk_ids=[name])), turn(call("create_commit"))],
    })
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    first_c, second_c, _ = repo.git("rev-list", "--reverse", "main..feature-clean").split()
    assert repo.git("diff", "--name-only", "main", first_c).split() == [name]
    assert repo.git("diff", "--name-only", first_c, second_c).split() == ["a.txt"]
    assert results(log, "2/extract/1")[0].startswith("Applied 1 hunks to 1 files: a.txt.")


def test_a_path_with_an_exclusion_takes_all_but_that_hunk_and_a_stray_exclusion_applies_nothing(tmp_path, scripted):
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("base", {"src/a.py": "a\n", "src/b.py": "b\n", "README": "r\n"})
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("messy", {"src/a.py": "A\n", "src/b.py": "B\n", "src/c.py": "c\n", "README": "R\n"})
    repo.git("checkout", "-q", "main")
    planned(repo, tmp_path)
    pr = pygit2.Repository(str(repo.path))
    ids = {h.path: h.id for h in diff.remaining(pr, repo.tree("main"), repo.tree("feature"))}
    names = diff.short_ids(ids.values())
    log = scripted({
        "1/extract": [
            turn(call("apply_hunks", hunk_ids=["src/", f"-{names[ids['README']]}"])),
            turn(call("apply_hunks", hunk_ids=f"src/, -{names[ids['src/b.py']]}")),   # a comma-separated string
            turn(call("create_commit"))],
    })
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    stray, applied = results(log)[:2]
    assert stray.startswith(f"Error: -{names[ids['README']]}: an exclusion leaves a hunk out of the paths of the "
                            "same call, and no path item covers") and "nothing was applied" in stray
    assert applied.startswith("Applied 2 hunks to 2 files: src/a.py, src/c.py. 2 hunks remain.")
    first = repo.git("rev-list", "--reverse", "main..feature-clean").split()[0]
    assert repo.git("diff", "--name-only", "main", first).split() == ["src/a.py", "src/c.py"]
