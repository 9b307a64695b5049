"""Structured answers from any llm model, within a prompt budget.

Three routes, the best the model has: llm's schemas, else a tool call (the tool
`propose_plan` is never run; its arguments are the answer), else JSON in text.
Each answer is parsed and checked by plain code; what is wrong is appended to the
next attempt as steering. Backend errors are retried by model/retry.py's policy, the one
run's steps use: transient ones with backoff (each retry said through `say`), a backend
that cannot be reached fails at once with its cause.
"""
from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from string import Template
from typing import Any

import llm

from git_retcon.errors import RetconError
from git_retcon.model.ask import Asking, Question, Route, ask, route
from git_retcon.model.logs import ExchangeLog
from git_retcon.model.retry import MODEL_ATTEMPTS, retry_delay
from git_retcon.plan.replies import Checked, Invalid, parse_answer, schema, shape

TOOL_NAME = "propose_plan"


@dataclass
class Limits:
    """How big a prompt may be and how hard to try. Sizes are in tokens of the model."""

    context_tokens: int = 32000       # the model's context window
    chars_per_token: float = 3.0      # code and hex ids: ~3 characters a token
    jobs: int = 4                     # chunk prompts in flight at once
    attempts: int = 3                 # one answer plus two repair rounds
    retries: int = MODEL_ATTEMPTS - 1  # per call, on rate limits and other transient errors
    backoff: float = field(default_factory=retry_delay)  # seconds before the first retry, doubled each time

    @property
    def answer_tokens(self) -> int:
        """Room kept for the reply: it lists every id of the prompt."""
        return min(8000, self.context_tokens // 4)

    @property
    def prompt_chars(self) -> int:
        """The most characters one call may send (system and user text together)."""
        return int((self.context_tokens - self.answer_tokens) * self.chars_per_token)

    @property
    def max_ids(self) -> int:
        """Most ids one reply can list: ~16 characters each in JSON."""
        return max(10, int(self.answer_tokens * self.chars_per_token - 2000) // 16)

    @property
    def repair_chars(self) -> int:
        return min(4000, self.prompt_chars // 10)


@dataclass
class Tally:
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    prompt_chars: list[int] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, chars: int, usage: Any) -> None:
        with self.lock:
            self.calls += 1
            self.prompt_chars.append(chars)
            self.input_tokens += getattr(usage, "input", None) or 0
            self.output_tokens += getattr(usage, "output", None) or 0


HOW = {
    "schema": "Your reply is that JSON object.",
    "tool": f"Call the tool {TOOL_NAME} once, with that object as its arguments.",
    "text": "Reply with that JSON object only: no prose, no code fence.",
}


class Asker:
    """One structured question at a time, thread-safe: schema, tool call, or JSON in text."""

    def __init__(self, model: llm.Model, limits: Limits, tally: Tally, system: str, repair: Template,
                 say: Callable[[str], None] | None = None, log: ExchangeLog | None = None):
        self.model = model
        self.say = say
        self.log = log
        self.limits = limits
        self.tally = tally
        self.system = system
        self.repair = repair
        self.mode: Route = route(model, tool=True)

    def overhead(self, items: str, with_groups: bool) -> int:
        """Characters sent besides the prompt and system text: the schema or the tool's."""
        if self.mode == "text":
            return 0  # the schema is in the prompt
        return len(json.dumps(schema(items, with_groups))) + (200 if self.mode == "tool" else 0)

    def how(self, items: str, with_groups: bool) -> str:
        text = "Answer with this JSON object:\n" + shape(items, with_groups) + "\n" + HOW[self.mode]
        if self.mode == "text":
            text += "\nJSON schema of the reply: " + json.dumps(schema(items, with_groups), separators=(",", ":"))
        return text

    def ask(self, render: Callable[[str], str], items: str, with_groups: bool,
            judge: Callable[[list[dict[str, Any]]], Checked]) -> Checked:
        """Ask until the answer checks out, steering with what was wrong; the best answer
        after the last attempt (problems and all) is returned, a shapeless one is an error."""
        best: Checked | None = None
        repair = ""
        error = ""
        for attempt in range(1, self.limits.attempts + 1):
            prompt = render("" if attempt == 1 else f" (attempt {attempt})") + repair
            raw = self._call(prompt, schema(items, with_groups), self.overhead(items, with_groups))
            try:
                checked = judge(parse_answer(raw, items, with_groups))
            except Invalid as exc:
                error = str(exc)
                repair = self._repair([error], None)
                continue
            if best is None or (len(checked.unassigned) + len(checked.problems)
                                < len(best.unassigned) + len(best.problems)):
                best = checked
            if not checked.problems:
                return checked
            error = "; ".join(checked.problems)
            repair = self._repair(checked.problems, checked)
        if best is None:
            raise RetconError(
                f"model '{self.model.model_id}' gave no usable plan in {self.limits.attempts} attempts "
                f"(last: {error[:200]}): try another model, or `git retcon plan --from-commits`")
        return best

    def _repair(self, problems: list[str], previous: Checked | None) -> str:
        """The steering text appended to the next attempt, cut to its reserve."""
        shown = ""
        if previous is not None:
            shown = "\n".join(f"{i + 1}. {e.message.splitlines()[0][:80]} ({len(e.ids)} ids)"
                              for i, e in enumerate(previous.entries))
        text = self.repair.substitute(
            problems="\n".join("- " + p for p in problems), previous=shown or "(nothing usable)")
        limit = self.limits.repair_chars
        return "\n\n" + (text if len(text) <= limit - 2 else text[: limit - 3] + "…")

    def _call(self, prompt: str, answer_schema: dict[str, Any], overhead: int) -> Any:
        chars = len(self.system) + len(prompt) + overhead
        if chars > self.limits.prompt_chars:  # chunking guarantees this never happens
            raise RetconError(f"internal: a plan prompt of {chars} characters exceeds the budget")
        return ask(self.model, Question(prompt, answer_schema, self.system, self.mode, TOOL_NAME),
                   Asking(self.log, lambda usage: self.tally.add(chars, usage), self.say,
                          attempts=self.limits.retries + 1, backoff=self.limits.backoff))
