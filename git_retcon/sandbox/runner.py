"""Running the configured build and test commands, and their results keyed by tree and command.

A tree that was built and tested is never built or tested again with the same
command: the result is a JSON note on the tree under refs/notes/retcon-tests.
"""
from __future__ import annotations

import atexit
import contextlib
import os
import re
import select
import shlex
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol

from git_retcon.errors import RetconError
from git_retcon.git.ids import TreeId
from git_retcon.git.plumbing import clean_env
from git_retcon.sandbox import gitconfig
from git_retcon.sandbox.confine import UNCONFINED, Sandbox
from git_retcon.sandbox.denied import Denial, find
from git_retcon.sandbox.output import cause, trim
from git_retcon.sandbox.slow import Left, explain, measure
from git_retcon.state import notes, records
from git_retcon.state.notes import CommandKind, CommandRecord, CommandResult
from git_retcon.state.store import Store

DEFAULT_TIMEOUT = 600
SETUP_FAILED = "[the setup command"     # the first line of a failed setup's output (what it stood for)
_BUILTINS = {"cd", "true", "false", "exit", "test", "[", ":", ".", "source", "set", "export", "env", "exec", "eval"}


@dataclass
class Result:
    kind: CommandKind
    command: str
    result: CommandResult
    seconds: float
    exit_code: int | None
    output: str        # trimmed to what matters
    cached: bool = False
    # Set on the spec's setup command's result (why it ran: "new worktree", "Cargo.lock changed"): a
    # failed setup stands for kind's result, as the build or test could not run. Never recorded on a tree.
    setup: str | None = None
    sandbox: str | None = None       # what it ran under (Sandbox.label), None when not known (an older record)
    network: bool | None = None
    denied: Denial | None = None     # what the sandbox refused it, as its output shows (a failure only)
    restored: str = ""               # what it changed in the repository's config, put back (gitconfig.py)
    left: Left | None = None         # confined: what it left in its private temp folder (sandbox/slow.py)
    unconfined: float | None = None  # confined: the same command's seconds unconfined on this tree, if recorded

    @property
    def passed(self) -> bool:
        return self.result == "pass"

    @property
    def what(self) -> str:
        """What ran, in a sentence: "build", "test" or "setup"."""
        return "setup" if self.setup is not None else self.kind

    def reason(self) -> str:
        """A few words for the `Building... FAIL (...)` line: what the output says went
        wrong (the first error's message, else the first failed test), never a stack frame."""
        if self.result == "timeout":
            return f"timed out after {self.seconds:.0f}s"
        if self.result == "notfound":
            return "command not found" if self.setup is None else "setup: command not found"
        if self.denied is not None:
            return ("setup: " if self.setup is not None else "") + self.denied.short()
        if self.setup is not None:   # its own output, without the line that says what it stood for; npm's
            # `npm error` lines are the tool's own words here, not the echo of a script that failed under it
            own = "\n".join(re.sub(r"^npm (?:ERR!|error) ", "", ln) for ln in self.output.splitlines()
                             if not ln.startswith(SETUP_FAILED))
            return "setup: " + Result(self.kind, self.command, self.result, self.seconds, self.exit_code, own).reason()
        return cause(self.output) or f"exit {self.exit_code}"

    def slowdown(self, name: str, advise: bool = True) -> str | None:
        """Why this confined command ran several times slower than unconfined, or wrote much to its
        private temp folder (the -v line, sandbox/slow.py); None for anything else."""
        if self.cached or self.sandbox in (None, "off", "none"):
            return None
        return explain(self.what, self.sandbox, self.seconds, self.unconfined, self.left,
                       bool(self.network), name, advise)

    def to_note(self) -> CommandRecord:
        rec: CommandRecord = {"command": self.command, "kind": self.kind, "result": self.result,
                              "seconds": self.seconds, "exit_code": self.exit_code, "output": self.output}
        if self.sandbox is not None:
            rec["sandbox"] = self.sandbox
            rec["network"] = bool(self.network)
        if self.denied is not None:
            rec["denied"] = self.denied.say()
        return rec


