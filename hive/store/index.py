"""The state index: the parsed state of ``.hive/`` in SQLite, keyed by git content.

Everything here is a pure function of git object ids, so nothing can go stale:

* ``blobs``: one row per cell file version (blob id) ever parsed: the cell's
  light fields (for queries), its JSON (as ``--json`` prints it) or, for a file
  that does not parse, the problem and its line;
* ``dirs``: the listing of each tree object below ``.hive/cells``, each entry
  carrying its blob's light fields (trees and blobs never change, so a listing
  is stored once, and reading a state of 10,000 cells is one indexed query over
  small rows; dropped with the last kept state holding its tree);
* ``dependents``: target -> each cell file version (blob, its cell id) with a
  ``blocks`` dependency on it, stored with the first listing that holds the
  version: "what waits on this cell" is a range of this table and a lookup of
  each one's name in each tree of the state, not a read of every cell row;
* ``states``: the cells trees whose every tree and blob is in the tables (the
  newest few: see :meth:`StateIndex._prune_states`);
* ``commits``: commit id -> its ``.hive`` and ``.hive/cells`` tree ids;
* ``ready``, ``ready_done``, ``ready_delta``: the ready list of a state, stored by the
  first process that needed it: whole, or as a delta over a whole one
  (``hive/domain/ready_lists.py``);
* ``mail_state``: the mail log (``refs/hive/mail``) replayed up to a tip commit,
  as JSON (``hive/domain/mail.py``);
* ``path_rules``: config file version (blob id) -> the ``tools.permissions`` rules
  the models parsed from it, as JSON (stored by the pre-commit hook's full check, read
  by its quick one: ``hive/cli/lean.py``).

A state is answered only when its key (the cells tree id of the commit HEAD
points at, read from git just before) is in ``states``; building one lists
only trees and parses only blobs not seen before. The file lives under the
common git directory (shared by worktrees), uses WAL so readers never wait for
writers, and every change is one transaction. A file that is not a database,
is truncated, or carries another schema is rebuilt (with a notice); the
schema version is derived from the models (:data:`MODEL_FINGERPRINT`, checked
by a test), not from hive's version.

This module imports only the standard library: a fresh ``hive ready`` reads
it without pydantic, typer or dulwich.
"""

from __future__ import annotations

import _thread
import os
import time
from _weakrefset import WeakSet  # weakref.WeakSet, without importing weakref

from hive import store
from hive.jsontext import dumps_strings, inert_bytes
from hive.record import Frozen, Record, suppress
from hive.store.layout import CELLS_DIR, cell_id_from_path, cell_path
from hive.store.sqlerrors import is_transient, sqlite3, use_wal

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
    from typing import Any, Literal, TypeAlias

    TreeLister: TypeAlias = Callable[[str], Sequence[tuple[str, str, bool]]]  # (name, sha, is_tree)
    BlobReader: TypeAlias = Callable[
        [Sequence[tuple[str, str]]], Iterator[tuple[str, str, "bytes | ParseProblem"]]
    ]
    Decoder: TypeAlias = Callable[[bytes, str], "ParsedCell | ParseProblem"]
    Progress: TypeAlias = Callable[[int, int], None]
    LightRow: TypeAlias = tuple[str, str, Sequence[Any]]  # (path, blob, LIGHT columns)
    # a derived ready list's row: id, blob, ready, in_base, slot, priority, created, at
    DeltaRow: TypeAlias = tuple[Any, ...]

# Bump TABLES_VERSION when the tables change; MODEL_FINGERPRINT follows the Cell
# model's JSON schema (tests/test_state_index.py recomputes it and fails on drift).
TABLES_VERSION = 8  # 8: ready lists derived from an earlier state's (ready_delta),
# states pruned; 7: stored ready lists list an epic with no subtask again (as
# beads does; 6 left it out); 5: the dependents table; 4: times in a cell's JSON as
# the files write them
MODEL_FINGERPRINT = "5828bc27bd4a3a23"
SCHEMA = f"hive-index-{TABLES_VERSION}-{MODEL_FINGERPRINT}"
FILE_NAME = "index.sqlite3"
BATCH = 500  # cell files parsed and inserted per transaction in a cold build
# A state indexed while other processes rebuild the file (each found it damaged) is
# indexed again from the start; after this many rebuilds the caller is told to retry.
REBUILT_RETRIES = 3
SQLITE_BUSY = 5
BUSY_TIMEOUT_MS = 30_000
WAL_RESTART_BYTES = 4 << 20  # ~1,000 pages: where SQLite's own checkpoint starts

_LIGHT = """
    id TEXT, status TEXT, type TEXT, priority INTEGER, parent TEXT, assignee TEXT,
    title TEXT, created REAL, deleted INTEGER, blockers TEXT,
    error TEXT, error_path TEXT, line INTEGER"""
LIGHT = (
    "id, status, type, priority, parent, assignee, title, created, deleted, blockers, "
    "error, error_path, line"
)
# blobs is a rowid table: its rows (the printed JSON) are large and arrive in hash
# order, which a WITHOUT ROWID b-tree pays for with page splits (3x slower cold builds).
_DDL = f"""
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE blobs(blob TEXT PRIMARY KEY, {_LIGHT}, labels TEXT, json BLOB);
CREATE TABLE dependents(
    target TEXT NOT NULL, blob TEXT NOT NULL, id TEXT NOT NULL,
    PRIMARY KEY(target, blob)
) WITHOUT ROWID;
CREATE TABLE dirs(
    tree TEXT NOT NULL, name TEXT NOT NULL, sha TEXT NOT NULL, is_tree INTEGER NOT NULL,
    {_LIGHT},
    PRIMARY KEY(tree, name)
) WITHOUT ROWID;
CREATE TABLE states(key TEXT PRIMARY KEY, built REAL NOT NULL) WITHOUT ROWID;
CREATE TABLE commits(commit_id TEXT PRIMARY KEY, hive TEXT, cells TEXT) WITHOUT ROWID;
CREATE TABLE ready(
    key TEXT NOT NULL, rank INTEGER NOT NULL, id TEXT NOT NULL, blob TEXT NOT NULL,
    PRIMARY KEY(key, rank)
) WITHOUT ROWID;
CREATE TABLE ready_done(
    key TEXT PRIMARY KEY, base TEXT, total INTEGER NOT NULL, strays INTEGER NOT NULL,
    made INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE ready_delta(
    key TEXT NOT NULL, id TEXT NOT NULL, blob TEXT NOT NULL, ready INTEGER NOT NULL,
    in_base INTEGER NOT NULL, slot INTEGER, priority INTEGER, created REAL, at REAL,
    PRIMARY KEY(key, id)
) WITHOUT ROWID;
"""
# The mail log replayed up to a tip commit (hive/domain/mail.py), as JSON: one row.
_MAIL_TABLE = "CREATE TABLE IF NOT EXISTS mail_state(tip TEXT PRIMARY KEY, state BLOB NOT NULL)"
# The tools.permissions rules parsed (by the models) from a config file version: the
# quick pre-commit hook reads an agent's rules here instead of importing the models.
_RULES_TABLE = "CREATE TABLE IF NOT EXISTS path_rules(config TEXT PRIMARY KEY, rules BLOB NOT NULL)"
# Subdirectories by tree (few rows): "is this state in hive's shard layout" is then
# 33 point lookups instead of a scan of every cell row. Created on open when missing
# (files made before it existed), so it is not part of the schema string.
_SUBTREES = "CREATE INDEX IF NOT EXISTS dirs_subtrees ON dirs(tree) WHERE is_tree = 1"
# The files of a state that name a parent, or an assignee (swarm mail: who works in an
# epic, the sender's open work): point lookups per tree of the state, however many other
# cells it holds. Created on open when missing, like dirs_subtrees.
_BY_FACT = (
    "CREATE INDEX IF NOT EXISTS dirs_parent ON dirs(parent, tree) WHERE parent IS NOT NULL",
    "CREATE INDEX IF NOT EXISTS dirs_assignee ON dirs(assignee, tree) WHERE assignee IS NOT NULL",
)


# The cell files of a tree that cannot be used (an error, or a name that is not their
# id): `hive list` and `ready` ask for their count every time, a point lookup per shard
# instead of reading every cell row (~3 ms at 10,000 cells). Nearly always empty.
def _problem_files(row: str = "") -> str:
    """The terms of such a file (of table alias ``row``: ``"s."``); a query reads the
    partial index only when its terms are these."""
    return (
        f"{row}is_tree = 0 AND {row}name LIKE '%.yaml'"
        f" AND ({row}error IS NOT NULL OR {row}name != {row}id || '.yaml')"
    )


_PROBLEMS = f"CREATE INDEX IF NOT EXISTS dirs_problems ON dirs(tree) WHERE {_problem_files()}"
# Whether a whole ready list holds a cell (a list derived from it: which of the cells
# decided again leave it), by point lookups instead of reading its ~6,700 rows.
_READY_MEMBERS = "CREATE INDEX IF NOT EXISTS ready_members ON ready(key, id)"
_EXTRA_INDEXES = (_SUBTREES, *_BY_FACT, _PROBLEMS, _READY_MEMBERS)
# The tables of _DDL: a file of this schema lacking one is damaged (rebuilt on open)
_TABLES = tuple(part.split("(", 1)[0].strip() for part in _DDL.split("CREATE TABLE ")[1:])
_CATALOG = (  # how many of the extra indexes and of the tables the file holds
    "SELECT total(type = 'index'), total(type = 'table') FROM sqlite_master WHERE (type ="
    " 'index' AND name IN ('dirs_subtrees', 'dirs_parent', 'dirs_assignee', 'dirs_problems',"
    " 'ready_members'))"
    " OR (type ="
    f" 'table' AND name IN ({', '.join(repr(table) for table in _TABLES)}))"
)

EMPTY_STATE = "empty"
PREFIX = CELLS_DIR + "/"
# the usual layout: every cell file one level below .hive/cells (a shard directory)
_SHARDED = (
    "FROM dirs c JOIN dirs s ON s.tree = c.sha "
    "WHERE c.tree = :key AND c.is_tree = 1 AND s.is_tree = 0"
)
# how many rows of a _SHARDED query lie outside their cell's shard (layout.shard_of: the
# first character after the root id's first '-'); ids are ASCII
_STRAY = "total(c.name != substr(s.id, instr(s.id, '-') + 1, 1))"

