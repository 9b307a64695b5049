"""Small helpers over pygit2 and the git binary: opening, resolving, CAS on refs."""
from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import pygit2

from git_retcon.errors import RetconError, machine_error
from git_retcon.git.ids import CommitId

# Variables git exports to hooks and aliases; inherited by our own git calls they
# would point those calls at the user's index or work tree instead of ours.
_GIT_LOCAL_VARS = (
    "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_PREFIX", "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_NAMESPACE",
)


# libgit2 refuses a repository with an extension it does not know. partialclone (older
# gits wrote it for `git clone --filter`) is one git-retcon can work with: git fetches
# what a partial clone lacks (_fetch_missing).
pygit2.option(pygit2.enums.Option.SET_EXTENSIONS, ["partialclone"], 1)


class ConcurrentUpdate(RetconError):
    """A compare-and-swap on a ref lost: someone else moved it."""


def clean_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _GIT_LOCAL_VARS}
    env.update(extra or {})
    return env


def git(cwd: Path | str, *args: str, check: bool = True, input: str | None = None) -> str:
    """Run the git binary in cwd; a failure is a RetconError carrying git's message."""
    proc = subprocess.run(
        ["git", *args], cwd=cwd, env=clean_env(), text=True, capture_output=True, input=input,
        errors="surrogateescape",   # a file name that is not UTF-8 comes back as Python names such files
    )
    if check and proc.returncode != 0:
        raise RetconError(f"git {_command(args)} failed: {_cause(proc.stderr, proc.returncode)}")
    return proc.stdout


def _command(args: tuple[str, ...]) -> str:
    """The subcommand's name, past any -c options."""
    rest = list(args)
    while len(rest) > 1 and rest[0] == "-c":
        rest = rest[2:]
    return rest[0] if rest else "git"


_LOCKED = re.compile(r"Unable to create '(?P<file>[^']+\.lock)': File exists")


def _cause(stderr: str, code: int) -> str:
    """The line of git's stderr that says what went wrong: its first fatal/error line
    (the advice after it never names the file), else its last line."""
    if m := _LOCKED.search(stderr):
        return (f"{m['file']} exists (a git command is running there, or one was killed): "
                "if none is running, remove that file and run again")
    lines = [ln.strip() for ln in stderr.strip().splitlines() if ln.strip()]
    first = next((ln for ln in lines if ln.startswith(("fatal:", "error:"))), None)
    if first is not None:
        return first.split(":", 1)[1].strip()
    return lines[-1] if lines else f"exit {code}"


def open_repo(cwd: Path | str | None = None) -> pygit2.Repository:
    """The repository git itself would use: $GIT_DIR when it is set (`git --git-dir`,
    hooks and scripts set it), else the one found from cwd; $GIT_WORK_TREE names its
    work tree. (Our own git commands run without them: see clean_env.)"""
    start = Path(cwd or os.getcwd())
    env_dir = os.environ.get("GIT_DIR") if cwd is None else None
    if env_dir:
        try:
            repo = pygit2.Repository(str(start / env_dir), pygit2.enums.RepositoryOpenFlag.NO_SEARCH)
        except pygit2.GitError as exc:
            known = known_failure(exc, start)   # a repository, but one libgit2 cannot read (SHA-256)
            raise known or RetconError(f"GIT_DIR={env_dir} is not a git repository: point it at one, "
                                       "or unset it") from None
    else:
        path = pygit2.discover_repository(str(start))
        if path is None:
            raise RetconError("not a git repository: run this inside the repository you want to clean up")
        try:
            repo = pygit2.Repository(path)
        except pygit2.GitError as exc:
            raise known_failure(exc, start) or exc from None
    work_tree = os.environ.get("GIT_WORK_TREE") if cwd is None else None
    if work_tree:
        try:
            repo.workdir = str(start / work_tree)
        except OSError:
            raise RetconError(f"GIT_WORK_TREE={work_tree} does not exist: point it at the work tree, "
                              "or unset it") from None
    if repo.is_bare:
        raise RetconError("this is a bare repository: git-retcon needs a repository with a work tree")
    return repo


