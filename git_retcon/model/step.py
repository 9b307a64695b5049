"""One model step: a tool-calling conversation that ends with create_commit or stuck.

Only llm's public API: model.conversation(chain_limit=...), chain(), responses(),
usage(). Every turn that ends with neither commit nor stuck gets a steering
message (a tool call written as text is answered "not executed"), carrying the
diagnosis of the step's failed tool calls; each such turn counts against the
step's error budget, and past it the step counts as stuck with the model's last words.

Transient backend errors (rate limits, 5xx, timeouts, dropped connections) are
recognised by class names and status codes, so no backend package is imported;
the step is retried from its start with exponential backoff and jitter, a
bounded number of times, then ends as ModelUnavailable.
"""
from __future__ import annotations

import os
import random
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from string import Template

import llm

from git_retcon.errors import RetconError
from git_retcon.model import steering
from git_retcon.model.textcalls import written_calls
from git_retcon.model.tools import TOOL_NAMES, Outcome, Session

DEFAULT_CHAIN_LIMIT = 40
MODEL_ATTEMPTS = 6          # tries of one step when the backend keeps failing transiently
RETRY_DELAY = 2.0           # seconds before the first retry, doubled each time ($RETCON_RETRY_DELAY)
MAX_DELAY = 60.0

# Exception classes of common backends (openai, anthropic, httpx, requests, aiohttp,
# google-api-core, ...) and the builtins, by name: any class in the MRO may match.
_TRANSIENT_NAMES = frozenset({
    "RateLimitError", "APITimeoutError", "APIConnectionError", "InternalServerError", "OverloadedError",
    "ServiceUnavailableError", "ServiceUnavailable", "TooManyRequests", "ResourceExhausted",
    "DeadlineExceeded", "GatewayTimeout", "BadGateway", "Timeout", "TimeoutException", "ConnectTimeout",
    "ReadTimeout", "WriteTimeout", "PoolTimeout", "ConnectError", "ReadError", "WriteError",
    "RemoteProtocolError", "NetworkError", "ServerDisconnectedError", "ClientConnectionError",
    "ChunkedEncodingError", "IncompleteRead", "ConnectionError", "TimeoutError",
})
_TRANSIENT_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504, 520, 521, 522, 524, 529})
_TRANSIENT_WORDS = re.compile(r"rate.?limit|overloaded|timed? ?out|temporar|unavailable|try again|"
                              r"connection (?:reset|refused|aborted|error)|\b(?:429|5\d\d)\b", re.I)


def template(name: str) -> Template:
    """A prompt template shipped in the wheel (prompts/, as git_retcon.prompts)."""
    return Template(resources.files("git_retcon.prompts").joinpath(name).read_text("utf-8"))


class ModelUnavailable(RetconError):
    """The backend failed transiently on every try: the step was not done."""


@dataclass
class StepResult:
    outcome: Outcome
    input_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0
    retries: int = 0


def _status(exc: BaseException) -> int | None:
    for holder in (exc, getattr(exc, "response", None)):
        for attr in ("status_code", "status", "code", "http_status"):
            value = getattr(holder, attr, None)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
    return None