# The files of a state (its trees: {}) named for their cell (ID.yaml) whose version
# has a ``blocks`` dependency on the target (:meth:`StateIndex.files_of`): the target's
# ``dependents`` rows (a range of its key), then each one's name in each tree (dirs'
# key), no other cell's row read ...
_DEPENDENT_FILES = (
    "SELECT d.tree, d.name, d.sha, d.is_tree, "
    + ", ".join("d." + column for column in LIGHT.split(", "))
    + " FROM dependents e CROSS JOIN dirs d ON d.tree IN ({}) AND d.name = e.id || '.yaml'"
    " AND d.sha = e.blob AND d.is_tree = 0 WHERE e.target = ?"
)
# The entries of tree :a (side 0) and :b (side 1) the other lacks (another version,
# or none of that name), for StateIndex.changed_paths.
_TREE_DIFF = (
    "SELECT 0, * FROM (SELECT name, sha, is_tree FROM dirs WHERE tree = :a AND is_tree != 2"
    " EXCEPT SELECT name, sha, is_tree FROM dirs WHERE tree = :b AND is_tree != 2)"
    " UNION ALL SELECT 1, * FROM (SELECT name, sha, is_tree FROM dirs WHERE tree = :b"
    " AND is_tree != 2 EXCEPT SELECT name, sha, is_tree FROM dirs WHERE tree = :a"
    " AND is_tree != 2)"
)
# How many entries of ``.hive/cells`` itself differ between two states.
_ROOT_DISTANCE = (
    "SELECT (SELECT count(*) FROM (SELECT name, sha FROM dirs WHERE tree = :a"
    " EXCEPT SELECT name, sha FROM dirs WHERE tree = :b))"
    " + (SELECT count(*) FROM (SELECT name, sha FROM dirs WHERE tree = :b"
    " EXCEPT SELECT name, sha FROM dirs WHERE tree = :a))"
)
# ... unless that is more than PROBE_LIMIT lookups (a cell very many versions wait on):
# then the same files found by reading each file row's blockers (one per line).
PROBE_LIMIT = 5_000
_BLOCKING_SCAN = (
    f"SELECT tree, name, sha, is_tree, {LIGHT} FROM dirs WHERE tree IN ({{}}) AND is_tree = 0"
    " AND name = id || '.yaml'"
    " AND instr(char(10) || blockers || char(10), char(10) || ? || char(10)) > 0"
)


class ParsedCell(Frozen):
    """What the index keeps of one cell file version (made by the domain layer)."""

    __slots__ = _fields = (
        "id",
        "status",
        "type",
        "priority",
        "parent",
        "assignee",
        "title",
        "labels",
        "created",
        "deleted",
        "dependencies",
        "json",
    )

    def __init__(
        self,
        id: str,
        status: str,
        type: str,
        priority: int,
        parent: str | None,
        assignee: str | None,
        title: str,
        labels: list[str],
        created: float,
        deleted: bool,
        dependencies: list[tuple[str, str]],
        json: bytes,
    ) -> None:
        self.id = id
        self.status = status
        self.type = type
        self.priority = priority
        self.parent = parent
        self.assignee = assignee
        self.title = title
        self.labels = labels
        self.created = created
        self.deleted = deleted
        self.dependencies = dependencies  # (type, target)
        self.json = json


class Node(Record):
    """The facts about one cell that readiness depends on (hive/domain/readiness.py),
    and its assignee (counted by ``hive stats`` without decoding the cell)."""

    __slots__ = _fields = (
        "id",
        "status",
        "type",
        "priority",
        "created",
        "parent",
        "deleted",
        "blockers",
        "assignee",
    )

    def __init__(
        self,
        id: str,
        status: str,
        type: str,
        priority: int,
        created: float,
        parent: str | None,
        deleted: bool,
        blockers: list[str] | None = None,
        assignee: str | None = None,
    ) -> None:
        self.id = id
        self.status = status
        self.type = type
        self.priority = priority
        self.created = created
        self.parent = parent
        self.deleted = deleted
        self.blockers: list[str] = [] if blockers is None else blockers
        self.assignee = assignee


class ParseProblem(Frozen):
    """A cell file version that does not parse: the message and its line."""

    __slots__ = _fields = ("message", "path", "line")

    def __init__(self, message: str, path: str, line: int | None) -> None:
        self.message = message
        self.path = path
        self.line = line


class Entry(Frozen):
    """One file of a state: its path and blob, and what the blob holds."""

    __slots__ = _fields = (
        "path",
        "blob",
        "id",
        "status",
        "type",
        "priority",
        "parent",
        "created",
        "deleted",
        "error",
        "error_path",
        "line",
        "blockers",
        "assignee",
        "title",
    )

    def __init__(
        self,
        path: str,
        blob: str,
        id: str | None,
        status: str | None,
        type: str | None,
        priority: int | None,
        parent: str | None,
        created: float | None,
        deleted: bool,
        error: str | None,
        error_path: str | None,
        line: int | None,
        blockers: list[str],
        assignee: str | None = None,
        title: str | None = None,
    ) -> None:
        self.path = path
        self.blob = blob
        self.id = id
        self.status = status
        self.type = type
        self.priority = priority
        self.parent = parent
        self.created = created
        self.deleted = deleted
        self.error = error
        self.error_path = error_path
        self.line = line
        self.blockers = blockers
        self.assignee = assignee
        self.title = title


def _entry(path: str, blob: str, light: Sequence[Any]) -> Entry:
    """An Entry from the light columns (in :data:`LIGHT` order)."""
    cell_id, status, kind, priority, parent, assignee, title, created, deleted, blockers = light[
        :10
    ]
    error, error_path, line = light[10:13]
    return Entry(
        path=path,
        blob=blob,
        id=cell_id,
        status=status,
        type=kind,
        priority=priority,
        parent=parent,
        created=created,
        deleted=bool(deleted),
        error=error,
        error_path=error_path,
        line=line,
        blockers=str(blockers).split("\n") if blockers else [],
        assignee=assignee,
        title=title,
    )


def _light(item: ParsedCell | ParseProblem) -> tuple[object, ...]:
    """The :data:`LIGHT` columns of a parsed cell file version (a problem's: the error)."""
    if isinstance(item, ParseProblem):
        return (*[None] * 8, 0, None, item.message, item.path, item.line)
    blockers = "\n".join(target for kind, target in item.dependencies if kind == "blocks")
    facts = (item.id, item.status, item.type, item.priority, item.parent, item.assignee)
    return (*facts, item.title, item.created, int(item.deleted), blockers, None, None, None)


def entry_of(path: str, blob: str, item: ParsedCell | ParseProblem) -> Entry:
    """The Entry a state holding ``blob`` at ``path`` lists, from its parsed version
    (for a file no stored state holds: a staged one)."""
    return _entry(path, blob, _light(item))


def _directory_light(path: str) -> tuple[Any, ...]:
    """The light columns of a directory where a cell file should be: listed as that
    file, with the problem."""
    message = (
        f"{path}: is a directory, not a cell file; move what is inside it"
        " elsewhere and commit, so the cell can be stored there again"
    )
    return (*[None] * 8, 0, None, message, path, None)


class Row(Frozen):
    """What a listing shows of one cell, and its printed JSON."""

    __slots__ = _fields = ("id", "blob", "priority", "type", "status", "assignee", "title", "json")

    def __init__(
        self,
        id: str,
        blob: str,
        priority: int,
        type: str,
        status: str,
        assignee: str | None,
        title: str,
        json: bytes,
    ) -> None:
        self.id = id
        self.blob = blob
        self.priority = priority
        self.type = type
        self.status = status
        self.assignee = assignee
        self.title = title
        self.json = json


# The commits whose cells tree is no longer a stored state (commits with no cells tree
# map to the empty state, which needs no row: their rows stay).
# (a commit without a cells tree too: its NULL is in no state, and cheap to read again)
_UNKEPT_COMMITS = "DELETE FROM commits WHERE cells IS NULL OR cells NOT IN (SELECT key FROM states)"
# The parsed cells (their rowids) stored up to rowid ? that no listing kept and no stored
# ready list names: read from the primary key's index (the rows hold the printed JSON).
_UNKEPT_BLOBS = (
    "SELECT rowid FROM blobs INDEXED BY sqlite_autoindex_blobs_1 WHERE rowid <= ? AND blob"
    " NOT IN (SELECT sha FROM dirs UNION ALL SELECT blob FROM ready"
    " UNION ALL SELECT blob FROM ready_delta)"
)

_ROW = "b.id, b.blob, b.priority, b.type, b.status, b.assignee, b.title, b.json"
# A page of a derived ready list (StateIndex.ready): its base's ranks, less the ids
# of its delta, merged with the delta's ready rows by position.
_DERIVED_PAGE = (
    f"SELECT {_ROW} FROM (SELECT rank AS at, blob FROM ready WHERE key = :base"
    " AND id NOT IN (SELECT id FROM ready_delta WHERE key = :key)"
    " UNION ALL SELECT at, blob FROM ready_delta WHERE key = :key AND ready = 1"
    " ORDER BY at LIMIT :limit) u LEFT JOIN blobs b ON b.blob = u.blob ORDER BY u.at"
)


class ListQuery(Frozen):
    """Filters of ``hive list`` (values already normalized)."""

    __slots__ = _fields = (
        "status",
        "type",
        "priority",
        "parent",
        "label",
        "assignee",
        "include_deleted",
        "limit",
    )

    def __init__(
        self,
        status: str | None = None,
        type: str | None = None,
        priority: int | None = None,
        parent: str | None = None,
        label: str | None = None,
        assignee: str | None = None,
        include_deleted: bool = False,
        limit: int | None = None,
    ) -> None:
        self.status = status
        self.type = type
        self.priority = priority
        self.parent = parent
        self.label = label
        self.assignee = assignee
        self.include_deleted = include_deleted
        self.limit = limit


def misnamed_message(path: str, expected: str, found: str | None) -> str:
    return f"{path}: file is named for {expected!r} but contains id {found!r}"