def known_failure(exc: Exception, cwd: Path | str) -> RetconError | None:
    """An exception that is an ordinary condition, not a bug, as the one line to show:
    a repository libgit2 cannot read (SHA-256 object ids), a full disk or a read-only
    file system (naming the repository git-retcon was writing in); None for anything else."""
    text = str(exc)
    if "is not owned by current user" in text:
        top = text.split("repository path '", 1)[1].split("'", 1)[0] if "repository path '" in text else str(cwd)
        return RetconError(f"{top} is owned by another user, and git refuses such a repository (\"dubious "
                           f"ownership\"): if you trust it, run `git config --global --add safe.directory {top}`, "
                           "then run the command again")
    if "unsupported extension name extensions." in text:
        where, name = text.split(": unsupported extension name ", 1)
        return RetconError(f"{where}: git-retcon cannot open this repository: it uses {name}, which libgit2 "
                           f"{pygit2.LIBGIT2_VERSION} (what git-retcon reads repositories with) does not support")
    if "unknown object format" in text:
        where = text.split(": unknown object format")[0]
        return RetconError(f"{where}: a SHA-256 repository (extensions.objectFormat), which git-retcon does "
                           f"not support: it works through libgit2 {pygit2.LIBGIT2_VERSION}, which reads "
                           "SHA-1 repositories only")
    try:
        git_dir = os.environ.get("GIT_DIR") or pygit2.discover_repository(str(cwd))
    except (pygit2.GitError, OSError):
        git_dir = None
    return machine_error(exc, under=git_dir.rstrip("/") if git_dir else str(cwd))


def common_dir(repo: pygit2.Repository) -> Path:
    """The main .git directory, also when repo was opened from a linked worktree."""
    path = Path(repo.path)
    link = path / "commondir"
    if link.exists():
        return (path / link.read_text().strip()).resolve()
    return path.resolve()


def main_workdir(repo: pygit2.Repository) -> Path:
    """Where git-retcon's own git commands run to reach this repository: its work tree,
    or its git directory when the work tree does not lead back to it (a $GIT_DIR kept
    apart from its $GIT_WORK_TREE); git finds the repository from either."""
    if repo.workdir and (Path(repo.workdir) / ".git").exists():
        return Path(repo.workdir)
    return common_dir(repo)


def resolve_commit(repo: pygit2.Repository, name: str, what: str) -> pygit2.Commit:
    """A branch or revision as a commit; the error names the field it came from."""
    try:
        obj = repo.revparse_single(name)
        commit = obj.peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
        raise RetconError(
            f"{what} '{name}' does not exist: check the branch name (git branch -a)"
        ) from None
    return commit


def full_sha(repo: pygit2.Repository, sha: str) -> CommitId:
    """A recorded (maybe abbreviated, as a human may write it in the spec) sha in
    full; as written when this repository does not have it."""
    try:
        return CommitId(str(repo.revparse_single(sha).id))
    except (KeyError, ValueError, pygit2.GitError):
        return CommitId(sha)


@dataclass(frozen=True)
class ForkPoint:
    """A spec's source and remote, and where the cleaned branch starts: their merge base."""

    source: pygit2.Commit
    remote: pygit2.Commit
    base: pygit2.Commit


def fork_point(repo: pygit2.Repository, source: str, remote: str, fix: str) -> ForkPoint:
    """Resolve both branches and their merge base; `fix` says how to correct a pair
    that shares no history."""
    src = resolve_commit(repo, source, "source")
    rem = resolve_commit(repo, remote, "remote")
    base = repo.merge_base(src.id, rem.id)
    if base is None:
        if repo.is_shallow:   # the history that joins them may just not be here
            raise RetconError(f"'{source}' and '{remote}' share no history in this shallow clone: fetch the rest "
                              "with `git fetch --unshallow`, then run the command again")
        raise RetconError(f"'{source}' and '{remote}' share no history (no merge base): {fix}")
    _fetch_missing(repo, str(base), str(src.id))
    return ForkPoint(src, rem, get_commit(repo, base))


# Process-wide, keyed by repository: a partial clone's missing objects are fetched once.
_FETCHED: set[tuple[str, str, str]] = set()


