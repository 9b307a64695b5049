"""A step's tools (model/tools.Tools) as llm tools: its ten methods, named as the prompts name them, with their
arguments checked and coerced as models send them (model/args.py), and git-retcon's own
failures inside a tool (Halt) kept apart from the model's mistakes.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import llm

from git_retcon.errors import RetconError, machine_error
from git_retcon.model.args import bind
from git_retcon.model.session import Session
from git_retcon.model.tools import TOOL_NAMES, Tools


def tool_defs(session: Session) -> list[llm.Tool]:
    """The llm Tool objects, named exactly as documented (a model's prompts name them)."""
    tools = Tools(session)
    fns: list[Callable[..., object]] = [getattr(tools, name) for name in TOOL_NAMES]
    out: list[llm.Tool] = []
    for fn in fns:
        # Building the JSON schema from the signature is slow: do it once per process.
        if fn.__name__ not in _SCHEMAS:
            made = llm.Tool.function(fn, name=fn.__name__)  # type: ignore[no-untyped-call]  # unannotated in llm
            _SCHEMAS[fn.__name__] = (made.description, made.input_schema)
        description, schema = _SCHEMAS[fn.__name__]
        out.append(llm.Tool(name=fn.__name__, description=description, input_schema=schema,
                            implementation=_checked(fn.__name__, fn)))
    return out


class Halt(llm.PauseChain):
    """git-retcon's own failure inside a tool (a ref or note it could not write, a full disk):
    not the model's mistake, so it stops the chain (llm passes PauseChain through) and the
    step raises `error` instead of answering the model."""

    def __init__(self, error: RetconError):
        super().__init__(str(error))
        self.error = error


def _checked(name: str, fn: Callable[..., object]) -> Callable[..., object]:
    """fn called with arguments as models send them: checked, coerced, and the way
    they were read said in the answer."""
    def call(**given: Any) -> object:
        args, notes = bind(name, fn, given)
        try:
            answer = fn(**args)
        except RetconError as exc:
            raise Halt(exc) from exc
        except Exception as exc:
            machine = machine_error(exc)
            if machine is None:
                raise     # the model's mistake: llm answers it with the error
            raise Halt(machine) from exc
        return (" ".join(notes) + " " + answer) if notes and isinstance(answer, str) else answer
    call.__name__ = name
    return call


# Process-wide: every step's Session has the same ten tools (name -> description, schema).
_SCHEMAS: dict[str, tuple[str | None, dict[str, Any]]] = {}
