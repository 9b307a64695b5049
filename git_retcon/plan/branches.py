"""The branches a spec names: the current one, the one the source merges into, the source's own commits."""
from __future__ import annotations

from collections.abc import Callable

import pygit2

from git_retcon.errors import RetconError
from git_retcon.git import ownership
from git_retcon.git.plumbing import fork_point, full_sha
from git_retcon.state import spec as specmod


def current_branch(repo: pygit2.Repository) -> str | None:
    if repo.head_is_detached or repo.head_is_unborn:
        return None
    return repo.head.shorthand


def default_remote(repo: pygit2.Repository, source: str, say: Callable[[str], None] | None = None) -> str:
    """The source's upstream, else origin/HEAD, else main or master. An upstream that is
    the source's own copy on its remote (after `git push -u`) is not where it merges: then
    that remote's default branch, said through `say`."""
    remote = "origin"
    try:
        branch = repo.branches.local[source]
        up = branch.upstream
        if up is not None:
            remote = up.remote_name
            if up.shorthand != f"{remote}/{source}":
                return str(up.shorthand)
            chosen = _default_branch(repo, remote, source)
            if say is not None:
                say(f"'{source}' tracks '{up.shorthand}', its own copy on {remote}: onto '{chosen}', "
                    f"{remote}'s default branch (choose another with --onto)")
            return chosen
    except (KeyError, pygit2.GitError):
        pass
    return _default_branch(repo, remote, source)


def _default_branch(repo: pygit2.Repository, remote: str, source: str) -> str:
    ref = repo.references.get(f"refs/remotes/{remote}/HEAD")
    if ref is not None:
        return str(ref.resolve().shorthand)
    for name in (f"{remote}/main", f"{remote}/master", "main", "master"):
        if name != source and repo.references.get(
                f"refs/remotes/{name}" if "/" in name else f"refs/heads/{name}") is not None:
            return name
    raise RetconError("cannot tell which branch the source will merge into: pass --onto BRANCH")


ONTO_FIX = "pick the branch the source was started from with --onto"


def check_branches(repo: pygit2.Repository, spec: specmod.Spec) -> None:
    """Bad branches are refused before a spec is saved: a source or remote that does not
    resolve, and a `cleaned` name git refuses, that collides with another ref, or that
    names a branch git-retcon did not make (ARCHITECTURE.md, "What git-retcon owns")."""
    check_cleaned_name(repo, spec.cleaned, spec.source, spec.remote)
    fork = fork_point(repo, spec.source, spec.remote, ONTO_FIX)
    recorded = [full_sha(repo, sha) for c in spec.commits for sha in c.created]
    why = ownership.foreign(repo, spec.cleaned, spec.cleaned, str(fork.base.id), recorded,
                            any(c.history for c in spec.commits), (str(fork.source.id), str(fork.remote.id)))
    if why:
        raise RetconError(f"'cleaned' = {spec.cleaned!r}: {why}: choose another name for the branch "
                          "git-retcon will build (nothing was saved)")


def check_cleaned_name(repo: pygit2.Repository, cleaned: str, source: str, remote: str) -> None:
    """The name alone, before anything costly (a model's proposal) is made for it."""
    ownership.check_name("cleaned", cleaned)
    taken = ownership.taken_problem(repo, cleaned, source, remote)
    if taken:
        raise RetconError(f"'cleaned' = {cleaned!r} cannot be used: {taken}: choose another name "
                          "(nothing was saved)")


def source_commits(repo: pygit2.Repository, source: str, remote: str) -> list[pygit2.Commit]:
    """The source's own commits, oldest first, along first parents."""
    fork = fork_point(repo, source, remote, ONTO_FIX)
    walker = repo.walk(fork.source.id, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)
    walker.simplify_first_parent()
    walker.hide(fork.base.id)
    return list(walker)
