"""One failing verification, diagnosed: parsed, blamed, briefed and observed for escalation."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pygit2

from git_retcon import diff
from git_retcon.git.plumbing import get_tree
from git_retcon.rework.blame import Blame, blame
from git_retcon.rework.brief import Brief, brief
from git_retcon.rework.escalation import Observation, Phase, observe
from git_retcon.rework.parsed import Location, Parsed
from git_retcon.rework.parsers import parse


@dataclass(frozen=True)
class Failure:
    phase: Phase                # build, test, or tree (the last commit's tree differs from the source)
    headline: str               # e.g. "Test failed: `pytest -q` (exit 1)"
    output: str = ""            # the command's output, trimmed
    paths: tuple[str, ...] = ()  # for a tree failure: the paths that still differ

    @property
    def text(self) -> str:
        return self.headline + ("\n" + self.output if self.output else "")


@dataclass
class Diagnosis:
    failure: Failure
    parsed: Parsed
    blame: Blame
    brief: Brief
    obs: Observation
    fix_changed: set[str]       # the paths the failing commit changed on its parent


def _paths(repo: pygit2.Repository, tree: str) -> list[str]:
    index = pygit2.Index()
    index.read_tree(get_tree(repo, tree))
    return [e.path for e in index]


def _reader(repo: pygit2.Repository, tree: str) -> Callable[[str], bytes | None]:
    """A file of tree, None when it has none there (or it is not a file)."""
    root = get_tree(repo, tree)

    def read(path: str) -> bytes | None:
        try:
            obj = repo[root[path].id]
        except (KeyError, ValueError):
            return None
        return obj.data if isinstance(obj, pygit2.Blob) else None
    return read


def diagnose(repo: pygit2.Repository, failure: Failure, *, base_tree: str, tree: str, parent_tree: str,
             source_tree: str, root: str, attempts: dict[str, int]) -> Diagnosis:
    """Parse, blame and brief one failure of `tree`; base_tree is the tree before this
    logical commit, parent_tree the tree the failing commit was made on."""
    commit_hunks = diff.remaining(repo, base_tree, tree)
    remaining = diff.remaining(repo, tree, source_tree)
    if failure.phase == "tree":
        parsed = Parsed(locations=[Location(p) for p in failure.paths])
    else:
        parsed = parse(failure.output, root)
    b = blame(parsed, commit_hunks, remaining, _paths(repo, tree), _reader(repo, tree))
    fixed = diff.remaining(repo, parent_tree, tree)
    fix_changed = {h.path for h in fixed} | {h.old_path for h in fixed if h.old_path}
    return Diagnosis(failure, parsed, b, brief(failure.headline, failure.output, parsed, b, attempts),
                     observe(failure.phase, failure.output, parsed, b, [h.id for h in remaining]), fix_changed)
