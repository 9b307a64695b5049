"""Commit objects as `git commit` makes them: with the identity git would use (refused, as
git refuses, when there is none), and signed when commit.gpgSign says so."""
from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

import pygit2

from git_retcon.errors import RetconError
from git_retcon.git.ids import CommitId, TreeId
from git_retcon.git.plumbing import clean_env, common_dir

_IDENT = re.compile(r"^(?P<name>.*) <(?P<email>[^>]*)> (?P<time>\d+) (?P<tz>[+-]\d{4})$")


# Process-wide, keyed by repository, kind and the identity variables: `git var` once each.
_IDENTS: dict[tuple[str, ...], tuple[str, str, int, int]] = {}


def signature(repo_dir: Path | str, kind: str = "AUTHOR") -> pygit2.Signature:
    """The identity git itself would use (honours GIT_AUTHOR_* and config); none
    configured is refused as `git commit` refuses it, with git's advice.

    `git var` is asked once per process and kind; the time is then "now",
    unless the environment pins the date as git's own variables can."""
    key = (str(repo_dir), kind, *(os.environ.get(v, "") for v in (f"GIT_{kind}_NAME", f"GIT_{kind}_EMAIL", "EMAIL")))
    if key not in _IDENTS:
        proc = subprocess.run(
            ["git", "var", f"GIT_{kind}_IDENT"], cwd=repo_dir, env=clean_env(),
            text=True, capture_output=True,
        )
        m = _IDENT.match(proc.stdout.strip()) if proc.returncode == 0 else None
        if not m:
            why = [ln for ln in proc.stderr.splitlines() if ln.startswith("fatal:")]
            raise RetconError(
                f"git does not know who you are ({why[-1] if why else kind.lower() + ' identity unknown'}): "
                'run git config --global user.name "Your Name" and git config --global user.email '
                '"you@example.com" (omit --global for this repository only), as git commit asks')
        tz = m["tz"]
        offset = (int(tz[1:3]) * 60 + int(tz[3:5])) * (-1 if tz[0] == "-" else 1)
        _IDENTS[key] = (m["name"], m["email"], int(m["time"]), offset)
    name, email, when, offset = _IDENTS[key]
    if not os.environ.get(f"GIT_{kind}_DATE"):
        when = int(time.time())
    return pygit2.Signature(name, email, when, offset)


def check_identity(repo_dir: Path | str) -> None:
    """Refuse now, before any model call, what the first commit would refuse."""
    signature(repo_dir, "AUTHOR")
    signature(repo_dir, "COMMITTER")


# Process-wide, keyed by git dir: commit.gpgSign asked of git once.
_SIGN: dict[str, bool] = {}


def make_commit(repo: pygit2.Repository, tree: TreeId, parents: list[CommitId], message: str,
                author: pygit2.Signature, committer: pygit2.Signature) -> CommitId:
    """A commit object (no ref moves), signed when commit.gpgSign says so, as `git commit`
    signs it: through git itself (`git commit-tree -S`), so gpg.format, gpg.program and
    user.signingKey mean what they mean to git."""
    git_dir = str(common_dir(repo))
    if git_dir not in _SIGN:
        # Asked of git, not libgit2: `git -c commit.gpgSign=true retcon ...` counts too.
        proc = subprocess.run(["git", f"--git-dir={git_dir}", "config", "--bool", "commit.gpgSign"],
                              env=clean_env(), text=True, capture_output=True)
        _SIGN[git_dir] = proc.stdout.strip() == "true"
    if not _SIGN[git_dir]:
        return CommitId(str(repo.create_commit(None, author, committer, message, pygit2.Oid(hex=tree), parents)))
    env = {f"GIT_{kind}_{part}": value for kind, sig in (("AUTHOR", author), ("COMMITTER", committer))
           for part, value in (("NAME", sig.name), ("EMAIL", sig.email), ("DATE", _git_date(sig)))}
    args = ["git", f"--git-dir={git_dir}", "commit-tree", "-S", tree]
    for parent in parents:
        args += ["-p", parent]
    proc2 = subprocess.run(args, env=clean_env(env), input=message.encode("utf-8"), capture_output=True)
    if proc2.returncode != 0:
        err = proc2.stderr.decode("utf-8", "replace").strip().splitlines()
        raise RetconError(f"signing a commit failed (commit.gpgSign is set): {err[-1] if err else 'no output'}: "
                          "check that `git commit -S` works here (user.signingKey, gpg.format), "
                          "or unset commit.gpgSign")
    return CommitId(proc2.stdout.decode().strip())


def _git_date(sig: pygit2.Signature) -> str:
    sign = "-" if sig.offset < 0 else "+"
    return f"@{sig.time} {sign}{abs(sig.offset) // 60:02d}{abs(sig.offset) % 60:02d}"
