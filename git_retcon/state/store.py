"""All of git-retcon's state, kept in git: the spec chain, notes, and the run lock.

- refs/retcon/<cleaned>: a commit chain whose tree holds spec.toml; every save is
  a new commit, moved compare-and-swap, so the spec's history is `git log` away.
- refs/notes/retcon: JSON notes on the commits git-retcon made.
- refs/notes/retcon-tests: JSON build/test results keyed by tree id.
"""
from __future__ import annotations

import errno
import fcntl
import json
import os
import random
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pygit2

from git_retcon.errors import RetconError
from git_retcon.git.commits import signature
from git_retcon.git.ids import SpecCommitId
from git_retcon.git.ownership import NOTES_REF, SPEC_PREFIX, check_name, name_problem
from git_retcon.git.plumbing import (
    ConcurrentUpdate,
    cas_ref,
    common_dir,
    get_blob,
    get_commit,
    git,
    ref_target,
    short,
)
from git_retcon.state import spec as specmod
from git_retcon.state import specparse, spectoml

TESTS_REF = "refs/notes/retcon-tests"
SPEC_FILE = "spec.toml"
# Scratch refs for building a notes commit before it is CAS-ed into place.
_SCRATCH_PREFIX = "refs/retcon-scratch/"
# Written by every spec's runs: not one run's own.
_SHARED_REFS = (NOTES_REF, TESTS_REF)


def spec_ref(name: str) -> str:
    return SPEC_PREFIX + name


@dataclass
class Stored:
    """A spec as loaded, with the spec-chain commit it came from (for CAS)."""

    name: str
    spec: specmod.Spec
    commit: SpecCommitId


