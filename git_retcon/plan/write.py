"""Writing a spec: from a TOML file, from the source's commits (folded autosquash-style),
proposed by a model (propose.py), and the editor round trip; the table `plan` prints."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pygit2
import tomli

from git_retcon import diff
from git_retcon.errors import RetconError
from git_retcon.git.plumbing import clean_env, fork_point, get_tree, git, main_workdir
from git_retcon.plan.branches import ONTO_FIX, source_commits
from git_retcon.state import spec as specmod
from git_retcon.state import specparse

EDIT_HEADER = """\
# git-retcon history spec. Save and close to continue; an empty file aborts.
# Each [[commit]] is one logical commit of the clean branch, in order:
#   message = "..."     the commit message
#   hints = \"\"\"...\"\"\"     what belongs in it, what to leave out (for the model)
#   paths = ["{example}"]   globs of its files (all that -m retcon-paths needs)
#   hunks = ["<id>"]    ids of the remaining diff's hunks it takes (written by plan;
#                       ids are content hashes: move them between commits freely)
# Top level: source, remote, cleaned, and optional setup (installs dependencies in the
# build worktree: npm ci, cargo fetch, pip install -e .), build, test (shell commands),
# timeout (seconds per command), model. `history` is written by git-retcon.
"""


FIXUP = re.compile(r"^(fixup|squash|amend)! (.*)$", re.S)
# Subjects of follow-ups that only touch up an earlier commit of the branch.
TRIVIAL = re.compile(
    r"^\s*(fix(es|ed)?\s+(a\s+|the\s+|some\s+)?typos?\b|typos?\b|wip\b|oops\b|fixup\b|tweaks?\b"
    r"|nits?\b|minor\b|lint\b|format(ting)?\b|whitespace\b|small fix(es)?\b"
    r"|address(ed)?\s+(review|comments|feedback)\b|review (comments|feedback)\b|fix\s*$)", re.I)


def _subject(c: pygit2.Commit) -> str:
    text = c.message.strip()
    return text.splitlines()[0] if text else ""


def _fixup_target(c: pygit2.Commit, earlier: list[pygit2.Commit]) -> tuple[int, str] | None:
    """(index of the commit a fixup!/squash!/amend! commit fixes, kind), as autosquash finds it."""
    m = FIXUP.match(c.message.strip())
    if not m:
        return None
    kind, rest = m.group(1), m.group(2)
    while (inner := FIXUP.match(rest)) is not None:  # fixup! fixup! X fixes X
        rest = inner.group(2)
    wanted = rest.splitlines()[0].strip() if rest.strip() else ""
    if not wanted:
        return None
    subjects = [_subject(e) for e in earlier]
    tests: tuple[Callable[[int], bool], ...] = (
        lambda i: subjects[i] == wanted,
        lambda i: str(earlier[i].id).startswith(wanted.lower()) and len(wanted) >= 4,
        lambda i: subjects[i].startswith(wanted))
    for test in tests:
        for i in range(len(earlier)):
            if test(i) and not FIXUP.match(earlier[i].message.strip()):
                return i, kind
    return None


def _blamed_to(repo: pygit2.Repository, c: pygit2.Commit, earlier: list[pygit2.Commit],
               base: pygit2.Oid | None) -> int | None:
    """The one earlier branch commit whose lines c only touches, if there is one."""
    parent = c.parents[0]
    index = {e.id: i for i, e in enumerate(earlier)}
    owners: set[int] = set()
    blames: dict[str, pygit2.Blame] = {}
    for h in diff.remaining(repo, str(parent.tree_id), str(c.tree_id)):
        if h.kind != "modify":
            return None
        lines = range(h.old_start, h.old_start + h.old_lines) if h.old_lines else [max(h.old_start, 1)]
        try:
            if h.path not in blames:
                blames[h.path] = repo.blame(h.path, newest_commit=parent.id, oldest_commit=base)
            for n in lines:
                i = index.get(blames[h.path].for_line(n).final_commit_id)
                if i is None:
                    return None
                owners.add(i)
        except (KeyError, ValueError, IndexError, pygit2.GitError):
            return None
    return owners.pop() if len(owners) == 1 else None


def _folded(repo: pygit2.Repository, commits: list[pygit2.Commit],
            base: pygit2.Oid | None) -> tuple[list[int], dict[int, list[str]], dict[int, str]]:
    """For each source commit, the commit it folds into (itself when it stands alone);
    notes on what each folded in; messages changed by squash!/amend!."""
    into = list(range(len(commits)))
    notes: dict[int, list[str]] = {}
    messages = {i: c.message.strip() for i, c in enumerate(commits)}
    for i, c in enumerate(commits):
        found = _fixup_target(c, commits[:i])
        kind = found[1] if found else "follow-up"
        j = found[0] if found else None
        if j is None and i and TRIVIAL.match(_subject(c)):
            j = _blamed_to(repo, c, commits[:i], base)
        if j is None:
            continue
        root = into[j]
        into[i] = root
        body = "\n".join(c.message.strip().splitlines()[1:]).strip()
        if kind == "squash" and body:
            messages[root] += "\n\n" + body
        elif kind == "amend" and body:
            messages[root] = body
        notes.setdefault(root, []).append(f"{kind} {str(c.id)[:12]} {_subject(c)}")
    return into, notes, messages


def _owners(repo: pygit2.Repository, commits: list[pygit2.Commit], into: list[int], tip: pygit2.Commit,
            base: pygit2.Oid | None, everything: list[diff.Hunk]) -> dict[str, int]:
    """Each remaining hunk's logical commit: whole files go to the first commit that touched
    them, changed lines to the earliest commit that wrote them (git blame), removals to the
    first commit that removed those lines."""
    first: dict[str, int] = {}
    removed: dict[str, list[tuple[int, bytes]]] = {}
    for i, c in enumerate(commits):
        parent = c.parents[0].tree_id if c.parents else None
        if parent is None:
            continue
        for h in diff.remaining(repo, str(parent), str(c.tree_id)):
            for p in (h.path, h.old_path):
                if p:
                    first.setdefault(p, into[i])
            if h.kind == "modify" and h.removed:
                removed.setdefault(h.path, []).append((into[i], h.removed))
    index = {c.id: i for i, c in enumerate(commits)}
    blames: dict[str, pygit2.Blame | None] = {}
    last = max(into)
    out: dict[str, int] = {}
    for h in everything:
        owner = first.get(h.path, first.get(h.old_path or "", last))
        if h.kind == "modify" and h.new_lines:
            if h.path not in blames:
                try:
                    blames[h.path] = repo.blame(h.path, newest_commit=tip.id, oldest_commit=base)
                except (KeyError, ValueError, pygit2.GitError):
                    blames[h.path] = None
            blame = blames[h.path]
            found = []
            for n in range(h.new_start, h.new_start + h.new_lines):
                try:
                    at = index.get(blame.for_line(n).final_commit_id) if blame else None
                except (IndexError, ValueError):
                    at = None
                if at is not None:
                    found.append(into[at])
            owner = min(found) if found else owner
        elif h.kind == "modify":
            owner = next((k for k, data in removed.get(h.path, []) if h.removed in data), owner)
        out[h.id] = owner
    return out


def from_commits(repo: pygit2.Repository, source: str, remote: str, cleaned: str) -> specmod.Spec:
    """One logical commit per source commit, with the hunks it wrote. fixup!/squash!/amend!
    commits and trivial follow-ups ("fix typo" touching only lines of one earlier commit of
    the branch) fold into the commit they fix, as `git rebase --autosquash` would."""
    from git_retcon.plan.propose import set_paths

    commits = source_commits(repo, source, remote)
    if not commits:
        raise RetconError(f"'{source}' has no commits that '{remote}' lacks: nothing to clean up")
    fork = fork_point(repo, source, remote, ONTO_FIX)
    tip, base = fork.source, fork.base.id
    base_tree = str(fork.base.tree_id)
    everything = diff.remaining(repo, base_tree, str(tip.tree_id))
    into, notes, messages = _folded(repo, commits, base)
    owner = _owners(repo, commits, into, tip, base, everything)
    roots = sorted(set(into))
    ids: dict[int, list[str]] = {r: [h.id for h in everything if owner[h.id] == r] for r in roots}
    # A commit none of whose changes survive on their own joins its neighbour.
    kept = [r for r in roots if ids[r]] or roots[-1:]
    for r in roots:
        if r not in kept:
            to = max([k for k in kept if k < r], default=kept[0])
            notes.setdefault(to, []).append(f"empty {str(commits[r].id)[:12]} {_subject(commits[r])} "
                                            "(later commits rewrote all of it)")
            ids[to] += ids[r]
    out: list[specmod.LogicalCommit] = []
    for r in kept:
        c = commits[r]
        files = sorted(_touched(repo, c))
        hints = f"From {str(c.id)[:12]}: {', '.join(files[:20])}{' ...' if len(files) > 20 else ''}"
        if notes.get(r):
            hints += "\nAlso folds in: " + "; ".join(notes[r])
        message = messages[r]
        if not message.strip():   # git commit --allow-empty-message: a message is needed, say what it changes
            message = f"Update {', '.join(files[:3])}{' and more' if len(files) > 3 else ''}"
            hints += f"\nThe source commit has no message: write one (git retcon spec edit {cleaned})."
        out.append(specmod.LogicalCommit(message=message, hints=hints, hunks=ids[r]))
    spec = specmod.Spec(source=source, remote=remote, cleaned=cleaned, commits=out)
    set_paths(spec, everything)
    return spec


def _touched(repo: pygit2.Repository, c: pygit2.Commit) -> set[str]:
    parent = c.parents[0].tree if c.parents else get_tree(repo, repo.TreeBuilder().write())
    changes = parent.diff_to_tree(c.tree)
    changes.find_similar()
    return {p for d in changes.deltas for p in (d.old_file.path, d.new_file.path)
            if d.status != pygit2.enums.DeltaStatus.UNMODIFIED}


def leftover_comment(left: list[diff.Hunk]) -> str:
    """The hunks the model placed nowhere, as TOML comments under the spec."""
    if not left:
        return ""
    lines = ["", f"# UNASSIGNED: the plan put these {len(left)} hunks in no commit. Add their ids to a",
             "# commit's `hunks`; otherwise the last commit takes them."]
    lines += [f"#   {h.id} {h.path} +{h.added_lines} -{h.removed_lines}" for h in left]
    return "\n".join(lines) + "\n"


@dataclass
class Proposed:
    """A model's proposal, with what the output and the editor show about it."""

    spec: specmod.Spec
    everything: list[diff.Hunk]
    leftovers: list[diff.Hunk]
    keep_model: str | None            # -m, kept in the spec when `run` can use it
    summary: list[str]


