"""`python -m bench._truth_run`: `git retcon run -m owners-truth` in the current folder, with whatever
git-retcon PYTHONPATH puts first (bench/truth.py runs it with the code before and after)."""
from __future__ import annotations

import sys

from testing import truth_model

truth_model.register()

from git_retcon.cli import main  # noqa: E402  (after the model is registered, as llm loads plugins)

main(["run", "-m", "owners-truth", *sys.argv[1:]])
