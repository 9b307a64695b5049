"""A context window that fits: the prompt budget follows the model's window (the user's setting,
git config retcon.context, llm's option for the model, a known model's), so a small model is never
sent more than it holds; the run says what it cut."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pygit2
import pytest

from git_retcon.errors import RetconError
from git_retcon.model.window import DEFAULT, Window, parse, window
from testing.flow import call, retcon, turn
from testing.gitrepo import GitRepo


class Named:
    def __init__(self, model_id: str, model_name: str = ""):
        self.model_id, self.model_name = model_id, model_name


def test_the_window_is_the_first_that_is_set(tmp_path):
    repo = GitRepo.init(tmp_path / "repo")
    r = pygit2.Repository(str(repo.path))
    assert window(r, Named("gpt-4o-mini")) == Window(128_000, "known for gpt-4o-mini")
    assert window(r, Named("local", "qwen2.5-coder-1.5b-instruct")).tokens == 32_768
    assert window(r, Named("my-own")) .tokens == DEFAULT
    options = Path(os.environ["LLM_USER_PATH"]) / "model_options.json"
    options.parent.mkdir(parents=True, exist_ok=True)
    options.write_text(json.dumps({"my-own": {"num_ctx": 8192}}))
    assert window(r, Named("my-own")) == Window(8192, "llm's option num_ctx for my-own")
    repo.git("config", "retcon.context", "16k")
    assert window(r, Named("my-own")) == Window(16384, "git config retcon.context")
    assert window(r, Named("my-own"), 4096) == Window(4096, "--context")


@pytest.mark.parametrize("value, words", [("lots", "is not a number of tokens"), ("1000", "is too small")])
def test_a_window_that_is_no_window_is_refused_with_what_to_write(value, words):
    with pytest.raises(RetconError, match=words):
        parse(value, "git config retcon.context")


def big(tmp_path) -> GitRepo:
    """A diff too big for a 4096-token window: 24 files under src/ (commit 1), docs (the last)."""
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("base", {"README": "r\n"})
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("much", {**{f"src/m{i:02d}.py": "".join(f"VALUE_{i}_{j} = {j}  # a line of module {i}\n"
                                                      for j in range(25)) for i in range(24)},
                         "docs/guide.md": "# Guide\n"})
    repo.git("checkout", "-q", "main")
    (tmp_path / "spec.toml").write_text('source = "feature"\nremote = "main"\ncleaned = "clean"\n'
                                        'owners = "conversation"\n\n'
                                        '[[commit]]\nmessage = "the modules"\nhints = "Everything under src/."\n\n'
                                        '[[commit]]\nmessage = "docs"\n')
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit").code == 0
    return repo


def test_a_small_window_is_never_overrun_and_the_run_says_what_it_cut(tmp_path, scripted):
    repo = big(tmp_path)
    repo.git("config", "retcon.context", "4096")
    reads = [turn(call("read_diff", path="src/", page=p)) for p in range(1, 9)]
    log = scripted({"1/extract": [*reads, turn(call("apply_hunks", hunk_ids=["src/"])), turn(call("create_commit"))]})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    assert repo.tree("clean~1") == repo.tree("feature") or \
        repo.git("diff", "--name-only", "main", "clean~1").split() == [f"src/m{i:02d}.py" for i in range(24)]
    assert "Context window: 4096 tokens (git config retcon.context): prompts and answers are cut to fit it" in res.out
    assert "Context: cut the conversation back to the prompt and a digest of" in res.out
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    # Each request, as the model counts it (about 4 characters a token), fits in the window.
    assert max(e["chars"] // 4 for e in entries) <= 4096 - 512
    # The prompt carried an index, not the whole diff; pages were cut to the window's share.
    assert "The whole remaining diff" not in entries[0]["prompt"]
    assert all(len(r) < 2000 for e in entries for r in e["results"])


def test_a_models_own_huge_reply_is_not_sent_back_past_the_window(tmp_path, scripted):
    """A reply of megabytes (a model that rambles, or pastes the diff back) was kept in the
    conversation and sent again with the next request, past the window (issue 32)."""
    repo = big(tmp_path)
    repo.git("config", "retcon.context", "4096")
    ramble = "I will now apply the hunks. " * 80_000      # over 2 MB
    # A call written as text, then the ramble: the path on which no backend's usage counts it.
    written = '```json\n{"name": "apply_hunks", "arguments": {"hunk_ids": ["src/"]}}\n```\n'
    log = scripted({"1/extract": [turn(text=written + ramble), turn(call("create_commit"))]})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(entries) >= 2 and max(e["chars"] // 4 for e in entries) <= 4096 - 512
    assert repo.git("diff", "--name-only", "main", "clean~1").split() == [f"src/m{i:02d}.py" for i in range(24)]


def test_a_large_window_keeps_the_usual_budgets(tmp_path, scripted):
    repo = big(tmp_path)
    log = scripted({"1/extract": [turn(call("read_diff", path="src/")), turn(call("apply_hunks", hunk_ids=["src/"])),
                                  turn(call("create_commit"))]})
    res = retcon(repo, "run", "-m", "scripted", "--context", "128k")
    assert res.code == 0, res.text
    assert "Context" not in res.out
    first = [json.loads(line) for line in log.read_text().splitlines()][1]["results"][0]
    assert len(first) > 10_000      # one page of the 24 files' diff (24,000 characters at most)


def test_a_context_option_that_is_no_window_is_a_usage_error(tmp_path, scripted):
    repo = big(tmp_path)
    res = retcon(repo, "run", "-m", "scripted", "--context", "lots")
    assert res.code == 2 and "--context" in res.err and "is not a number of tokens" in res.err
    assert repo.git("for-each-ref", "refs/heads/clean") == ""


def test_a_configured_window_that_is_no_window_is_refused_before_anything_is_written(tmp_path, scripted):
    repo = big(tmp_path)
    repo.git("config", "retcon.context", "lots")
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 1 and res.err.count("\n") == 1
    assert "git config retcon.context = 'lots' is not a number of tokens: write e.g. 8192 or 16k" in res.err
    assert repo.git("for-each-ref", "refs/heads/clean") == ""
