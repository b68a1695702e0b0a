"""SQLite errors as hive's two SQLite files (the state index, coord.sqlite3) read them,
and ``sqlite3`` itself for the modules a fresh process imports.

A leaf module: the lean command path imports it. Its ``sqlite3`` is the C module
``_sqlite3`` that the ``sqlite3`` package re-exports (the very same connection and
exception classes) without ``sqlite3.dbapi2``'s own imports (``datetime``,
``collections.abc``: ~2 ms of a fresh process) and its default adapters for
``datetime`` values, which the state index never binds."""

from __future__ import annotations

import time

try:
    import _sqlite3 as sqlite3
except ImportError:  # an implementation without the C module
    import sqlite3  # type: ignore[no-redef]

__all__ = ["is_transient", "sqlite3", "use_wal"]

_BUSY_CODES = (5, 6)  # SQLITE_BUSY, SQLITE_LOCKED (and their extended codes)


def is_transient(exc: BaseException) -> bool:
    """True for an error that says another process holds the file for now (busy,
    locked), not that the file is broken: waited out or retried, never "repaired" by
    a rebuild (which would pull the file from under the processes using it)."""
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    # None when the sqlite3 module raised it itself, not SQLite: "Could not decode to
    # UTF-8 column ..." (damaged text), which is no sign of another process
    code = getattr(exc, "sqlite_errorcode", None)
    return code is not None and code & 0xFF in _BUSY_CODES  # the primary code of an extended one


def use_wal(conn: sqlite3.Connection, timeout: float) -> None:
    """Put ``conn``'s file in WAL mode (kept in the file: a no-op once any process did it).

    On a new file that other processes open at the same moment SQLite answers "database
    is locked" at once, without waiting its busy timeout: tried again (backing off) until
    ``timeout`` seconds have passed; the last error is raised then."""
    deadline = time.monotonic() + timeout
    delay = 0.001
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if not is_transient(exc) or time.monotonic() >= deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, 0.05)
