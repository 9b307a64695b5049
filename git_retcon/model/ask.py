"""One way to ask a model a small question, for every caller: placement (owners/question.py),
planning (plan/ask.py, plan/outline.py) and absorb, which asks the owners' question.

The answer's shape goes as the model takes it best (`route`): llm's `schema=` where the model
supports schemas, else a tool whose arguments are the answer where the caller allows one and the
model calls tools, else plain text that the caller reads strictly. Backend errors are retried by
model/retry.py's policy (each retry said through `say`), the exchange is logged for `llm logs`,
and its usage is handed to the caller's count, so that no caller checks, retries, logs or counts
on its own.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import llm

from git_retcon.model.logs import ExchangeLog
from git_retcon.model.retry import MODEL_ATTEMPTS, Retry, retry_delay, retry_line

Route = Literal["schema", "tool", "text"]
TOOL = "submit_answer"     # the tool a tool route's answer is the arguments of (never run)


def route(model: llm.Model, tool: bool = False) -> Route:
    """How model takes an answer's shape: a schema, a tool call (when tool says the caller can
    read one), or text."""
    if getattr(model, "supports_schema", False):
        return "schema"
    if tool and getattr(model, "supports_tools", False):
        return "tool"
    return "text"


@dataclass(frozen=True)
class Question:
    """What a caller asks: the prompt, its system text, the answer's JSON schema (for the schema
    and tool routes), and the route."""

    prompt: str
    schema: dict[str, Any] | None = None
    system: str | None = None
    route: Route = "text"
    tool_name: str = TOOL


@dataclass
class Asking:
    """How the caller asks: where the exchange is logged, who counts the usage, who is told of a
    retry, what a failure says was lost, and the retry policy."""

    log: ExchangeLog | None = None
    count: Callable[[Any], None] | None = None
    say: Callable[[str], None] | None = None
    lost: str = "nothing was saved"
    attempts: int = MODEL_ATTEMPTS
    backoff: float | None = None


def ask(model: llm.Model, q: Question, how: Asking) -> Any:
    """The model's answer: the reply's text (schema, text), or the tool call's arguments (tool;
    the text where it called none)."""
    def once() -> Any:
        if q.route == "schema":
            response = model.prompt(q.prompt, system=q.system, schema=q.schema)
            answer: Any = response.text()
        elif q.route == "tool":
            tool = llm.Tool(name=q.tool_name, description="Submit the answer.", input_schema=q.schema or {},
                            implementation=lambda **kw: "ok")
            response = model.prompt(q.prompt, system=q.system, tools=[tool])
            calls = [c for c in response.tool_calls() if c.name == q.tool_name]
            answer = calls[0].arguments if calls else response.text()
        else:
            response = model.prompt(q.prompt, system=q.system)
            answer = response.text()
        if how.count is not None:
            how.count(response.usage())
        if how.log is not None:
            how.log.record(response)
        return answer

    say = how.say
    retry = Retry(model.model_id, how.lost, attempts=how.attempts,
                  base=how.backoff if how.backoff is not None else retry_delay(),
                  on_retry=(lambda e, a, s: say(retry_line(e, a, s))) if say is not None else None)
    return retry.call(once)
