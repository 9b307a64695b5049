"""The cleaned branch: the branches a run reads, resolved once, and the ownership checks
before it is touched (git.ownership.move_branch is the one place it moves)."""
from __future__ import annotations

import pygit2

from git_retcon.git import ownership
from git_retcon.git.ids import CommitId, TreeId, commit_id, tree_of
from git_retcon.git.plumbing import fork_point, full_sha, ref_target
from git_retcon.state import spec as specmod


class Branches:
    """source, remote, base and the cleaned branch, resolved once per run."""

    def __init__(self, repo: pygit2.Repository, spec: specmod.Spec):
        fork = fork_point(repo, spec.source, spec.remote,
                          "check that `remote` is the branch the source was started from")
        self.source = fork.source
        self.remote = fork.remote
        self.base: CommitId = commit_id(fork.base)
        self.source_tree: TreeId = tree_of(self.source)
        self.cleaned_ref = f"refs/heads/{spec.cleaned}"
        self.cleaned_tip: CommitId | None = ref_target(repo, self.cleaned_ref)


def recorded(repo: pygit2.Repository, spec: specmod.Spec) -> list[CommitId]:
    """The commits the spec records on the cleaned branch, in full, oldest first."""
    return [full_sha(repo, sha) for c in spec.commits for sha in c.created]


def refuse_foreign(repo: pygit2.Repository, name: str, spec: specmod.Spec, br: Branches) -> None:
    """The cleaned branch exists but git-retcon did not make it: refuse to touch it."""
    why = ownership.foreign(repo, name, spec.cleaned, br.base, recorded(repo, spec),
                            any(c.history for c in spec.commits), (str(br.source.id), str(br.remote.id)))
    if why:
        raise ownership.NotOurs(
            f"{why}: git-retcon moves only branches it made; choose another `cleaned` name "
            f"(a new spec: git retcon spec export, change `cleaned`, git retcon spec import), "
            f"or delete that branch if you do not need it")


def refuse_taken(repo: pygit2.Repository, spec: specmod.Spec) -> None:
    """A cleaned branch still to be made: its name was free when the spec was saved, but
    a ref made since (or an older version's save) may stand in the way now."""
    if ownership.branch_tip(repo, spec.cleaned) is not None:
        return
    taken = ownership.name_problem(spec.cleaned) or ownership.taken_problem(repo, spec.cleaned, spec.source,
                                                                            spec.remote)
    if taken:
        raise ownership.NotOurs(f"cannot create branch '{spec.cleaned}': {taken}: rename what is in the way, "
                                "or give the spec another `cleaned` name")
