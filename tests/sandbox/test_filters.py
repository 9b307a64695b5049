"""The build worktree behaves like a checkout: files pass through git's filters (eol,
clean/smudge), so a committed blob is what `git add` stores and a build sees what a
checkout gives."""
from __future__ import annotations

import json

from testing.flow import call, retcon, take, turn
from testing.gitrepo import GitRepo

ROT13 = "tr A-Za-z N-ZA-Mn-za-m"
SPEC = """\
source = "feature"
remote = "main"
cleaned = "feature-clean"

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
                            turn(call("create_commit", message=""))],
              "3/extract": [turn(call("stuck", summary="look at the worktree"))]})
    res = retcon(repo, "run", "-m", "scripted")
    # Commit 3 stops the run, the worktree kept at commit 2.
    assert res.code == 3 and "look at the worktree" in res.err, res.text
    for path in ("secret.sec", "notes.txt", "hand.txt"):   # the blobs `git add` stored on the source
        assert repo.rev(f"feature-clean:{path}") == repo.rev(f"feature:{path}"), path
    # CRLF is what eol=crlf checks out, and git add stores LF, as the source has: no warning.
    wrote = [r for ln in log.read_text().splitlines() for r in json.loads(ln)["results"] if r.startswith("Wrote")]
    assert wrote == ["Wrote hand.txt (10 characters)."], wrote
    # The worktree holds what a checkout of the cleaned branch holds, and git sees no change.
    wt = GitRepo(repo.path / ".git" / "retcon" / "worktrees" / "feature-clean")
    assert (wt.path / "secret.sec").read_bytes() == b"plain\nhello\n"
    assert (wt.path / "notes.txt").read_bytes() == b"one\r\ntwo\r\n"
    assert (wt.path / "hand.txt").read_bytes() == b"by\r\nhand\r\n"
    assert wt.status() == ""
