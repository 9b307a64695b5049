"""Object ids by what they name. At run time they are the 40 hex digits git prints; the
types keep a tree id from being passed where a commit is meant (a build result is keyed by
tree, a branch moves to a commit, the spec's chain is commits of its own)."""
from __future__ import annotations

from typing import NewType

import pygit2

CommitId = NewType("CommitId", str)      # a commit of the user's history or of a cleaned branch
TreeId = NewType("TreeId", str)          # a tree: what build and test results are keyed by
SpecCommitId = NewType("SpecCommitId", str)   # a commit of a spec's chain (refs/retcon/<name>)


def commit_id(commit: pygit2.Commit) -> CommitId:
    return CommitId(str(commit.id))


def tree_of(commit: pygit2.Commit) -> TreeId:
    return TreeId(str(commit.tree_id))
