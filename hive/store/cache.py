"""Cells of one state, read through the state index (``hive/store/index.py``).

A :class:`CellIndex` is every cell file of one state of ``.hive/cells``: light
facts for every cell (path, blob, the fields readiness needs) loaded at once
from the state index, and the cells themselves decoded only when asked for
(``index.cells[id]``), each file version once per process. A write that
touches three cells decodes those three, not the tracker.

Cells are immutable models shared by every reader of a process; a change is
always a copy (``model_copy``), so nothing a caller does leaks into another
reader.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic_core import to_json

from hive.errors import CorruptFile
from hive.models import Cell
from hive.store.index import Node, is_own_path, misnamed_message
from hive.store.layout import CELL_SUFFIX, CELLS_DIR, cell_id_from_path

T = TypeVar("T")
MAX_INDEXES = 4
MAX_CACHED_CELLS = 250_000

CellLoader = Callable[[list[str]], dict[str, Cell]]  # blobs -> decoded cells
DocumentLoader = Callable[[list[str]], dict[str, bytes]]  # blobs -> printed JSON
CELLS_PREFIX = CELLS_DIR + "/"
SUFFIX_LENGTH = len(CELL_SUFFIX)
DOCUMENT_BATCH = 500  # documents parsed at a time: memory stays flat at 100,000 cells


class LazyCells(Mapping[str, Cell]):
    """id -> Cell, decoded on first access from the state index."""

    def __init__(self, blobs: dict[str, str], load: CellLoader) -> None:
        self._blobs = blobs
        self._load = load

    def __getitem__(self, cell_id: str) -> Cell:
        blob = self._blobs[cell_id]
        return self._load([blob])[blob]

    def get(self, cell_id: str, default: Cell | None = None) -> Cell | None:  # type: ignore[override]
        blob = self._blobs.get(cell_id)
        if blob is None:
            return default
        return self._load([blob])[blob]

    def __contains__(self, cell_id: object) -> bool:
        return cell_id in self._blobs

    def __iter__(self) -> Iterator[str]:
        return iter(self._blobs)

    def __len__(self) -> int:
        return len(self._blobs)

    def values(self) -> list[Cell]:  # type: ignore[override]
        loaded = self._load(list(self._blobs.values()))
        return [loaded[blob] for blob in self._blobs.values()]

    def items(self) -> list[tuple[str, Cell]]:  # type: ignore[override]
        loaded = self._load(list(self._blobs.values()))
        return [(cell_id, loaded[blob]) for cell_id, blob in self._blobs.items()]


@dataclass
class CellIndex:
    """Every cell of one state: light facts now, cells on demand, unreadable files."""

    key: str
    paths: dict[str, str]
    blobs: dict[str, str]
    nodes: dict[str, Node]
    problems: dict[str, CorruptFile]
    load: CellLoader
    # the JSON ``--json`` prints of cells by blob, without decoding them into models
    # (None: printed from the decoded cells)
    load_json: DocumentLoader | None = None
    cells: LazyCells = field(init=False)
    _children: dict[str, list[str]] | None = None
    _memo: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.cells = LazyCells(self.blobs, self.load)

    def memo(self, name: str, compute: Callable[[], T]) -> T:
        """``compute()``, once per index: an index never changes after it is built."""
        if name not in self._memo:
            self._memo[name] = compute()
        result: T = self._memo[name]
        return result

    def json_of(self, blobs: list[str]) -> dict[str, bytes]:
        """Each blob's cell as ``--json`` prints it (``to_json(cell, indent=2)``)."""
        if self.load_json is not None:
            return self.load_json(blobs)
        return {blob: to_json(cell, indent=2) for blob, cell in self.load(blobs).items()}

    def documents(
        self, ids: Iterable[str], keep: Callable[[bytes], bool] | None = None
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        """(id, the cell as a plain mapping of its JSON) for each of ``ids`` in order
        (those whose printed JSON ``keep`` accepts): what a reader of a few fields of
        every cell needs, without building a model per cell (strings as the model gives
        them, times as ``format_time`` writes them)."""
        wanted = list(ids)
        for start in range(0, len(wanted), DOCUMENT_BATCH):
            part = wanted[start : start + DOCUMENT_BATCH]
            printed = self.json_of([self.blobs[cell_id] for cell_id in part])
            for cell_id in part:
                document = printed[self.blobs[cell_id]]
                if keep is None or keep(document) or not _whole(document):
                    yield cell_id, self._parsed(cell_id, document)

    def _parsed(self, cell_id: str, document: bytes) -> dict[str, Any]:
        try:
            parsed: dict[str, Any] = json.loads(document)
        except ValueError:  # damaged pages: the model's loader rebuilds the index (notice)
            parsed = json.loads(to_json(self.cells[cell_id], indent=2))
        return parsed

    def live(self) -> list[Cell]:
        """Cells that are not deleted (tombstoned)."""
        return [self.cells[cid] for cid, node in self.nodes.items() if not node.deleted]

    def children_of(self, cell_id: str) -> list[str]:
        if self._children is None:
            children: dict[str, list[str]] = {}
            for node in self.nodes.values():
                if node.parent is not None:
                    children.setdefault(node.parent, []).append(node.id)
            self._children = children
        return self._children.get(cell_id, [])

    def children(self) -> dict[str, list[str]]:
        self.children_of("")
        assert self._children is not None
        return self._children

    def unreadable_ids(self) -> set[str]:
        return self.memo(
            "unreadable",
            lambda: {cid for path in self.problems if (cid := cell_id_from_path(path))},
        )

    def is_unreadable(self, cell_id: str) -> bool:
        """Whether ``cell_id`` has a file that failed to parse."""
        return cell_id in self.unreadable_ids()

    def known_ids(self) -> IdSet:
        """Ids of all cell files, including ones that failed to parse (a live view)."""
        return IdSet(self)

    def overlay(self, changed: Mapping[str, Cell]) -> CellIndex:
        """This state with ``changed`` cells written over it (a plan changing several
        cells checks each change against the ones before); this index is unchanged."""
        pending = {f"pending:{cell.id}": cell for cell in changed.values()}
        blobs = dict(self.blobs)
        nodes = dict(self.nodes)
        for blob, cell in pending.items():
            blobs[cell.id] = blob
            nodes[cell.id] = node_of(cell)
        base = self.load
        base_json = self.json_of

        def load(wanted: list[str]) -> dict[str, Cell]:
            found = {blob: pending[blob] for blob in wanted if blob in pending}
            rest = [blob for blob in wanted if blob not in pending]
            return {**base(rest), **found} if rest else found

        def load_json(wanted: list[str]) -> dict[str, bytes]:
            found = {blob: to_json(pending[blob], indent=2) for blob in wanted if blob in pending}
            rest = [blob for blob in wanted if blob not in pending]
            return {**base_json(rest), **found} if rest else found

        return CellIndex(
            key=f"{self.key}+",
            paths=self.paths,
            blobs=blobs,
            nodes=nodes,
            problems=self.problems,
            load=load,
            load_json=load_json,
        )


def _whole(printed: bytes) -> bool:
    """Whether a printed cell looks whole (``keep`` skips a document only then: one a
    damaged index cut short is parsed, which rebuilds the index)."""
    return printed.startswith(b'{\n  "id": "') and printed.endswith(b"\n}")


def top_level_string(printed: bytes, key: str) -> str | None:
    """The string value of the top-level ``key`` of a cell's printed JSON (None when it is
    null), found without parsing the rest: ``to_json(cell, indent=2)`` writes each
    top-level key on its own line two spaces in, and a string's own line breaks are
    escaped, so that line start is the key's alone (deeper keys are further in). Only for
    values without escapes (times, ids); a KeyError when the key is not there."""
    marker = b'\n  "' + key.encode("ascii") + b'": '
    at = printed.find(marker)
    if at < 0:
        raise KeyError(key)
    start = at + len(marker)
    if printed.startswith(b"null", start):
        return None
    end = printed.index(b'"', start + 1)
    value = printed[start + 1 : end].decode("utf-8")
    if printed[start : start + 1] != b'"' or "\\" in value:
        raise ValueError(f"{key} is not a plain string")
    return value


class IdSet:
    """The ids taken in one index, plus ids added by a plan in progress."""

    def __init__(self, index: CellIndex) -> None:
        self._cells = index.blobs
        self._extra: set[str] = set(index.unreadable_ids())

    def __contains__(self, cell_id: object) -> bool:
        return cell_id in self._cells or cell_id in self._extra

    def __iter__(self) -> Iterator[str]:
        yield from self._cells
        yield from (cell_id for cell_id in self._extra if cell_id not in self._cells)

    def __len__(self) -> int:
        return len(self._cells) + sum(1 for cell_id in self._extra if cell_id not in self._cells)

    def add(self, cell_id: str) -> None:
        self._extra.add(cell_id)


def node_of(cell: Cell) -> Node:
    return Node(
        id=cell.id,
        status=cell.status,
        type=cell.type,
        priority=cell.priority,
        created=cell.created_at.timestamp(),
        parent=cell.parent,
        deleted=cell.deleted_at is not None,
        blockers=cell.blockers(),
        assignee=cell.assignee,
    )


def build_index(
    key: str,
    rows: Sequence[tuple[str, str, Sequence[Any]]],
    load: CellLoader,
    load_json: DocumentLoader | None = None,
) -> CellIndex:
    """A CellIndex from the state index's rows for ``key`` (``StateIndex.stored_rows``:
    path, blob and the light columns), each cell's facts taken from its row as it is
    (no Entry made first: at 100,000 cells this is every full-CLI command's start)."""
    paths: dict[str, str] = {}
    blobs: dict[str, str] = {}
    nodes: dict[str, Node] = {}
    problems: dict[str, CorruptFile] = {}
    for path, blob, light in rows:
        if not path.endswith(CELL_SUFFIX) or not path.startswith(CELLS_PREFIX):
            continue  # cell_id_from_path, inline: it is called once per cell
        expected = path[path.rfind("/") + 1 : -SUFFIX_LENGTH]
        (cell_id, status, kind, priority, parent, assignee, _title, created, deleted) = light[:9]
        blockers, error, error_path, line = light[9:]
        if error is not None:
            problems[path] = _problem(path, error, error_path, line)
            continue
        if cell_id != expected:
            problems[path] = _misnamed(path, expected, cell_id)
            continue
        if expected in paths and not is_own_path(path, expected):
            continue  # a stray copy in another directory: the cell's own file wins
        paths[expected] = path
        blobs[expected] = blob
        nodes[expected] = Node(
            expected,
            status or "open",
            kind or "task",
            priority if priority is not None else 2,
            created or 0.0,
            parent,
            bool(deleted),
            str(blockers).split("\n") if blockers else [],
            assignee,
        )
    return CellIndex(
        key=key,
        paths=paths,
        blobs=blobs,
        nodes=nodes,
        problems=problems,
        load=load,
        load_json=load_json,
    )


class collector_paused:
    """``with collector_paused():``: Python's cyclic garbage collector does not run in
    the block (enabled again after, if it was). Reading a state makes a few objects per
    cell, none in a cycle; at 100,000 cells the collections their allocation triggers
    (each walking the objects made so far) were ~0.2 s of a fresh command's ~0.8 s."""

    __slots__ = ("_was_enabled",)

    def __init__(self) -> None:
        self._was_enabled = False

    def __enter__(self) -> None:
        self._was_enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, kind: type[BaseException] | None, value: object, trace: object) -> None:
        if self._was_enabled:
            gc.enable()


