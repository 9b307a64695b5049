"""The build worktree behaves like a checkout: files pass through git's filters (eol,
clean/smudge), so a committed blob is what `git add` stores and a build sees what a
checkout gives."""
from __future__ import annotations

import json

from testing.flow import call, retcon, take, turn
from testing.gitrepo import GitRepo
from testing.sandboxes import worktrees

ROT13 = "tr A-Za-z N-ZA-Mn-za-m"
SPEC = """\
source = "feature"
remote = "main"
cleaned = "feature-clean"
owners = "conversation"

[[commit]]
message = "secret: say hello"
paths = ["secret.sec"]

[[commit]]
message = "notes: more"
paths = ["notes.txt", "hand.txt"]

[[commit]]
message = "docs: stops the run before the spec is complete, so the worktree stays to look at"
hints = "LATER.md"

[[commit]]
message = "the rest"
"""


def filtered_repo(path) -> GitRepo:
    """*.txt with eol=crlf and *.sec through a clean/smudge filter (rot13); the feature
    branch committed with `git add`, so its blobs are the clean forms."""
    repo = GitRepo.init(path)
    repo.git("config", "filter.rot13.clean", ROT13)
    repo.git("config", "filter.rot13.smudge", ROT13)
    repo.commit("base", {".gitattributes": "*.txt eol=crlf\n*.sec filter=rot13\n",
                         "notes.txt": "one\r\n", "secret.sec": "plain\n"})
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("work", {"notes.txt": "one\r\ntwo\r\n", "secret.sec": "plain\nhello\n",
                         "hand.txt": "by\r\nhand\r\n", "LATER.md": "later\n"})
    repo.git("checkout", "-q", "main")
    return repo


def test_applied_and_written_files_go_through_the_filters(tmp_path, scripted):
    repo = filtered_repo(tmp_path / "repo")
    assert repo.git("cat-file", "-p", "feature:secret.sec") == "cynva\nuryyb"   # the clean form
    (tmp_path / "spec.toml").write_text(SPEC)
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit").code == 0
    log = scripted({"1/extract": take("secret.sec"),
              "2/extract": [turn(call("apply_hunks", hunk_ids="$ids:notes.txt")),
                            # What read_file shows the model, and what it writes back: CRLF.
                            turn(call("write_file", path="hand.txt", content="by\r\nhand\r\n")),
                            turn(call("create_commit", message="")),
                            # It took every change left, though it is not the last: it says why.
                            turn(call("create_commit", message="", confirm="the last commit is a leftover"))],
              "3/extract": [turn(call("stuck", summary="look at the worktree"))]})
    res = retcon(repo, "run", "-m", "scripted")
    # Commit 3 stops the run, the worktree kept at commit 2.
    assert res.code == 3 and "look at the worktree" in res.err, res.text
    for path in ("secret.sec", "notes.txt", "hand.txt"):   # the blobs `git add` stored on the source
        assert repo.rev(f"feature-clean:{path}") == repo.rev(f"feature:{path}"), path
    # CRLF is what eol=crlf checks out, and git add stores LF, as the source has: no warning.
    wrote = sorted({r for ln in log.read_text().splitlines() for r in json.loads(ln)["results"]
                    if r.startswith("Wrote")})
    assert wrote == ["Wrote hand.txt (10 characters)."], wrote
    # The worktree holds what a checkout of the cleaned branch holds, and git sees no change.
    wt = GitRepo(worktrees(repo.path) / "worktrees" / "feature-clean")
    assert (wt.path / "secret.sec").read_bytes() == b"plain\nhello\n"
    assert (wt.path / "notes.txt").read_bytes() == b"one\r\ntwo\r\n"
    assert (wt.path / "hand.txt").read_bytes() == b"by\r\nhand\r\n"
    assert wt.status() == ""


# A clean filter whose output depends on the whole file: a header that counts its lines.
COUNT_CLEAN = "awk '!/^lines: / {a[++n]=$0} END {print \"lines: \" n; for (i = 1; i <= n; i++) print a[i]}'"
COUNT_SMUDGE = "sed 1d"
COUNT_SPEC = """\
source = "feature"
remote = "main"
cleaned = "feature-clean"
owners = "conversation"

[[commit]]
message = "add b"

[[commit]]
message = "add d"

[[commit]]
message = "the rest"
"""


def added(line: str) -> str:
    """The id of the hunk of f.cnt that adds `line`, as the prompt's whole diff shows it."""
    return f"$match:^hunk ([0-9a-f]+) f\\.cnt \\(modify\\)\\n@@[^\\n]*\\n *\\d+ \\+{line}$"


def test_each_commit_stores_what_git_add_stores_with_a_whole_file_filter(tmp_path, scripted):
    repo = GitRepo.init(tmp_path / "repo")
    repo.git("config", "filter.count.clean", COUNT_CLEAN)
    repo.git("config", "filter.count.smudge", COUNT_SMUDGE)
    repo.commit("base", {".gitattributes": "*.cnt filter=count\n", "f.cnt": "a\nc\ne\n"})
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("work", {"f.cnt": "a\nb\nc\nd\ne\nf\n"})
    repo.git("checkout", "-q", "main")
    assert repo.git("cat-file", "-p", "feature:f.cnt") == "lines: 6\na\nb\nc\nd\ne\nf"
    (tmp_path / "spec.toml").write_text(COUNT_SPEC)
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit").code == 0
    scripted({"1/extract": [turn(call("apply_hunks", hunk_ids=added("b"))), turn(call("create_commit"))],
              "2/extract": [turn(call("apply_hunks", hunk_ids=added("d"))), turn(call("create_commit"))]})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    assert repo.tree("feature-clean") == repo.tree("feature")
    for rev, text in (("feature-clean~2", "a\nb\nc\ne"), ("feature-clean~1", "a\nb\nc\nd\ne")):
        count = len(text.splitlines())
        assert repo.git("cat-file", "-p", f"{rev}:f.cnt") == f"lines: {count}\n{text}", rev
