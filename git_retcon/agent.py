"""One model step: a tool-calling conversation that ends with create_commit or stuck.

Only llm's public API: model.conversation(chain_limit=...), chain(), responses(),
usage(). A turn that ends with neither commit nor stuck gets one steering
message; after that the step counts as stuck with the model's last words.
"""
from __future__ import annotations

from dataclasses import dataclass

import llm

from .errors import RetconError
from .tools import Outcome, Session

DEFAULT_CHAIN_LIMIT = 40


@dataclass
class StepResult:
    outcome: Outcome
    input_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0


def run_step(model: llm.Model, system: str, prompt: str, steer: str, session: Session,
             chain_limit: int = DEFAULT_CHAIN_LIMIT) -> StepResult:
    conv = model.conversation(
        tools=session.tools(), chain_limit=chain_limit,
        before_call=session.before_call, after_call=session.after_call,
    )
    result = StepResult(Outcome("stuck", ""))
    last_words = ""
    for text in (prompt, steer):
        chain = conv.chain(text, system=system)
        try:
            for response in chain.responses():
                # The tool call that ended the step ran while this response was
                # being set up; it has not been sent yet, so no tokens are spent.
                if session.outcome is not None:
                    break
                words = response.text()
                if words.strip():
                    last_words = words.strip()
                usage = response.usage()
                result.calls += 1
                result.input_tokens += usage.input or 0
                result.output_tokens += usage.output or 0
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
        except RetconError:
            raise
        except Exception as exc:  # a backend's own errors (HTTP, rate limits, ...)
            detail = str(exc).strip().splitlines()
            raise RetconError(
                f"model '{model.model_id}' failed: {type(exc).__name__}: "
                f"{detail[0][:300] if detail else 'no message'}: nothing was recorded for this step; run again"
            ) from None
        if session.outcome is not None:
            result.outcome = session.outcome
            return result
    result.outcome = Outcome(
        "stuck", "the model ended its turn without create_commit or stuck"
        + (f"; its last words: {last_words[:1000]}" if last_words else ""))
    return result
