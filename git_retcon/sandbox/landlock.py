"""Landlock (Linux 5.13+): a command confined by the kernel, where bubblewrap does not work.

Run as a file, not a module (`python -I -S landlock.py [--network] [-w DIR]... [-f FILE]...
[-x PATH]... -- CMD...`): it imports nothing of git-retcon and little of Python's library (no json,
no re), so the wrapper starts in a few milliseconds. It confines itself (writes only under the
policy's folders, reads everywhere but the hidden paths, and from ABI 4 no TCP connect or bind
when the network is off; from ABI 6 no signals or abstract sockets outside), then runs the
command as its child and, as a subreaper, ends whatever the command left running when it exits.
git-retcon itself stays unconfined: only this process and its children are.

-w: a folder it may write; -f: a device file it may write; -x: a path it may not read; --network:
TCP allowed. The kernel's ABI decides what can be enforced; `abi()` says which.
"""
from __future__ import annotations

import ctypes
import os
import signal
import struct
import sys

_CREATE, _ADD_RULE, _RESTRICT = 444, 445, 446     # the same numbers on every architecture (5.13+)
_VERSION = 1                                       # landlock_create_ruleset flag: ask the ABI
_PATH_BENEATH = 1
_NO_NEW_PRIVS, _CHILD_SUBREAPER = 38, 36