def nodes_of(
    entries: Sequence[Entry], blobs: dict[str, str] | None = None
) -> tuple[dict[str, Node], set[str]]:
    """Readiness facts of the usable cells, and the ids of cell files that do not parse;
    ``blobs``, when given, gets the blob of each usable cell (the file its facts come
    from), in the same pass."""
    nodes: dict[str, Node] = {}
    unreadable: set[str] = set()
    for entry in entries:
        expected = cell_id_from_path(entry.path)
        if expected is None:
            continue
        if entry.error is not None or entry.id != expected:
            unreadable.add(expected)
            continue
        if expected in nodes and not is_own_path(entry.path, expected):
            continue  # a stray copy in another directory: the cell's own file wins
        nodes[expected] = Node(
            id=expected,
            status=entry.status or "open",
            type=entry.type or "task",
            priority=entry.priority if entry.priority is not None else 2,
            created=entry.created or 0.0,
            parent=entry.parent,
            deleted=entry.deleted,
            blockers=entry.blockers,
            assignee=entry.assignee,
        )
        if blobs is not None:
            blobs[expected] = entry.blob
    return nodes, unreadable


def is_own_path(path: str, cell_id: str) -> bool:
    """Whether ``path`` is where hive keeps ``cell_id`` (its shard directory): of two
    files of one cell (a copy by hand in another directory), that one is the cell."""
    return path == cell_path(cell_id)


class Listing:
    """One tree to store: its entries, split against its counterpart in a base state
    (``shared``: entries the counterpart holds with the same id, copied from its
    stored listing; ``dropped``: the counterpart's other names; ``fresh``: the rest)."""

    __slots__ = ("counterpart", "dropped", "fresh", "shared", "tree")

    def __init__(
        self,
        tree: str,
        counterpart: str | None,
        items: Sequence[tuple[str, str, bool]],
        old: dict[str, tuple[str, int]],
    ) -> None:
        self.tree = tree
        self.counterpart = counterpart
        self.fresh: list[tuple[str, str, bool]] = []
        shared: set[str] = set()
        for item in items:
            name, sha, is_tree = item
            if old.get(name) == (sha, int(is_tree)):
                shared.add(name)
            else:
                self.fresh.append(item)
        self.shared = bool(shared)
        self.dropped = [name for name in old if name not in shared]


_OPEN_INDEXES: WeakSet[StateIndex] = WeakSet()
_INHERITED: list[object] = []  # connections a forked child must neither use nor close


class FileConnection(sqlite3.Connection):
    """A connection to the index file that the before-fork hook can find even when its
    index is gone (a plain ``sqlite3.Connection`` cannot be weakly referenced)."""


# Every open connection to an index file, also those whose StateIndex was collected
# while they were not (kept alive by a reference cycle until the cyclic collector runs).
_FILE_CONNECTIONS: WeakSet[FileConnection] = WeakSet()


def _close_connections_before_fork() -> None:
    """Before ``fork``: close the forking thread's connections (reopened on next use).

    A child must not share SQLite's per-file state with its parent. A connection the
    child opens to a file its inherited (unused) connection also has open joins that
    connection's in-process lock records, so it never takes the file's real locks: a
    third process then believes itself the last user, checkpoints and deletes the WAL,
    and the child's later writes go to a deleted file (lost, then "database disk image
    is malformed"). With no connection open at the fork, the child starts clean."""
    for index in list(_OPEN_INDEXES):
        db = index._db
        if db is not None and not index.memory and not db.in_transaction:
            index.close()
    for orphan in list(_FILE_CONNECTIONS):  # their index is gone: nothing will use them
        with suppress(sqlite3.Error):  # ProgrammingError: another thread's
            if not orphan.in_transaction:
                orphan.close()


def _forget_connections_in_child() -> None:
    """After ``fork``: the child starts without the parent's remaining SQLite
    connections (another thread's, or one inside a transaction), which it must
    neither use nor close; they are kept, unused, until exit."""
    for index in list(_OPEN_INDEXES):
        _INHERITED.append(index._local)
        index._local = _thread._local()


os.register_at_fork(
    before=_close_connections_before_fork, after_in_child=_forget_connections_in_child
)


class Transaction:
    """``with index.transaction() as db:``: ``BEGIN IMMEDIATE`` on entering, ``COMMIT``
    when the block ends, ``ROLLBACK`` when it raises (a class: ``contextlib`` is not
    imported by a fresh process). ``joined``: a part of the enclosing transaction of
    :meth:`StateIndex.one_transaction`, which commits or rolls back the whole."""

    __slots__ = ("db", "joined", "wal")

    def __init__(
        self, db: sqlite3.Connection, *, joined: bool = False, wal: str | None = None
    ) -> None:
        self.db = db
        self.joined = joined
        self.wal = wal  # the file's WAL (None in memory)

    def __enter__(self) -> sqlite3.Connection:
        if not self.joined:
            self.db.execute("BEGIN IMMEDIATE")
        return self.db

    def __exit__(self, kind: type[BaseException] | None, value: object, trace: object) -> None:
        if self.joined:
            return
        if kind is None:
            self.db.execute("COMMIT")
            if _RECLAIM and self.db in _RECLAIM:  # it pruned: the free pages given back
                _RECLAIM.discard(self.db)
                reclaim_space(self.db)
            if self.wal is not None:
                restart_wal(self.db, self.wal)
            return
        _RECLAIM.discard(self.db)
        with suppress(sqlite3.Error):
            self.db.execute("ROLLBACK")


# The connection whose committed transaction pruned (:meth:`StateIndex._prune_states`):
# the file's free pages are given back once it has committed (``Transaction``).
_RECLAIM: WeakSet[sqlite3.Connection] = WeakSet()


def reclaim_space(db: sqlite3.Connection) -> None:
    """Give the file's free pages back to the file system when they are over
    :data:`RECLAIM_MIN_PAGES` and an eighth of it (``incremental_vacuum``: the pages
    after the last used one moved into the gaps, the file cut at the next checkpoint).
    Only an index made with ``auto_vacuum=INCREMENTAL`` (:meth:`StateIndex._recreate_tables`);
    in an older file the free pages are reused by the next writes, never given back. A
    pruning frees a few pages each time (reused by the next writes: left), a sweep of
    parsed cells many. ``executescript``: ``execute`` runs one step of the pragma, which
    frees one page."""
    try:
        (mode,) = db.execute("PRAGMA auto_vacuum").fetchone()
        (free,) = db.execute("PRAGMA freelist_count").fetchone()
        (pages,) = db.execute("PRAGMA page_count").fetchone()
        if mode == 2 and free >= RECLAIM_MIN_PAGES and free * RECLAIM_SHARE >= pages:
            db.executescript("PRAGMA incremental_vacuum")
    except sqlite3.Error:  # busy, or another process rebuilt it: the next pruning tries again
        return


def _made_incremental(db: sqlite3.Connection) -> None:
    """A file made before ``auto_vacuum=INCREMENTAL``, its tables just made anew (a
    rebuild in place: another schema, a damaged file), converted by a ``VACUUM``, which
    also gives back the pages of the tables it dropped (the file is all but empty: a
    few milliseconds). Skipped at once while another process uses the file: the next
    rebuild tries again."""
    (mode,) = db.execute("PRAGMA auto_vacuum").fetchone()
    if mode == 2:
        return
    db.execute("PRAGMA busy_timeout=0")
    try:
        with suppress(sqlite3.Error):
            db.execute("PRAGMA auto_vacuum=INCREMENTAL")
            db.execute("VACUUM")
    finally:
        db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")


def restart_wal(db: sqlite3.Connection, wal: str) -> None:
    """Empty the WAL once it holds :data:`WAL_RESTART_BYTES` (a ``TRUNCATE``
    checkpoint; skipped at once, without waiting, while another process reads).

    A hive process ends without closing its connection (``cli/entry.py``'s
    ``_exit``), so the next one to open the file is alone and recovers the WAL: it
    reads and checksums all of it, and forgets that it was checkpointed, so its
    writes are appended instead of restarting the WAL. SQLite's own checkpoints then
    never let the file shrink: at 10,000 cells it grew by ~1.5 MB a write (65 MB
    after 40), and every fresh process paid for reading it (``hive ready`` 120 ->
    165 ms of CPU over those 40 writes)."""
    try:
        size = os.stat(wal).st_size
    except OSError:
        return
    if size < WAL_RESTART_BYTES:
        return
    db.execute("PRAGMA busy_timeout=0")
    try:
        with suppress(sqlite3.Error):
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    finally:
        db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")


class OneTransaction:
    """``with index.one_transaction():``: the writes of the block (each method's own
    transaction) are one transaction of this thread's connection: one WAL commit."""

    __slots__ = ("index", "outer")

    def __init__(self, index: StateIndex) -> None:
        self.index = index
        self.outer: Transaction | None = None

    def __enter__(self) -> None:
        if getattr(self.index._local, "joined", False):
            return  # already inside one
        self.outer = Transaction(self.index.db, wal=self.index.wal)
        self.outer.__enter__()
        self.index._local.joined = True

    def __exit__(self, kind: type[BaseException] | None, value: object, trace: object) -> None:
        if self.outer is None:
            return
        self.index._local.joined = False
        self.outer.__exit__(kind, value, trace)


class ReadSnapshot:
    """``with ReadSnapshot(db):``: the block's queries read one snapshot of the file
    (a deferred transaction; inside a transaction already, that one's), so a rebuild
    by another process is seen wholly or not at all."""

    __slots__ = ("db", "own")

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.own = not db.in_transaction

    def __enter__(self) -> sqlite3.Connection:
        if self.own:
            self.db.execute("BEGIN")
        return self.db

    def __exit__(self, kind: type[BaseException] | None, value: object, trace: object) -> None:
        if self.own:
            with suppress(sqlite3.Error):
                self.db.execute("COMMIT")