def transient(exc: BaseException) -> bool:
    """Worth retrying: a rate limit, a 5xx, a timeout or a dropped connection."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:   # also what it was raised from
        seen.add(id(cur))
        if {t.__name__ for t in type(cur).__mro__} & _TRANSIENT_NAMES:
            return True
        if _status(cur) in _TRANSIENT_STATUS:
            return True
        if isinstance(cur, llm.ModelError) and not isinstance(cur, llm.NeedsKeyException) \
                and _TRANSIENT_WORDS.search(str(cur)):
            return True
        cur = cur.__cause__ or cur.__context__
    return False


def describe(exc: BaseException) -> str:
    detail = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {detail[0][:300] if detail else 'no message'}"


def retry_delay() -> float:
    try:
        return max(float(os.environ.get("RETCON_RETRY_DELAY", RETRY_DELAY)), 0.0)
    except ValueError:
        return RETRY_DELAY


def run_step(model: llm.Model, system: str, prompt: str, steer: str, session: Session,
             chain_limit: int = DEFAULT_CHAIN_LIMIT, over_budget: Callable[[int], bool] | None = None,
             on_retry: Callable[[str, int, float], None] | None = None) -> StepResult:
    """over_budget(tokens this step) says when to stop for the token budget;
    on_retry(error, attempt, seconds) is told before each backoff sleep."""
    result = StepResult(Outcome("stuck", ""))
    base = retry_delay()
    for attempt in range(1, MODEL_ATTEMPTS + 1):
        try:
            return _converse(model, system, prompt, steer, session, chain_limit, result, over_budget)
        except RetconError:
            raise
        except Exception as exc:  # noqa: BLE001 - a backend's own errors (HTTP, rate limits, ...)
            if not transient(exc):
                raise RetconError(
                    f"model '{model.model_id}' failed: {describe(exc)}: nothing was recorded for this step; "
                    "run again") from None
            if attempt == MODEL_ATTEMPTS:
                raise ModelUnavailable(
                    f"model '{model.model_id}' kept failing ({MODEL_ATTEMPTS} tries with backoff); "
                    f"last error: {describe(exc)}") from None
            wait = min(base * 2 ** (attempt - 1), MAX_DELAY)
            wait = random.uniform(wait / 2, wait)   # jitter: parallel runs do not retry in step
            if on_retry is not None:
                on_retry(describe(exc), attempt, wait)
            time.sleep(wait)
            result.retries += 1
            session.restart()
    raise AssertionError("unreachable")


def _converse(model: llm.Model, system: str, prompt: str, steer: str, session: Session,
              chain_limit: int, result: StepResult,
              over_budget: Callable[[int], bool] | None) -> StepResult:
    conv = model.conversation(
        tools=session.tools(), chain_limit=chain_limit,
        before_call=session.before_call, after_call=session.after_call,
    )
    last_words = ""
    spent = False
    text = prompt
    while True:
        chain = conv.chain(text, system=system)
        final = ""    # the text of the turn's last response: the one without tool calls
        try:
            for response in chain.responses():
                # The tool call that ended the step ran while this response was
                # being set up; it has not been sent yet, so no tokens are spent.
                if session.outcome is None and spent:
                    session.outcome = Outcome("budget", "the token budget was reached during this step")
                if session.outcome is not None:
                    break
                final = response.text()
                if final.strip():
                    last_words = final.strip()
                usage = response.usage()
                result.calls += 1
                result.input_tokens += usage.input or 0
                result.output_tokens += usage.output or 0
                # The calls of this response still run (it may have committed); the next is not sent.
                spent = over_budget is not None and over_budget(result.input_tokens + result.output_tokens)
            if session.outcome is None and spent:
                session.outcome = Outcome("budget", "the token budget was reached during this step")
        except ValueError as exc:
            if "Chain limit" not in str(exc):
                raise
            if session.outcome is None:
                session.outcome = Outcome(
                    "stuck", f"the model used {chain_limit} responses without finishing the step"
                    + (f"; its last words: {last_words[:500]}" if last_words else ""))
        except llm.NeedsKeyException as exc:
            raise RetconError(f"model '{model.model_id}' needs an API key ({exc}): "
                              "set one with `llm keys set ...`") from None
        if session.outcome is not None:
            result.outcome = session.outcome
            return result
        # The turn ended with neither create_commit nor stuck: steer, within the error budget.
        text = _steering(session, steer, final)
        if session.budget_left() <= 0:
            result.outcome = Outcome(
                "stuck", "the model ended its turn without create_commit or stuck "
                f"({len(session.errors)} failed calls and turns in this step)"
                + (f"; its last words: {last_words[:1000]}" if last_words else ""))
            return result


def _steering(session: Session, steer: str, words: str) -> str:
    """The next user message after a turn without a tool call, counted as a failure."""
    written = written_calls(words, TOOL_NAMES)
    if written:
        session.turn_failed("your reply", f"wrote {', '.join(written)} as text; it was not executed", "tool")
        return steering.not_executed(written) + f"\n({session.budget_left()} more failures end this step as stuck.)"
    diagnosis = session.diagnosis()
    session.turn_failed("your turn", "ended without create_commit or stuck", "turn")
    return steer + ("\n\n" + diagnosis if diagnosis else "") \
        + f"\n({session.budget_left()} more turns or failed calls end this step as stuck.)"
