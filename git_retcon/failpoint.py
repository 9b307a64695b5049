"""Test hook: die at a named instant, as a power cut would."""
from __future__ import annotations

import os
import signal


def failpoint(name: str) -> None:
    """Test hook: die at a named instant, as a power cut would (RETCON_FAILPOINT)."""
    if os.environ.get("RETCON_FAILPOINT") == name:
        os.kill(os.getpid(), signal.SIGKILL)