def _problem(path: str, error: str, error_path: str | None, line: int | None) -> CorruptFile:
    """The problem of a file that does not parse, named by ``path`` (the stored message
    names the path it was parsed at: the same blob can stand at another)."""
    message = error
    if error_path and error_path != path:
        message = message.replace(error_path, path)
    details: dict[str, Any] = {"path": path}
    if line is not None:
        details["line"] = line
    return CorruptFile(message, **details)


def _misnamed(path: str, expected: str, found: str | None) -> CorruptFile:
    return CorruptFile(misnamed_message(path, expected, found), path=path)


def derive(
    base: CellIndex,
    key: str,
    written: Mapping[str, tuple[str, str, Cell | Node | CorruptFile] | None],
) -> CellIndex:
    """``base`` with files changed: path -> (id, blob, cell, its light facts or a
    problem), None = removed."""
    index = CellIndex(
        key=key,
        paths=dict(base.paths),
        blobs=dict(base.blobs),
        nodes=dict(base.nodes),
        problems=dict(base.problems),
        load=base.load,
        load_json=base.load_json,
    )
    for path, change in written.items():
        index.problems.pop(path, None)
        expected = cell_id_from_path(path)
        if expected is None:
            continue
        if index.paths.get(expected) == path:
            index.paths.pop(expected, None)
            index.blobs.pop(expected, None)
            index.nodes.pop(expected, None)
        if change is None:
            continue
        _, blob, parsed = change
        if isinstance(parsed, CorruptFile):
            index.problems[path] = parsed
        elif parsed.id != expected:
            index.problems[path] = _misnamed(path, expected, parsed.id)
        else:
            index.paths[expected] = path
            index.blobs[expected] = blob
            index.nodes[expected] = parsed if isinstance(parsed, Node) else node_of(parsed)
    return index


