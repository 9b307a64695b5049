"""The build worktree (lifecycle, confinement, git's filters), the --jobs pool, and the
build/test runner with its records (ARCHITECTURE.md, "The rooms").

Named `sandbox`, not `build`: tools take a folder named build for generated output
(pytest does not collect tests/build, the common Python .gitignore template ignores
every build/ folder), and this one is source.
"""