def check_command_exists(command: str, kind: str) -> None:
    """Refuse up front a command whose program is on no PATH (before anything is touched)."""
    try:
        words = shlex.split(command)
    except ValueError as exc:
        raise RetconError(f"{kind} command `{command}` does not parse: {exc}: fix `{kind}` in the spec") from None
    words = [w for w in words if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", w)]
    if not words:
        return
    prog = words[0]
    if "/" in prog or prog in _BUILTINS or any(c in command for c in "|;&()`$"):
        return  # a path in the repo, or shell syntax: the shell will tell at run time
    if shutil.which(prog) is None:
        raise RetconError(
            f"{kind} command `{command}`: '{prog}' is not found on PATH: install it or fix `{kind}` "
            f"in the spec (git retcon spec edit)"
        )


def run_command(kind: CommandKind, command: str, cwd: Path, timeout: int,
                on_output: Callable[[str], None] | None = None, sandbox: Sandbox | None = None) -> Result:
    """Run command through the shell in its own process group, confined by sandbox (none: as the
    user); kill the group at timeout, and on an interrupt. Confined, what it leaves running ends
    with it (bubblewrap's pid namespace, Landlock's subreaper)."""
    with gitconfig.kept(cwd) as config:   # the user's config, whatever the command does to it
        res = _run(kind, command, cwd, timeout, on_output, sandbox or UNCONFINED)
    res.restored = config.say()
    return res


def _run(kind: CommandKind, command: str, cwd: Path, timeout: int,
         on_output: Callable[[str], None] | None, box: Sandbox) -> Result:
    launch = box.launch(command, cwd, clean_env({"GIT_RETCON": "1"}))
    left: Left | None = None
    start = time.monotonic()
    try:
        with _lock:
            proc = subprocess.Popen(
                launch.argv, cwd=cwd, env=launch.env,
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
            _running.add(proc)
    except BaseException:
        launch.done()
        raise
    chunks: list[bytes] = []
    # A thread drains the pipe line by line, so progress can show the last line.
    reader = threading.Thread(target=_drain, args=(proc.stdout, chunks, on_output), daemon=True)
    reader.start()
    try:
        code: int | None = _wait(proc, timeout)
        reader.join(max(start + timeout - time.monotonic(), 0))
        if reader.is_alive():  # a background child still holds the output open
            raise subprocess.TimeoutExpired(command, timeout)
        result: CommandResult = "pass" if code == 0 else ("notfound" if code == 127 else "fail")
    except subprocess.TimeoutExpired:
        _end(proc, box)
        proc.wait()
        reader.join()
        code, result = None, "timeout"
    except BaseException:
        # Ctrl-C (or any other way out): the command runs in its own session, so the
        # terminal's SIGINT never reached it; leave nothing running in the worktree.
        _end(proc, box)
        proc.wait()
        reader.join(5)
        raise
    finally:
        end = time.monotonic()   # the command's time, not the count and removal of its temp folder
        with _lock:
            _running.discard(proc)
        if box.mechanism is not None:
            _kill_group(proc)   # confined: nothing it started outlives it
        if launch.tmp is not None:   # counted before it goes: what a cold start cost (-v says it)
            left = measure(launch.tmp)
        launch.done()
    seconds = end - start
    text = b"".join(chunks).decode("utf-8", errors="replace")
    denied = None
    if result == "fail" and box.mechanism is not None:
        denied = find(text, cwd, launch.writable, launch.hidden, box.network, command)
        if denied is not None:
            text = f"[git-retcon: {denied.say()}]\n" + text
    return Result(kind, command, result, round(seconds, 3), code, trim(text), sandbox=box.label,
                  network=box.network if box.mechanism is not None else True,
                  denied=denied, left=left)


def _wait(proc: subprocess.Popen[bytes], timeout: float) -> int:
    """proc's exit code, or TimeoutExpired. Popen.wait(timeout) polls with sleeps that double up
    to 50 ms, so a 20 ms command costs 30; a pidfd (Linux 5.3+) wakes at the exit itself."""
    try:
        fd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        return proc.wait(timeout=timeout)
    try:
        ready, _, _ = select.select([fd], [], [], timeout)
    finally:
        os.close(fd)
    if not ready:
        raise subprocess.TimeoutExpired(proc.args, timeout)
    return proc.wait()


def _drain(stream: IO[bytes], chunks: list[bytes], on_output: Callable[[str], None] | None) -> None:
    for line in iter(stream.readline, b""):
        chunks.append(line)
        if on_output is not None and line.strip():
            on_output(line.decode("utf-8", errors="replace").rstrip())
    stream.close()


# Commands running now, in any thread: a pool worktree's run in a thread outlives an
# interrupt of the main thread, so the process's exit kills what is left.
_running: set[subprocess.Popen[bytes]] = set()
_lock = threading.Lock()


@atexit.register
def _kill_running() -> None:
    with _lock:
        for proc in _running:
            _kill_group(proc)


def _end(proc: subprocess.Popen[bytes], box: Sandbox) -> None:
    """End the command's whole tree. Landlock's wrapper is asked first: as a subreaper it ends also
    what left the process group (bubblewrap's pid namespace dies with it anyway)."""
    if box.mechanism == "landlock":
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(2)
    _kill_group(proc)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


class Prepares(Protocol):
    """The spec's setup for the worktree the commands run in (sandbox/setup.py)."""

    command: str

    def fresh(self) -> bool: ...

    def needed(self) -> str | None: ...

    def run(self, kind: CommandKind, why: str, on_output: Callable[[str], None] | None = None) -> Result: ...


class Commands:
    """The spec's build and test commands: run on a tree (build then test), trusting a
    recorded result for the same tree and command, and recording what ran. With a setup,
    the worktree's dependencies are installed first whenever they must be (sandbox/setup.py)."""

    def __init__(self, store: Store, workdir: Path, build: str | None, test: str | None,
                 timeout: int | None, on_run: Callable[[], None] | None = None, setup: Prepares | None = None,
                 sandbox: Sandbox | None = None, retest: bool = False):
        self.store = store
        self.sandbox = sandbox or UNCONFINED   # what build and test run under (setup: its own, Setup.sandbox)
        # --retest: a result recorded before this process is not trusted; those it recorded are.
        self.retest = retest
        self._fresh: set[tuple[str, str]] = set()
        self.workdir = workdir
        self.on_run = on_run  # told before a command runs in workdir
        self.commands: dict[CommandKind, str | None] = {"build": build, "test": test}
        self.timeout = timeout or DEFAULT_TIMEOUT
        self.setup = setup

    def prepare(self, kind: CommandKind, on_start: Callable[[str], None] | None = None,
                on_done: Callable[[Result], None] | None = None,
                on_output: Callable[[str], None] | None = None) -> Result | None:
        """Run setup when the worktree needs it, before kind's command: None when it is ready,
        else setup's result, which stands for kind's (the command cannot run without it).
        on_start is given setup's label, `Setup `CMD` (why)`."""
        why = self.setup.needed() if self.setup is not None else None
        if self.setup is None or why is None:
            return None
        if on_start is not None:
            on_start(f"Setup `{self.setup.command}` ({why})")
        res = self.setup.run(kind, why, on_output)
        if not res.passed:
            res.output = (f"{SETUP_FAILED} `{res.command}` ({why}) failed, so the {kind} could not run]\n"
                          + res.output)
        if on_done is not None:
            on_done(res)
        return None if res.passed else res

    def configured(self, kind: CommandKind) -> bool:
        return bool(self.commands[kind])

    def cached(self, tree: str, kind: CommandKind) -> Result | None:
        """The recorded result of kind's command on tree in exactly this context (context()), if it
        may stand: a pass or a failure of the code, never one the environment caused (a sandbox's
        refusal, a timeout, a missing program), which is worth another try."""
        command = self.commands[kind]
        rec = records.exact(notes.tree_records(self.store, tree), command, self.context(kind)) if command else None
        if rec is None or rec.get("result") not in ("pass", "fail") or rec.get("denied"):
            return None
        if self.retest and (str(tree), rec["command"]) not in self._fresh:
            return None
        return Result(kind, rec["command"], rec["result"], float(rec.get("seconds", 0)),
                      rec.get("exit_code"), rec.get("output", ""), cached=True, sandbox=rec.get("sandbox"),
                      network=rec.get("network"))

    def context(self, kind: CommandKind) -> records.Context:
        """What kind's result depends on besides the tree and the command (state/records.py): setup,
        the build before a test, the spec's writable folders and network, the sandbox mechanism."""
        box = self.sandbox
        return records.context(kind, self.setup.command if self.setup is not None else None,
                               self.commands["build"], box.writable, box.network, box.setup_network,
                               box.mechanism)

    def measured(self, tree: str, res: Result) -> Result:
        """res, a fresh confined result on tree, with the same command's unconfined time on tree when a
        record of it has the same outcome (a fast failure says nothing of a pass's time): -v compares."""
        if self.sandbox.mechanism is None or res.setup is not None or res.result not in ("pass", "fail"):
            return res
        rec = records.unconfined(notes.tree_records(self.store, tree), res.command, self.context(res.kind))
        if rec is not None and rec.get("result") == res.result:
            res.unconfined = float(rec.get("seconds", 0))
        return res

    def _record(self, tree: str, results: list[Result]) -> None:
        recs = []
        for r in results:
            rec = r.to_note()
            rec["depends"] = self.context(r.kind)
            recs.append(rec)
            self._fresh.add((str(tree), r.command))
        notes.record_commands(self.store, tree, recs)

    def build_and_test(self, tree: TreeId, on_start: Callable[[str], None] | None = None,
                       on_done: Callable[[Result], None] | None = None,
                       on_output: Callable[[str], None] | None = None) -> list[Result]:
        """Build then test tree; stops at the first failure. A recorded test result
        is trusted only with its build: tests of a fresh tree need a fresh build. What ran
        is recorded on tree in one note write (a kill before it costs a rerun, no more).
        Setup runs first when a command must run and the worktree needs it; its failure is
        the last result (it stands for the command that could not run), and is not recorded."""
        results: list[Result] = []
        fresh: list[Result] = []
        test_hit = self.cached(tree, "test") if self.commands["test"] else None
        need_fresh_build = bool(self.commands["test"]) and test_hit is None
        for kind in notes.COMMAND_KINDS:
            command = self.commands[kind]
            if not command:
                continue
            hit = test_hit if kind == "test" else (None if need_fresh_build else self.cached(tree, kind))
            if hit is None and (unready := self.prepare(kind, on_start, on_done, on_output)) is not None:
                results.append(unready)
                break
            if on_start is not None:
                on_start(kind)
            if hit is None:
                hit = self.measured(tree, self.run(kind, on_output))
                fresh.append(hit)
            if on_done is not None:
                on_done(hit)
            results.append(hit)
            if not hit.passed:
                break
        if fresh:
            self._record(tree, fresh)
        return results

    def run(self, kind: CommandKind, on_output: Callable[[str], None] | None = None,
            on_setup: Callable[[Result], None] | None = None) -> Result:
        """Run the configured command for kind on the worktree as it is (set up first when it
        needs it, told to on_setup: a failed setup's result is the answer); record nothing."""
        if (unready := self.prepare(kind, on_done=on_setup, on_output=on_output)) is not None:
            return unready
        if self.on_run is not None:
            self.on_run()
        return run_command(kind, self.commands[kind] or "", self.workdir, self.timeout, on_output, self.sandbox)

    def run_and_record(self, tree: str, kind: CommandKind, on_output: Callable[[str], None] | None = None,
                       on_setup: Callable[[Result], None] | None = None) -> Result:
        """run(), on a worktree that holds exactly tree (reset, no stray files), and the
        result recorded on tree, replacing an earlier one of the same command."""
        res = self.run(kind, on_output, on_setup)
        if res.setup is None:
            self.measured(tree, res)
            self._record(tree, [res])
        return res
