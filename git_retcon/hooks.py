"""The pre-push hook: which pushed refs are cleaned branches, the check on them,
and installing the raw hook (hooks/pre-push) into a repository.

git runs the hook on every push, so deciding that a push is none of ours must
cost next to nothing: this module imports only the standard library at the top,
asks git (not pygit2) for the spec names, and loads the store and the check only
when a cleaned branch is being pushed.
"""
from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    import pygit2

Z40 = "0" * 40
HOOK = "pre-push"
CHAINED = "pre-push.pre-retcon"  # an existing hook, kept and run first
MARKER = "# git-retcon pre-push hook"
# Remote refs that are git-retcon's own state (`git retcon push`), not a publication.
STATE_PREFIXES = ("refs/retcon/", "refs/retcon-", "refs/notes/")


@dataclass(frozen=True)
class Push:
    local_ref: str
    local_sha: str
    remote_ref: str


def parse_stdin(text: str) -> list[Push]:
    """git's pre-push lines: `<local ref> <local sha> <remote ref> <remote sha>`."""
    pushes = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 4:
            pushes.append(Push(parts[0], parts[1], parts[2]))
    return pushes


def from_pre_commit(env: Mapping[str, str]) -> list[Push]:
    """The push the pre-commit framework describes in its variables: only the first
    pushed ref with new commits (the framework keeps the other lines to itself)."""
    local = env.get("PRE_COMMIT_LOCAL_BRANCH", "")
    sha = env.get("PRE_COMMIT_TO_REF", "")
    if not local and not sha:
        return []
    if not sha:
        # Pushing a whole history from its root: the framework gives no sha.
        sha = _git("rev-parse", "--verify", "-q", local).strip() or Z40
    return [Push(local or sha, sha, env.get("PRE_COMMIT_REMOTE_BRANCH", ""))]


def current_branch_push() -> list[Push]:
    """What a plain `git push` would push: the current branch (for manual runs)."""
    ref = _git("symbolic-ref", "-q", "HEAD").strip()
    sha = _git("rev-parse", "--verify", "-q", "HEAD").strip()
    return [Push(ref, sha, ref)] if ref and sha else []


def _git(*args: str) -> str:
    proc = subprocess.run(["git", *args], text=True, capture_output=True)
    return proc.stdout if proc.returncode == 0 else ""


def guarded(pushes: list[Push]) -> list[tuple[Push, str]]:
    """The pushes that publish a cleaned branch, with its spec's name: by local ref
    name, or by sha when the cleaned tip is pushed under another name."""
    specs = _git("for-each-ref", "--format=%(refname:lstrip=2)", "refs/retcon/").split()
    if not specs:
        return []
    tips: dict[str, str] = {}
    out = _git("for-each-ref", "--format=%(objectname) %(refname:lstrip=2)", *(f"refs/heads/{n}" for n in specs))
    for line in out.splitlines():
        sha, _, branch = line.partition(" ")
        if branch in specs:
            tips.setdefault(sha, branch)
    found = []
    for p in pushes:
        if p.local_sha == Z40 or p.remote_ref.startswith(STATE_PREFIXES):
            continue
        local = p.local_ref.removeprefix("refs/heads/") if p.local_ref.startswith("refs/heads/") else None
        name = local if local in specs else tips.get(p.local_sha)
        if name:
            found.append((p, name))
    return found


def pre_push(args: list[str], stdin: IO[str], env: Mapping[str, str]) -> int:
    """The hook's whole decision; 0 lets the push through, 1 refuses it."""
    pushes = from_pre_commit(env)
    if not pushes and not stdin.isatty():
        pushes = parse_stdin(stdin.read())
    if not pushes and (env.get("PRE_COMMIT") or stdin.isatty()):
        pushes = current_branch_push()  # run by hand: check what `git push` would send
    targets = guarded(pushes)
    if not targets:
        return 0

    from git_retcon.check import check_spec
    from git_retcon.errors import RetconError
    from git_retcon.git.plumbing import open_repo
    from git_retcon.state.store import Store
    from git_retcon.status import foreign_branch

    remote = args[0] if args else env.get("PRE_COMMIT_REMOTE_NAME", "the remote")
    refused = False
    store = Store(open_repo())
    for name in dict.fromkeys(n for _, n in targets):
        try:
            stored = store.load(name)
            # A branch of the spec's name that git-retcon did not make is the user's: not a cleaned branch.
            if (theirs := foreign_branch(store, stored)) is not None:
                _say(f"git-retcon: not checking '{name}': {theirs}")
                continue
            verdict = check_spec(store, stored)
        except RetconError as exc:
            refused = True
            _say(f"git-retcon: refusing to push '{name}' to {remote}: {exc}\n")
            continue
        if not verdict.ok:
            refused = True
            _say(f"git-retcon: refusing to push '{name}' to {remote}: `git retcon check {name}` fails:\n"
                  f"{verdict.render()}\n")
    if refused:
        _say("Fix that and push again, or push anyway with `git push --no-verify`.")
    return 1 if refused else 0


