"""Parsed cells, cached by content.

Parsing YAML is the expensive part of reading a large tracker (~0.3 ms a
cell), so every cell file is parsed once per blob id, ever: the in-memory
cache maps blob sha -> Cell, and a whole directory's parsed state is kept per
content key (a tree sha), so a warm read of 10,000 cells is a dictionary
lookup. Between processes the last snapshot is kept in a pickle under the
repository's private hive state directory (``.git/hive/``), keyed by the
commit it was read from and by hive's version.
"""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from hive import __version__
from hive.errors import CorruptFile
from hive.models import Cell
from hive.store.cells import decode_cell
from hive.store.layout import cell_id_from_path

T = TypeVar("T")
CACHE_FORMAT = f"hive-{__version__}-py{sys.version_info[0]}.{sys.version_info[1]}-3"
MAX_INDEXES = 4


@dataclass
class CellIndex:
    """Every cell of one state: parsed cells, and the files that did not parse."""

    key: str
    cells: dict[str, Cell] = field(default_factory=dict)
    paths: dict[str, str] = field(default_factory=dict)
    blobs: dict[str, str] = field(default_factory=dict)
    problems: dict[str, CorruptFile] = field(default_factory=dict)
    _children: dict[str, list[str]] | None = None
    _memo: dict[str, Any] = field(default_factory=dict)

    def memo(self, name: str, compute: Callable[[], T]) -> T:
        """``compute()``, once per index: an index never changes after it is built."""
        if name not in self._memo:
            self._memo[name] = compute()
        result: T = self._memo[name]
        return result

    def live(self) -> list[Cell]:
        """Cells that are not deleted (tombstoned)."""
        return [cell for cell in self.cells.values() if cell.deleted_at is None]

    def children_of(self, cell_id: str) -> list[str]:
        if self._children is None:
            children: dict[str, list[str]] = {}
            for cell in self.cells.values():
                if cell.parent is not None:
                    children.setdefault(cell.parent, []).append(cell.id)
            self._children = children
        return self._children.get(cell_id, [])

    def is_unreadable(self, cell_id: str) -> bool:
        """Whether ``cell_id`` has a file that failed to parse."""
        return any(cell_id_from_path(path) == cell_id for path in self.problems)

    def known_ids(self) -> IdSet:
        """Ids of all cell files, including ones that failed to parse (a live view)."""
        return IdSet(self)


class IdSet:
    """The ids taken in one index, plus ids added by a plan in progress.

    A view rather than a copy: membership tests cost a dict lookup, not a
    10,000-element set build per write.
    """

    def __init__(self, index: CellIndex) -> None:
        self._cells = index.cells
        self._extra: set[str] = set()
        for path in index.problems:
            name = cell_id_from_path(path)
            if name is not None:
                self._extra.add(name)

    def __contains__(self, cell_id: object) -> bool:
        return cell_id in self._cells or cell_id in self._extra

    def __iter__(self) -> Iterator[str]:
        yield from self._cells
        yield from (cell_id for cell_id in self._extra if cell_id not in self._cells)

    def add(self, cell_id: str) -> None:
        self._extra.add(cell_id)


