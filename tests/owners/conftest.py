from __future__ import annotations

import pytest


@pytest.fixture
def owners_models(tmp_path, monkeypatch):
    """The owners' test models registered; returns the log of the questions they were asked."""
    from testing import owners_model

    owners_model.register()
    log = tmp_path / "owners-log.jsonl"
    monkeypatch.setenv("RETCON_SCRIPT_LOG", str(log))
    yield log
    owners_model.unregister()


@pytest.fixture
def truth_model(tmp_path, monkeypatch):
    """owners-truth registered (testing/truth_model.py); returns the log of what it was asked."""
    from testing import truth_model

    truth_model.register()
    log = tmp_path / "truth-log.jsonl"
    monkeypatch.setenv("RETCON_SCRIPT_LOG", str(log))
    yield log
    truth_model.unregister()
