"""Writing a spec: from a TOML file, from the source's commits, and the editor round trip."""
from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import pygit2

from . import spec as specmod
from .errors import RetconError
from .gitops import clean_env, git, main_workdir, resolve_commit

EDIT_HEADER = """\
# git-retcon history spec. Save and close to continue; an empty file aborts.
# Each [[commit]] is one logical commit of the clean branch, in order:
#   message = "..."     the commit message
#   hints = \"\"\"...\"\"\"     what belongs in it, what to leave out (for the model)
#   paths = ["src/*"]   globs of its files (all that -m retcon-paths needs)
# Top level: source, remote, cleaned, and optional build, test (shell commands),
# timeout (seconds per command), model. `history` is written by git-retcon.
"""


def current_branch(repo: pygit2.Repository) -> str | None:
    if repo.head_is_detached or repo.head_is_unborn:
        return None
    return repo.head.shorthand


def default_remote(repo: pygit2.Repository, source: str) -> str:
    """The source's upstream, else origin/HEAD, else main or master."""
    try:
        branch = repo.branches.local[source]
        if branch.upstream is not None:
            return branch.upstream.shorthand
    except (KeyError, pygit2.GitError):
        pass
    ref = repo.references.get("refs/remotes/origin/HEAD")
    if ref is not None:
        return ref.resolve().shorthand
    for name in ("origin/main", "origin/master", "main", "master"):
        if name != source and repo.references.get(
                f"refs/remotes/{name}" if "/" in name else f"refs/heads/{name}") is not None:
            return name
    raise RetconError("cannot tell which branch the source will merge into: pass --onto BRANCH")


def check_branches(repo: pygit2.Repository, spec: specmod.Spec) -> None:
    """Bad branches are refused before a spec is saved."""
    src = resolve_commit(repo, spec.source, "source")
    rem = resolve_commit(repo, spec.remote, "remote")
    if repo.merge_base(src.id, rem.id) is None:
        raise RetconError(
            f"'{spec.source}' and '{spec.remote}' share no history (no merge base): pick the branch "
            "the source was started from with --onto"
        )


def source_commits(repo: pygit2.Repository, source: str, remote: str) -> list[pygit2.Commit]:
    """The source's own commits, oldest first, along first parents."""
    src = resolve_commit(repo, source, "source")
    rem = resolve_commit(repo, remote, "remote")
    base = repo.merge_base(src.id, rem.id)
    walker = repo.walk(src.id, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)
    walker.simplify_first_parent()
    if base is not None:
        walker.hide(base)
    return list(walker)


def from_commits(repo: pygit2.Repository, source: str, remote: str, cleaned: str) -> specmod.Spec:
    """One logical commit per source commit. `paths` name the files a commit is the
    first to touch; a commit that touches only files already claimed is folded into
    the one before it, so that retcon-paths can rebuild the branch as is."""
    commits = source_commits(repo, source, remote)
    if not commits:
        raise RetconError(f"'{source}' has no commits that '{remote}' lacks: nothing to clean up")
    claimed: set[str] = set()
    out: list[specmod.LogicalCommit] = []
    for c in commits:
        parent = c.parents[0].tree if c.parents else repo.TreeBuilder().write()
        diff = repo.diff(parent, c.tree)
        diff.find_similar()
        files = sorted({p for d in diff.deltas for p in (d.old_file.path, d.new_file.path)
                        if d.status != pygit2.enums.DeltaStatus.UNMODIFIED})
        fresh = [f for f in files if f not in claimed]
        claimed.update(files)
        message = c.message.strip()
        if not fresh and out:
            out[-1].hints += f"\nAlso folds in: {message.splitlines()[0]}"
            continue
        out.append(specmod.LogicalCommit(
            message=message, hints=f"From {str(c.id)[:12]}: {', '.join(files)}", paths=fresh))
    return specmod.Spec(source=source, remote=remote, cleaned=cleaned, commits=out)


def editor(repo: pygit2.Repository) -> str:
    return git(main_workdir(repo), "var", "GIT_EDITOR").strip() or "vi"


def edit(repo: pygit2.Repository, text: str, filename: str = "spec.toml") -> specmod.Spec | None:
    """Open text in the user's editor until it parses; None when they empty it."""
    error = ""
    with tempfile.TemporaryDirectory(prefix="retcon-") as tmp:
        path = Path(tmp) / filename
        body = text
        while True:
            head = EDIT_HEADER + (f"#\n# ERROR: {error}\n# Fix it, or empty the file to abort.\n" if error else "")
            path.write_text(head + "\n" + body, encoding="utf-8")
            # As git does: the editor string is shell code, the file its argument.
            proc = subprocess.run(["sh", "-c", f'{editor(repo)} "$@"', "editor", str(path)],
                                  env=clean_env())
            if proc.returncode != 0:
                raise RetconError(f"the editor exited with {proc.returncode}: nothing was saved")
            edited = path.read_text(encoding="utf-8")
            body = "\n".join(l for l in edited.splitlines() if not l.startswith("#")).strip()
            if not body:
                return None
            try:
                return specmod.parse(edited, filename)
            except specmod.SpecError as exc:
                error = str(exc)
                body = _strip_header(edited)


def _strip_header(text: str) -> str:
    lines = text.splitlines()
    while lines and (lines[0].startswith("#") or not lines[0].strip()):
        lines.pop(0)
    return "\n".join(lines) + "\n"


def read_file(path: str) -> tuple[specmod.Spec, str]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise RetconError(f"cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise RetconError(f"{path} is not UTF-8 text") from None
    return specmod.parse(text, os.path.basename(path)), text
