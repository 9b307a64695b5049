"""The errors a user sees as one line: what went wrong and what to do."""
from __future__ import annotations

import errno


class RetconError(Exception):
    """A user-facing error: printed as one line, exit code 1, nothing changed."""

    exit_code = 1


class Stopped(RetconError):
    """The run stopped short of complete, its state saved (exit code 3): printed as it is."""

    exit_code = 3


class StuckStop(Stopped):
    """A logical commit is stuck: a human resolves it, then runs again."""


class BudgetStop(Stopped):
    """The run reached --max-tokens; nothing is stuck: run again to go on."""


# Conditions of the machine, not of the input or of git-retcon: what the user does about them.
_MACHINE = {
    errno.ENOSPC: ("No space left on device", "free some space"),
    errno.EDQUOT: ("Disk quota exceeded", "free some space"),
    errno.EROFS: ("Read-only file system", "make it writable"),
    errno.EIO: ("Input/output error", "check the disk"),
    errno.EACCES: ("Permission denied", "check the file's owner and permissions"),
    errno.EPERM: ("Operation not permitted", "check the file's owner and permissions"),
    errno.EMFILE: ("Too many open files", "raise the limit (ulimit -n)"),
    errno.ENFILE: ("Too many open files in system", "close some programs"),
}


# The words git and libgit2 put in their messages for the same conditions.
_MACHINE_WORDS = {"No space left on device": "free some space", "Out of diskspace": "free some space",
                  "Disk quota exceeded": "free some space", "Read-only file system": "make it writable"}


_WRITE_FAILED = ("couldn't write", "could not write", "unable to write", "failed to write", "write error")


def with_advice(text: str) -> str:
    """An error's line, with what to do added when it names a condition of the machine (git's
    own words for a full disk, say) and says nothing to do."""
    if "run the command again" in text:
        return text
    todo = next((todo for words, todo in _MACHINE_WORDS.items() if words in text), None)
    if todo is None and any(w in text for w in _WRITE_FAILED):   # git said it could not write, not why
        todo = "check that the disk has space and the files are writable"
    return f"{text}: {todo}, then run the command again" if todo else text


def machine_error(exc: BaseException, path: str | None = None, under: str | None = None) -> RetconError | None:
    """exc as one line naming the file and what to do, when it is an ordinary condition of
    the machine (a full disk, a read-only file system, permissions) that no retry can help;
    None otherwise. Python names the file by errno and filename, but not for a failed
    write(): `path` names it then; libgit2 puts the cause in its text, often without the
    file: `under` says where git-retcon was writing."""
    code = exc.errno if isinstance(exc, OSError) else None
    known = _MACHINE.get(code) if code is not None else None
    if known is None and code is None and _from_libgit2(exc):
        known = next((v for v in _MACHINE.values() if v[0] in str(exc)), None)
    if known is None:
        return None
    cause, todo = known
    where = getattr(exc, "filename", None) or path
    if where:
        what = f"{where}: {cause}"
    elif code is not None:
        what = cause + (f" (writing under {under})" if under else "")
    else:   # libgit2's own words, which name the file when they can
        what = str(exc) + (f" (writing under {under})" if under and under not in str(exc) else "")
    return RetconError(f"{what}: {todo}, then run the command again")


def _from_libgit2(exc: BaseException) -> bool:
    """pygit2's errors (GitError, or OSError without an errno): libgit2 says the cause in words.
    Our own errors quoting such words (a tool's answer) are not matched."""
    return isinstance(exc, OSError) or any(c.__name__ == "GitError" for c in type(exc).__mro__)