class StateIndex:
    """The SQLite file of one clone (``<git common dir>/hive/index.sqlite3``)."""

    def __init__(self, state_dir: str) -> None:
        self.state_dir = state_dir
        self.memory = state_dir == ":memory:"
        self.path = ":memory:" if self.memory else os.path.join(state_dir, FILE_NAME)
        self.notices: list[str] = []
        self._memory_db: sqlite3.Connection | None = None
        # threading.local is _thread._local (threading itself costs ~0.4 ms to import)
        self._local = _thread._local()  # one connection per thread (sqlite3's rule)
        _OPEN_INDEXES.add(self)

    # ------------------------------------------------------------ connection

    @property
    def _db(self) -> sqlite3.Connection | None:
        if self.memory:
            return self._memory_db
        found: sqlite3.Connection | None = getattr(self._local, "db", None)
        return found

    @_db.setter
    def _db(self, value: sqlite3.Connection | None) -> None:
        if self.memory:
            self._memory_db = value
        else:
            self._local.db = value

    @property
    def db(self) -> sqlite3.Connection:
        db = self._db
        if db is None:
            db = self._open()
            self._db = db
        return db

    def close(self) -> None:
        """Close this thread's connection (others close with their threads)."""
        db = self._db
        if db is not None:
            with suppress(sqlite3.Error):
                db.close()
            self._db = None

    def _open(self) -> sqlite3.Connection:
        if self.memory:
            made = self._recreate_tables()
            assert made is not None
            return made[0]
        try:
            os.makedirs(self.state_dir, exist_ok=True)
        except OSError as exc:
            return self._in_memory(f"{self.state_dir} cannot be made ({exc.strerror})")
        try:
            db = self._connect()
            found = self._schema(db)
            if found == SCHEMA and self._ensure_subtrees(db):
                return db
            db.close()
            if found == SCHEMA:
                return self._rebuild("it lacks tables of its schema", broken=True)
            if found is None:
                return self._rebuild("it holds no hive index (a damaged or foreign file)")
            return self._rebuild("it was made for another schema")
        except sqlite3.DatabaseError as exc:
            if is_transient(exc):
                raise
            return self._rebuild(f"it could not be read ({exc})")

    @staticmethod
    def _ensure_subtrees(db: sqlite3.Connection) -> bool:
        """Create the extra indexes when missing; False when a table of the schema is
        missing (the file is damaged), all in one look at the catalog."""
        indexes, tables = db.execute(_CATALOG).fetchone()
        if tables != len(_TABLES):
            return False
        if indexes != len(_EXTRA_INDEXES):
            for statement in _EXTRA_INDEXES:
                db.execute(statement)
        return True

    def reset(self, why: str) -> None:
        """Start over after the file failed mid-use (corrupt pages, a foreign file)."""
        self.close()
        self._db = self._rebuild(why, broken=True)

    def recover(self, exc: sqlite3.DatabaseError) -> bool:
        """After ``exc`` failed a read: rebuild a broken file and say True; say False for
        a transient error (another process held the file past the busy timeout), which
        a rebuild must not "repair"."""
        if is_transient(exc):
            return False
        self.reset(f"it failed while reading ({exc})")
        return True

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(
            self.path,
            timeout=BUSY_TIMEOUT_MS / 1000,
            isolation_level=None,
            check_same_thread=not self.memory,  # a memory index is one process's own
            factory=FileConnection,
        )
        if not self.memory:
            _FILE_CONNECTIONS.add(db)
        db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        # Derived data: a commit need not reach the disk before the process goes on (WAL
        # stays consistent; a transaction lost to a power cut is recomputed from git).
        # The default (FULL) fsyncs the WAL on every commit: ~8 fsyncs per hive write.
        db.execute("PRAGMA synchronous=NORMAL")
        return db

    @staticmethod
    def _schema(db: sqlite3.Connection) -> str | None:
        try:
            row = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):
                return None
            raise
        return None if row is None else str(row[0])

    def _rebuild(self, why: str, *, broken: bool = False) -> sqlite3.Connection:
        """A fresh, empty index in place of an unusable one (it is only ever derived)."""
        existed = os.path.exists(self.path) and os.path.getsize(self.path) > 0
        # Tables are recreated in place, in one exclusive transaction, so that processes
        # building the index at the same moment queue instead of unlinking each other's
        # files; only a file SQLite cannot read at all is removed and made anew.
        made = self._recreate_tables(broken=broken)
        if made is None:
            for suffix in ("", "-wal", "-shm", "-journal"):
                with suppress(OSError):
                    os.unlink(self.path + suffix)
            made = self._recreate_tables()
            if made is None:
                return self._in_memory(f"{self.path} cannot be written")
        db, emptied = made
        if existed and emptied:
            self._notify(f"hive: rebuilt the state index ({self.path}): {why}")
        return db

    def _in_memory(self, why: str) -> sqlite3.Connection:
        """An index in memory, for this process only, where the file cannot be made or
        written (a read-only repository, a directory in its place): commands still
        answer, each building what it needs."""
        self._notify(f"hive: the state index is kept in memory for this command: {why}")
        self.memory = True
        self.path = ":memory:"
        made = self._recreate_tables()
        if made is None:  # pragma: no cover - SQLite without memory
            raise sqlite3.DatabaseError("cannot create a state index in memory")
        return made[0]

    def _notify(self, notice: str) -> None:
        self.notices.append(notice)
        sink = store.NOTICE_SINK  # where the CLI shows it (``hive/store/__init__.py``)
        if sink is not None:
            sink(notice)

    def _recreate_tables(self, *, broken: bool = False) -> tuple[sqlite3.Connection, bool] | None:
        """Empty tables of this schema in one exclusive transaction: the connection and
        whether it emptied them; None when SQLite cannot use the file at all. A file
        another process has just rebuilt is kept (False), unless it is ``broken`` (it
        failed mid-use: its meta row may still read well)."""
        db: sqlite3.Connection | None = None
        try:
            db = self._connect()
            # before WAL mode writes the file's first page: only a new file takes it
            db.execute("PRAGMA auto_vacuum=INCREMENTAL")
            use_wal(db, BUSY_TIMEOUT_MS / 1000)
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("BEGIN EXCLUSIVE")
            if not broken and self._schema(db) == SCHEMA:  # another process rebuilt it
                db.execute("COMMIT")
                return db, False
            tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master")]
            kinds = dict(db.execute("SELECT name, type FROM sqlite_master").fetchall())
            for name in tables:
                if kinds.get(name) == "table" and not name.startswith("sqlite_"):
                    db.execute(f'DROP TABLE IF EXISTS "{name}"')
            for statement in [*_DDL.split(";"), *_EXTRA_INDEXES, _MAIL_TABLE, _RULES_TABLE]:
                if statement.strip():
                    db.execute(statement)
            db.execute("INSERT INTO meta(key, value) VALUES ('schema', ?)", (SCHEMA,))
            db.execute(
                "INSERT INTO meta(key, value) VALUES ('generation', ?)", (os.urandom(8).hex(),)
            )
            db.execute("COMMIT")
            _made_incremental(db)
            return db, True
        except sqlite3.DatabaseError as exc:
            if db is not None:
                with suppress(sqlite3.Error):
                    db.close()  # rolls back what the transaction did
            if is_transient(exc):  # in use by another process, not broken: never unlink
                raise
            return None

    def transaction(self) -> Transaction:
        """One write transaction (``BEGIN IMMEDIATE``: writers queue, readers go on), or
        a part of the enclosing :meth:`one_transaction`."""
        return Transaction(self.db, joined=getattr(self._local, "joined", False), wal=self.wal)

    @property
    def wal(self) -> str | None:
        """The path of the file's WAL (None for an index in memory)."""
        return None if self.memory else self.path + "-wal"

    def one_transaction(self) -> OneTransaction:
        """The writes of a ``with`` block as one transaction (a write recording its new
        state: the parsed cell, the listings, the commit, in one WAL commit)."""
        return OneTransaction(self)

    # ------------------------------------------------------------ commits

    def trees_of(self, commit: str) -> tuple[str | None, str | None] | None:
        """(``.hive`` tree, ``.hive/cells`` tree) of ``commit`` when known."""
        row = self.db.execute(
            "SELECT hive, cells FROM commits WHERE commit_id = ?", (commit,)
        ).fetchone()
        return None if row is None else (row[0], row[1])

    def remember_commit(self, commit: str, hive: str | None, cells: str | None) -> None:
        """Keep ``commit``'s trees. Of the commits without a cells tree (a hive with no
        cell yet, commits from before ``hive init``: no state, so no pruning runs) only
        the last is kept: each costs one tree read to find again."""
        with self.transaction() as db:
            if cells is None:
                db.execute("DELETE FROM commits WHERE cells IS NULL")
            db.execute(
                "INSERT OR REPLACE INTO commits(commit_id, hive, cells) VALUES (?, ?, ?)",
                (commit, hive, cells),
            )

    # ------------------------------------------------------------ states

    def has_state(self, key: str) -> bool:
        if key == EMPTY_STATE:
            return True
        row = self.db.execute("SELECT 1 FROM states WHERE key = ?", (key,)).fetchone()
        return row is not None

    def ensure_state(
        self,
        key: str,
        list_tree: TreeLister,
        read_blobs: BlobReader,
        decode: Decoder,
        progress: Progress | None = None,
        *,
        base: str | None = None,
    ) -> None:
        """Make ``key`` (a cells tree id) answerable: list the trees and parse the
        blobs not indexed yet, in batches (memory stays flat however many cells).

        ``base``, a state already stored (the one a write started from), is diffed
        against: an entry of a new tree that its counterpart in ``base`` (the tree at
        the same path) also holds, with the same id, is copied from that listing in
        SQL instead of being looked up again, so a write that changed one file
        costs a few rows, not a shard's worth of lookups."""
        for _attempt in range(REBUILT_RETRIES):
            if self.has_state(key):
                return
            generation = self._generation()
            if base is not None and not self.has_state(base):
                base = None
            listings, bulk = self._parse_new(key, list_tree, read_blobs, decode, progress, base)
            if self._store_state(key, listings, generation):
                if bulk:
                    with suppress(sqlite3.OperationalError):  # busy readers: later
                        self.db.execute("PRAGMA wal_checkpoint(PASSIVE)")
                return
        busy = sqlite3.OperationalError(
            f"the state index was rebuilt {REBUILT_RETRIES} times while {key} was indexed"
        )
        busy.sqlite_errorcode = SQLITE_BUSY  # transient: the caller is told to try again
        raise busy

    def _parse_new(
        self,
        key: str,
        list_tree: TreeLister,
        read_blobs: BlobReader,
        decode: Decoder,
        progress: Progress | None,
        base: str | None,
    ) -> tuple[list[Listing], bool]:
        """The listings of ``key``'s trees not stored yet, with every cell file they
        hold that is not parsed yet parsed and stored (in batches), and whether that
        was a bulk build."""
        listings, files = self._new_trees(key, list_tree, base)
        missing = self._unparsed(files)
        bulk = len(missing) > BATCH and not self.memory
        if bulk:  # the Rust JSON encoder: see celldoc.json_of
            with suppress(ImportError):
                import pydantic_core  # noqa: F401
        if bulk:  # one checkpoint at the end, not one (two fsyncs) per 1,000 pages
            self.db.execute("PRAGMA wal_autocheckpoint=0")
        for start in range(0, len(missing), BATCH):
            batch = missing[start : start + BATCH]
            self.add_parsed(
                (sha, raw if isinstance(raw, ParseProblem) else decode(raw, path))
                for sha, path, raw in read_blobs(batch)
            )
            if progress is not None:
                progress(min(start + BATCH, len(missing)), len(missing))
        if bulk:
            self.db.execute("PRAGMA wal_autocheckpoint=1000")
        return listings, bulk

    def _store_state(self, key: str, listings: list[Listing], generation: str | None) -> bool:
        """Store the listings and mark ``key`` indexed, in one transaction; False (and
        nothing stored) when another process rebuilt the index since ``generation``
        was read: the parsed cells and base listings these rows lean on are gone."""
        with self.transaction() as db:
            if self._generation() != generation:
                return False
            for listing in reversed(listings):  # children before parents
                self._store_listing(db, listing)
            self._store_dependents(db, listings)
            db.execute("INSERT OR IGNORE INTO states(key, built) VALUES (?, ?)", (key, time.time()))
            self._prune_states(db)
        return True

    def _prune_states(self, db: sqlite3.Connection) -> None:
        """Past :data:`STATES_KEPT` + :data:`PRUNE_SLACK` states, drop all but the
        newest :data:`STATES_KEPT` and the listings of trees only dropped states held
        (every write is a new state: ~300 rows at 10,000 cells, which were kept forever).
        In the storing transaction; a new ``pruned`` token in ``meta`` sends a process
        indexing a state meanwhile (which may lean on a listing dropped here) to start
        it again, as a rebuild does. A dropped state is indexed again when asked."""
        (count,) = db.execute("SELECT count(*) FROM states").fetchone()
        if count <= STATES_KEPT + PRUNE_SLACK:
            return
        ranked = [row[0] for row in db.execute("SELECT key FROM states ORDER BY built DESC, key")]
        kept: set[str] = set()
        for key in ranked[:STATES_KEPT]:
            kept.update(self._trees_of_state(key))
        dropped: set[str] = set()
        for key in ranked[STATES_KEPT:]:
            dropped.update(self._trees_of_state(key))
        db.executemany("DELETE FROM states WHERE key = ?", [(key,) for key in ranked[STATES_KEPT:]])
        db.executemany("DELETE FROM dirs WHERE tree = ?", [(tree,) for tree in dropped - kept])
        db.execute(_UNKEPT_COMMITS)
        self._sweep_blobs(db)
        db.execute(
            "INSERT OR REPLACE INTO meta(key, value) VALUES ('pruned', ?)", (os.urandom(8).hex(),)
        )
        _RECLAIM.add(db)

    @staticmethod
    def _sweep_blobs(db: sqlite3.Connection) -> None:
        """Drop the parsed cells no kept listing or stored ready list names, with their
        ``dependents`` rows, once :data:`SWEEP_MIN`, or an eighth as many as the last
        sweep kept, have been stored since it (each write stores one or two; the sweep
        reads every key of ``dirs``, ``blobs`` and the ready lists: ~20 ms at 10,000
        cells, so it runs about once in 1,250 writes there, and the table holds at most
        1,000 or an eighth more rows than the kept states and lists name). A cell
        parsed since the previous pruning is spared: a process indexing a state may
        have parsed it for a listing not stored yet (which the new ``pruned`` token
        refuses anyway, but it need not parse again)."""
        marks = dict(db.execute("SELECT key, value FROM meta WHERE key IN ('swept', 'parsed')"))
        swept, live = (int(part) for part in marks.get("swept", "0 0").split())
        spared = int(marks.get("parsed", "0"))  # the newest rowid at the previous pruning
        (top,) = db.execute("SELECT coalesce(max(rowid), 0) FROM blobs").fetchone()
        db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('parsed', ?)", (str(top),))
        if spared <= swept or top - swept <= max(SWEEP_MIN, live // SWEEP_SHARE):
            return
        gone = [row[0] for row in db.execute(_UNKEPT_BLOBS, (spared,))]
        edges: list[tuple[str, str]] = []
        for start in range(0, len(gone), BATCH):
            part = gone[start : start + BATCH]
            rows = db.execute(
                f"SELECT blob, blockers FROM blobs WHERE rowid IN ({','.join('?' for _ in part)})"
                " AND blockers != ''",
                part,
            )
            edges += [(target, blob) for blob, blockers in rows for target in blockers.split("\n")]
        db.executemany("DELETE FROM dependents WHERE target = ? AND blob = ?", edges)
        db.executemany("DELETE FROM blobs WHERE rowid = ?", [(rowid,) for rowid in gone])
        (live,) = db.execute("SELECT count(*) FROM blobs").fetchone()
        db.execute(
            "INSERT OR REPLACE INTO meta(key, value) VALUES ('swept', ?)", (f"{spared} {live}",)
        )

    def _generation(self) -> str | None:
        """The tokens a rebuild of the file and a pruning of its states set anew (None
        in a file made before them)."""
        row = self.db.execute(
            "SELECT group_concat(value, '/') FROM (SELECT value FROM meta"
            " WHERE key IN ('generation', 'pruned') ORDER BY key)"
        ).fetchone()
        return None if row is None or row[0] is None else str(row[0])

    def _new_trees(
        self, key: str, list_tree: TreeLister, base: str | None = None
    ) -> tuple[list[Listing], list[tuple[str, str]]]:
        """Listings of the trees below ``key`` not stored yet (parents first), and the
        (blob, path) of the ``.yaml`` files in them that ``base`` does not hold there."""
        listings: list[Listing] = []
        files: dict[str, str] = {}
        pending: list[tuple[str, str, str | None]] = [(key, PREFIX, base)]
        seen: set[str] = set()
        while pending:
            tree, prefix, counterpart = pending.pop()
            if tree in seen or self._has_dir(tree):
                continue
            seen.add(tree)
            old = self._listing(counterpart) if counterpart is not None else {}
            listing = Listing(tree, counterpart, list_tree(tree), old)
            listings.append(listing)
            for name, sha, is_tree in listing.fresh:
                if is_tree and not name.endswith(".yaml"):  # see entries(): a problem
                    was = old.get(name)
                    below = was[0] if was is not None and was[1] == 1 else None
                    pending.append((sha, f"{prefix}{name}/", below))
                elif name.endswith(".yaml"):
                    files.setdefault(sha, prefix + name)
        return listings, list(files.items())

    def _listing(self, tree: str) -> dict[str, tuple[str, int]]:
        """name -> (id, is_tree) of a stored tree listing (empty when not stored)."""
        rows = self.db.execute(
            "SELECT name, sha, is_tree FROM dirs WHERE tree = ? AND is_tree != 2", (tree,)
        )
        return {name: (sha, is_tree) for name, sha, is_tree in rows}

    @staticmethod
    def _store_listing(db: sqlite3.Connection, listing: Listing) -> None:
        """Insert one tree's listing: the entries its base counterpart shares copied
        in SQL, the others with their blob's fields."""
        tree = listing.tree
        if listing.shared:
            db.execute(
                f"INSERT OR IGNORE INTO dirs(tree, name, sha, is_tree, {LIGHT}) "
                f"SELECT ?, name, sha, is_tree, {LIGHT} FROM dirs WHERE tree = ? AND is_tree != 2",
                (tree, listing.counterpart),
            )
            db.executemany(
                "DELETE FROM dirs WHERE tree = ? AND name = ?",
                [(tree, name) for name in listing.dropped],
            )
        rows = [(tree, name, sha, int(is_tree), sha) for name, sha, is_tree in listing.fresh]
        if not rows and not listing.shared:
            rows = [(tree, "", "", 2, "")]  # an empty tree still counts as listed
        db.executemany(
            f"INSERT OR IGNORE INTO dirs(tree, name, sha, is_tree, {LIGHT}) "
            f"SELECT ?, ?, ?, ?, {LIGHT} FROM (SELECT ? AS wanted) "
            "LEFT JOIN blobs ON blobs.blob = wanted",
            rows,
        )

    @staticmethod
    def _store_dependents(db: sqlite3.Connection, listings: Sequence[Listing]) -> None:
        """The ``dependents`` rows of the cell file versions the new listings hold that
        no stored listing did (read from the rows just stored; a version already listed
        elsewhere has its rows): with the listings, in their transaction, so every file
        of a stored state has them. Sorted: inserted in key order (a cold build's
        100,000 cells in one pass)."""
        rows: list[tuple[str, str, str | None]] = []
        for listing in listings:
            if not listing.shared:  # all of it is new: its files with a dependency
                rows += db.execute(
                    "SELECT sha, id, blockers FROM dirs WHERE tree = ? AND is_tree = 0 "
                    "AND blockers != ''",
                    (listing.tree,),
                ).fetchall()
                continue
            names = [name for name, _, is_tree in listing.fresh if not is_tree]
            for start in range(0, len(names), BATCH):
                part = names[start : start + BATCH]
                rows += db.execute(
                    f"SELECT sha, id, blockers FROM dirs WHERE tree = ? AND name IN "
                    f"({','.join('?' for _ in part)}) AND is_tree = 0 AND blockers != ''",
                    [listing.tree, *part],
                ).fetchall()
        edges = {
            (target, sha, cell_id)
            for sha, cell_id, blockers in rows
            for target in str(blockers).split("\n")
        }
        db.executemany(
            "INSERT OR IGNORE INTO dependents(target, blob, id) VALUES (?, ?, ?)", sorted(edges)
        )

    def _has_dir(self, tree: str) -> bool:
        row = self.db.execute("SELECT 1 FROM dirs WHERE tree = ? LIMIT 1", (tree,)).fetchone()
        return row is not None

    def _unparsed(self, files: list[tuple[str, str]]) -> list[tuple[str, str]]:
        """The (blob, path) pairs whose blob is not in the index yet."""
        known: set[str] = set()
        for start in range(0, len(files), BATCH):
            part = [sha for sha, _ in files[start : start + BATCH]]
            marks = ",".join("?" for _ in part)
            rows = self.db.execute(f"SELECT blob FROM blobs WHERE blob IN ({marks})", part)
            known.update(row[0] for row in rows)
        return [(sha, path) for sha, path in files if sha not in known]

    def add_parsed(self, parsed: Iterable[tuple[str, ParsedCell | ParseProblem]]) -> None:
        """Store parsed cell file versions (idempotent: blobs never change)."""
        rows: list[tuple[object, ...]] = []
        for sha, item in parsed:
            if isinstance(item, ParseProblem):
                rows.append((sha, *_light(item), None, None))
            else:
                rows.append((sha, *_light(item), dumps_strings(item.labels), item.json))
        if not rows:
            return
        with self.transaction() as db:
            db.executemany(
                f"INSERT OR IGNORE INTO blobs(blob, {LIGHT}, labels, json) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                rows,
            )

    def entries(self, key: str) -> list[Entry]:
        """Every file of state ``key`` with what its blob holds (paths from the root);
        none when the state is not stored (see :meth:`stored_entries`)."""
        return self.stored_entries(key) or []

    def stored_entries(self, key: str) -> list[Entry] | None:
        """:meth:`entries` read in one snapshot, or None when ``key`` is not stored
        (another process rebuilt the file since it was)."""
        rows = self.stored_rows(key)
        return None if rows is None else [_entry(*row) for row in rows]

    def stored_rows(self, key: str) -> list[LightRow] | None:
        """Every file of state ``key`` as (path, blob, its :data:`LIGHT` columns), read in
        one snapshot (what :meth:`stored_entries` makes its entries of, for a reader of
        every cell that builds its own objects), or None when ``key`` is not stored."""
        with ReadSnapshot(self.db):
            if not self.has_state(key):
                return None
            return self._rows_of_state(key)

    def _rows_of_state(self, key: str) -> list[LightRow]:
        found: list[LightRow] = []
        if key == EMPTY_STATE:
            return found
        frontier = {key: PREFIX}
        while frontier:
            trees = list(frontier)
            marks = ",".join("?" for _ in trees)
            rows = self.db.execute(
                f"SELECT tree, name, sha, is_tree, {LIGHT} FROM dirs WHERE tree IN ({marks})",
                trees,
            ).fetchall()
            following: dict[str, str] = {}
            for row in rows:
                base = frontier.get(row[0])
                if base is None:  # a row of a tree not asked for: damaged pages
                    raise sqlite3.DatabaseError("database disk image is malformed (stray row)")
                path = base + row[1]
                if row[3] == 1 and path.endswith(".yaml"):
                    found.append((path, row[2], _directory_light(path)))
                elif row[3] == 1:
                    following[row[2]] = path + "/"
                elif row[3] == 0:
                    found.append((path, row[2], row[4:]))
            frontier = following
        return found

    def files_of(
        self,
        key: str,
        *,
        ids: Sequence[str] = (),
        parents: Sequence[str] = (),
        assignee: str | None = None,
        blocking: str | None = None,
    ) -> list[Entry] | None:
        """The files of state ``key`` (as :meth:`entries` lists them) named for one of
        ``ids``, whose cell names one of ``parents`` as its parent, that are assigned
        to ``assignee``, or that are named for their cell (``ID.yaml``) and have a
        ``blocks`` dependency on ``blocking``; None when the state is not stored. Read
        in one snapshot, by point lookups in each tree of the state (``blocking``: the
        target's ``dependents`` rows, then each one's name in each tree; see
        :meth:`_blocking_rows`): the cost does not grow with the other cells."""
        with ReadSnapshot(self.db):
            trees = self._stored_trees(key)
            if trees is None or not trees:
                return None if trees is None else []
            names = [cell_id + ".yaml" for cell_id in ids]
            files = " AND is_tree = 0"
            wanted = [("name", names, ""), ("parent", list(parents), files)]
            if assignee is not None:
                wanted.append(("assignee", [assignee], files))
            tree_marks = ",".join("?" for _ in trees)
            rows: list[Sequence[Any]] = []
            for column, values, only_files in wanted:
                for start in range(0, len(values), BATCH):
                    part = values[start : start + BATCH]
                    marks = ",".join("?" for _ in part)
                    rows += self.db.execute(
                        f"SELECT tree, name, sha, is_tree, {LIGHT} FROM dirs "
                        f"WHERE {column} IN ({marks}) AND tree IN ({tree_marks}){only_files}",
                        [*part, *trees],
                    ).fetchall()
            if blocking is not None:
                rows += self._blocking_rows(blocking, list(trees))
            found: list[Entry] = []
            for row in rows:
                for prefix in trees[row[0]]:
                    path = prefix + row[1]
                    if row[3] == 1:
                        found.append(_entry(path, row[2], _directory_light(path)))
                    else:
                        found.append(_entry(path, row[2], row[4:]))
            return found

    def _blocking_rows(self, target: str, trees: list[str]) -> list[Sequence[Any]]:
        """The ``dirs`` rows (in ``trees``) of the files named for their cell whose
        version has a ``blocks`` dependency on ``target``: looked up by the target's
        ``dependents`` rows, one lookup per row and tree, while those are at most
        :data:`PROBE_LIMIT`; past that, by reading every file row (cheaper then)."""
        marks = ",".join("?" for _ in trees)
        most = PROBE_LIMIT // len(trees)
        (count,) = self.db.execute(
            "SELECT count(*) FROM (SELECT 1 FROM dependents WHERE target = ? LIMIT ?)",
            (target, most + 1),
        ).fetchone()
        if count <= most:
            return self.db.execute(_DEPENDENT_FILES.format(marks), [*trees, target]).fetchall()
        return self.db.execute(_BLOCKING_SCAN.format(marks), [*trees, target]).fetchall()

    def names_like(self, key: str, wanted: str) -> list[str] | None:
        """Paths of the files of state ``key`` (as :meth:`entries` lists them) whose name
        starts with ``wanted``, or whose part after its first '-' does: every id a
        prefix could name, and more (the caller applies its own rule). None when the
        state is not stored. No row is decoded: the names are ranges of each tree's
        primary key (``wanted``, and ``HEAD-wanted`` for each distinct part before a
        first '-' a name of the tree has, found by skipping from one to the next), so
        the cost follows the trees and those parts, not the cells."""
        with ReadSnapshot(self.db):
            trees = self._stored_trees(key)
            if trees is None or not trees:
                return None if trees is None else []
            if not wanted or wanted[-1] >= "\ud7ff":  # no simple bound above: compare all
                return self._names_like_scan(trees, wanted)
            marks = ",".join("?" for _ in trees)
            starts = {wanted, *(f"{head}-{wanted}" for head in self._heads(trees))}
            rows: list[tuple[str, str]] = []
            for start in sorted(starts):
                rows += self.db.execute(
                    f"SELECT tree, name FROM dirs WHERE tree IN ({marks}) AND name >= ? "
                    "AND name < ? AND (is_tree = 0 OR name LIKE '%.yaml')",
                    [*trees, start, start[:-1] + chr(ord(start[-1]) + 1)],
                ).fetchall()
            found = dict.fromkeys(rows)  # a name both ranges hold, once
            return [prefix + name for tree, name in found for prefix in trees[tree]]

    def _heads(self, trees: Iterable[str]) -> set[str]:
        """The distinct parts before the first '-' of the names in ``trees``: from each
        such name straight to the first name past every name of that part."""
        heads: set[str] = set()
        for tree in trees:
            after, inclusive = "", True
            while True:
                row = self.db.execute(
                    f"SELECT name FROM dirs WHERE tree = ? AND name {'>=' if inclusive else '>'}"
                    " ? ORDER BY name LIMIT 1",
                    [tree, after],
                ).fetchone()
                if row is None:
                    break
                head, dash, _ = row[0].partition("-")
                if dash:
                    heads.add(head)
                    after, inclusive = head + ".", True  # '.' follows '-'
                else:
                    after, inclusive = row[0], False
        return heads

    def _names_like_scan(self, trees: dict[str, list[str]], wanted: str) -> list[str]:
        """:meth:`names_like` comparing every name of ``trees`` in SQL."""
        marks = ",".join("?" for _ in trees)
        rows = self.db.execute(
            f"SELECT tree, name FROM dirs WHERE tree IN ({marks}) "
            "AND (is_tree = 0 OR name LIKE '%.yaml') AND (substr(name, 1, length(?)) = ? "
            "OR (instr(name, '-') > 0 AND substr(name, instr(name, '-') + 1, length(?)) = ?))",
            [*trees, wanted, wanted, wanted, wanted],
        ).fetchall()
        return [prefix + name for tree, name in rows for prefix in trees[tree]]

    def _stored_trees(self, key: str) -> dict[str, list[str]] | None:
        """:meth:`_trees_of_state` of ``key``; None when it is not stored, none for the
        empty state."""
        if not self.has_state(key):
            return None
        return {} if key == EMPTY_STATE else self._trees_of_state(key)

    def _trees_of_state(self, key: str) -> dict[str, list[str]]:
        """Each tree of state ``key`` the listing of :meth:`entries` walks -> its paths
        (a tree at several places is listed at each, as there)."""
        trees = {key: [PREFIX]}
        frontier = {key: PREFIX}
        while frontier:
            marks = ",".join("?" for _ in frontier)
            rows = self.db.execute(
                f"SELECT tree, name, sha FROM dirs INDEXED BY dirs_subtrees "
                f"WHERE tree IN ({marks}) AND is_tree = 1",
                list(frontier),
            ).fetchall()
            following: dict[str, str] = {}
            for tree, name, sha in rows:
                if not name.endswith(".yaml"):  # else a directory named as a cell file
                    following[sha] = frontier[tree] + name + "/"
            for sha, path in following.items():
                trees.setdefault(sha, []).append(path)
            frontier = following
        return trees

    def cell_documents(self, blobs: Sequence[str]) -> Iterator[tuple[str, bytes]]:
        """(blob, printed JSON) of the given cell file versions that parsed."""
        for start in range(0, len(blobs), BATCH):
            part = list(blobs[start : start + BATCH])
            marks = ",".join("?" for _ in part)
            rows = self.db.execute(
                f"SELECT blob, json FROM blobs WHERE json IS NOT NULL AND blob IN ({marks})", part
            ).fetchall()
            for blob, document in rows:
                yield blob, bytes(document)

    # ------------------------------------------------------------ ready lists

    def ready(self, key: str, limit: int | None = None) -> tuple[list[Row], int] | None:
        """The ready cells of ``key`` in order and how many there are in all, when
        computed (read in one snapshot); None too when the file lacks the parsed cell of
        a listed one (damaged: it is rebuilt, see :meth:`_lacking`). A derived list is
        its base's rows less the ids its delta names, merged with the delta's ready
        rows (each placed between two base ranks: ``at``)."""
        wanted = -1 if limit is None else limit
        with ReadSnapshot(self.db) as db:
            done = db.execute("SELECT base, total FROM ready_done WHERE key = ?", (key,)).fetchone()
            if done is None:
                return None
            base, total = done
            if base is None:
                rows = db.execute(
                    f"SELECT {_ROW} FROM ready r LEFT JOIN blobs b ON b.blob = r.blob "
                    "WHERE r.key = ? ORDER BY r.rank LIMIT ?",
                    (key, wanted),
                ).fetchall()
            else:
                rows = db.execute(
                    _DERIVED_PAGE, {"key": key, "base": base, "limit": wanted}
                ).fetchall()
        if any(row[0] is None for row in rows):
            self._lacking(key)
            return None
        return [Row(*row) for row in rows], int(total)

    def _lacking(self, key: str) -> None:
        """A state whose rows name parsed cells the file does not hold: rows of one
        state are stored in one transaction and only a rebuild (which drops them all)
        removes any, so the file is damaged (pages lost, rows deleted by hand). Never
        answered from: rebuilt with a notice; the caller indexes the state again."""
        self.reset(f"it lists cells of state {key[:12]} whose parsed rows are missing")

    def is_sharded(self, key: str) -> bool:
        """Whether every file of ``key`` sits one level below ``.hive/cells`` (as hive
        writes them); list queries answer in SQL only then."""
        if key == EMPTY_STATE:
            return True
        odd = self.db.execute(
            "SELECT 1 FROM dirs WHERE tree = :key AND is_tree = 0 AND name LIKE '%.yaml' "
            "UNION ALL SELECT 1 FROM dirs c JOIN dirs s INDEXED BY dirs_subtrees "
            "ON s.tree = c.sha AND s.is_tree = 1 WHERE c.tree = :key AND c.is_tree = 1 LIMIT 1",
            {"key": key},
        ).fetchone()
        return odd is None

    def list_rows(self, key: str, query: ListQuery) -> tuple[list[Row], int] | None:
        """A page of the cells of ``key`` matching ``query`` (open first, most urgent
        first, then oldest), and how many match in all (read in one snapshot); None
        unless sharded, when the state is not stored (a rebuild by another process), or
        when the file lacks a listed cell's parsed row (damaged: rebuilt)."""
        if key == EMPTY_STATE:
            return [], 0
        with ReadSnapshot(self.db):
            if not self.has_state(key) or not self.is_sharded(key):
                return None
            found = self._list_rows(key, query)
        if found is None:
            self._lacking(key)
        return found or None

    def _list_rows(
        self, key: str, query: ListQuery
    ) -> tuple[list[Row], int] | Literal[False] | None:
        """The page and count; None when a listed cell's parsed row is gone (damaged),
        False when a matching file lies outside its cell's shard (the full CLI answers)."""
        where = ["s.error IS NULL", "s.name = s.id || '.yaml'"]
        params: dict[str, object] = {"key": key}
        for column in ("status", "type", "priority", "parent", "assignee"):
            value = getattr(query, column)
            if value is not None:
                where.append(f"s.{column} = :{column}")
                params[column] = value
        if query.label is not None:
            where.append(
                "EXISTS (SELECT 1 FROM blobs l, json_each(l.labels) "
                "WHERE l.blob = s.sha AND json_each.value = :label)"
            )
            params["label"] = query.label
        if not query.include_deleted:
            where.append("s.deleted = 0")
        body = "SELECT {what} " + _SHARDED + " AND " + " AND ".join(where)
        total, strays = self.db.execute(body.format(what=f"count(*), {_STRAY}"), params).fetchone()
        if strays:
            return False  # a copy outside the cell's shard: the full CLI picks the cell's own
        order = " ORDER BY s.status = 'closed', s.priority, s.created, s.id LIMIT :limit"
        params["limit"] = -1 if query.limit is None else query.limit
        picked = self.db.execute(body.format(what="s.sha") + order, params).fetchall()
        rows = self._rows([row[0] for row in picked])
        if len(rows) != len(picked):
            return None  # a listed cell's parsed row is gone: damaged (see _lacking)
        return rows, int(total)

    def _rows(self, blobs: list[str]) -> list[Row]:
        found: dict[str, Row] = {}
        for start in range(0, len(blobs), BATCH):
            part = blobs[start : start + BATCH]
            marks = ",".join("?" for _ in part)
            query = f"SELECT {_ROW} FROM blobs b WHERE b.blob IN ({marks})"
            for row in self.db.execute(query, part):
                found[row[1]] = Row(*row)
        return [found[blob] for blob in blobs if blob in found]

    def problems(self, key: str) -> list[tuple[str, str]]:
        """(path, message) of the cell files of ``key`` that cannot be used."""
        found = []
        for entry in self.entries(key):
            expected = cell_id_from_path(entry.path)
            if expected is None:
                continue
            if entry.error is not None:
                message = entry.error
                if entry.error_path and entry.error_path != entry.path:
                    message = message.replace(entry.error_path, entry.path)
                found.append((entry.path, message))
            elif entry.id != expected:
                found.append((entry.path, misnamed_message(entry.path, expected, entry.id)))
        return found

    def problem_count(self, key: str) -> int:
        """How many cell files of ``key`` cannot be used, directories where a cell file
        should be included (cheap: two queries on partial indexes, sharded)."""
        if key == EMPTY_STATE:
            return 0
        total = 0
        for index, terms in (
            ("dirs_problems", _problem_files("s.")),
            ("dirs_subtrees", "s.is_tree = 1 AND s.name LIKE '%.yaml'"),
        ):
            (count,) = self.db.execute(
                f"SELECT count(*) FROM dirs c JOIN dirs s INDEXED BY {index} ON s.tree = c.sha"
                " WHERE c.tree = :key AND c.is_tree = 1 AND " + terms,
                {"key": key},
            ).fetchone()
            total += int(count)
        return total

    def store_ready(self, key: str, ready: Sequence[tuple[str, str]], strays: int = 0) -> None:
        """Record the ready list (id, blob) of state ``key``, computed from all its
        cells, and how many of its cell files lie outside their cell's own place
        (``strays``: a list is derived from only when none do); not when the state is
        no longer stored (the list was read from a state a rebuild has since dropped)."""
        with self.transaction() as db:
            if self._may_store_list(db, key):
                self._store_whole(db, key, ready, strays)

    def _store_whole(
        self, db: sqlite3.Connection, key: str, ready: Sequence[tuple[str, str]], strays: int
    ) -> None:
        self._drop_lists(db, full=True)
        db.executemany(
            "INSERT OR REPLACE INTO ready(key, rank, id, blob) VALUES (?, ?, ?, ?)",
            [(key, rank, cell_id, blob) for rank, (cell_id, blob) in enumerate(ready)],
        )
        db.execute(
            "INSERT INTO ready_done(key, base, total, strays, made) VALUES (?, NULL, ?, ?, ?)",
            (key, len(ready), strays, self._next_made(db)),
        )

    def store_rebased(self, key: str, base: str, delta: Sequence[DeltaRow]) -> bool:
        """Record the ready list of ``key`` whole, made of the whole list of state ``base``
        and ``delta`` over it as :meth:`ready` merges them (its ranks less the ids the
        delta names, the delta's ready rows placed by ``at``): a list derived once its
        delta has grown long becomes the base of the next ones, for the cost of copying
        the list, not of computing it from every cell. False (nothing stored) when that
        list is gone."""
        with self.transaction() as db:
            if not self._may_derive(db, key, base):
                return False
            named = {row[0] for row in delta}
            merged: list[tuple[float, str, str]] = [
                (rank, cell_id, blob)
                for rank, cell_id, blob in db.execute(
                    "SELECT rank, id, blob FROM ready WHERE key = ? ORDER BY rank", (base,)
                )
                if cell_id not in named
            ]
            merged += [(row[7], row[0], row[1]) for row in delta if row[2]]
            merged.sort()
            self._store_whole(db, key, [(cell_id, blob) for _, cell_id, blob in merged], 0)
        return True

    def store_derived(self, key: str, base: str, delta: Sequence[DeltaRow], total: int) -> bool:
        """Record the ready list of ``key`` as ``delta`` over the whole list of state
        ``base`` (see :meth:`ready`); False (nothing stored) when that list is gone."""
        with self.transaction() as db:
            if not self._may_derive(db, key, base):
                return False
            self._drop_lists(db, full=False)
            db.executemany(
                "INSERT INTO ready_delta(key, id, blob, ready, in_base, slot, priority, created,"
                " at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(key, *row) for row in delta],
            )
            db.execute(
                "INSERT INTO ready_done(key, base, total, strays, made) VALUES (?, ?, ?, 0, ?)",
                (key, base, total, self._next_made(db)),
            )
        return True

    def _may_derive(self, db: sqlite3.Connection, key: str, base: str) -> bool:
        """:meth:`_may_store_list`, and the whole list of state ``base`` is stored."""
        if not self._may_store_list(db, key):
            return False
        found = db.execute(
            "SELECT 1 FROM ready_done WHERE key = ? AND base IS NULL", (base,)
        ).fetchone()
        return found is not None

    def _may_store_list(self, db: sqlite3.Connection, key: str) -> bool:
        """No list of ``key`` is stored yet and the state still is."""
        if db.execute("SELECT 1 FROM ready_done WHERE key = ?", (key,)).fetchone():
            return False
        return self.has_state(key)

    @staticmethod
    def _next_made(db: sqlite3.Connection) -> int:
        (made,) = db.execute("SELECT coalesce(max(made), 0) + 1 FROM ready_done").fetchone()
        return int(made)

    @staticmethod
    def _drop_lists(db: sqlite3.Connection, *, full: bool) -> None:
        """Make room for one more list: every write is a new state, so only a few lists
        are kept; past :data:`READY_LISTS_KEPT` whole lists the oldest is dropped with
        the lists derived from it, past :data:`DERIVED_LISTS_KEPT` derived ones the
        oldest of those."""
        kept = READY_LISTS_KEPT if full else DERIVED_LISTS_KEPT
        kind = "base IS NULL" if full else "base IS NOT NULL"
        old = [
            row[0]
            for row in db.execute(
                f"SELECT key FROM ready_done WHERE {kind} ORDER BY made DESC LIMIT -1 OFFSET ?",
                (kept - 1,),
            )
        ]
        for key in old:
            gone = [key]
            if full:
                db.execute("DELETE FROM ready WHERE key = ?", (key,))
                derived = db.execute("SELECT key FROM ready_done WHERE base = ?", (key,))
                gone += [row[0] for row in derived]
            for each in gone:
                db.execute("DELETE FROM ready_delta WHERE key = ?", (each,))
                db.execute("DELETE FROM ready_done WHERE key = ?", (each,))

    def ready_sources(self, key: str) -> list[tuple[str, str | None, int]]:
        """(state, its base or None, its strays) of the stored lists an answer for
        ``key`` could be derived from (their states stored), the nearest first: the
        fewest entries of ``.hive/cells`` itself (shard directories) differing from
        ``key``'s, then the newest."""
        if key == EMPTY_STATE:
            return []
        with ReadSnapshot(self.db) as db:
            found = db.execute(
                "SELECT r.key, r.base, r.strays FROM ready_done r JOIN states s ON s.key = r.key"
                " ORDER BY r.made DESC LIMIT ?",
                (SOURCES_TRIED,),
            ).fetchall()
            distance = {
                source: db.execute(_ROOT_DISTANCE, {"a": source, "b": key}).fetchone()[0]
                for source, _, _ in found
            }
        ranked = sorted(enumerate(found), key=lambda item: (distance[item[1][0]], item[0]))
        return [(str(source), base, int(strays)) for _, (source, base, strays) in ranked]

    def changed_paths(self, old: str, new: str, most: int) -> list[str] | None:
        """The cell file paths (``ID.yaml``, files or directories) whose entry differs
        between states ``old`` and ``new`` (added, removed or another version), read in
        one snapshot by comparing the trees at each path in SQL; None when either
        state is not stored or more than ``most`` differ."""
        if EMPTY_STATE in (old, new):
            return None
        found: list[str] = []
        with ReadSnapshot(self.db) as db:
            if not (self.has_state(old) and self.has_state(new)):
                return None
            pending = [(old, new, PREFIX)]
            while pending:
                before, after, prefix = pending.pop()
                below: dict[str, list[str]] = {}
                for side, name, sha, is_tree in db.execute(_TREE_DIFF, {"a": before, "b": after}):
                    if is_tree and not name.endswith(".yaml"):
                        below.setdefault(name, ["", ""])[side] = sha
                    elif name.endswith(".yaml"):
                        found.append(prefix + name)
                pending += [(a, b, f"{prefix}{name}/") for name, (a, b) in below.items()]
                if len(found) > most:
                    return None
        return found

    def dependent_ids(self, targets: Iterable[str]) -> set[str]:
        """The ids of the cells any version of which has a ``blocks`` dependency on one
        of ``targets`` (every version ever stored: more than any one state holds)."""
        return self._ids_in("SELECT DISTINCT id FROM dependents WHERE target IN ({})", [], targets)

    def list_total(self, key: str) -> int | None:
        """How many cells the stored list of ``key`` holds, if one is stored."""
        row = self.db.execute("SELECT total FROM ready_done WHERE key = ?", (key,)).fetchone()
        return None if row is None else int(row[0])

    def list_delta(self, key: str) -> list[DeltaRow]:
        """The delta rows of the derived list of ``key``, without their ``at``."""
        rows = self.db.execute(
            "SELECT id, blob, ready, in_base, slot, priority, created, NULL FROM ready_delta"
            " WHERE key = ?",
            (key,),
        ).fetchall()
        return [tuple(row) for row in rows]

    def in_list(self, key: str, ids: Collection[str]) -> set[str]:
        """Which of ``ids`` the whole stored list of ``key`` holds."""
        return self._ids_in("SELECT id FROM ready WHERE key = ? AND id IN ({})", [key], ids)

    def _ids_in(self, query: str, before: list[str], values: Iterable[str]) -> set[str]:
        """The first column of ``query`` (its ``IN ({})`` filled) over ``values``, in
        batches."""
        wanted = list(values)
        found: set[str] = set()
        for start in range(0, len(wanted), BATCH):
            part = wanted[start : start + BATCH]
            rows = self.db.execute(query.format(",".join("?" for _ in part)), [*before, *part])
            found.update(row[0] for row in rows)
        return found

    def list_slot(self, key: str, total: int, order: tuple[int, float, str]) -> int | None:
        """How many cells of the whole stored list of ``key`` (``total`` long) come before
        a cell of sort key ``order`` (priority, created, id): a binary search over its
        ranks; None when the list is gone."""
        low, high = 0, total
        while low < high:
            middle = (low + high) // 2
            row = self.db.execute(
                "SELECT b.priority, b.created, r.id FROM ready r JOIN blobs b ON b.blob = r.blob"
                " WHERE r.key = ? AND r.rank = ?",
                (key, middle),
            ).fetchone()
            if row is None:
                return None
            if (row[0], row[1] or 0.0, row[2]) < order:
                low = middle + 1
            else:
                high = middle
        return low

    # ------------------------------------------------------------ upkeep

    # ------------------------------------------------------------ mail

    def mail_state(self) -> tuple[str, bytes] | None:
        """(tip commit, JSON) of the replayed mail log saved last, if any."""
        try:
            row = self.db.execute("SELECT tip, state FROM mail_state LIMIT 1").fetchone()
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):
                return None  # a file made before mail moved here
            raise
        return None if row is None else (str(row[0]), bytes(row[1]))

    def store_mail_state(self, tip: str, state: bytes) -> None:
        """Keep ``state`` (JSON) as the mail log replayed up to commit ``tip``."""
        with self.transaction() as db:
            db.execute(_MAIL_TABLE)
            db.execute("DELETE FROM mail_state")
            db.execute("INSERT INTO mail_state(tip, state) VALUES (?, ?)", (tip, state))

    # ------------------------------------------------------------ path rules

    def path_rules(self, config: str) -> bytes | None:
        """The ``tools.permissions`` rules (JSON) parsed from the config file version
        ``config`` (its blob id), if the full path stored them."""
        try:
            row = self.db.execute(
                "SELECT rules FROM path_rules WHERE config = ?", (config,)
            ).fetchone()
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):
                return None  # a file made before the rules were kept here
            raise
        return None if row is None else bytes(row[0])

    def store_path_rules(self, config: str, rules: bytes) -> None:
        """Keep ``rules`` (JSON), parsed from the config file version ``config``: a blob
        id names its content, so they hold for as long as that version exists. The rules
        of the newest :data:`PATH_RULES_KEPT` versions stored are kept (a version dropped
        is parsed again by the full check when committed to again)."""
        with self.transaction() as db:
            db.execute(_RULES_TABLE)
            db.execute(
                "INSERT OR REPLACE INTO path_rules(config, rules) VALUES (?, ?)", (config, rules)
            )
            db.execute(
                "DELETE FROM path_rules WHERE rowid NOT IN"
                " (SELECT rowid FROM path_rules ORDER BY rowid DESC LIMIT ?)",
                (PATH_RULES_KEPT,),
            )