# Filesystem rights by the ABI that brought them.
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_MAKE = sum(1 << i for i in range(4, 13))          # remove dir/file, make char/dir/reg/sock/fifo/block/sym
REFER, TRUNCATE = 1 << 13, 1 << 14
_NET_BIND, _NET_CONNECT = 1 << 0, 1 << 1
_SCOPE_ABSTRACT_UNIX, _SCOPE_SIGNAL = 1 << 0, 1 << 1
_FILE_ONLY = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE   # the rights a rule on a regular file may hold


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def abi() -> int:
    """The kernel's Landlock ABI version; 0 where it has none (or it is disabled)."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        v = int(_libc().syscall(_CREATE, None, ctypes.c_size_t(0), ctypes.c_uint32(_VERSION)))
    except (OSError, AttributeError):
        return 0
    return max(v, 0)


def _fs_rights(version: int) -> int:
    rights = EXECUTE | WRITE_FILE | READ_FILE | READ_DIR | _MAKE
    if version >= 2:
        rights |= REFER
    if version >= 3:
        rights |= TRUNCATE
    return rights


def _reads(hidden: list[str]) -> list[str]:
    """Paths whose every file may be read: `/` less the hidden paths, as the siblings of each hidden
    path and of its ancestors (Landlock only allows; a hidden path is one no rule reaches)."""
    hide = {os.path.realpath(h) for h in hidden if os.path.lexists(h)}
    out: list[str] = []

    def walk(path: str) -> None:
        if path in hide or (path != "/" and os.path.islink(path)):
            return   # a link is reached by its target's own path: a rule on it would allow the target
        if not any(h.startswith(path.rstrip("/") + "/") for h in hide):
            out.append(path)
            return
        try:
            names = os.listdir(path)
        except OSError:
            return
        for name in names:
            walk(os.path.join(path, name))

    walk("/")
    return out


def confine(policy: dict[str, object]) -> int:
    """Confine this process (and what it runs) to policy; the ABI used. Raises OSError when the
    kernel refuses."""
    libc = _libc()
    version = abi()
    if version < 1:
        raise OSError("Landlock is not available in this kernel")
    fs = _fs_rights(version)
    net = (_NET_BIND | _NET_CONNECT) if version >= 4 and not policy.get("network") else 0
    scoped = (_SCOPE_ABSTRACT_UNIX | _SCOPE_SIGNAL) if version >= 6 else 0
    attr = struct.pack("QQQ", fs, net, scoped)
    size = 24 if version >= 6 else 16 if version >= 4 else 8
    buf = ctypes.create_string_buffer(attr[:size], size)
    ruleset = libc.syscall(_CREATE, buf, ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset")
    try:
        def allow(path: str, rights: int) -> None:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                return   # gone since: nothing to allow
            try:
                if not os.path.isdir(path):
                    rights &= _FILE_ONLY
                rule = ctypes.create_string_buffer(struct.pack("=Qi", rights & fs, fd), 12)
                if libc.syscall(_ADD_RULE, ruleset, _PATH_BENEATH, rule, ctypes.c_uint32(0)) < 0:
                    raise OSError(ctypes.get_errno(), f"landlock_add_rule {path}")
            finally:
                os.close(fd)

        allow("/", READ_DIR)
        for path in _reads(list(policy.get("hide") or [])):   # type: ignore[call-overload]
            allow(path, READ_FILE | EXECUTE | READ_DIR)
        for path in policy.get("write") or []:                # type: ignore[attr-defined]
            allow(str(path), fs)
        for path in policy.get("files") or []:                # type: ignore[attr-defined]
            allow(str(path), READ_FILE | WRITE_FILE | TRUNCATE)
        if libc.prctl(_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
        if libc.syscall(_RESTRICT, ruleset, ctypes.c_uint32(0)) < 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self")
    finally:
        os.close(ruleset)
    return version


def _end_orphans() -> None:
    """Kill and reap what the command left running (reparented to this subreaper), until none is left."""
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG) == (0, 0):    # children left: kill them, then wait for one
                for pid in _children():
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:   # gone already
                        continue
                os.waitpid(-1, 0)
        except ChildProcessError:   # none left (the usual case: nothing was left running)
            return
        except OSError:
            return


def _children() -> list[int]:
    """This process's children: the kernel's list where it keeps one, else a scan of /proc."""
    me = os.getpid()
    try:
        with open(f"/proc/self/task/{me}/children", "rb") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        pass
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    if int(f.read().rsplit(b")", 1)[1].split()[1]) == me:
                        found.append(int(name))
            except (OSError, ValueError, IndexError):
                continue
    return found


def parse(argv: list[str]) -> tuple[dict[str, object], list[str]]:
    """The policy and the command, from the wrapper's arguments."""
    policy: dict[str, object] = {"write": [], "files": [], "hide": [], "network": False}
    keys = {"-w": "write", "-f": "files", "-x": "hide"}
    i = 0
    while i < len(argv) and argv[i] != "--":
        if argv[i] == "--network":
            policy["network"] = True
            i += 1
        elif argv[i] in keys and i + 1 < len(argv):
            policy[keys[argv[i]]].append(argv[i + 1])   # type: ignore[attr-defined]
            i += 2
        else:
            raise ValueError(argv[i])
    return policy, argv[i + 1:]


def main(argv: list[str]) -> int:
    try:
        policy, command = parse(argv)
    except ValueError as exc:
        sys.stderr.write(f"landlock.py: unknown argument {exc}\n")
        return 2
    if not command:
        sys.stderr.write("usage: landlock.py [--network] [-w DIR]... [-f FILE]... [-x PATH]... -- COMMAND...\n")
        return 2
    try:
        confine(policy)
    except OSError as exc:
        sys.stderr.write(f"git-retcon: the Landlock sandbox could not be set up: {exc}\n")
        return 126
    _libc().prctl(_CHILD_SUBREAPER, 1, 0, 0, 0)
    pid = os.fork()
    if pid == 0:
        try:
            os.execvp(command[0], command)
        except OSError as exc:
            sys.stderr.write(f"git-retcon: {command[0]}: {exc.strerror}\n")
        os._exit(127)
    def end(signum: int, _frame: object) -> None:
        """Asked to stop (a timeout, Ctrl-C): the command and all it left go, also what left its
        process group (setsid), since each was reparented to this subreaper."""
        os.kill(pid, signal.SIGKILL)
        _end_orphans()
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, end)
    _, status = os.waitpid(pid, 0)
    _end_orphans()
    return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
