"""`python -m bench._retcon ARGS`: git-retcon as a user runs it, plus what a benchmark needs to see.

- $RETCON_BENCH_MARKS: a file that gets one line per model turn, `time.time()` as it starts, so the
  parent can tell the start-up to the first model call (it spawned the process at a known time).
- `retcon-paths-nofix`: retcon-paths as it was before it took the rework brief's candidates: stuck
  on every failure (bench/misordered.py's "before").
- `retcon-paths-slow`: the built-in retcon-paths model that waits $RETCON_BENCH_TURN seconds per turn
  (a model step of about 1 s takes 4 turns of 0.25 s), registered through llm's plugin manager like
  any installed plugin model, so choosing it costs what choosing a real backend costs.
"""
from __future__ import annotations

import os
import time
from collections.abc import Iterator
from typing import Any

import llm

try:
    from git_retcon.model.builtin import PathsModel, tool_exchanges, user_text
except ImportError:   # git-retcon as it was before git_retcon.model.paths was named builtin (bench/judgement's MAIN)
    from git_retcon.model.paths import PathsModel, tool_exchanges, user_text  # type: ignore[no-redef]
from git_retcon.model.prompt import read_step
from git_retcon.reconstruct import loop as _loop

_original = PathsModel.execute


def _mark() -> None:
    path = os.environ.get("RETCON_BENCH_MARKS")
    if path:
        with open(path, "a") as f:
            f.write(f"{time.time():.6f}\n")


def _execute(self: PathsModel, prompt: llm.Prompt, stream: bool, response: llm.Response,
             conversation: llm.Conversation | None) -> Iterator[str]:
    _mark()
    return _original(self, prompt, stream, response, conversation)


PathsModel.execute = _execute  # type: ignore[method-assign]

# The benchmarks reset a spec to its planned state and run it again, and time the start-up of
# a run that finds its build worktree (as a run resumed after a stuck stop does). A complete
# spec's worktree is removed at the end of its run; here it is kept, to stand in for that.
_loop._remove_worktrees = lambda run: None


class SlowPathsModel(PathsModel):
    model_id = "retcon-paths-slow"

    def execute(self, prompt: llm.Prompt, stream: bool, response: llm.Response,
                conversation: llm.Conversation | None) -> Iterator[str]:
        time.sleep(float(os.environ.get("RETCON_BENCH_TURN", "0.25")))
        yield from super().execute(prompt, stream, response, conversation)
        response.set_usage(input=100, output=10)


class NoFixPathsModel(PathsModel):
    model_id = "retcon-paths-nofix"

    def execute(self, prompt: llm.Prompt, stream: bool, response: llm.Response,
                conversation: llm.Conversation | None) -> Iterator[str]:
        text = user_text(prompt.messages)
        done = tool_exchanges(prompt.messages)
        if read_step(text).step == "fix" and not (done and done[-1][0] == "stuck"):
            response.set_usage(input=0, output=0)
            response.add_tool_call(llm.ToolCall(name="stuck", arguments={"summary": "retcon-paths-nofix: stuck"}))
            yield ""
            return
        yield from super().execute(prompt, stream, response, conversation)


class _Plugin:
    @llm.hookimpl
    def register_models(self, register: Any) -> None:
        register(SlowPathsModel())
        register(NoFixPathsModel())


llm.plugins.pm.register(_Plugin(), name="retcon-bench")

from git_retcon.cli import main  # noqa: E402

main()
