"""One model step: a conversation that ends with create_commit or stuck.

Only llm's public API: model.conversation(chain_limit=...), chain(), responses(), usage(),
Response.execute_tool_calls(). Two ways to call the tools (`ToolsMode`): "native", llm's tool
calling; "text", for a model without it (or `--tools text`): the tools are described in the
system prompt (model/protocol.py) and the model writes one call per reply as fenced JSON. In
both, a call written as text (model/textcalls.py) runs through the same tools and callbacks
as a native one, and the model is told what it did; one whose arguments cannot be read is
answered with what is wrong. Every turn that ends with no call at all gets a steering
message carrying the diagnosis of the step's failed calls; each such turn counts against the
step's error budget, and past it the step counts as stuck with the model's last words.

The conversation stays within the model's context window (model/window.py): when the next
request might not fit, the calls of the last response run and the conversation starts again
from the step's prompt and a digest of what the step did so far (the worktree keeps it).

Backend errors are retried from the step's start by model/retry.py's policy, the one
plan's questions use too. git-retcon's own failures inside a tool are raised to the
caller as they are: no model can fix them.
"""
from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import llm
from llm.models import ToolDef

from git_retcon.model import protocol, take
from git_retcon.model.args import shallow
from git_retcon.model.logs import ExchangeLog
from git_retcon.model.outcome import GaveUp, OverBudget, StepOutcome
from git_retcon.model.protocol import ToolsMode
from git_retcon.model.retry import ModelUnavailable as ModelUnavailable  # what the loop catches
from git_retcon.model.retry import Retry
from git_retcon.model.session import Session
from git_retcon.model.textcalls import WrittenCall, read_calls
from git_retcon.model.tooldefs import Halt, tool_defs
from git_retcon.model.usage import cached_tokens
from git_retcon.model.window import CHARS_PER_TOKEN, Window
from git_retcon.ui import clip

DEFAULT_CHAIN_LIMIT = 40
DIGEST_CHARS = 300          # of each earlier answer, when a conversation is cut back
READS = ("read_diff", "read_file")   # the tools whose answers are long (at most the session's read budget)
SHORT_ANSWER = 1500         # characters of any other tool's answer, about (a build's output is trimmed)


@dataclass
class StepResult:
    """What a step made or why it ended, and what it cost."""

    outcome: StepOutcome
    input_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0
    retries: int = 0
    seconds: float = 0.0      # the step's wall time: the model's turns and the tools they called
    cached_tokens: int = 0    # of input_tokens, those the backend served from its prompt cache
    cuts: list[str] = field(default_factory=list)   # what was cut to fit the context window


