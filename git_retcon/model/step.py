"""One model step: a tool-calling conversation that ends with create_commit or stuck.

Only llm's public API: model.conversation(chain_limit=...), chain(), responses(),
usage(). Every turn that ends with neither commit nor stuck gets a steering
message (a tool call written as text is answered "not executed"), carrying the
diagnosis of the step's failed tool calls; each such turn counts against the
step's error budget, and past it the step counts as stuck with the model's last words.

Backend errors are retried from the step's start by model/retry.py's policy,
the one plan's questions use too. git-retcon's own failures inside a tool are
raised to the caller as they are: no model can fix them.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import llm

from git_retcon.model import steering
from git_retcon.model.logs import ExchangeLog
from git_retcon.model.outcome import OverBudget, StepOutcome, Stuck
from git_retcon.model.retry import ModelUnavailable as ModelUnavailable  # what the loop catches
from git_retcon.model.retry import Retry
from git_retcon.model.textcalls import written_calls
from git_retcon.model.tools import TOOL_NAMES, Halt, Session

DEFAULT_CHAIN_LIMIT = 40


@dataclass
class StepResult:
    """What a step made or why it ended, and what it cost."""

    outcome: StepOutcome
    input_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0
    retries: int = 0
    seconds: float = 0.0      # the step's wall time: the model's turns and the tools they called


def run_step(model: llm.Model, system: str, prompt: str, steer: str, session: Session,
             chain_limit: int = DEFAULT_CHAIN_LIMIT, over_budget: Callable[[int], bool] | None = None,
             on_retry: Callable[[str, int, float], None] | None = None,
             log: ExchangeLog | None = None) -> StepResult:
    """over_budget(tokens this step) says when to stop for the token budget;
    on_retry(error, attempt, seconds) is told before each backoff sleep;
    log records each exchange for `llm logs`."""
    result = StepResult(Stuck(""))
    retry = Retry(model.model_id, "nothing was recorded for this step", on_retry=on_retry)
    started = time.monotonic()
    try:
        return retry.call(lambda: _converse(model, system, prompt, steer, session, chain_limit, result, over_budget,
                                            log), restart=session.restart)
    finally:
        result.retries = retry.retries
        result.seconds = time.monotonic() - started


def _converse(model: llm.Model, system: str, prompt: str, steer: str, session: Session,
              chain_limit: int, result: StepResult,
              over_budget: Callable[[int], bool] | None, log: ExchangeLog | None) -> StepResult:
    conv = model.conversation(
        tools=session.tools(), chain_limit=chain_limit,
        before_call=session.steering.before_call, after_call=session.steering.after_call,
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
                    session.outcome = OverBudget()
                if session.outcome is not None:
                    break
                final = response.text()
                if final.strip():
                    last_words = final.strip()
                usage = response.usage()
                if log is not None:
                    log.record(response)
                result.calls += 1
                result.input_tokens += usage.input or 0
                result.output_tokens += usage.output or 0
                # The calls of this response still run (it may have committed); the next is not sent.
                spent = over_budget is not None and over_budget(result.input_tokens + result.output_tokens)
            if session.outcome is None and spent:
                session.outcome = OverBudget()
        except Halt as exc:
            raise exc.error from None   # git-retcon's own failure: the run stops with it
        except ValueError as exc:
            if "Chain limit" not in str(exc):
                raise
            if session.outcome is None:
                session.outcome = Stuck(
                    f"the model used {chain_limit} responses without finishing the step"
                    + (f"; its last words: {last_words[:500]}" if last_words else ""))
        if session.outcome is not None:
            result.outcome = session.outcome
            return result
        # The turn ended with neither create_commit nor stuck: steer, within the error budget.
        text = _steering(session, steer, final)
        if session.steering.budget_left() <= 0:
            result.outcome = Stuck(
                "the model ended its turn without create_commit or stuck "
                f"({len(session.steering.errors)} failed calls and turns in this step)"
                + (f"; its last words: {last_words[:1000]}" if last_words else ""))
            return result


def _steering(session: Session, steer: str, words: str) -> str:
    """The next user message after a turn without a tool call, counted as a failure."""
    budget = session.steering
    written = written_calls(words, TOOL_NAMES)
    if written:
        budget.turn_failed("your reply", f"wrote {', '.join(written)} as text; it was not executed", "tool")
        return steering.not_executed(written) + f"\n({budget.budget_left()} more failures end this step as stuck.)"
    diagnosis = budget.diagnosis()
    budget.turn_failed("your turn", "ended without create_commit or stuck", "turn")
    return steer + ("\n\n" + diagnosis if diagnosis else "") \
        + f"\n({budget.budget_left()} more turns or failed calls end this step as stuck.)"
