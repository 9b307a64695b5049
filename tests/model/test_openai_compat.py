"""The path most users of local models take: llm's own OpenAI client, an `extra-openai-models.yaml`
in the llm user directory naming http://127.0.0.1:PORT/v1 (Ollama, LM Studio, vLLM, llama.cpp),
here a server in the test process that speaks the chat completions API with scripted replies
(testing/openai_server.py). No network, no key."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from testing.flow import call, feature_repo, retcon
from testing.gitrepo import GitRepo
from testing.openai_server import configure, serving

SPEC = """\
source = "feature"
remote = "main"
cleaned = "feature-clean"
owners = "conversation"
build = "python3 -m py_compile app.py util.py"
test = "python3 -c 'import app; app.main()'"

[[commit]]
message = "util: add two()"
hints = "Only util.py."

[[commit]]
message = "app: use two()"
hints = "Only app.py."

[[commit]]
message = "docs: explain main"
"""


@pytest.fixture
def local(tmp_path, monkeypatch):
    """Start a scripted OpenAI-compatible server and name it in llm's user directory."""
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.setenv("RETCON_RETRY_DELAY", "0.01")
    started = []

    def start(script, **options):
        ctx = serving(script)
        base, state = ctx.__enter__()
        started.append(ctx)
        configure(Path(os.environ["LLM_USER_PATH"]), base, **options)
        return state

    yield start
    for ctx in started:
        ctx.__exit__(None, None, None)


def planned(tmp_path) -> GitRepo:
    repo = feature_repo(tmp_path / "repo")
    (tmp_path / "spec.toml").write_text(SPEC)
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit").code == 0
    return repo


def note(repo: GitRepo, rev: str) -> dict:
    return json.loads(repo.git("notes", "--ref=retcon", "show", rev))


def test_native_tool_calls_streamed_with_cached_tokens_apart(tmp_path, local):
    repo = planned(tmp_path)
    usage = {"prompt_tokens": 4000, "completion_tokens": 20, "cached_tokens": 3800}
    state = local({
        "1/extract": [{"calls": [call("apply_hunks", hunk_ids="$ids:util.py")], "usage": usage},
                      {"calls": [call("create_commit")], "usage": usage}],
        "2/extract": [{"calls": [call("apply_hunks", hunk_ids="$ids:app.py")], "usage": usage},
                      {"calls": [call("create_commit")], "usage": usage}],
    })
    res = retcon(repo, "run", "-m", "local-coder", "-v")
    assert res.code == 0, res.text
    assert repo.log("main..feature-clean") == ["docs: explain main", "app: use two()", "util: add two()"]
    assert repo.tree("feature-clean") == repo.tree("feature")
    assert repo.tree("feature-clean~1") == repo.tree("feature~2")
    # Streamed (llm's default), the tools sent as OpenAI functions, the tool results sent back.
    first = state.requests[0]
    assert first["stream"] is True and {t["function"]["name"] for t in first["tools"]} >= {"apply_hunks", "stuck"}
    assert any(m["role"] == "tool" and m["content"].startswith("Applied 1 hunks")
               for m in state.requests[1]["messages"])
    # What the backend served from its cache is shown apart, in the run, the note and status.
    assert "model: 2 calls, 8000 tokens in (7600 cached), 40 out" in res.out
    assert "Tokens this run: 16000 in (15200 of them cached), 80 out (4 model calls)" in res.out
    assert note(repo, "feature-clean~2")["tokens"] == {"input": 8000, "output": 40, "cached": 7600}
    status = json.loads(retcon(repo, "status", "--json").out)
    assert status["commits"][0]["tokens"] == {"input": 8000, "output": 40, "cached": 7600}
    assert "Tokens: 16000 in (15200 of them cached), 80 out, 4 model calls in 1 run" in retcon(repo, "status").out


def test_calls_written_as_text_by_a_tool_calling_model_are_run(tmp_path, local):
    """What Qwen2.5-Coder does with its own chat template: the call in a ```json fence, as text."""
    repo = planned(tmp_path)
    state = local({
        "1/extract": [{"written": [call("apply_hunks", hunk_ids="$ids:util.py")], "text": "Applying:"},
                      {"written": [call("create_commit")], "form": "tool_call"}],
        "2/extract": [{"written": [call("apply_hunks", hunk_ids="$ids:app.py"), call("create_commit")],
                       "form": "bare"}],
    }, stream=False)
    res = retcon(repo, "run", "-m", "local-coder")
    assert res.code == 0, res.text
    assert repo.tree("feature-clean~1") == repo.tree("feature~2")
    assert state.requests[0].get("stream") in (None, False)
    told = [m["content"] for r in state.requests for m in r["messages"] if m["role"] == "user"]
    assert any(t.startswith("Executed: your reply wrote apply_hunks(") and "Applied 1 hunks" in t for t in told)
    # Two calls in one reply run in order: the second ended the step, so three requests in all.
    assert len(state.requests) == 3