def propose_with_model(repo: pygit2.Repository, name: str | None, source: str, remote: str, cleaned: str,
                       instructions: str, max_commits: int | None, budget: int, jobs: int,
                       say: Callable[[str], None], log: bool = True) -> Proposed:
    from git_retcon.model import choose as models
    from git_retcon.model.logs import ExchangeLog
    from git_retcon.plan import propose
    from git_retcon.plan.ask import Limits

    model = models.load(models.choose(repo, name, None), tools=False)
    if model.model_id == models.BUILTIN:
        raise RetconError(f"{models.BUILTIN} only applies `paths` and cannot propose a plan: "
                          "use --from-commits, or -m a language model")
    limits = Limits(context_tokens=budget, jobs=jobs)
    p = propose.propose(repo, model, propose.Request(source, remote, cleaned, instructions, max_commits),
                        limits, say, ExchangeLog(log, say))
    t = p.tally
    summary = [
        f"Model {model.model_id}: {t.calls} calls"
        + (f" ({p.chunks} chunks, then combined)" if p.chunks else "")
        + f"; largest prompt {max(t.prompt_chars, default=0)} characters "
          f"(budget {limits.prompt_chars} for {budget} tokens)",
        f"Tokens used: {t.input_tokens} in, {t.output_tokens} out",
    ]
    keep = name or None     # any model runs too: without tool calling, through the text protocol
    return Proposed(p.spec, p.hunks, p.leftovers, keep, ["Warning: " + w for w in p.warnings] + summary)


