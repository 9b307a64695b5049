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