class CellCache:
    """Per process: decoded cells by blob id, and the last few indexes by state key."""

    def __init__(self) -> None:
        self.by_blob: dict[str, Cell] = {}
        self.indexes: dict[str, CellIndex] = {}
        self.decoded = 0  # cell documents decoded by this process (the expensive part)

    def remember(self, blob_sha: str, cell: Cell) -> None:
        """Record a cell hive itself just encoded, so it is never decoded again."""
        if len(self.by_blob) >= MAX_CACHED_CELLS:
            self.by_blob.clear()
        self.by_blob[blob_sha] = cell

    def keep(self, index: CellIndex) -> CellIndex:
        if index.key not in self.indexes and len(self.indexes) >= MAX_INDEXES:
            self.indexes.pop(next(iter(self.indexes)))
        self.indexes[index.key] = index
        return index


def index_of_cells(key: str, cells: list[Cell]) -> CellIndex:
    """An in-memory index of the given cells (paths as hive would store them)."""
    from hive.store.layout import cell_path

    by_blob = {f"mem:{cell.id}": cell for cell in cells}

    def load(blobs: list[str]) -> dict[str, Cell]:
        return {blob: by_blob[blob] for blob in blobs}

    changes = {cell_path(c.id): (c.id, f"mem:{c.id}", c) for c in cells}
    empty = CellIndex(key=key, paths={}, blobs={}, nodes={}, problems={}, load=load)
    return derive(empty, key, dict(changes))