def editor(repo: pygit2.Repository) -> str:
    """The editor git would start (GIT_EDITOR, core.editor, VISUAL, EDITOR, its default).
    Off a terminal, git's default (vi) cannot work: refused before it is started."""
    top = main_workdir(repo)
    chosen = (os.environ.get("GIT_EDITOR") or git(top, "config", "core.editor", check=False).strip()
              or os.environ.get("VISUAL") or os.environ.get("EDITOR"))
    if not chosen and not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise RetconError("an editor needs a terminal, and none is set: set GIT_EDITOR (or core.editor, "
                          "VISUAL, EDITOR) to a command, or edit a file: `git retcon spec export -o spec.toml`, "
                          "change it, then `git retcon spec import spec.toml`")
    return git(top, "var", "GIT_EDITOR").strip() or "vi"


def touched_files(repo: pygit2.Repository, source: str, remote: str) -> list[str]:
    """The paths the source branch changes since its merge base with remote (none when either
    does not resolve): what examples of `paths` should look like."""
    out = git(main_workdir(repo), "diff", "--name-only", "-z", "--no-renames", f"{remote}...{source}", "--",
              check=False)
    return [p for p in out.split("\0") if p][:2000]


def _touched_by(repo: pygit2.Repository) -> Callable[[str, str], list[str]]:
    return lambda source, remote: touched_files(repo, source, remote)


