"""Test hook: die at a named instant, as a power cut would."""
from __future__ import annotations

import os
import signal

_passed: dict[str, int] = {}


def failpoint(name: str) -> None:
    """Test hook: die at a named instant, as a power cut would (RETCON_FAILPOINT=name, or
    name@N to die the N-th time this process passes it)."""
    want, _, nth = os.environ.get("RETCON_FAILPOINT", "").partition("@")
    if want != name:
        return
    _passed[name] = _passed.get(name, 0) + 1
    if _passed[name] >= int(nth or 1):
        os.kill(os.getpid(), signal.SIGKILL)