def test_a_model_without_tool_calling_drives_the_run_through_the_text_protocol(tmp_path, local):
    repo = planned(tmp_path)
    state = local({
        "1/extract": [{"written": [call("read_diff", path="util.py")]},
                      {"written": [call("apply_hunks", hunk_ids="$ids:util.py")]},
                      {"text": "Done, the helper is in."},
                      {"written": [call("create_commit")]}],
        "2/extract": [{"written": [call("apply_hunks", hunk_ids="$ids:app.py")]},
                      {"written": [call("create_commit")], "form": "syntax"}],
    }, tools=False)
    res = retcon(repo, "run", "-m", "local-coder")
    assert res.code == 0, res.text
    assert repo.tree("feature-clean~1") == repo.tree("feature~2")
    assert all("tools" not in r for r in state.requests)
    system = state.requests[0]["messages"][0]
    assert system["role"] == "system" and "How to call a tool" in system["content"]
    assert '- apply_hunks(hunk_ids: array of strings): ' in system["content"]
    told = [m["content"] for r in state.requests for m in r["messages"] if m["role"] == "user"]
    read = {t for t in told if t.startswith('Result of read_diff({"path": "util.py"}):\n')}
    assert len(read) == 1 and "def two():" in read.pop()
    # A reply with no call is steered with the form to write.
    assert any("Write the call as a fenced JSON block" in t for t in told)


def test_a_server_error_is_retried_and_one_that_lasts_stops_cleanly(tmp_path, local):
    repo = planned(tmp_path)
    state = local({"1/extract": [{"status": 500, "times": 4, "calls": [call("apply_hunks", hunk_ids="$ids:util.py")]},
                                 {"calls": [call("create_commit")]}],
                   "2/extract": [{"status": 500}]}, stream=False)
    res = retcon(repo, "run", "-m", "local-coder")
    assert res.code == 3, res.text
    # Commit 1: the openai client's own retries, then ours, got through (the 5th request answered).
    assert "Model error (InternalServerError: Error code: 500 - the server had an error while processing your " \
           "request); retrying in 0.0s (try 2)" in res.out
    assert repo.log("main..feature-clean") == ["util: add two()"]
    # Commit 2: the server never recovers: stuck with the cause and nothing recorded, no traceback.
    assert "commit 2/3 is stuck: model 'local-coder' kept failing (6 tries with backoff); last error: " \
           "InternalServerError: Error code: 500" in res.text
    assert "Nothing of this step was recorded" in res.text and "Traceback" not in res.text
    assert sum(1 for r in state.requests if "Commit 2/3" in json.dumps(r)) == 18   # 6 tries of 3 requests


def test_plan_through_the_openai_client_then_run(tmp_path, local):
    repo = feature_repo(tmp_path / "repo")
    repo.git("checkout", "-q", "feature")
    plan = {"commits": [
        {"message": "util: add two()", "hints": "", "files": ["util.py"], "hunks": []},
        {"message": "app: use two()", "hints": "", "files": ["app.py"], "hunks": []},
        {"message": "docs and notes", "hints": "", "files": ["README", "notes/"], "hunks": []}]}
    state = local({"plan": [{"json": plan}], "*/plan": [{"json": plan}],
                   "1/extract": [{"calls": [call("create_commit")]}],
                   "2/extract": [{"calls": [call("create_commit")]}]}, schema=True)
    res = retcon(repo, "plan", "--whole", "-m", "local-coder", "--no-edit")
    assert res.code == 0, res.text
    assert state.requests[0]["response_format"]["type"] == "json_schema"
    res = retcon(repo, "run")
    assert res.code == 0, res.text
    # The plan gave each commit its hunks: plain code applied and committed them, and no model was
    # asked to confirm them (owners = "questions", the default; test_prepared.py has the conversation).
    assert repo.tree("feature-clean~1") == repo.tree("feature~2")
    assert len(state.requests) == 1
    assert res.out.count("Committing the hunks the spec gives this commit (no model needed)") == 2
