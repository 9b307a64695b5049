"""`python -m testing.run_retcon ARGS`: git-retcon with the scripted test models
(and their flaky-backend variants) registered through llm's plugin manager, for
tests that run it as a subprocess (to kill it at any instant, or on a terminal)."""
from testing import flaky_model, owners_model
from testing.scripted_model import register

register()
flaky_model.register()
owners_model.register()

from git_retcon.cli import main  # noqa: E402

main()