class Store:
    def __init__(self, repo: pygit2.Repository):
        self.repo = repo
        self.git_dir = common_dir(repo)
        self._flat: set[str] = set()   # notes commits known to hold a flat tree (see _flat_note)
        # The [[commit]] texts of each spec this store saved: a run saves its spec at every commit.
        self._texts: dict[str, spectoml.CommitTexts] = {}

    # -- the spec chain ---------------------------------------------------

    def names(self) -> list[str]:
        return sorted(
            r[len(SPEC_PREFIX):] for r in self.repo.references
            if r.startswith(SPEC_PREFIX)
        )

    def exists(self, name: str) -> bool:
        return self.tip(name) is not None

    def tip(self, name: str) -> SpecCommitId | None:
        """The spec chain's tip. An older version could save a spec under a name git
        refuses (then `git gc` fails): libgit2 does not look such a ref up, so its loose
        file is read, for the spec to be exported and removed."""
        tip = ref_target(self.repo, spec_ref(name))
        if tip is None and name_problem(name):
            try:
                return SpecCommitId((self.git_dir / spec_ref(name)).read_text().strip()) or None
            except OSError:
                return None
        return SpecCommitId(tip) if tip else None

    def drop(self, stored: Stored, message: str) -> None:
        """Delete the spec's ref, compare-and-swap (git's update-ref for a name git
        refuses: it deletes what it would not create)."""
        if name_problem(stored.name):
            git(self.git_dir, "update-ref", "-m", message, "-d", spec_ref(stored.name), stored.commit)
        else:
            cas_ref(self.repo, spec_ref(stored.name), None, stored.commit, message)

    def load(self, name: str) -> Stored:
        tip = self.tip(name)
        if tip is None:
            raise RetconError(f"no spec named '{name}': see `git retcon list`")
        return Stored(name, self.read(tip, spec_ref(name)), tip)

    def read(self, commit_id: str, where: str) -> specmod.Spec:
        """The spec a commit of a spec chain holds (where: the ref it came from, for errors)."""
        commit = get_commit(self.repo, commit_id)
        try:
            entry = commit.tree[SPEC_FILE]
        except KeyError:
            raise RetconError(f"{where} holds no {SPEC_FILE}: it was not written by git-retcon") from None
        text = get_blob(self.repo, entry.id).data.decode("utf-8")
        return specparse.parse(text, f"{where}:{SPEC_FILE}")

    def save(self, spec: specmod.Spec, old: SpecCommitId | None, message: str) -> SpecCommitId:
        """Write spec as a new commit on its chain, CAS from `old`; returns the commit."""
        name = spec.cleaned
        check_name("cleaned", name)   # the last line of defence: a bad ref name breaks `git gc`
        text = spectoml.dump(spec, self._texts.setdefault(name, spectoml.CommitTexts()))
        builder = self.repo.TreeBuilder()
        builder.insert(SPEC_FILE, self.repo.create_blob(text.encode("utf-8")), pygit2.GIT_FILEMODE_BLOB)
        tree = builder.write()
        sig = signature(self.git_dir, "COMMITTER")
        parents = [old] if old else []
        commit = self.repo.create_commit(None, sig, sig, message, tree, parents)
        cas_ref(self.repo, spec_ref(name), str(commit), old, f"retcon: {message}")
        return SpecCommitId(str(commit))

    def update(self, stored: Stored, message: str) -> None:
        """Save stored.spec over stored.commit and remember the new commit."""
        stored.commit = self.save(stored.spec, stored.commit, message)

    # -- notes ------------------------------------------------------------

    def read_note(self, ref: str, target: str) -> dict[str, Any] | None:
        try:
            note = self.repo.lookup_note(target, ref)
        except (KeyError, ValueError):   # none, or a target no object id can be (a spec's abbreviated sha)
            return None
        try:
            data = json.loads(note.message)
        except ValueError:
            return None
        return data if isinstance(data, dict) else None

    def write_note(self, ref: str, target: str, data: dict[str, Any]) -> None:
        """Set the JSON note on target under ref, compare-and-swap, retrying on races."""
        self.write_notes(ref, {target: data})

    def write_notes(self, ref: str, entries: dict[str, dict[str, Any]]) -> None:
        """Set the JSON notes on these targets under ref in one notes commit, compare-and-swap,
        retrying on races (a run notes a commit's verdict with the next commit's note: one
        write, not two).

        libgit2 and git write notes last-writer-wins, so the notes commit is built
        aside (in memory, or on a scratch ref) and swapped into place only if ref has
        not moved."""
        if not entries:
            return
        texts = {t: json.dumps(d, sort_keys=True, indent=1) + "\n" for t, d in entries.items()}
        sig = signature(self.git_dir, "COMMITTER")
        lost: ConcurrentUpdate | None = None
        for attempt in range(20):
            old = ref_target(self.repo, ref)
            new = self._flat_note(texts, sig, old)
            if new is None:
                new = self._scratch_note(texts, sig, old)
            try:
                cas_ref(self.repo, ref, new, old, "retcon: note")
                return
            except ConcurrentUpdate as exc:
                # Another writer holds the ref's lock or moved it: back off, not in step with it.
                # Any other failure is permanent and has already been raised.
                lost = exc
                time.sleep(random.uniform(0, 0.002 * (attempt + 1)))
        assert lost is not None
        raise lost

    def _flat_note(self, texts: dict[str, str], sig: pygit2.Signature, old: str | None) -> str | None:
        """The notes commit over old with the targets' notes set, built in memory: no ref is
        written but the one CAS. Only for a flat notes tree (as libgit2 writes them); one
        that git fanned out into xx/ subtrees (None) goes through libgit2's own writer."""
        if any(len(target) != 40 for target in texts):
            return None   # an abbreviated id: libgit2 resolves it
        tree = get_commit(self.repo, old).tree if old else None
        # Looking through every note for a subtree would make each write grow with the notes
        # written: a notes commit this store built is flat, and so is one it found flat.
        if tree is not None and old not in self._flat:
            if any(e.type_str == "tree" for e in tree):
                return None
            self._flat.add(str(old))
        builder = self.repo.TreeBuilder(tree) if tree is not None else self.repo.TreeBuilder()
        for target, text in texts.items():
            builder.insert(target, self.repo.create_blob(text.encode("utf-8")), pygit2.GIT_FILEMODE_BLOB)
        new = str(self.repo.create_commit(None, sig, sig, "Notes added by git-retcon\n", builder.write(),
                                          [old] if old else []))
        self._flat.add(new)
        return new

    def _scratch_note(self, texts: dict[str, str], sig: pygit2.Signature, old: str | None) -> str:
        scratch = f"{_SCRATCH_PREFIX}{os.getpid()}-{uuid.uuid4().hex[:8]}"
        try:
            if old:
                self.repo.references.create(scratch, old, force=True)
            for target, text in texts.items():
                self.repo.create_note(text, sig, sig, target, scratch, True)
            new = ref_target(self.repo, scratch)
        finally:
            if self.repo.references.get(scratch) is not None:
                self.repo.references.delete(scratch)
        assert new is not None
        return new

    def sweep_scratch(self) -> None:
        """Drop scratch refs left by processes that died mid-write (killed runs)."""
        sweep_dead_scratch(self.repo, (_SCRATCH_PREFIX,))

    def sweep_locks(self, refs: list[str], extra: list[Path] | None = None) -> None:
        """Remove git lock files a killed run left on its refs and worktree files.

        Called under the spec's run lock, so no other git-retcon writes the spec's
        own refs and files: their locks are stale, removed at once. The notes refs
        are shared by every spec: their locks go only when no other git-retcon runs
        (one that does may be writing a note this instant)."""
        others = self._others_running()
        for path in [self.git_dir / (r + ".lock") for r in refs] + (extra or []):
            rel = path.relative_to(self.git_dir).as_posix() if path.is_relative_to(self.git_dir) else ""
            if others and rel.removesuffix(".lock") in _SHARED_REFS:
                continue
            path.unlink(missing_ok=True)

    def _others_running(self) -> bool:
        """Whether another process holds a run lock of this repository."""
        try:
            locks = sorted((self.git_dir / "retcon" / "locks").glob("*.lock"))
        except OSError:
            return False
        for path in locks:
            if path.resolve() in RunLock.held:
                continue
            try:
                fd = os.open(path, os.O_RDWR)
            except OSError:
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except OSError:
                return True
            finally:
                os.close(fd)
        return False

    # -- the run lock -----------------------------------------------------

    def lock(self, name: str) -> RunLock:
        return RunLock(self.git_dir / "retcon" / "locks" / (safe_name(name) + ".lock"), name)


