"""Each model exchange of run and plan in llm's database, so `llm logs` shows what
git-retcon sent and what came back -- when the user's llm logging is on.

llm's Python API never logs by itself: a tool calls response.log_to_db(db) on a
database that llm's migrations have set up. Whether logging is on is llm's own
switch (`llm logs off` creates `logs-off` in llm's user directory), read the way
llm.cli.logs_on() reads it without importing llm's whole command line.
"""
from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from typing import Any

import llm


def logs_on() -> bool:
    """llm's `llm logs status`: on unless `llm logs off` was run."""
    return not (llm.user_dir() / "logs-off").exists()  # type: ignore[no-untyped-call]  # unannotated in llm


class ExchangeLog:
    """Writes responses to llm's logs.db; opened on first use, from any thread.
    A database that cannot be written is said once and then left alone: logging
    never stops a run."""

    def __init__(self, enabled: bool = True, say: Callable[[str], None] | None = None):
        self.enabled = enabled
        self.say = say
        self.problem: str | None = None
        self._db: Any = None
        self._lock = threading.Lock()

    def record(self, response: llm.Response) -> None:
        if not self.enabled:
            return
        with self._lock:
            try:
                if self._db is None:
                    if not logs_on():
                        self.enabled = False
                        return
                    import sqlite_utils
                    from llm.migrations import migrate

                    path = llm.user_dir() / "logs.db"  # type: ignore[no-untyped-call]  # llm.cli.logs_db_path()
                    path.parent.mkdir(parents=True, exist_ok=True)
                    db = sqlite_utils.Database(sqlite3.connect(str(path), check_same_thread=False))
                    migrate(db)  # type: ignore[no-untyped-call]
                    self._db = db
                response.log_to_db(self._db)  # type: ignore[no-untyped-call]
            except Exception as exc:  # noqa: BLE001 - a locked or broken database must not stop the run
                self.enabled = False
                self.problem = f"llm logs: could not write to llm's log database ({exc}); not logging this run"
                if self.say is not None:
                    self.say(self.problem)
