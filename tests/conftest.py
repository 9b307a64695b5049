from __future__ import annotations

import os
from pathlib import Path

import pytest

from testing.gitrepo import GitRepo, hermetic_env


@pytest.fixture(autouse=True)
def hermetic(tmp_path_factory, monkeypatch) -> Path:
    """Every test runs with a temp HOME, fixed identities and dates, no user git config."""
    home = tmp_path_factory.mktemp("home")
    for key, value in hermetic_env(home).items():
        monkeypatch.setenv(key, value)
    for key in list(os.environ):
        if key.startswith(("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE")):
            monkeypatch.delenv(key, raising=False)
    return home


@pytest.fixture
def repo(tmp_path) -> GitRepo:
    return GitRepo.init(tmp_path / "repo")


@pytest.fixture
def scripted(tmp_path, monkeypatch):
    """Register the scripted llm model; returns a function that installs a script."""
    from testing import scripted_model
    from testing.flow import write_script

    scripted_model.register()
    log = tmp_path / "model-log.jsonl"
    monkeypatch.setenv("RETCON_SCRIPT_LOG", str(log))

    def install(script: dict) -> Path:
        path = write_script(tmp_path / "script.json", script)
        monkeypatch.setenv("RETCON_SCRIPT", str(path))
        return log

    yield install
    scripted_model.unregister()


@pytest.fixture
def owners_models(tmp_path, monkeypatch):
    """The owners' test models registered; returns the log of the questions they were asked."""
    from testing import owners_model

    owners_model.register()
    log = tmp_path / "owners-log.jsonl"
    monkeypatch.setenv("RETCON_SCRIPT_LOG", str(log))
    yield log
    owners_model.unregister()