def _fetch_missing(repo: pygit2.Repository, base: str, tip: str) -> None:
    """In a partial clone (git clone --filter), have git fetch the blobs that base..tip's
    diffs need: libgit2, which git-retcon reads objects with, cannot fetch a missing one.
    `git log -p` fetches them in a batch per commit; in a full clone this costs nothing."""
    key = (str(common_dir(repo)), base, tip)
    if key in _FETCHED:
        return
    _FETCHED.add(key)
    if not any(e.name == "extensions.partialclone" or (e.name.startswith("remote.") and e.name.endswith(".promisor")
                                                       and e.value == "true") for e in repo.config):
        return
    proc = subprocess.run(["git", f"--git-dir={key[0]}", "log", "-p", "--format=", f"{base}..{tip}"],
                          env=clean_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        err = proc.stderr.strip().splitlines()
        raise RetconError(f"this partial clone lacks objects between {short(base)} and {short(tip)} and git could "
                          f"not fetch them ({err[-1] if err else 'exit ' + str(proc.returncode)}): "
                          "fetch them when the remote is reachable, or use a full clone")


# Lookups by an id git-retcon recorded or git gave it: a missing object or one of
# another kind is a bug (or a damaged repository), never something to work around.
_Obj = TypeVar("_Obj", pygit2.Commit, pygit2.Blob)


def _object(repo: pygit2.Repository, oid: pygit2.Oid | str) -> pygit2.Object:
    obj = repo.get(oid)
    if obj is None:
        raise KeyError(f"{oid} is not in this repository")
    return obj


def _as(obj: pygit2.Object, kind: type[_Obj]) -> _Obj:
    if not isinstance(obj, kind):
        raise TypeError(f"{obj.id} is a {obj.type_str}, not a {kind.__name__.lower()}")
    return obj


def get_commit(repo: pygit2.Repository, oid: pygit2.Oid | str) -> pygit2.Commit:
    """The commit oid names (an Oid, or a full or abbreviated hex id)."""
    return _as(_object(repo, oid), pygit2.Commit)


def find_commit(repo: pygit2.Repository, oid: pygit2.Oid | str) -> pygit2.Commit | None:
    """The commit oid names, or None when it is not in this repository."""
    obj = repo.get(oid)
    return None if obj is None else _as(obj, pygit2.Commit)


def get_tree(repo: pygit2.Repository, oid: pygit2.Oid | str) -> pygit2.Tree:
    """The tree oid names, or the tree of the commit it names."""
    return _object(repo, oid).peel(pygit2.Tree)


def get_blob(repo: pygit2.Repository, oid: pygit2.Oid | str) -> pygit2.Blob:
    return _as(_object(repo, oid), pygit2.Blob)


def ref_target(repo: pygit2.Repository, name: str) -> CommitId | None:
    """The commit a branch (or one of our own refs) points to."""
    ref = repo.references.get(name)
    if ref is None:
        return None
    return CommitId(str(ref.resolve().target))


def cas_ref(repo: pygit2.Repository, name: str, new: str | None, old: str | None,
            message: str) -> None:
    """Move ref `name` from `old` to `new` atomically (None: absent / delete).

    ConcurrentUpdate only when the swap lost (the ref moved, or another writer holds
    its lock): worth retrying. Anything else git will refuse again (an invalid name,
    a ref in the way, permissions): a RetconError at once, naming the ref and why."""
    try:
        with repo.transaction() as txn:
            txn.lock_ref(name)
            current = ref_target(repo, name)
            if current != old:
                raise ConcurrentUpdate(
                    f"{name} moved while git-retcon was writing it "
                    f"(expected {short(old)}, found {short(current)}): run the command again"
                )
            if new is None:
                txn.remove(name)
            else:
                txn.set_target(name, new, message=message)
    except pygit2.GitError as exc:
        if ref_target(repo, name) == new and new != old:
            return   # the ref moved; only its reflog could not be written (a full disk): the swap is done
        text = str(exc)
        if isinstance(exc, pygit2.InvalidSpecError):
            raise RetconError(f"cannot write {name}: git refuses the name (see git check-ref-format)") from None
        if _lock_held(text):
            lock = text.split("'")[1] if text.count("'") >= 2 else f"{name}.lock"
            raise ConcurrentUpdate(
                f"{name} is locked by another git process ({lock}): run the command again; "
                "if no git command is running, remove that file") from None
        conflict = _ref_conflict(repo, name)
        raise RetconError(f"cannot write {name}: " + (f"{conflict}: rename or delete that ref" if conflict
                                                     else text)) from None


def _lock_held(text: str) -> bool:
    """Whether libgit2 failed because another writer holds the ref's lock file (its words:
    "failed to lock file 'X.lock' for writing", "failed to create locked file 'X.lock': File exists")."""
    return ".lock'" in text and (text.startswith("failed to lock file") or text.endswith("File exists"))


def _ref_conflict(repo: pygit2.Repository, name: str) -> str | None:
    """Why a ref cannot exist when git's reason is a path: a ref named by its
    prefix (a file where a directory must be), or refs below it (the reverse)."""
    parts = name.split("/")
    for k in range(2, len(parts)):
        prefix = "/".join(parts[:k])
        if repo.references.get(prefix) is not None:
            return f"the ref {prefix} exists, and a ref cannot also be a directory of refs"
    below = sorted(r for r in repo.references if r.startswith(name + "/"))
    if below:
        return f"the ref {below[0]} exists below it, and a ref cannot also be a directory of refs"
    return None


def short(sha: str | None) -> str:
    return sha[:9] if sha else "nothing"


def first_parent_chain(repo: pygit2.Repository, tip: str, since: str, limit: int | None = None) -> list[CommitId]:
    """Commits from since (exclusive) to tip (inclusive) along first parents, oldest first;
    at most limit of them (the newest), when given."""
    chain: list[CommitId] = []
    cur = find_commit(repo, tip)
    while cur is not None and str(cur.id) != since and (limit is None or len(chain) < limit):
        chain.append(CommitId(str(cur.id)))
        if not cur.parent_ids:
            break
        cur = find_commit(repo, cur.parent_ids[0])
    chain.reverse()
    return chain
