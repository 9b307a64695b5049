"""Terminal output: plain lines everywhere; on a terminal, colour (never with
NO_COLOR) and a live line for long steps with the elapsed time and the running
command's last output line."""
from __future__ import annotations

import os
import re
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import click

TICK = 0.1            # seconds between redraws of the live line
QUIET_STEP = 0.3      # a silent step shows a live line only once it takes this long


# C0 controls but newline and tab, DEL, C1 controls (U+0080..U+009F: 0x9b is a CSI on its own),
# and the bidirectional overrides and isolates that reorder what a terminal shows.
# Lone surrogates too: a file name that is not UTF-8 (Python's surrogateescape), shown by its bytes.
_UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_NAMED = {"\r": "\\r", "\b": "\\b", "\x1b": "\\e"}


def printable(text: str) -> str:
    """text for a terminal, its control characters shown escaped (`\\e]0;title\\x07`): what a
    model wrote, a file name or a commit message cannot move the cursor, retitle the window,
    ring the bell or hide what is printed."""
    return _UNPRINTABLE.sub(lambda m: _NAMED.get(m.group()) or _code(ord(m.group())), text)


def clip(text: str, limit: int) -> str:
    """text cut to at most about limit characters at a word's end, with "..." where it was cut:
    what a person reads is never cut mid-word ("then call creat")."""
    text = text.strip()
    if len(text) <= limit:
        return text
    cut = text[:limit]
    space = max(cut.rfind(" "), cut.rfind("\n"))
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:-") + "..."


def _code(c: int) -> str:
    if 0xDC80 <= c <= 0xDCFF:   # a byte that was not UTF-8
        return f"\\x{c - 0xDC00:02x}"
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def plural(count: int, word: str, many: str = "") -> str:
    """`1 path`, `2 paths` (`many` for a plural that is not word + s)."""
    return f"{count} {word if count == 1 else many or word + 's'}"


def echo(text: str = "", err: bool = False, nl: bool = True) -> None:
    """click.echo of printable(text): what every command prints goes through here."""
    click.echo(printable(text), err=err, nl=nl)


class Live:
    """One status line redrawn in place: `Tests... 3.2s  collected 12 items`.

    Cleared with spaces rather than escape codes, so that it also works on
    terminals that only understand a carriage return.
    """

    def __init__(self, text: str, dim: Callable[[str], str], delay: float = 0.0):
        self.text = text
        self.dim = dim
        self.delay = delay
        self.last = ""
        self.started = time.monotonic()
        self._drawn = 0
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def output(self, line: str) -> None:
        self.last = line.strip()

    def say(self, line: str, err: bool = False) -> None:
        """A permanent line above the live one, which is redrawn on the next tick."""
        with self._lock:
            self._clear()
            click.echo(line, err=err)

    def stop(self) -> float:
        """Stop redrawing and clear the line; returns the seconds elapsed."""
        self._stop.set()
        self._thread.join()
        with self._lock:
            self._clear()
        return time.monotonic() - self.started

    def _loop(self) -> None:
        if self._stop.wait(self.delay):
            return
        while not self._stop.is_set():
            with self._lock:
                self._draw()
            self._stop.wait(TICK)

    def _draw(self) -> None:
        width = shutil.get_terminal_size((80, 24)).columns - 1
        head = f"{self.text}... {time.monotonic() - self.started:.1f}s"
        tail = f"  {self.last}" if self.last else ""
        tail = tail[: max(width - len(head), 0)]
        head = head[:width]
        shown = len(head) + len(tail)
        pad = " " * max(self._drawn - shown, 0)
        click.echo("\r" + head + self.dim(tail) + pad, nl=False)
        sys.stdout.flush()
        self._drawn = shown

    def _clear(self) -> None:
        if self._drawn:
            click.echo("\r" + " " * self._drawn + "\r", nl=False)
            sys.stdout.flush()
            self._drawn = 0


class UI:
    def __init__(self, quiet: bool = False, verbose: bool = False):
        self.quiet = quiet
        self.verbose = verbose
        tty = sys.stdout.isatty()
        self.color = tty and not os.environ.get("NO_COLOR")
        # A live line needs a terminal that honours a carriage return.
        self.animate = tty and not quiet and os.environ.get("TERM") != "dumb"
        self._live: Live | None = None
        self._wait: Live | None = None
        self._label = ""
        self._started = 0.0  # when a piped `start` began: its finish prints the time too

    def _style(self, text: str, **kw: object) -> str:
        return click.style(text, **kw) if self.color and text else text  # type: ignore[arg-type]

    def _dim(self, text: str) -> str:
        return self._style(text, dim=True)

    def _echo(self, text: str, err: bool = False) -> None:
        """text is printable already (and styled): the public methods escape before they style."""
        if self._wait is not None:
            self._wait.say(text, err)
        else:
            click.echo(text, err=err)

    def line(self, text: str = "") -> None:
        if not self.quiet:
            self._echo(printable(text))

    def detail(self, text: str) -> None:
        if self.verbose and not self.quiet:
            self._echo(self._dim(printable(text)))

    def command(self, text: str) -> None:
        """A command as the user would type it, before its output."""
        if not self.quiet:
            click.echo(self._style(f"$ {printable(text)}", bold=True))

    def start(self, text: str) -> None:
        """The first half of `Building... PASS`; on a terminal, a live line until finish."""
        if self.quiet:
            return
        text = printable(text)
        if self.animate:
            self._label = text
            self._live = Live(text, self._dim)
        else:
            self._started = time.monotonic()
            click.echo(text + "... ", nl=False)

    def output(self, line: str) -> None:
        """The latest output line of the running command (shown live on a terminal)."""
        if self._live is not None:
            self._live.output(printable(line))

    def finish(self, ok: bool, text: str) -> None:
        if self.quiet:
            return
        verdict = self._style(printable(text), fg="green" if ok else "red", bold=not ok)
        if self._live is not None:
            seconds = self._live.stop()
            self._live = None
            click.echo(f"{self._label}... {verdict}" + self._dim(_took(seconds)))
        else:
            click.echo(verdict + _took(time.monotonic() - self._started))

    @contextmanager
    def waiting(self, text: str) -> Iterator[Callable[[str], None]]:
        """A live elapsed-time line while a silent step runs (a wait on a model, a diff),
        if it runs long enough to be noticed; nothing is left behind, and nothing at all
        off a terminal. Lines printed meanwhile go above it; the function yielded sets
        the live line's tail (e.g. the retry under way)."""
        nested = self._live is not None or self._wait is not None
        live = Live(text, self._dim, delay=QUIET_STEP) if self.animate and not nested else None
        if live is not None:
            self._wait = live
        try:
            yield live.output if live is not None else (lambda _: None)
        finally:
            if live is not None:
                self._wait = None
                live.stop()

    def good(self, text: str) -> None:
        if not self.quiet:
            self._echo(self._style(printable(text), fg="green"))

    def bad(self, text: str) -> None:
        self._echo(self._style(printable(text), fg="red", bold=True), err=self.quiet)

    def heading(self, text: str) -> None:
        if not self.quiet:
            click.echo()
            click.echo(self._style(printable(text), bold=True))


def _took(seconds: float) -> str:
    """` (2.1s)` after a verdict; nothing for a recorded result, which takes no time."""
    return f" ({seconds:.1f}s)" if seconds >= 0.1 else ""