# Ready lists kept (each a row per ready cell of one state: ~6,700 at 10,000 cells).
# Every write makes a new state and the first ready of it stores its list; with none
# ever dropped the file grew by a list per write (57 writes at 10,000 cells: 15 ->
# 115 MB, each ready slower). Past this many, the next list stored drops the oldest
# (with the lists derived from it, :meth:`StateIndex._drop_lists`): a few states
# (worktrees, a branch switched back and forth) keep theirs between
# writes, and a list dropped is recomputed from the state's rows when asked again.
READY_LISTS_KEPT = 4
# Lists derived from one of those (a delta: a few rows each) kept, and how many stored
# lists a ready list may be derived from (the nearest of the newest few).
DERIVED_LISTS_KEPT = 16
SOURCES_TRIED = 8

# States kept (each a few new rows of `dirs`: a new root and the shard the write
# changed): the newest STATES_KEPT, dropped in one go once PRUNE_SLACK more are stored.
STATES_KEPT = 16
PRUNE_SLACK = 8
# Parsed cells stored since the last sweep of those no kept state reaches (at least
# SWEEP_MIN, or the cells it kept over SWEEP_SHARE) before a pruning sweeps again.
SWEEP_MIN = 1_000
SWEEP_SHARE = 8

# Config file versions whose parsed path rules are kept (each stored with a new rowid:
# the newest are the highest).
PATH_RULES_KEPT = 16
# Free pages given back after a pruning (:func:`reclaim_space`) once there are at least
# this many (1 MB at SQLite's 4 KiB pages) and they are an eighth of the file or more.
RECLAIM_MIN_PAGES = 256
RECLAIM_SHARE = 8

JSON_PIECE = 1_000  # cells printed per write: a listing of 100,000 (~66 MB) is never copied whole


def write_json_list(documents: Sequence[bytes], write: Callable[[bytes], object]) -> None:
    """The bytes ``pydantic_core.to_json(cells, indent=2)`` plus a newline would give,
    from each cell's own ``to_json(cell, indent=2)``, handed to ``write`` in pieces,
    made inert (``jsontext.inert_bytes``: a document stored by an older hive, or by
    the full path's pydantic, may hold DEL or a C1 control character raw)."""
    if not documents:
        write(b"[]\n")
        return
    write(b"[\n")
    for start in range(0, len(documents), JSON_PIECE):
        part = documents[start : start + JSON_PIECE]
        body = b",\n".join(b"  " + document.replace(b"\n", b"\n  ") for document in part)
        write(inert_bytes(b",\n" + body if start else body))
    write(b"\n]\n")