@dataclass
class Costs:
    """What the step's conversation spent so far, across the retries of its backend."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    calls: int = 0            # the model's responses
    cuts: list[str] = field(default_factory=list)


def run_step(model: llm.Model, system: str, prompt: str, steer: str, session: Session,
             chain_limit: int = DEFAULT_CHAIN_LIMIT, over_budget: Callable[[int], bool] | None = None,
             on_retry: Callable[[str, int, float], None] | None = None,
             log: ExchangeLog | None = None, mode: ToolsMode = "native",
             window: Window | None = None) -> StepResult:
    """over_budget(tokens this step) says when to stop for the token budget;
    on_retry(error, attempt, seconds) is told before each backoff sleep;
    log records each exchange for `llm logs`; mode says how the model calls the tools;
    window keeps each request within the model's context. The outcome is the session's:
    a tool or the conversation ended the step there (`Session.end`, the one place)."""
    costs = Costs()
    retry = Retry(model.model_id, "nothing was recorded for this step", on_retry=on_retry)
    started = time.monotonic()
    talk = _Conversation(model, system, prompt, steer, session, chain_limit, costs, over_budget, log, mode,
                         window)
    retry.call(talk.run, restart=lambda: take.restart(session))
    outcome = session.outcome
    assert outcome is not None, "a conversation returns only once the step has ended"
    return StepResult(outcome, costs.input_tokens, costs.output_tokens, costs.calls, retry.retries,
                      time.monotonic() - started, costs.cached_tokens, costs.cuts)


@dataclass
class _Done:
    """A call the step made, for the digest of a conversation cut back."""

    name: str
    arguments: str
    answer: str


@dataclass(frozen=True)
class Restart:
    """The conversation starts again from the step's prompt and a digest of its calls: pending is
    the answer to send with it, why what the digest says of the reason ("" for none)."""

    pending: str = ""
    why: str = "to fit your context window"


@dataclass
class Turn:
    """What the model did in one turn: its last response and that response's text (a turn ends
    with a response that calls no tool), or that the conversation must start again."""

    last: llm.Response | None = None
    final: str = ""
    restart: Restart | None = None


class _Conversation:
    """One step's conversation with the model: turns, each a value, until the step has ended."""

    def __init__(self, model: llm.Model, system: str, prompt: str, steer: str, session: Session,
                 chain_limit: int, costs: Costs, over_budget: Callable[[int], bool] | None,
                 log: ExchangeLog | None, mode: ToolsMode, window: Window | None) -> None:
        self.model, self.prompt, self.steer, self.session = model, prompt, steer, session
        self.chain_limit, self.costs, self.over_budget, self.log = chain_limit, costs, over_budget, log
        self.mode, self.window = mode, window
        self.tools: list[llm.Tool] = tool_defs(session)
        self.params = {t.name: list(t.input_schema.get("properties") or {}) for t in self.tools}
        self.system = system if mode == "native" else system + protocol.describe(
            [(t.name, t.description or "", t.input_schema) for t in self.tools])
        self.done: list[_Done] = []
        self.replies = 0        # characters of the model's own replies in the conversation (sent back with it)
        self.last_words = ""    # the model's last non-empty text: a stuck's summary when it spends its turns

    def _after(self, tool: object, call: object, res: llm.ToolResult) -> None:
        self.session.steering.after_call(tool, call, res)
        try:
            shown = json.dumps(shallow(getattr(call, "arguments", {}), 4), ensure_ascii=False, default=str)
        except (TypeError, ValueError):
            shown = "{...}"
        self.done.append(_Done(res.name, shown, res.output))

    def _open(self) -> Any:
        return self.model.conversation(
            tools=list[ToolDef](self.tools) if self.mode == "native" else None, chain_limit=self.chain_limit,
            before_call=self.session.steering.before_call, after_call=self._after)

    def run(self) -> None:
        """Turns until the step has ended (from its start again when the backend retries)."""
        self.done.clear()
        self.replies, self.last_words = 0, ""
        conv, text = self._open(), self.prompt
        while not self._over():
            turn = self._turn(conv, text)
            if not self.session.ended():
                conv, text = self._next(conv, turn)

    def _over(self) -> bool:
        """Whether the step has ended; a model that spent its responses ends it here."""
        if self.costs.calls >= self.chain_limit:
            self.session.end(_unfinished(self.costs.calls, self.last_words))
        return self.session.ended()

    def _turn(self, conv: Any, text: str) -> Turn:
        """One turn: the chain of responses (llm runs their tool calls) until one calls no tool,
        the step ends, the token budget is spent, or the next request might not fit."""
        session, turn, spent = self.session, Turn(), False
        chain = conv.chain(text, system=self.system, stream=bool(getattr(self.model, "can_stream", True)))
        try:
            for response in chain.responses():
                # The tool call that ended the step ran while this response was being
                # set up; it has not been sent yet, so no tokens are spent.
                if spent:
                    session.end(OverBudget())
                if session.ended():
                    break
                turn.last, turn.final = response, response.text()
                usage = self._count(response, turn.final)
                # The calls of this response still run (it may have committed); the next is not sent.
                spent = self.over_budget is not None and self.over_budget(
                    self.costs.input_tokens + self.costs.output_tokens)
                if self._crowded(response, usage) and response.tool_calls():
                    # The answers to these calls might not fit: run them here, and start again.
                    response.execute_tool_calls(before_call=session.steering.before_call,
                                                after_call=self._after, tools=list[ToolDef](self.tools))
                    turn.restart = Restart()
                    break
                if self.costs.calls >= self.chain_limit:
                    break
            if spent:
                session.end(OverBudget())
        except Halt as exc:
            raise exc.error from None   # git-retcon's own failure: the run stops with it
        except RecursionError:
            return self._unreadable()
        except ValueError as exc:
            if not _chain_limit(exc):
                raise
            session.end(_unfinished(self.chain_limit, self.last_words))
        return turn

    def _count(self, response: llm.Response, final: str) -> llm.Usage:
        """A response's text and tokens, counted against the step."""
        self.replies += len(final)
        if final.strip():
            self.last_words = final.strip()
        usage = response.usage()
        if self.log is not None:
            self.log.record(response)
        self.costs.calls += 1
        cached = cached_tokens(usage.details)
        self.costs.input_tokens += (usage.input or 0) + cached.extra
        self.costs.cached_tokens += cached.tokens
        self.costs.output_tokens += usage.output or 0
        return usage

    def _unreadable(self) -> Turn:
        """The backend's client could not read the reply (arguments nested thousands deep), and
        the conversation lost it: it starts again from the prompt and what the step did."""
        steering = self.session.steering
        steering.turn_failed("your reply", "its tool call was nested too deeply to read", "type")
        if steering.budget_left() <= 0:
            self.session.end(GaveUp("the model's replies could not be read (nested too deeply)"))
        return Turn(restart=Restart(
            "Your last reply could not be read: its tool call nests lists or objects too deeply. Call the tool "
            f"again with plain arguments. ({steering.budget_left()} more failures end this step as stuck.)", why=""))

    def _next(self, conv: Any, turn: Turn) -> tuple[Any, str]:
        """What to send after a turn, and in which conversation: the answers to calls written as
        text, else steering (which ends the step past its error budget)."""
        if turn.restart is not None:
            return self._cut_back(conv, turn.restart.pending, turn.restart.why)
        if self.costs.calls >= self.chain_limit:
            return conv, ""      # _over ends the step
        calls = read_calls(turn.final, self.params)
        if calls and calls[0].ok and turn.last is not None:
            text = self._run_written(turn.last, calls)
        else:
            text = self._steering(turn.final, calls)
        if not self.session.ended() and self._too_long(text):
            return self._cut_back(conv, text)
        return conv, text

    def _run_written(self, response: llm.Response, calls: list[WrittenCall]) -> str:
        """Run the calls a reply wrote as text, in order, up to the first that fails, cannot be
        read, or ends the step; the answer says what each did. (A create_commit written after an
        apply_hunks that could not be read must not commit without it.)"""
        parts: list[str] = []
        for i, call in enumerate(calls):
            if not call.ok:
                parts.append(self._steering("", calls[i:i + 1]))
                if calls[i + 1:]:
                    parts.append(protocol.not_run(calls[i + 1:], "the call before could not be read"))
                break
            results = response.execute_tool_calls(
                before_call=self.session.steering.before_call, after_call=self._after,
                tool_calls_list=[llm.ToolCall(name=call.name, arguments=call.arguments)],
                tools=list[ToolDef](self.tools))
            output = results[0].output if results else ""
            parts.append(protocol.result(call, output, self.mode))
            rest = calls[i + 1:]
            failed = bool(results and results[0].exception is not None)
            if rest and (failed or self.session.outcome is not None):
                parts.append(protocol.not_run(rest, "the call before failed" if failed else "the step has ended"))
                break
        return "\n\n".join(parts)

    def _steering(self, words: str, calls: list[WrittenCall]) -> str:
        """The next user message after a turn without a call that could run, counted as a failure."""
        budget = self.session.steering
        if calls:
            budget.turn_failed("your reply", f"wrote {', '.join(dict.fromkeys(c.name for c in calls))} as text "
                               f"that could not be read: {calls[0].problem}", "tool", self._no_call)
            text = protocol.malformed(calls, self.mode) \
                + f"\n({budget.budget_left()} more failures end this step as stuck.)"
        else:
            diagnosis = budget.diagnosis()
            budget.turn_failed("your turn", "ended without create_commit or stuck", "turn", self._no_call)
            text = self.steer + protocol.no_call(self.mode) + ("\n\n" + diagnosis if diagnosis else "") \
                + f"\n({budget.budget_left()} more turns or failed calls end this step as stuck.)"
        self.session.ledger.said.append(text)     # what a stuck summary must not merely echo
        return text

    def _no_call(self, failures: int) -> str:
        """The stuck of a step whose turns spent the error budget without a call that ran."""
        return ("the model ended its turn without create_commit or stuck "
                f"({failures} failed calls and turns in this step)"
                + (f"; its last words: {clip(self.last_words, 1000)}" if self.last_words else ""))

    # -- the context window ------------------------------------------------------------

    def _crowded(self, response: llm.Response, usage: llm.Usage) -> bool:
        """Whether the request after this response might not fit: its calls' answers (each at most
        the session's read budget) on top of what this request held and the reply."""
        if self.window is None:
            return False
        held = (usage.input or 0) + (usage.output or 0) if usage.input else self._estimate()
        reserve = sum(self.session.ctx.read_budget if c.name in READS else SHORT_ANSWER for c in response.tool_calls())
        return self.window.full(held, reserve)

    def _too_long(self, text: str) -> bool:
        if self.window is None:
            return False
        return self.window.full(self._estimate(), len(text))

    def _estimate(self) -> int:
        """The conversation's tokens as its characters tell."""
        chars = len(self.system) + len(self.prompt) + self.replies \
            + sum(len(d.arguments) + len(d.answer) + 40 for d in self.done)
        if self.mode == "native":
            chars += sum(len(json.dumps(t.input_schema)) + len(t.description or "") for t in self.tools)
        return int(chars / CHARS_PER_TOKEN)

    def _cut_back(self, conv: Any, pending: str = "", why: str = "to fit your context window") -> tuple[Any, str]:
        """A new conversation: the step's prompt, and a digest of the calls made so far (and the
        answer to the last reply, when there is one to send)."""
        lines = [f"- {d.name}({d.arguments[:200]}): {' '.join(d.answer.split())[:DIGEST_CHARS]}" for d in self.done]
        budget = self.window.prompt_chars // 4 if self.window is not None else 12000
        while lines and sum(len(x) + 1 for x in lines) > budget:
            lines.pop(0)
        if why and self.window is not None:
            self.costs.cuts.append(f"cut the conversation back to the prompt and a digest of {len(self.done)} "
                                    f"calls to fit the {self.window.tokens}-token context window")
        digest = (f"\n\nThe conversation of this step was cut back{' ' + why if why else ''}. The calls you made "
                  "so far, and the start of each answer (the worktree holds what they did):\n"
                  + ("\n".join(lines) or "(none)")) if self.done else ""
        if pending:
            digest += "\n\nThe answer to your last reply:\n" + pending[:budget]
        self.replies = 0     # the new conversation holds none of the model's replies
        return self._open(), self.prompt + digest + "\n\nGo on from there."


def _unfinished(calls: int, last_words: str) -> GaveUp:
    """The stuck of a step whose model spent its responses without ending it."""
    return GaveUp(f"the model used {calls} responses without finishing the step"
                 + (f"; its last words: {clip(last_words, 500)}" if last_words else ""))


def _chain_limit(exc: ValueError) -> bool:
    """Whether llm ended the chain at its chain_limit: llm 0.36 says so only in words, in a plain
    ValueError (`Chain limit of N exceeded.`); llm's words, not an answer of ours."""
    return str(exc).startswith("Chain limit of ")
