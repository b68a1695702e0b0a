"""SQLite errors as hive's two SQLite files (the state index, coord.sqlite3) read them,
and ``sqlite3`` itself for the modules a fresh process imports.

A leaf module: the lean command path imports it. Its ``sqlite3`` is the C module
``_sqlite3`` that the ``sqlite3`` package re-exports (the very same connection and
exception classes) without ``sqlite3.dbapi2``'s own imports (``datetime``,
``collections.abc``: ~2 ms of a fresh process) and its default adapters for
``datetime`` values, which the state index never binds."""

from __future__ import annotations

import time


def _load_sqlite() -> None:
    """Import ``_sqlite3`` without ``functools``: the C module asks ``functools`` for
    ``lru_cache`` when it is imported (its statements' cache) and nothing else, and
    ``functools`` imports ``collections`` (``operator``, ``keyword``, ``reprlib``): ~2.5
    ms of every fresh process that reads the state index, which needs none of them. A
    stand-in gives it the very cache ``functools.lru_cache`` wraps (``_functools``'s C
    ``_lru_cache_wrapper``) and is gone again at once: a later ``import functools``
    loads the real module."""
    import sys

    if "functools" in sys.modules or "_sqlite3" in sys.modules:
        return
    import _functools  # type: ignore[import-not-found]

    def lru_cache(maxsize: int | None = 128, typed: bool = False) -> object:
        def decorating(function: object) -> object:
            return _functools._lru_cache_wrapper(function, maxsize, typed, tuple)

        return decorating

    stand_in = type(sys)("functools")
    stand_in.lru_cache = lru_cache  # type: ignore[attr-defined]
    sys.modules["functools"] = stand_in
    try:
        __import__("_sqlite3")
    except Exception:  # a _sqlite3 that wants more of functools: it is imported
        pass  # again below, with the real module
    finally:
        if sys.modules.get("functools") is stand_in:
            del sys.modules["functools"]


try:
    _load_sqlite()
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