def sweep_dead_scratch(repo: pygit2.Repository, prefixes: tuple[str, ...]) -> None:
    """Delete refs named <prefix><pid>-... whose process is gone (a killed writer's leftovers)."""
    for name in list(repo.references):
        for prefix in prefixes:
            pid = name[len(prefix):].split("-")[0] if name.startswith(prefix) else ""
            if pid.isdigit() and not _alive(int(pid)):
                repo.references.delete(name)
                break


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def safe_name(name: str) -> str:
    """A file-name-safe, collision-free form of a branch name (which may hold '/')."""
    return name.replace("%", "%25").replace("/", "%2F")


class RunLock:
    """An exclusive flock per spec: the kernel drops it when the process dies,
    so a killed run never leaves a stale lock behind."""

    held: set[Path] = set()  # the run locks this process holds

    def __init__(self, path: Path, name: str):
        self.path = path
        self.name = name
        self.fd: int | None = None

    def __enter__(self) -> RunLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            pid = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise RetconError(
                f"another git-retcon (pid {pid}) is working on '{self.name}': wait for it to finish or stop it"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self.fd = fd
        RunLock.held.add(self.path.resolve())
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fd is not None:
            RunLock.held.discard(self.path.resolve())
            os.close(self.fd)
            self.fd = None


__all__ = [
    "Store", "Stored", "RunLock", "spec_ref", "safe_name", "short",
    "SPEC_PREFIX", "NOTES_REF", "TESTS_REF",
]
