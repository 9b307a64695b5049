"""`python -m git_retcon.cli`: the git-retcon command."""
from git_retcon.cli import main

main()
