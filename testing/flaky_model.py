"""Scripted models whose backend misbehaves, registered through llm's plugin manager
the way testing/scripted_model.py is.

- `scripted-flaky` plays the $RETCON_SCRIPT script, but the model calls numbered in
  $RETCON_FLAKY_FAIL (e.g. "1,2"; counted across processes in the file
  $RETCON_FLAKY_COUNT) raise a rate-limit error, as an HTTP backend does on 429
  (or a status error with the code in $RETCON_FLAKY_STATUS, e.g. 400; or, with
  $RETCON_FLAKY_CONNECT = dns | refused | reset, the connection error an HTTP client
  raises when the host does not resolve, the port refuses, or the peer drops it).
- `scripted-down` always raises a 503 status error.
- `scripted-listen` plays the script and appends every user message it was sent
  (prompts and steering messages) to $RETCON_USER_LOG, one JSON string a line.

The exception classes are named like the real backends' (openai, anthropic), so
git-retcon must recognise them by name and status code, without importing them.
"""
from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import llm
from llm.parts import TextPart

from testing.scripted_model import ModelPlugin, ScriptedModel


class RateLimitError(Exception):
    """Named like openai.RateLimitError / anthropic.RateLimitError."""

    status_code = 429


class APIStatusError(Exception):
    """Named like openai.APIStatusError: the HTTP status is an attribute."""

    def __init__(self, message: str, status_code: int):
        super().__init__(message)
        self.status_code = status_code


class ConnectError(Exception):
    """Named like httpx.ConnectError, which openai wraps."""


class APIConnectionError(Exception):
    """Named like openai.APIConnectionError: `Connection error.`, the cause only in __cause__."""


def connection_error(kind: str) -> Exception:
    """What openai raises through httpx: the OS error two causes down."""
    os_error: OSError = {
        "dns": socket.gaierror(-2, "Name or service not known"),
        "refused": ConnectionRefusedError(111, "Connection refused"),
        "reset": ConnectionResetError(104, "Connection reset by peer"),
    }[kind]
    try:
        try:
            raise os_error
        except OSError as exc:
            raise ConnectError(str(exc)) from exc
    except ConnectError as exc:
        try:
            raise APIConnectionError("Connection error.") from exc
        except APIConnectionError as outer:
            return outer


def _count() -> int:
    path = Path(os.environ["RETCON_FLAKY_COUNT"])
    n = int(path.read_text() or 0) + 1 if path.exists() else 1
    path.write_text(str(n))
    return n


class FlakyModel(ScriptedModel):
    model_id = "scripted-flaky"

    def execute(self, prompt: llm.Prompt, stream: bool, response: llm.Response,
                conversation: llm.Conversation | None) -> Iterator[str]:
        fail = {int(x) for x in os.environ.get("RETCON_FLAKY_FAIL", "").split(",") if x.strip()}
        if _count() in fail:
            if os.environ.get("RETCON_FLAKY_CONNECT"):
                raise connection_error(os.environ["RETCON_FLAKY_CONNECT"])
            status = int(os.environ.get("RETCON_FLAKY_STATUS", "429"))
            if status == 429:
                raise RateLimitError("Error code: 429 - Rate limit reached for requests")
            raise APIStatusError(f"Error code: {status} - the backend refused the request", status)
        yield from super().execute(prompt, stream, response, conversation)


class DownModel(ScriptedModel):
    model_id = "scripted-down"

    def execute(self, prompt: llm.Prompt, stream: bool, response: llm.Response,
                conversation: llm.Conversation | None) -> Iterator[str]:
        _count()
        raise APIStatusError("Error code: 503 - upstream connect error", 503)
        yield ""  # a generator, like every llm model


class ListeningModel(ScriptedModel):
    model_id = "scripted-listen"

    def execute(self, prompt: llm.Prompt, stream: bool, response: llm.Response,
                conversation: llm.Conversation | None) -> Iterator[str]:
        with open(os.environ["RETCON_USER_LOG"], "a") as f:
            for m in prompt.messages:
                if m.role == "user":
                    f.write(json.dumps("".join(p.text for p in m.parts if isinstance(p, TextPart))) + "\n")
        yield from super().execute(prompt, stream, response, conversation)


PLUGIN = ModelPlugin("retcon-flaky", FlakyModel(), DownModel(), ListeningModel())
register = PLUGIN.register
unregister = PLUGIN.unregister
