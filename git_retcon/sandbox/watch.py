"""Whether a build or test changed the worktree, without scanning it (Linux inotify).

After every build and test the worktree must be exactly the commit again before the next
commit is built: `git status` asks by scanning every file (most of git-retcon's own cost per
commit, and it grows with the tree). The kernel can say instead: a watch on every directory
git does not ignore reports each file created, written, deleted, moved or chmod-ed there.
No event on a tracked or unignored path since the commands started: nothing to scan. Any
doubt (an event queue overflow, a watch lost, no inotify here) answers "changed", and the
caller scans as before.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import struct
import sys
from collections.abc import Callable
from pathlib import Path

# From <sys/inotify.h>.
_MODIFY, _ATTRIB, _CLOSE_WRITE = 0x2, 0x4, 0x8
_MOVED_FROM, _MOVED_TO, _CREATE, _DELETE = 0x40, 0x80, 0x100, 0x200
_DELETE_SELF, _MOVE_SELF = 0x400, 0x800
_Q_OVERFLOW, _IGNORED, _ONLYDIR, _DONT_FOLLOW, _ISDIR = 0x4000, 0x8000, 0x01000000, 0x02000000, 0x40000000
_NONBLOCK, _CLOEXEC = os.O_NONBLOCK, os.O_CLOEXEC
_MASK = (_MODIFY | _ATTRIB | _CLOSE_WRITE | _MOVED_FROM | _MOVED_TO | _CREATE | _DELETE
         | _DELETE_SELF | _MOVE_SELF | _ONLYDIR | _DONT_FOLLOW)
_EVENT = struct.Struct("iIII")   # wd, mask, cookie, len; then len bytes of NUL-padded name


class Watch:
    """inotify watches on the directories of a worktree that git does not ignore.

    `arm()` when the worktree is exactly a commit, before commands run; `changed()` after:
    False only if no tracked or unignored path was touched in between."""

    def __init__(self, fd: int, libc: ctypes.CDLL, root: Path, ignored: Callable[[str], bool],
                 tracked: Callable[[str], bool]):
        self._admin = -1          # the watch on the worktree's git dir: its index and HEAD
        self._fd = fd
        self._libc = libc
        self._root = root
        self._ignored = ignored   # a relative path (directories end in /) that git ignores
        self._tracked = tracked   # a relative path the index holds
        self._dirs: dict[int, str] = {}   # watch descriptor -> directory, relative ("" is the root)
        self._lost = False        # a watch could not be added or was dropped: answer "changed"

    @classmethod
    def open(cls, root: Path, admin: Path, ignored: Callable[[str], bool],
             tracked: Callable[[str], bool]) -> Watch | None:
        """Watches over root's unignored directories and over its git dir (admin: a command may
        stage, or move HEAD, without touching a file); None where inotify is not available (not
        Linux, or the kernel refuses): the caller scans."""
        if not sys.platform.startswith("linux"):
            return None
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            fd = libc.inotify_init1(_NONBLOCK | _CLOEXEC)
        except (OSError, AttributeError):
            return None
        if fd < 0:
            return None
        watch = cls(fd, libc, root, ignored, tracked)
        watch._add_tree("")
        watch._admin = libc.inotify_add_watch(fd, os.fsencode(admin), _MASK)
        if watch._lost or watch._admin < 0:   # out of watches (fs.inotify.max_user_watches): scan instead
            watch.close()
            return None
        return watch

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def arm(self) -> None:
        """Forget what happened so far (the tools' own writes, a reset), keeping watches on
        the directories made since."""
        self._events()
        self._lost = False

    def changed(self) -> bool:
        """Whether anything but ignored files changed since `arm()` (reads the events)."""
        return self._events() or self._lost

    # -- inside ------------------------------------------------------------------

    def _add_tree(self, rel: str) -> None:
        """Watch rel and every unignored directory below it."""
        if not self._add(rel):
            return
        try:
            entries = list(os.scandir(self._root / rel if rel else self._root))
        except OSError:
            self._lost = True
            return
        for entry in entries:
            sub = f"{rel}{entry.name}"
            if entry.name == ".git" and not rel:
                continue
            if entry.is_dir(follow_symlinks=False) and not self._ignored(sub + "/"):
                self._add_tree(sub + "/")

    def _add(self, rel: str) -> bool:
        path = os.fsencode(self._root / rel if rel else self._root)
        wd = self._libc.inotify_add_watch(self._fd, path, _MASK)
        if wd < 0:
            self._lost = True
            return False
        self._dirs[wd] = rel
        return True

    def _events(self) -> bool:
        """Read every queued event; True if one touched a tracked or unignored path. New
        unignored directories get watches of their own."""
        touched = False
        while True:
            try:
                data = os.read(self._fd, 65536)
            except BlockingIOError:
                return touched
            except OSError:
                self._lost = True
                return True
            at = 0
            while at < len(data):
                wd, mask, _cookie, size = _EVENT.unpack_from(data, at)
                name = data[at + _EVENT.size: at + _EVENT.size + size].rstrip(b"\0").decode("utf-8", "surrogateescape")
                at += _EVENT.size + size
                touched |= self._one(wd, mask, name)

    def _one(self, wd: int, mask: int, name: str) -> bool:
        if mask & _Q_OVERFLOW:
            self._lost = True
            return True
        if wd == self._admin:
            return name in ("index", "HEAD") or not name
        where = self._dirs.get(wd)
        if where is None:
            return False   # an event of a watch already dropped
        if mask & _IGNORED:
            del self._dirs[wd]
            return True    # the kernel dropped the watch: the directory went away
        if mask & (_DELETE_SELF | _MOVE_SELF):
            return True    # a watched directory went away (its parent says so too)
        if not name:
            return True    # the directory itself changed (its mode, say)
        rel = where + name
        is_dir = bool(mask & _ISDIR)
        if is_dir and mask & (_CREATE | _MOVED_TO) and not self._ignored(rel + "/"):
            self._add_tree(rel + "/")
        if self._tracked(rel):
            return True
        return not self._ignored(rel + "/" if is_dir else rel)
