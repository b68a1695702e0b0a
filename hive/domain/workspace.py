"""A Workspace: one repository, one actor, the caches, and the write path.

Every operation in the domain takes a Workspace as its first argument and
keyword arguments after it, and returns a model. The CLI, the tool registry
and the MCP server all build a Workspace and call the same functions.
"""

from __future__ import annotations

import copy
import os
import sqlite3
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from hive.domain.actors import check_actor as check_actor
from hive.domain.actors import os_user as _os_user
from hive.domain.actors import slug as _slug
from hive.errors import (
    CorruptFile,
    HiveError,
    InvalidInput,
    NotInitialized,
    NotRegistered,
    NotYourIdentity,
)
from hive.git.repo import (
    TREE_MODE,
    Change,
    GitRepo,
    Identity,
    Plan,
    Snapshot,
    WriteResult,
    blob_sha_of,
    format_message,
)
from hive.models import Cell, HiveConfig
from hive.models.cell import without_control_chars
from hive.models.identity import Principal
from hive.store import credentials
from hive.store.cache import CellCache, CellIndex, build_index, derive
from hive.store.celldoc import parse_for_index
from hive.store.cells import decode_cell, decode_config, encode_cell, parsed_cell
from hive.store.index import EMPTY_STATE, ParseProblem, StateIndex
from hive.store.layout import CELLS_DIR, CONFIG_PATH, HIVE_DIR, cell_id_from_path, cell_path

GITLINK_MODE = 0o160000