@contextlib.contextmanager
def _paused_gc() -> Iterator[None]:
    """Pause the cyclic collector while building many objects at once (4x faster)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class CellCache:
    """blob sha -> parsed cell, plus recent whole-directory indexes."""

    def __init__(self, persist_dir: str | None = None) -> None:
        self.persist_dir = persist_dir
        self.by_blob: dict[str, Cell | CorruptFile] = {}
        self.indexes: dict[str, CellIndex] = {}
        self.parsed = 0  # cell files parsed by this cache (the expensive part)
        self.last_write: tuple[str, CellIndex] | None = None  # (commit, its index)
        self.unsaved: tuple[str, CellIndex] | None = None  # read, not yet persisted
        self.json_by_blob: dict[str, bytes] = {}  # a cell's printed JSON, per file version

    def remember(self, blob_sha: str, cell: Cell) -> None:
        """Record a cell hive itself just encoded, so it is never re-parsed."""
        self.by_blob[blob_sha] = cell

    def index_for(
        self,
        key: str,
        listing: Callable[[], Mapping[str, str]],
        read_blob: Callable[[str], bytes],
    ) -> CellIndex:
        cached = self.indexes.get(key)
        if cached is not None:
            return cached
        index = CellIndex(key=key)
        with _paused_gc():
            for path, sha in listing().items():
                expected = cell_id_from_path(path)
                if expected is None:
                    continue
                parsed = self.by_blob.get(sha)
                if parsed is None:
                    parsed = self._parse(sha, path, read_blob)
                if isinstance(parsed, CorruptFile):
                    index.problems[path] = parsed
                    continue
                self._add(index, parsed, path, sha, expected)
        self._keep(index)
        return index

    def _parse(self, sha: str, path: str, read_blob: Callable[[str], bytes]) -> Cell | CorruptFile:
        self.parsed += 1
        try:
            parsed: Cell | CorruptFile = decode_cell(read_blob(sha), path)
        except CorruptFile as exc:
            parsed = exc
        self.by_blob[sha] = parsed
        return parsed

    def _add(
        self, index: CellIndex, cell: Cell, path: str, sha: str, expected: str | None = None
    ) -> None:
        if cell.id != (expected or cell_id_from_path(path)):
            expected = cell_id_from_path(path)
            index.problems[path] = CorruptFile(
                f"{path}: file is named for {expected!r} but contains id {cell.id!r}", path=path
            )
            return
        index.cells[cell.id] = cell
        index.paths[cell.id] = path
        index.blobs[cell.id] = sha

    def _keep(self, index: CellIndex) -> None:
        if len(self.indexes) >= MAX_INDEXES:
            self.indexes.pop(next(iter(self.indexes)))
        self.indexes[index.key] = index

    def derive(
        self, base: CellIndex, key: str, written: dict[str, tuple[str, str, Cell]]
    ) -> CellIndex:
        """The index after a write: ``base`` plus ``written`` (id -> (path, blob, cell))."""
        cached = self.indexes.get(key)
        if cached is not None:
            return cached
        index = CellIndex(
            key=key,
            cells=dict(base.cells),
            paths=dict(base.paths),
            blobs=dict(base.blobs),
            problems=dict(base.problems),
        )
        for path, sha, cell in written.values():
            index.problems.pop(path, None)
            self.by_blob[sha] = cell
            self._add(index, cell, path, sha)
        self._keep(index)
        return index

    # ------------------------------------------------------------ persistence

    def _persist_path(self) -> str | None:
        if self.persist_dir is None:
            return None
        return os.path.join(self.persist_dir, "cells.cache")

    def load_persisted(self, commit: str, hive_tree: str | None = None) -> CellIndex | None:
        """The index saved by an earlier process for ``commit``, or for any commit with
        the same ``.hive`` tree, if any."""
        path = self._persist_path()
        if path is None:
            return None
        try:
            with open(path, "rb") as handle, _paused_gc():
                payload = pickle.load(handle)
                gc.freeze()  # long-lived: keep the collector from re-scanning them
        except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError, TypeError):
            return None
        except Exception:  # a cache must never break a read
            return None
        if not isinstance(payload, dict) or payload.get("format") != CACHE_FORMAT:
            return None
        index = payload.get("index")
        if not isinstance(index, CellIndex):
            return None
        self._seed_blobs(index)
        same_tree = hive_tree is not None and payload.get("hive_tree") == hive_tree
        if payload.get("commit") != commit and not same_tree:
            return None
        self._keep(index)
        return index

    def _seed_blobs(self, index: CellIndex) -> None:
        for cell_id, sha in index.blobs.items():
            self.by_blob.setdefault(sha, index.cells[cell_id])

    def persist(self, commit: str, index: CellIndex, hive_tree: str | None = None) -> None:
        """Save ``index`` for later processes (best effort, atomic replace)."""
        path = self._persist_path()
        if path is None:
            return
        index._children = None
        index._memo = {}
        payload = {"format": CACHE_FORMAT, "commit": commit, "hive_tree": hive_tree, "index": index}
        temp = f"{path}.{os.getpid()}.tmp"
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(temp, "wb") as handle:
                pickle.dump(payload, handle, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(temp, path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temp)
