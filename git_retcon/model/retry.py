"""One retry policy for every wait on a model: run's steps and plan's questions.

Transient backend errors (rate limits, 5xx, timeouts, dropped connections) are
recognised by class names and status codes, so no backend package is imported;
they are retried with exponential backoff and jitter, a bounded number of times.
A connection that cannot be made at all (the host does not resolve, the port
refuses) is not transient: it fails at once, with its cause.
"""
from __future__ import annotations

import errno
import math
import os
import random
import re
import socket
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TypeVar

import llm

from git_retcon.errors import RetconError

T = TypeVar("T")

MODEL_ATTEMPTS = 6          # tries of one call when the backend keeps failing transiently
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
# What resolvers and sockets say when a connection cannot be made (glibc, macOS, Windows).
_UNREACHABLE_WORDS = re.compile(
    r"name or service not known|nodename nor servname|temporary failure in name resolution|"
    r"no address associated with hostname|getaddrinfo failed|name resolution|could not resolve|"
    r"failed to resolve|connection refused|actively refused|errno (?:-2|-3|-5|8|11001|111|61|10061)\b", re.I)
_UNREACHABLE_ERRNOS = frozenset({errno.ECONNREFUSED, errno.EHOSTUNREACH, errno.ENETUNREACH})


class ModelUnavailable(RetconError):
    """The backend failed transiently on every try: the call was not done."""


class ModelUnreachable(RetconError):
    """No connection to the backend could be made: retrying would only wait."""


def _chain(exc: BaseException, implicit: bool = True) -> Iterator[BaseException]:
    """exc and what it was raised from (or, implicit, during), outermost first."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        yield cur
        cur = cur.__cause__ or (cur.__context__ if implicit else None)


def _status(exc: BaseException) -> int | None:
    for holder in (exc, getattr(exc, "response", None)):
        for attr in ("status_code", "status", "code", "http_status"):
            value = getattr(holder, attr, None)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
    return None


def transient(exc: BaseException) -> bool:
    """Worth retrying: a rate limit, a 5xx, a timeout or a dropped connection."""
    for cur in _chain(exc):
        if {t.__name__ for t in type(cur).__mro__} & _TRANSIENT_NAMES:
            return True
        if _status(cur) in _TRANSIENT_STATUS:
            return True
        if isinstance(cur, llm.ModelError) and not isinstance(cur, llm.NeedsKeyException) \
                and _TRANSIENT_WORDS.search(str(cur)):
            return True
    return False


def unreachable(exc: BaseException) -> BaseException | None:
    """The error in exc's chain that says no connection could be made, if any."""
    for cur in _chain(exc):
        if isinstance(cur, (socket.gaierror, ConnectionRefusedError)):
            return cur
        if isinstance(cur, OSError) and cur.errno in _UNREACHABLE_ERRNOS:
            return cur
        if _UNREACHABLE_WORDS.search(str(cur)) and not _status(cur):
            return cur
    return None


def _one(exc: BaseException) -> str:
    detail = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {detail[0][:300] if detail else 'no message'}"


def describe(exc: BaseException) -> str:
    """The error in one line, with its root cause when that says more
    (`APIConnectionError: Connection error.` alone hides that the host did not resolve)."""
    chain = list(_chain(exc, implicit=False))
    text = _one(exc)
    root = next((c for c in reversed(chain[1:]) if str(c).strip() and str(c).strip() not in text), None)
    return text + (f" (cause: {_one(root)})" if root is not None else "")


def retry_delay() -> float:
    """$RETCON_RETRY_DELAY; anything but a finite number (nan would crash time.sleep) is the default."""
    try:
        value = float(os.environ.get("RETCON_RETRY_DELAY", RETRY_DELAY))
    except ValueError:
        return RETRY_DELAY
    return max(value, 0.0) if math.isfinite(value) else RETRY_DELAY


def retry_line(error: str, attempt: int, seconds: float) -> str:
    """What the user is shown before a retry."""
    return f"Model error ({error}); retrying in {seconds:.1f}s (try {attempt + 1})"


def retry_reporter(say: Callable[[str], None], tail: Callable[[str], None]) -> Callable[[str, int, float], None]:
    """on_retry for a step: the retry's line in the output, and what the live line shows."""
    def report(error: str, attempt: int, seconds: float) -> None:
        say(retry_line(error, attempt, seconds))
        tail(f"retry {attempt + 1} in {seconds:.1f}s after {error.split(':')[0]}")
    return report


@dataclass
class Retry:
    """Call a model until it answers, the same way for run and plan."""

    model_id: str
    lost: str                                      # what the error says was lost, e.g. "nothing was saved"
    attempts: int = MODEL_ATTEMPTS
    base: float = field(default_factory=retry_delay)
    on_retry: Callable[[str, int, float], None] | None = None   # (error, attempt, seconds) before a sleep
    retries: int = 0                               # retries made so far

    def call(self, fn: Callable[[], T], restart: Callable[[], None] | None = None) -> T:
        """fn's result; restart() runs before each retry (to undo what the failed try did)."""
        for attempt in range(1, self.attempts + 1):
            try:
                return fn()
            except RetconError:
                raise
            except llm.NeedsKeyException as exc:
                raise RetconError(f"model '{self.model_id}' needs an API key ({exc}): "
                                  "set one with `llm keys set ...`") from None
            except Exception as exc:  # noqa: BLE001 - a backend's own errors (HTTP, rate limits, ...)
                cause = unreachable(exc)
                if cause is not None:
                    raise ModelUnreachable(
                        f"model '{self.model_id}' cannot be reached: {describe(exc)}: check the network "
                        f"and the backend's address (proxy, base URL); {self.lost}") from None
                if not transient(exc):
                    raise RetconError(f"model '{self.model_id}' failed: {describe(exc)}: {self.lost}; "
                                      "run again") from None
                if attempt == self.attempts:
                    raise ModelUnavailable(
                        f"model '{self.model_id}' kept failing ({self.attempts} tries with backoff); "
                        f"last error: {describe(exc)}") from None
                wait = min(self.base * 2 ** (attempt - 1), MAX_DELAY)
                wait = random.uniform(wait / 2, wait)   # jitter: parallel callers do not retry in step
                if self.on_retry is not None:
                    self.on_retry(describe(exc), attempt, wait)
                time.sleep(wait)
                self.retries += 1
                if restart is not None:
                    restart()
        raise AssertionError("unreachable")
