"""SQLite errors as hive's two SQLite files (the state index, coord.sqlite3) read them.

A leaf module (only ``sqlite3``): the lean command path imports it."""

from __future__ import annotations

import sqlite3

_BUSY_CODES = (5, 6)  # SQLITE_BUSY, SQLITE_LOCKED (and their extended codes)


def is_transient(exc: BaseException) -> bool:
    """True for an error that says another process holds the file for now (busy,
    locked), not that the file is broken: waited out or retried, never "repaired" by
    a rebuild (which would pull the file from under the processes using it)."""
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    return exc.sqlite_errorcode & 0xFF in _BUSY_CODES  # the primary code of an extended one