def _say(text: str) -> None:
    """A line for the pusher's terminal: on stderr, its control characters escaped."""
    from git_retcon.ui import printable

    print(printable(text), file=sys.stderr)


def main() -> None:
    """Console script `retcon-pre-push`, and `python -m git_retcon.hooks` from the raw hook."""
    from git_retcon.errors import RetconError

    try:
        sys.exit(pre_push(sys.argv[1:], sys.stdin, os.environ))
    except RetconError as exc:
        _say(f"git-retcon: refusing the push: {exc}")
        sys.exit(1)


# -- installing the raw hook --------------------------------------------------


def hooks_dir(repo: pygit2.Repository) -> Path:
    """Where git looks for hooks, honouring core.hooksPath (relative to the work tree)."""
    from git_retcon.git.plumbing import git, main_workdir

    top = main_workdir(repo)
    return (top / git(top, "rev-parse", "--git-path", "hooks").strip()).resolve()


def _ours(path: Path) -> bool:
    try:
        return MARKER in path.read_text(errors="replace")
    except OSError:
        return False


def script() -> str:
    """hooks/pre-push, bound to the Python that runs this git-retcon."""
    text = resources.files("git_retcon.hookscripts").joinpath(HOOK).read_text("utf-8")
    return text.replace("@PYTHON@", shlex.quote(sys.executable), 1)


# The check, as a line of a hook a project shares (husky's .husky/pre-push): the console script found on
# PATH, never this machine's interpreter path; a clone without git-retcon is not stopped.
SHARED_LINE = 'if command -v retcon-pre-push >/dev/null 2>&1; then retcon-pre-push "$@"; fi'


def _in_work_tree(repo: pygit2.Repository, where: Path) -> Path | None:
    """where, relative to the work tree, when core.hooksPath points into it (husky: .husky/_)."""
    from git_retcon.git.plumbing import main_workdir

    top, gitdir = main_workdir(repo).resolve(), Path(repo.path).resolve()
    if where == gitdir or gitdir in where.parents or not (where == top or top in where.parents):
        return None   # git's own hooks folder (.git/hooks), or outside the work tree
    return where.relative_to(top)


def shared_advice(rel: Path) -> str:
    """What `hooks install` says where the hooks folder is in the work tree: husky's own way."""
    # husky 9 runs .husky/_/<hook> stubs that run .husky/<hook>; older husky, and others, the folder itself
    own = rel.parent / HOOK if rel.name == "_" else rel / HOOK
    return (f"core.hooksPath is {rel}, inside your work tree (husky, or hooks your project shares): a hook "
            f"git-retcon wrote there would be shared with everyone who clones it, or overwritten when husky "
            f"installs its hooks, so nothing was installed. Run the check from {own} instead (commit it: "
            f"clones with git-retcon get the check, others are not stopped):\n"
            f"  echo '{SHARED_LINE}' >> {own}\n"
            f"Or install git-retcon's own hook in {rel} anyway: git retcon hooks install --force")


def install(repo: pygit2.Repository, force: bool = False) -> list[str]:
    """Install the hook, keeping a foreign pre-push hook as CHAINED; returns what it did. Where
    core.hooksPath points into the work tree, nothing is written unless force (shared_advice)."""
    from git_retcon.errors import RetconError

    where = hooks_dir(repo)
    if (rel := _in_work_tree(repo, where)) is not None and not force:
        raise RetconError(shared_advice(rel))
    hook, chained = where / HOOK, where / CHAINED
    present = hook.is_symlink() or hook.exists()
    update = present and _ours(hook)
    if present and not update and (chained.exists() or chained.is_symlink()):
        raise RetconError(f"{hook} is not git-retcon's, and {chained} already exists: "
                          f"move one of them away, then install again")
    text = script()
    where.mkdir(parents=True, exist_ok=True)
    done = [f"{'Updated' if update else 'Installed'} the git-retcon pre-push hook in {where}."]
    if present and not update:
        hook.rename(chained)
        done.append(f"Kept your pre-push hook as {chained}: it still runs, before the check.")
    tmp = where / f".{HOOK}.retcon-{os.getpid()}"
    tmp.write_text(text, encoding="utf-8")
    tmp.chmod(0o755)
    tmp.replace(hook)  # atomic: git never runs a half-written hook
    return done


def uninstall(repo: pygit2.Repository) -> list[str]:
    """Remove the hook and put back the one it replaced, if any."""
    from git_retcon.errors import RetconError

    where = hooks_dir(repo)
    hook, chained = where / HOOK, where / CHAINED
    if not _ours(hook):
        raise RetconError(f"no git-retcon pre-push hook in {where}: nothing to uninstall")
    hook.unlink()
    done = [f"Removed the git-retcon pre-push hook from {where}."]
    if chained.exists() or chained.is_symlink():
        chained.rename(hook)
        done.append(f"Restored your previous pre-push hook {hook}.")
    return done


if __name__ == "__main__":
    main()