def header(repo: pygit2.Repository, text: str) -> str:
    """EDIT_HEADER, its `paths` example made of the files this spec's branch touches."""
    try:
        data = tomli.loads(text)
        files = touched_files(repo, str(data.get("source", "")), str(data.get("remote", "")))
    except (tomli.TOMLDecodeError, RetconError):
        files = []
    return EDIT_HEADER.format(example=specparse.example_glob(files))


def edit(repo: pygit2.Repository, text: str, filename: str = "spec.toml") -> specmod.Spec | None:
    """Open text in the user's editor until it parses; None when they empty it."""
    error = ""
    refused = None      # the text last refused: the same again is no answer
    top = header(repo, text)
    with tempfile.TemporaryDirectory(prefix="retcon-") as tmp:
        path = Path(tmp) / filename
        body = text
        while True:
            head = top + (f"#\n# ERROR: {error}\n# Fix it, or empty the file to abort.\n" if error else "")
            path.write_text(head + "\n" + body, encoding="utf-8")
            # As git does: the editor string is shell code, the file its argument.
            proc = subprocess.run(["sh", "-c", f'{editor(repo)} "$@"', "editor", str(path)],
                                  env=clean_env())
            if proc.returncode != 0:
                raise RetconError(f"the editor exited with {proc.returncode}: nothing was saved")
            edited = path.read_text(encoding="utf-8")
            body = "\n".join(ln for ln in edited.splitlines() if not ln.startswith("#")).strip()
            if not body:
                return None
            try:
                return specparse.parse(edited, filename, _touched_by(repo))
            except specmod.SpecError as exc:
                # Reopened only for a person at a terminal who changes something: a script (a
                # non-interactive EDITOR) would be refused the same way for ever.
                if not at_terminal() or _strip_header(edited) == refused:
                    raise RetconError(f"the edited spec was refused: {exc}: nothing was saved; fix the editor's "
                                      "output, or edit a file: `git retcon spec export -o spec.toml`, change "
                                      "it, then `git retcon spec import spec.toml`") from None
                error = str(exc)
                body = refused = _strip_header(edited)


def at_terminal() -> bool:
    """Whether a person can answer the editor again (stdin and stdout are a terminal)."""
    return sys.stdin.isatty() and sys.stdout.isatty()


def _strip_header(text: str) -> str:
    lines = text.splitlines()
    while lines and (lines[0].startswith("#") or not lines[0].strip()):
        lines.pop(0)
    return "\n".join(lines) + "\n"


def read_file(path: str, repo: pygit2.Repository | None = None) -> tuple[specmod.Spec, str]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise RetconError(f"cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise RetconError(f"{path} is not UTF-8 text") from None
    return specparse.parse(text, os.path.basename(path), _touched_by(repo) if repo is not None else None), text
