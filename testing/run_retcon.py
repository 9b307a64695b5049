"""`python -m testing.run_retcon ARGS`: git-retcon with the scripted test models
registered through llm's plugin manager, for tests that run it as a subprocess
(to kill it at any instant)."""
from testing.scripted_model import register

register()

from git_retcon.cli import main  # noqa: E402

main()
