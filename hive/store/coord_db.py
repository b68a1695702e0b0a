"""The local coordination store: one SQLite file shared by every worktree of a clone.

Fast-changing coordination state (shared context, the coordinator queue and its
leases, blackboard entries with a TTL, the scratchpad, todo lists, per-session
read tracking and tool-call counters) lives in ``<git common dir>/hive/coord.sqlite3``,
not in git: it changes many times a second and nobody reviews it. SQLite gives
what that state needs across processes: WAL mode (readers never block the writer),
``BEGIN IMMEDIATE`` for every read-modify-write (the write lock is taken before the
read, so two processes can never both act on the same old value), a busy timeout
instead of errors under contention, and durability across a crashed process.

Connections are kept per (process, thread, file): a forked child or another
thread opens its own, as sqlite3 requires.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections.abc import Iterator

from hive.errors import CorruptFile, GitError, LockTimeout
from hive.store.layout import make_state_dir
from hive.store.sqlerrors import is_transient, use_wal

DB_FILE = "coord.sqlite3"
BUSY_TIMEOUT_MS = 30_000
SCHEMA_VERSION = 1

SCHEMA = """
CREATE TABLE IF NOT EXISTS ctx (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    version INTEGER NOT NULL,
    agent TEXT NOT NULL DEFAULT '',
    updated_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS queue (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    payload TEXT NOT NULL,
    status TEXT NOT NULL,
    claimed_by TEXT,
    lease_until REAL,
    result TEXT,
    enqueued_by TEXT NOT NULL DEFAULT '',
    created_at REAL NOT NULL,
    done_at REAL
);
CREATE INDEX IF NOT EXISTS queue_status ON queue (status, seq);
CREATE TABLE IF NOT EXISTS blackboard (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    source_agent TEXT NOT NULL,
    written_at REAL NOT NULL,
    ttl REAL,
    expires_at REAL
);
CREATE TABLE IF NOT EXISTS scratchpad (
    path TEXT PRIMARY KEY,
    content TEXT NOT NULL,
    title TEXT NOT NULL,
    size INTEGER NOT NULL,
    agent TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS todos (
    agent TEXT PRIMARY KEY,
    todos TEXT NOT NULL,
    updated_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS reads (
    session TEXT NOT NULL,
    agent TEXT NOT NULL,
    path TEXT NOT NULL,
    read_at REAL NOT NULL,
    PRIMARY KEY (session, agent, path)
);
CREATE TABLE IF NOT EXISTS call_counts (
    session TEXT NOT NULL,
    agent TEXT NOT NULL,
    phase TEXT NOT NULL,
    calls INTEGER NOT NULL,
    updated_at REAL NOT NULL,
    PRIMARY KEY (session, agent, phase)
);
CREATE TABLE IF NOT EXISTS qa_runs (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    ran_at REAL NOT NULL,
    agent TEXT NOT NULL,
    snapshot TEXT NOT NULL
);
"""

_local = threading.local()


def _close_before_fork() -> None:
    """Before ``fork``: close this thread's connections, so that a forked child's own
    connections take the files' real locks (see ``hive.store.index``: a child sharing
    SQLite's per-file state with an inherited connection loses its writes)."""
    cache: dict[tuple[int, str], sqlite3.Connection] = _local.__dict__.get("conns", {})
    for key, conn in list(cache.items()):
        if not conn.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                conn.close()
            del cache[key]


os.register_at_fork(before=_close_before_fork)


def db_path(state_dir: str) -> str:
    return os.path.join(state_dir, DB_FILE)


def connection(state_dir: str) -> sqlite3.Connection:
    """This thread's connection to the store under ``state_dir`` (created on first use)."""
    key = (os.getpid(), db_path(state_dir))
    cache: dict[tuple[int, str], sqlite3.Connection] = _local.__dict__.setdefault("conns", {})
    conn = cache.get(key)
    if conn is None:
        conn = _open(state_dir)
        cache[key] = conn
    return conn


def _open(state_dir: str) -> sqlite3.Connection:
    make_state_dir(state_dir)
    path = db_path(state_dir)
    try:
        conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        use_wal(conn, BUSY_TIMEOUT_MS / 1000)
        conn.execute("PRAGMA synchronous = NORMAL")
        if conn.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:
            with _immediate(conn):
                for statement in SCHEMA.split(";"):
                    if statement.strip():
                        conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    except sqlite3.DatabaseError as exc:
        raise _translated(path, exc) from None
    return conn


def _not_made_yet(state_dir: str) -> bool:
    """No store under ``state_dir`` yet, nor anything in the way of one (a file in
    place of the directory is named by the error, not read as an empty store)."""
    in_the_way = os.path.lexists(state_dir) and not os.path.isdir(state_dir)
    return not in_the_way and not os.path.lexists(db_path(state_dir))


def _empty_store() -> sqlite3.Connection:
    """An empty store in memory: what a reader finds before the first write."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.executescript(SCHEMA)
    return conn


def _translated(path: str, exc: sqlite3.DatabaseError) -> Exception:
    """A lock held too long, a damaged file, or (anything else) the error itself."""
    if is_transient(exc):
        return LockTimeout(f"the coordination store {path} stayed locked")
    text = str(exc).lower()
    if "unable to open database file" in text or "readonly database" in text:
        return GitError(
            f"cannot write the coordination store {path} ({exc}): shared context, the"
            " queue, the blackboard, the scratchpad and todo lists live there, and its"
            f" directory {os.path.dirname(path)} must be writable"
        )
    if "not a database" in text or "malformed" in text or "corrupt" in text:
        return CorruptFile(
            f"the coordination store {path} cannot be used ({exc}); move it aside to start"
            " with empty coordination state",
            path=path,
        )
    return exc


@contextlib.contextmanager
def _immediate(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


@contextlib.contextmanager
def write(state_dir: str) -> Iterator[sqlite3.Connection]:
    """One read-modify-write transaction: the write lock is held from the first read."""
    conn = connection(state_dir)
    try:
        with _immediate(conn):
            yield conn
    except sqlite3.DatabaseError as exc:
        raise _translated(db_path(state_dir), exc) from None


@contextlib.contextmanager
def read(state_dir: str) -> Iterator[sqlite3.Connection]:
    """A consistent read (one snapshot of the WAL) without taking the write lock; a
    store not made yet that cannot be made here (a read-only ``.git``) reads as the
    empty store it would be."""
    try:
        conn = connection(state_dir)
    except GitError:
        if not _not_made_yet(state_dir):
            raise
        conn = _empty_store()
    try:
        conn.execute("BEGIN")
        try:
            yield conn
        finally:
            conn.execute("COMMIT")
    except sqlite3.DatabaseError as exc:
        raise _translated(db_path(state_dir), exc) from None
