from __future__ import annotations

import pytest


@pytest.fixture
def truth_model(tmp_path, monkeypatch):
    """owners-truth registered (testing/truth_model.py); returns the log of what it was asked."""
    from testing import truth_model

    truth_model.register()
    log = tmp_path / "truth-log.jsonl"
    monkeypatch.setenv("RETCON_SCRIPT_LOG", str(log))
    yield log
    truth_model.unregister()
