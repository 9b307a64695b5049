"""`python -m bench._counted ARGS`: git-retcon with `retcon-paths-counted`, retcon-paths reporting as
its input tokens what a backend would count: the characters of everything a request sends (the
system prompt, the tool definitions, every message) over 4; as output, its calls' arguments over
4. For bench/judgement.py, which runs it with git-retcon at main and with this tree (so it uses
nothing that only one of them has)."""
from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import llm

try:
    from git_retcon.model.builtin import PathsModel, next_call, tool_exchanges, user_text
except ImportError:   # git-retcon as it was before git_retcon.model.paths was named builtin (bench/judgement's MAIN)
    from git_retcon.model.paths import PathsModel, next_call, tool_exchanges, user_text  # type: ignore[no-redef]


def _chars(prompt: llm.Prompt) -> int:
    sent = len(prompt.system or "")
    for m in prompt.messages:
        for p in m.parts:
            sent += len(getattr(p, "text", "") or "")
            output = getattr(p, "output", None)
            sent += len(output if isinstance(output, str) else json.dumps(output) if output else "")
            sent += len(json.dumps(getattr(p, "arguments", None) or {})) if hasattr(p, "arguments") else 0
    for t in prompt.tools or []:
        sent += len(t.name) + len(t.description or "") + len(json.dumps(t.input_schema))
    return sent


class CountedPathsModel(PathsModel):
    model_id = "retcon-paths-counted"

    def execute(self, prompt: llm.Prompt, stream: bool, response: llm.Response,
                conversation: llm.Conversation | None) -> Iterator[str]:
        yield from super().execute(prompt, stream, response, conversation)
        call = next_call(user_text(prompt.messages), tool_exchanges(prompt.messages))   # what it just called
        response.set_usage(input=max(_chars(prompt) // 4, 1), output=max(len(json.dumps(call)) // 4, 1))


class _Plugin:
    @llm.hookimpl
    def register_models(self, register: Any) -> None:
        register(CountedPathsModel())


llm.plugins.pm.register(_Plugin(), name="retcon-bench-counted")

from git_retcon.cli import main  # noqa: E402

main()