def _env_flag(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() not in ("0", "false", "no", "off")


@dataclass
class MixedPlan:
    """What a write plan returns: cells, other file changes, and the commit subject."""

    cells: list[Cell]
    subject_id: str
    title: str
    result: Any = None
    files: list[Change] = field(default_factory=list)
    trailers: list[tuple[str, str]] = field(default_factory=list)  # e.g. Hive-Override
    body: str = ""  # between the subject and the trailers (swarm_complete: the summary)


class Workspace:
    """An opened hive repository."""

    def __init__(
        self,
        path: str = ".",
        *,
        actor: str | None = None,
        autocommit: bool | None = None,
        persist_cache: bool = True,
        session: str | None = None,
        claim: str | None = None,
        token: str | None = None,
        from_env: bool = True,
        unregistered: bool = False,
    ) -> None:
        """Open the repository at ``path``.

        Who acts: ``actor`` is trusted as an agent (in-process code, or a tool
        surface whose session proved the name). Otherwise the principal is
        resolved on first use: a credential (``token``, else ``HIVE_AGENT_TOKEN``)
        makes the caller that agent; a name claimed without one (``claim``, else
        ``HIVE_AGENT``) is refused unless it is the git user's own; with neither
        the caller is a person acting as their git identity. ``unregistered``:
        a tool caller that has not registered yet.
        """
        self.git = GitRepo.discover(os.path.expanduser(str(path)))
        self.autocommit = _env_flag("HIVE_AUTOCOMMIT", True) if autocommit is None else autocommit
        self._principal: Principal | None = None
        self._claim = claim
        self._token = token
        if from_env:
            self._claim = claim or os.environ.get("HIVE_AGENT") or None
            self._token = token or os.environ.get("HIVE_AGENT_TOKEN") or None
        if actor is not None:
            self._principal = Principal(check_actor(actor), "agent")
        elif unregistered:
            self._principal = Principal(self._person_name(), "unregistered")
        self.identity_error: HiveError | None = None
        self.cache = CellCache()
        # persist_cache=False: a private in-memory index (tests of cold reads)
        self._state_dir = self.git.paths.hive_state_dir if persist_cache else ":memory:"
        self._state_index: StateIndex | None = None
        # called as progress(done, total) while a large state is indexed (the CLI draws a bar)
        self.progress: Callable[[int, int], None] | None = None
        self._config: tuple[str, HiveConfig] | None = None
        self._key_of_commit: dict[str, str] = {}
        self.state: dict[str, Any] = {}
        self.session = session or os.environ.get("HIVE_SESSION") or f"lib:{uuid.uuid4().hex}"

    @property
    def root(self) -> str:
        return self.git.root

    # ------------------------------------------------------------ identity

    @property
    def principal(self) -> Principal:
        """Who is acting; raises NotYourIdentity when a claimed name is not proven."""
        if self.identity_error is not None:
            raise self.identity_error
        if self._principal is None:
            self._principal = self._resolve_principal()
        return self._principal

    @property
    def actor(self) -> str:
        return self.principal.name

    def _resolve_principal(self) -> Principal:
        state_dir = self.git.paths.hive_state_dir
        if self._token:
            name = credentials.name_of_token(state_dir, self._token)
            if name is None:
                raise NotYourIdentity(
                    "HIVE_AGENT_TOKEN is not the credential of any agent registered in this"
                    " repository (retired or replaced?); register again with"
                    " 'hive agent register NAME'"
                )
            if self._claim and check_actor(self._claim) != name:
                raise NotYourIdentity(
                    f"you are {name} (by HIVE_AGENT_TOKEN), not {self._claim}",
                    claimed=self._claim,
                    agent=name,
                )
            return Principal(name, "agent")
        person = self._person_name()
        if self._claim and check_actor(self._claim) != person:
            raise NotYourIdentity(
                f"acting as {self._claim} needs its credential: set HIVE_AGENT_TOKEN (issued by"
                f" 'hive agent register {self._claim}'); without one you act as yourself"
                f" ({person}): unset HIVE_AGENT / --actor",
                claimed=self._claim,
            )
        return Principal(person, "person")

    def _person_name(self) -> str:
        identity = self.git.config_identity()
        return identity.name if identity else (_os_user() or "unknown")

    def require_agent(self, action: str) -> str:
        """The actor's name, when it may act as an agent (claim, reserve, use mail)."""
        principal = self.principal
        if principal.kind == "unregistered":
            raise NotRegistered(
                f"{action} needs a registered agent: call swarmmail_init first (or start"
                " the server with --agent NAME, or with HIVE_AGENT_TOKEN set)"
            )
        return principal.name

    def identity(self) -> Identity:
        """Author and committer of this workspace's commits: the acting identity."""
        principal = self.principal
        configured = self.git.config_identity()
        if principal.kind == "person" and configured is not None:
            return configured
        return Identity(name=principal.name, email=f"{_slug(principal.name)}@hive.local")

    def trailers(self, event: str) -> list[tuple[str, str]]:
        """``Hive-Agent`` and ``Hive-Event`` (+ ``Hive-Identity`` for non-agents)."""
        principal = self.principal
        found = [("Hive-Agent", principal.name), ("Hive-Event", event)]
        if principal.kind != "agent":
            found.append(("Hive-Identity", principal.kind))
        return found

    # ------------------------------------------------------------ reading

    def snapshot(self) -> Snapshot:
        return self.git.snapshot(staged=not self.autocommit)

    def config(self, snap: Snapshot | None = None) -> HiveConfig:
        snap = snap or self.snapshot()
        sha = snap.blob_sha(CONFIG_PATH)
        if sha is None:
            raise NotInitialized(f"{self.root} has no hive yet: run 'hive init' first")
        if self._config is not None and self._config[0] == sha:
            return self._config[1]
        config = decode_config(self.git.read_blob(sha), CONFIG_PATH)
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

    def cells(self, snap: Snapshot | None = None) -> CellIndex:
        """All cells of ``snap`` (default: the current state, HEAD's or staged)."""
        if snap is not None or not self.autocommit:
            return self._index(snap or self.snapshot())
        head = self.git.head()
        if head.commit is None:
            return self._index(self.snapshot())
        try:
            key = self._cells_key(head.commit)
        except sqlite3.DatabaseError as exc:
            self.state_index.reset(f"it failed while reading ({exc})")
            key = self._cells_key(head.commit)
        return self._index_for_key(key)

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
                raise NotInitialized(f"{self.root} has no hive yet: run 'hive init' first")
            cells = self.git.lookup_path(hive, "cells", want_tree=True)
            self.state_index.remember_commit(commit, hive, cells)
            trees = (hive, cells)
        cells = trees[1]
        key = cells or EMPTY_STATE
        self._key_of_commit[commit] = key
        return key

    def _index(self, snap: Snapshot) -> CellIndex:
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
            self.state_index.reset(f"it failed while reading ({exc})")
            return self._read_state(key)

    def _read_state(self, key: str) -> CellIndex:
        state = self.state_index
        state.ensure_state(
            key, self._list_tree, self._read_blobs, parse_for_index, progress=self.progress
        )
        index = build_index(key, state.entries(key), self._load_cells)
        return self.cache.keep(index)

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
            for blob, document in self.state_index.cell_documents(missing):
                cell = Cell.model_validate_json(document)
                self.cache.remember(blob, cell)
                self.cache.decoded += 1
                found[blob] = cell
        return found

    # ------------------------------------------------------------ writing

    def for_actor(self, name: str) -> Workspace:
        """This workspace acting as ``name`` (sharing its caches and git handle)."""
        checked = check_actor(name)
        if self._principal == Principal(checked, "agent"):
            return self
        other = copy.copy(self)
        other._principal = Principal(checked, "agent")
        other.identity_error = None
        return other

    def write(
        self,
        plan: Callable[[Snapshot, CellIndex], tuple[list[Cell], str, str, Any]],
        *,
        event: str,
    ) -> WriteResult:
        """Run ``plan`` on the fresh state and store the cells it returns, atomically.

        ``plan`` returns (cells to write, subject id, subject title, result).
        """

        def with_files(snap: Snapshot, index: CellIndex) -> MixedPlan:
            cells, subject_id, title, result = plan(snap, index)
            return MixedPlan(cells=cells, subject_id=subject_id, title=title, result=result)

        return self.write_mixed(with_files, event=event)

    def write_mixed(
        self, plan: Callable[[Snapshot, CellIndex], MixedPlan], *, event: str
    ) -> WriteResult:
        """Like :meth:`write`, plus other files (reservations, outcomes, an agent's
        code) in the same commit."""

        last: dict[str, Any] = {}

        def git_plan(snap: Snapshot) -> Plan:
            index = self.cells(snap)
            wanted = plan(snap, index)
            written = {cell.id: self._encode(cell) for cell in wanted.cells}
            last.update(base=index, written=written)
            changes = [Change(path, content) for path, _, _, content in written.values()]
            changes += wanted.files
            cell_ids = [c.id for c in wanted.cells]
            message = self.message(
                event, wanted.subject_id, wanted.title, cell_ids, wanted.trailers, wanted.body
            )
            return Plan(changes=changes, message=message, result=wanted.result)

        outcome = self.git.transact(
            git_plan,
            author=self.identity(),
            lock_timeout=self.lock_timeout(),
            stage_only=not self.autocommit,
        )
        if outcome.commit and outcome.tree and last.get("written"):
            self._remember_write(outcome.commit, outcome.tree, last["base"], last["written"])
        return outcome

    def _encode(self, cell: Cell) -> tuple[str, str, Cell, bytes]:
        content = encode_cell(cell)
        return cell_path(cell.id), blob_sha_of(content), cell, content

    def _remember_write(
        self,
        commit: str,
        tree: str,
        base: CellIndex,
        written: dict[str, tuple[str, str, Cell, bytes]],
    ) -> None:
        """Record the state after a write, here and in the state index, so no process
        ever re-lists or re-parses what this one just wrote."""
        hive = self.git.lookup_path(tree, HIVE_DIR, want_tree=True)
        cells = self.git.lookup_path(hive, "cells", want_tree=True) if hive else None
        key = cells or EMPTY_STATE
        changes: dict[str, tuple[str, str, Cell | CorruptFile] | None] = {}
        for cell_id, (path, sha, cell, _) in written.items():
            self.cache.remember(sha, cell)
            changes[path] = (cell_id, sha, cell)
        index = self.cache.keep(derive(base, key, changes))
        self._key_of_commit[commit] = key
        state = self.state_index
        state.add_parsed((sha, parsed_cell(cell)) for _, (_, sha, cell, _) in written.items())
        state.ensure_state(key, self._list_tree, self._read_blobs, parse_for_index)
        state.remember_commit(commit, hive, cells)
        del index

    def write_files(self, plan: Callable[[Snapshot], tuple[list[Change], str, Any]]) -> WriteResult:
        """Lower-level write for non-cell files (config)."""

        def git_plan(snap: Snapshot) -> Plan:
            changes, message, result = plan(snap)
            return Plan(changes=changes, message=message, result=result)

        return self.git.transact(
            git_plan,
            author=self.identity(),
            lock_timeout=self.lock_timeout(),
            stage_only=not self.autocommit,
        )

    def message(
        self,
        event: str,
        subject_id: str,
        title: str,
        cell_ids: list[str],
        extra: Sequence[tuple[str, str]] = (),
        body: str = "",
    ) -> str:
        trailers = [("Hive-Cell", cell_id) for cell_id in dict.fromkeys(cell_ids or [subject_id])]
        trailers += [*self.trailers(event), *extra]
        subject = without_control_chars(f"hive: {event} {subject_id} {title}")
        text = "\n".join(without_control_chars(line) for line in body.splitlines())
        return format_message(subject, trailers, text)

    def lock_timeout(self) -> float:
        env = os.environ.get("HIVE_LOCK_TIMEOUT")
        if env:
            try:
                return max(0.01, float(env))
            except ValueError:
                raise InvalidInput(
                    f"HIVE_LOCK_TIMEOUT must be a number of seconds, got {env!r}"
                ) from None
        try:
            return self.config().lock_timeout_seconds
        except NotInitialized:
            return 30.0
