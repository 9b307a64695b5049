"""A full disk, said as such: which filesystem, how much is left on it, and how to go on.

A write that fails for want of space does not always say so: pygit2 raises GitError("no error")
when libgit2 lost the cause, git says it "could not write", a step's tool gets an OSError. So the
last line of defence asks the filesystems git-retcon writes to (the repository, the cache where
the build worktrees live, the temp folder): a failure that names a full disk, or one that names no
cause while one of them is all but full, is one line. Every write of a run is compare-and-swap in
git, so the same command resumes once space is freed.
"""
from __future__ import annotations

import errno
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from git_retcon.errors import RetconError

_SAYS = ("No space left on device", "Out of diskspace", "Disk quota exceeded", "no space left")
_OTHER = ("Permission denied", "Read-only file system", "Operation not permitted")   # a cause, not space
_VAGUE = ("no error", "couldn't write", "could not write", "unable to write", "failed to write", "write error",
          "short write", "failed to flush", "failed to close")
VAGUE_LOW = 16 * 1024 * 1024    # a failure that names no cause, on a filesystem with less than this left
ANY_LOW = 1024 * 1024           # any failure at all, on a filesystem with less than this left


@dataclass(frozen=True)
class Filesystem:
    mount: str
    kind: str
    free: int
    under: str      # the place git-retcon writes to on it


def full(exc: BaseException, places: Iterable[str | Path], unexplained: bool = False) -> RetconError | None:
    """exc as the one line of a write that failed for want of space, or None: it says so (ENOSPC,
    EDQUOT, git's and libgit2's words), or it names no cause while a filesystem of places is all
    but full. unexplained: exc is no error of ours (an internal error), which a full filesystem
    explains better than its own words."""
    text = str(exc)
    says = (isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)) or any(w in text for w in _SAYS)
    if not says and any(w in text for w in _OTHER):
        return None
    vague = not says and (not text.strip() or any(w in text for w in _VAGUE) or _from_git(exc))
    if not (says or vague or unexplained):
        return None
    found = sorted((fs for fs in (_filesystem(Path(p)) for p in places) if fs is not None), key=lambda f: f.free)
    if not found:
        return None
    fs = found[0]
    if not says and fs.free >= (VAGUE_LOW if vague else ANY_LOW):
        return None
    kind = f" ({fs.kind})" if fs.kind else ""
    cause = _cause(exc) if says else ""   # words that name nothing (GitError: no error) are left out
    return RetconError(f"{cause + ': ' if cause else ''}no space left on the filesystem at {fs.mount}{kind}: "
                       f"{_size(fs.free)} free (writing under {fs.under}); the same command resumes where it "
                       "stopped: free some space, then run the command again")


def _cause(exc: BaseException) -> str:
    """What a failure that names a full disk said, less any advice of ours: the file, where it can."""
    if isinstance(exc, OSError) and exc.filename and exc.strerror:
        return f"{exc.filename}: {exc.strerror}"
    text = str(exc).strip()
    for advice in (": free some space", ": check that the disk"):
        text = text.split(advice)[0]
    return text


def _from_git(exc: BaseException) -> bool:
    """pygit2's GitError, or an OSError with no errno (libgit2's own), whose words name no cause."""
    return (isinstance(exc, OSError) and exc.errno is None) or any(c.__name__ == "GitError" for c in type(exc).__mro__)


def _filesystem(place: Path) -> Filesystem | None:
    """The filesystem place is on (or would be, from its nearest folder that exists)."""
    at = place
    while not at.exists():
        if at.parent == at:
            return None
        at = at.parent
    try:
        st = os.statvfs(at)
    except OSError:
        return None
    mount = at.resolve()
    while not os.path.ismount(mount) and mount.parent != mount:
        mount = mount.parent
    return Filesystem(str(mount), _kind(str(mount)), st.f_bavail * st.f_frsize, str(place))


def _kind(mount: str) -> str:
    """The filesystem's type as the kernel names it (tmpfs, ext4), where it says."""
    try:
        with open("/proc/self/mounts", encoding="utf-8", errors="replace") as f:
            kinds = [fields[2] for fields in (line.split() for line in f)
                     if len(fields) > 2 and re.sub(r"\\([0-7]{3})", lambda m: chr(int(m[1], 8)), fields[1]) == mount]
    except OSError:
        return ""
    return kinds[-1] if kinds else ""


def _size(n: int) -> str:
    if n < 10 * 1024 * 1024:
        return f"{n // 1024} KB"
    return f"{n // (1024 * 1024)} MB"
