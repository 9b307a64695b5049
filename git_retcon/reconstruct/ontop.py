"""Commits a person added on top of a finished clean history: a reviewer's fix made on the branch
that was pushed. Day two, not drift: no run takes them back out to end on the source's tree.

The fix belongs in the logical commit it mends, and the source must hold it too (the final tree
equals the source's, promise 2; the source is the person's to change, promise 1). So, while the
source lacks it, `run`, `absorb`, `status`, `check` and the pre-push hook all say one way forward:
put the commits on the source, then `git retcon absorb`. Once the source holds their changes,
`absorb` rebuilds from the recorded commits, placing the source's new changes where they belong,
and moves the branch from where the person left it (`git retcon undo` puts it back).
"""
from __future__ import annotations

from dataclasses import dataclass

import pygit2

from git_retcon.errors import RetconError
from git_retcon.git import ownership
from git_retcon.git.ids import CommitId
from git_retcon.git.plumbing import fork_point, full_sha, get_commit, short
from git_retcon.state import spec as specmod


@dataclass(frozen=True)
class OnTop:
    """The cleaned branch's commits past the recorded tip, some of them a person's."""

    name: str
    spec: specmod.Spec
    recorded: CommitId            # the recorded tip they sit on
    commits: list[CommitId]       # oldest first
    in_source: bool               # the source holds their changes already

    @property
    def tip(self) -> CommitId:
        return self.commits[-1]

    def steps(self) -> list[str]:
        """The commands that go on from here, in order."""
        spec = self.spec
        absorb = f"git retcon absorb {self.name}"
        if self.in_source:
            return [absorb]
        return [f"git switch {spec.source} && git cherry-pick {self.recorded[:12]}..{spec.cleaned}", absorb]

    def advice(self, repo: pygit2.Repository) -> str:
        spec, n = self.spec, len(self.commits)
        subject = (get_commit(repo, self.tip).message or "").splitlines()[0][:60] if self.commits else ""
        which = f"{n} commit{'s' if n != 1 else ''} on top of the clean history ({short(self.tip)} {subject})"
        it, belongs = ("them", "they belong") if n != 1 else ("it", "it belongs")
        if self.in_source:
            head = (f"'{spec.cleaned}' has {which}, which '{spec.source}' holds too: absorb {it} into the "
                    f"logical commits {belongs} to (the branch moves from there; `git retcon undo` puts it back):")
        else:
            head = (f"'{spec.cleaned}' has {which} that '{spec.source}' lacks: git-retcon never takes a person's "
                    f"fix back out to end on '{spec.source}''s tree. Put {it} on '{spec.source}' too, then absorb "
                    f"{it} into the logical commits {belongs} to:")
        return head + "".join(f"\n  {s}" for s in self.steps())


def find(repo: pygit2.Repository, spec: specmod.Spec, name: str) -> OnTop | None:
    """The commits past the recorded tip of a finished spec's branch, when a person made one of
    them and they change the tree (else None: a change made and taken back, or a run's own
    commits, which a run adopts as before)."""
    if spec.current() is not None or not spec.commits:
        return None
    try:
        fork = fork_point(repo, spec.source, spec.remote, "")
    except RetconError:
        return None
    made = [full_sha(repo, s) for c in spec.commits for s in c.created]
    chain = ownership.chain(repo, spec.cleaned, str(fork.base.id))
    if not made or not chain.on_base or chain.commits[: len(made)] != made or len(chain.commits) == len(made):
        return None
    extra, recorded = chain.commits[len(made):], made[-1]
    tip = get_commit(repo, extra[-1])
    if tip.tree_id == get_commit(repo, recorded).tree_id or all(ownership.made_by(repo, s, name) for s in extra):
        return None
    # The source holds their changes when merging them into it changes nothing.
    index = repo.merge_trees(get_commit(repo, recorded).tree, fork.source.tree, tip.tree)
    in_source = index.conflicts is None and index.write_tree(repo) == fork.source.tree_id
    return OnTop(name, spec, recorded, extra, in_source)


def refuse(repo: pygit2.Repository, spec: specmod.Spec, name: str) -> None:
    """`run` on a finished branch with a person's fix on top: the way forward, never a revert."""
    if (on := find(repo, spec, name)) is not None:
        raise RetconError(on.advice(repo))
