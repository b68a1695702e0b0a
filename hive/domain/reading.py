"""The read side of a workspace: config and cells of a state, served from this
process's caches and the clone's state index (derived from git content, keyed by
tree and blob ids, never the truth), and what a write records there afterwards."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator, Sequence

from pydantic_core import to_json

from hive.errors import CorruptFile, LockTimeout, NotInitialized
from hive.git.repo import TREE_MODE, GitRepo, Snapshot
from hive.git.worktree import edited_on_disk
from hive.models import Cell, HiveConfig
from hive.store.cache import CellCache, CellIndex, build_index, collector_paused, derive
from hive.store.cellrows import parse_for_index
from hive.store.cells import decode_cell, decode_config, parsed_cell
from hive.store.index import (
    BUSY_TIMEOUT_MS,
    EMPTY_STATE,
    REBUILT_RETRIES,
    Entry,
    Node,
    ParsedCell,
    ParseProblem,
    StateIndex,
    entry_of,
)
from hive.store.layout import CELLS_DIR, CONFIG_PATH, HIVE_DIR, cell_id_from_path
from hive.store.layout import not_initialized as not_initialized

GITLINK_MODE = 0o160000

# a written cell: (path, blob id, cell, encoded content); a streamed write keeps only
# the cell's light facts (its parsed row is stored as it is written) and no content
Written = tuple[str, str, Cell | Node, bytes | None]


COMMIT_CONFIG = f"git commit {CONFIG_PATH}"


def committed_config_note(root: str, committed: str) -> str:
    """The next step for a committed ``.hive/config.yaml`` that does not load: hive
    reads the committed file, so a fix made on disk counts only once committed."""
    try:
        edited = edited_on_disk(os.path.join(root, CONFIG_PATH), committed)
    except OSError:
        edited = False
    if edited:
        return (
            " (in the committed file, which is the one hive reads: your edits on disk"
            f" take effect once committed: {COMMIT_CONFIG})"
        )
    return f" (fix it, then commit it: {COMMIT_CONFIG})"


class StateReader:
    """Config and cells of one repository's states, cached by content."""

    def __init__(self, git: GitRepo, *, persist: bool = True) -> None:
        self.git = git
        self.cache = CellCache()
        # persist=False: a private in-memory index (tests of cold reads)
        self._state_dir = git.paths.hive_state_dir if persist else ":memory:"
        self._state_index: StateIndex | None = None
        # called as progress(done, total) while a large state is indexed (the CLI draws a bar)
        self.progress: Callable[[int, int], None] | None = None
        self._config: tuple[str, HiveConfig] | None = None
        self._key_of_commit: dict[str, str] = {}

    def _not_initialized(self) -> NotInitialized:
        return not_initialized(self.git.root)

    def config(self, snap: Snapshot) -> HiveConfig:
        sha = snap.blob_sha(CONFIG_PATH)
        if sha is None:
            raise self._not_initialized()
        if self._config is not None and self._config[0] == sha:
            return self._config[1]
        try:
            config = decode_config(self.git.read_blob(sha), CONFIG_PATH)
        except CorruptFile as exc:
            note = committed_config_note(self.git.root, sha)
            raise CorruptFile(exc.message + note, **exc.details) from None
        self._config = (sha, config)
        return config

    @property
    def state_index(self) -> StateIndex:
        """The clone's state index (``<git common dir>/hive/index.sqlite3``)."""
        if self._state_index is None:
            self._state_index = StateIndex(self._state_dir)
        return self._state_index

    def notices(self) -> list[str]:
        """Things worth telling a person (an index rebuilt), each said once."""
        found = list(self._state_index.notices) if self._state_index is not None else []
        if self._state_index is not None:
            self._state_index.notices.clear()
        return found

    def head_cells(self) -> CellIndex:
        """All cells of HEAD's commit."""
        head = self.git.head()
        if head.commit is None:
            return self.cells(self.git.snapshot(staged=False))
        try:
            key = self._cells_key(head.commit)
        except sqlite3.DatabaseError as exc:
            self._recover(exc)
            key = self._cells_key(head.commit)
        return self._index_for_key(key)

    def head_key(self) -> str | None:
        """The state key of HEAD's commit, that state indexed (its rows answer queries
        such as ``StateIndex.files_of``); None before the first commit. Nothing else is
        read: no :class:`CellIndex` of every cell is built."""
        head = self.git.head()
        if head.commit is None:
            return None
        key = self._cells_key(head.commit)
        if key not in self.cache.indexes:
            self.state_index.ensure_state(
                key, self._list_tree, self._read_blobs, parse_for_index, progress=self.progress
            )
        return key

    def cell_of_blob(self, blob: str) -> Cell:
        """The cell a file version (blob id) of HEAD's state holds, decoded once."""
        return self._load_cells([blob])[blob]

    def _cells_key(self, commit: str) -> str:
        """The state key (``.hive/cells`` tree id) of ``commit``; NotInitialized without
        a hive. Known commits cost one lookup; others read two tree objects once."""
        key = self._key_of_commit.get(commit)
        if key is not None:
            return key
        trees = self.state_index.trees_of(commit)  # only commits with a hive are recorded
        if trees is None:
            root = self.git.commit_tree(commit)
            hive = self.git.lookup_path(root, HIVE_DIR, want_tree=True)
            if hive is None or self.git.lookup_path(hive, "config.yaml") is None:
                raise self._not_initialized()
            cells = self.git.lookup_path(hive, "cells", want_tree=True)
            self.state_index.remember_commit(commit, hive, cells)
            trees = (hive, cells)
        cells = trees[1]
        key = cells or EMPTY_STATE
        self._key_of_commit[commit] = key
        return key

    def cells(self, snap: Snapshot, *, config_loads: bool = True) -> CellIndex:
        """All cells of ``snap`` (a commit's tree, or the staged index with its overlay);
        first the config must load (``config_loads``: only ``hive doctor``, which reports
        a broken config itself and checks the cells all the same, skips that)."""
        if config_loads:
            self.config(snap)
        key = snap.dir_key(CELLS_DIR)
        cached = self.cache.indexes.get(key)
        if cached is not None:
            return cached
        if not snap.overlay:
            return self._index_for_key(key)
        base = self._index_for_key(key.split("+", 1)[0])
        changes: dict[str, tuple[str, str, Cell | CorruptFile] | None] = {}
        for path, blob in snap.overlay.items():
            cell_id = cell_id_from_path(path)
            if cell_id is None:
                continue
            changes[path] = None if blob is None else (cell_id, blob, self._parse(blob, path))
        return self.cache.keep(derive(base, key, changes))

    def staged_entries(self, snap: Snapshot) -> dict[str, Entry | None]:
        """The cell files ``snap``'s overlay (the staged index) changes, as the state
        index lists files (None: removed), decoded as :meth:`cells` decodes them."""
        entries: dict[str, Entry | None] = {}
        for path, blob in snap.overlay.items():
            if cell_id_from_path(path) is None:
                continue
            if blob is None:
                entries[path] = None
                continue
            parsed = self._parse(blob, path)
            if isinstance(parsed, CorruptFile):
                line = parsed.details.get("line")
                line = line if isinstance(line, int) else None
                entries[path] = entry_of(path, blob, ParseProblem(parsed.message, path, line))
            else:
                entries[path] = entry_of(path, blob, parsed_cell(parsed))
        return entries

    def _parse(self, blob: str, path: str) -> Cell | CorruptFile:
        cached = self.cache.by_blob.get(blob)
        if cached is not None:
            return cached
        try:
            cell = decode_cell(self.git.read_blob(blob), path)
        except CorruptFile as exc:
            return exc
        self.cache.remember(blob, cell)
        return cell

    def _index_for_key(self, key: str) -> CellIndex:
        cached = self.cache.indexes.get(key)
        if cached is not None:
            return cached
        try:
            return self._read_state(key)
        except sqlite3.DatabaseError as exc:  # derived data: never trusted when broken
            self._recover(exc)
            return self._read_state(key)

    def _recover(self, exc: sqlite3.DatabaseError) -> None:
        """Rebuild a broken state index; a busy one is a lock timeout, not damage."""
        if not self.state_index.recover(exc):
            raise LockTimeout(
                f"the state index ({self.state_index.path}) stayed busy: another hive "
                f"process held it for {BUSY_TIMEOUT_MS // 1000} s ({exc}); try again"
            ) from exc

    def _read_state(self, key: str) -> CellIndex:
        state = self.state_index
        for _attempt in range(REBUILT_RETRIES):
            state.ensure_state(
                key, self._list_tree, self._read_blobs, parse_for_index, progress=self.progress
            )
            with collector_paused():
                rows = state.stored_rows(key)
                if rows is not None:  # else another process rebuilt the file meanwhile
                    index = build_index(key, rows, self._load_cells, self._load_documents)
                    return self.cache.keep(index)
        raise LockTimeout(
            f"the state index ({state.path}) was rebuilt by other processes "
            f"{REBUILT_RETRIES} times while this one read it; try again"
        )

    def _list_tree(self, tree: str) -> list[tuple[str, str, bool]]:
        return [
            (name.decode("utf-8", "surrogateescape"), sha, mode == TREE_MODE)
            for name, (mode, sha) in self.git.tree_items(tree).items()
            if mode != GITLINK_MODE
        ]

    def _read_blobs(
        self, wanted: Sequence[tuple[str, str]]
    ) -> Iterator[tuple[str, str, bytes | ParseProblem]]:
        """Each blob's bytes, or the problem naming the file when git cannot read it."""
        for sha, path in wanted:
            try:
                yield sha, path, self.git.read_blob(sha)
            except Exception as exc:  # dulwich: zlib, checksum, missing object, ...
                message = (
                    f"{path}: its git object {sha[:12]} cannot be read ({type(exc).__name__});"
                    " run 'git fsck', and restore the object from another clone or a backup"
                )
                yield sha, path, ParseProblem(message=message, path=path, line=None)

    def _load_cells(self, blobs: list[str]) -> dict[str, Cell]:
        """Decode cells by blob id: this process's cache first, then the state index."""
        found: dict[str, Cell] = {}
        missing = []
        for blob in blobs:
            cell = self.cache.by_blob.get(blob)
            if cell is None:
                missing.append(blob)
            else:
                found[blob] = cell
        if missing:
            try:
                for blob, document in self.state_index.cell_documents(missing):
                    cell = Cell.model_validate_json(document)
                    self.cache.remember(blob, cell)
                    self.cache.decoded += 1
                    found[blob] = cell
            except sqlite3.DatabaseError as exc:  # derived data: never trusted when broken
                self._recover(exc)  # and what it did not give is read from git below
            except ValueError:  # a stored document that no longer parses: damaged pages
                self.state_index.reset("it holds a cell document that does not parse")
        for blob in missing:
            if blob not in found:  # dropped by a rebuild since the state was read: git has it
                cell = decode_cell(self.git.read_blob(blob), f"{CELLS_DIR}/(blob {blob})")
                self.cache.remember(blob, cell)
                self.cache.decoded += 1
                found[blob] = cell
        return found

    def _load_documents(self, blobs: list[str]) -> dict[str, bytes]:
        """Cells by blob id as ``--json`` prints them, without decoding them: as the state
        index stores them (no model, no time formatted again), a blob it lacks (a staged
        file, a rebuild since the state was read) printed from its model."""
        found: dict[str, bytes] = {}
        try:
            found.update(self.state_index.cell_documents(blobs))
        except sqlite3.DatabaseError as exc:  # derived data: never trusted when broken
            self._recover(exc)
        lacking = [blob for blob in blobs if blob not in found]
        if lacking:
            for blob, cell in self._load_cells(lacking).items():
                found[blob] = to_json(cell, indent=2)
        return found

    def remember_parsed(self, rows: list[tuple[str, ParsedCell]]) -> None:
        """Store the parsed rows of cells a streamed write is making (see
        ``commits.MixedPlan.stream``): a derived-data failure is recovered from as a
        read's is (the state is indexed from git when next read)."""
        try:
            self.state_index.add_parsed(rows)
        except sqlite3.DatabaseError as exc:  # derived data: never trusted when broken
            self._recover(exc)

    def remember_write(
        self, commit: str, tree: str, base: CellIndex, written: dict[str, Written]
    ) -> None:
        """Record the state after a write, here and in the state index, so no process
        ever re-lists or re-parses what this one just wrote."""
        hive = self.git.lookup_path(tree, HIVE_DIR, want_tree=True)
        cells = self.git.lookup_path(hive, "cells", want_tree=True) if hive else None
        key = cells or EMPTY_STATE
        changes: dict[str, tuple[str, str, Cell | Node | CorruptFile] | None] = {}
        for cell_id, (path, sha, cell, _) in written.items():
            if isinstance(cell, Cell):
                self.cache.remember(sha, cell)
            changes[path] = (cell_id, sha, cell)
        index = self.cache.keep(derive(base, key, changes))
        self._key_of_commit[commit] = key
        state = self.state_index

        # One WAL commit for the parsed cells, the listings (diffed against the state the
        # write started from: a few rows) and the commit, as a lean write records them;
        # separate ones when that state is gone (another process rebuilt the file), so a
        # whole cold build never holds the index's write lock at once.
        def record() -> None:
            state.add_parsed(
                (sha, parsed_cell(cell))
                for _, (_, sha, cell, _) in written.items()
                if isinstance(cell, Cell)
            )
            state.ensure_state(
                key, self._list_tree, self._read_blobs, parse_for_index, base=base.key
            )
            state.remember_commit(commit, hive, cells)

        if state.has_state(base.key):
            with state.one_transaction():
                record()
        else:
            record()
        del index
