"""A Workspace: one repository, one actor, the caches, and the write path.

Every operation in the domain takes a Workspace as its first argument and
keyword arguments after it, and returns a model. The CLI, the tool registry
and the MCP server all build a Workspace and call the same functions.
"""

from __future__ import annotations

import contextlib
import copy
import getpass
import os
import re
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hive.errors import (
    CorruptFile,
    HiveError,
    InvalidInput,
    NotInitialized,
    NotRegistered,
    NotYourIdentity,
)
from hive.git.loose import hive_tree
from hive.git.refs import read_head_fast
from hive.git.repo import (
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
from hive.store.cache import CellCache, CellIndex
from hive.store.cells import decode_config, encode_cell
from hive.store.layout import CELL_SUFFIX, CELLS_DIR, CONFIG_PATH, cell_path

DIRECTORY_MARK = "directory:"  # stands for the blob sha of a cell path that is a directory
READY_SAVE_DELAY = 0.02  # seconds after a write before a server saves its ready list
_ACTOR_RE = re.compile(r"^[\w.@+-][\w .@+-]{0,63}$")


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


@dataclass
class _SaveSchedule:
    """When the cells were last saved for other processes (shared by ``for_actor`` copies)."""

    commit: str | None = None
    delay: float | None = None
    timers: list[threading.Timer] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


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
        self.git = GitRepo.discover(path)
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
        self.cache = CellCache(self.git.paths.hive_state_dir if persist_cache else None)
        # True: cells read for a new commit are saved by save_cache() (at exit, after
        # the answer is printed) instead of at once.
        self.defer_persist = False
        self._saves = _SaveSchedule()
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

    def cells(self, snap: Snapshot | None = None) -> CellIndex:
        """All cells of ``snap`` (default: the current state), parsed via the cache."""
        if snap is not None:
            return self._index(snap)
        fast = self._persisted_index()
        if fast is not None:
            return fast
        snap = self.snapshot()
        known = snap.dir_key(CELLS_DIR) in self.cache.indexes
        index = self._index(snap)
        if not known and self.autocommit and snap.head.commit is not None:
            if self.defer_persist:
                self.cache.unsaved = (snap.head.commit, index)
            else:
                self._persist(snap.head.commit, index)
        return index

    def _persist(self, commit: str, index: CellIndex, *, background: bool = False) -> None:
        """Save ``commit``'s ready list as printed JSON, then its cells, for fresh processes.

        ``background``: called off the main thread, so only dulwich-free readers are used.
        """
        if self.cache.persist_dir is None:
            return
        tree = self._hive_tree(commit, background=background)
        self._save_ready_list(commit, index, tree)
        self.cache.persist(commit, index, tree)

    def _hive_tree(self, commit: str, *, background: bool) -> str | None:
        tree = hive_tree(self.git.paths, commit)
        if tree is None and not background:
            tree = self.git.lookup_path(self.git.commit_tree(commit), ".hive", want_tree=True)
        return tree

    def _save_ready_list(self, commit: str, index: CellIndex, tree: str | None) -> None:
        from pydantic_core import to_json

        from hive import __version__
        from hive.domain.deadlines import has_deadline
        from hive.domain.graph import ready_cells
        from hive.store import ready_answer

        if self.cache.persist_dir is None:
            return
        printed = self.cache.json_by_blob
        if len(printed) > 100_000:
            printed.clear()
        ready = ready_cells(index)
        if has_deadline(ready):  # expiry depends on the clock: fresh readers compute it
            return
        documents = []
        for cell in ready:
            blob = index.blobs.get(cell.id, "")
            if blob not in printed:
                printed[blob] = to_json(cell, indent=2)
            documents.append(printed[blob])
        ready_answer.save(self.cache.persist_dir, commit, tree, __version__, documents)

    def mark_save_pending(self) -> None:
        """Tell fresh readers that the ready list of the last write is on its way."""
        from hive.store import ready_answer

        if self.cache.persist_dir is not None and self.cache.last_write is not None:
            ready_answer.mark_pending(self.cache.persist_dir, self.cache.last_write[0])

    def _index(self, snap: Snapshot) -> CellIndex:
        self.config(snap)
        key = snap.dir_key(CELLS_DIR)
        if key not in self.cache.indexes and not self.cache.by_blob:
            self._seed_from_disk(snap)
        listing, read = self._cell_files(snap)
        index = self.cache.index_for(key, listing, read)
        if self.autocommit and snap.head.commit is not None:
            self._key_of_commit[snap.head.commit] = key
        return index

    def _cell_files(
        self, snap: Snapshot
    ) -> tuple[Callable[[], dict[str, str]], Callable[[str], bytes]]:
        """The cell files of ``snap`` and a blob reader for them that turns damage into
        a ``CorruptFile`` naming the file: an object git cannot read (corrupt or
        missing), or a directory where a cell file should be (listed under its own
        path, so ``list``, ``show`` and ``doctor`` all report it)."""
        where: dict[str, str] = {}

        def listing() -> dict[str, str]:
            files = snap.listing(CELLS_DIR)
            directories = {
                folder
                for path in files
                if (folder := path.rpartition("/")[0]).endswith(CELL_SUFFIX)
            }
            for folder in list(directories):  # deeper files: every .yaml folder above
                parent = folder.rpartition("/")[0]
                while parent.startswith(CELLS_DIR + "/"):
                    if parent.endswith(CELL_SUFFIX):
                        directories.add(parent)
                    parent = parent.rpartition("/")[0]
            if directories:
                files = {
                    path: sha
                    for path, sha in files.items()
                    if not any(path.startswith(folder + "/") for folder in directories)
                }
                files.update({folder: DIRECTORY_MARK + folder for folder in directories})
            where.update({sha: path for path, sha in files.items()})
            return files

        def read(sha: str) -> bytes:
            path = where.get(sha, "?")
            if sha.startswith(DIRECTORY_MARK):
                raise CorruptFile(
                    f"{path}: is a directory, not a cell file; move what is inside it"
                    " elsewhere and commit, so the cell can be stored there again",
                    path=path,
                )
            try:
                return self.git.read_blob(sha)
            except HiveError:
                raise
            except Exception as exc:  # dulwich: zlib, checksum, missing object, ...
                raise CorruptFile(
                    f"{path}: its git object {sha[:12]} cannot be read ({type(exc).__name__});"
                    " run 'git fsck', and restore the object from another clone or a backup",
                    path=path,
                ) from None

        return listing, read

    def _seed_from_disk(self, snap: Snapshot) -> None:
        """A fresh process: parse only the cells that changed since the last saved index."""
        loaded = self.cache.load_persisted(snap.head.commit or "")
        if loaded is not None and snap.head.commit is not None:
            self._key_of_commit[snap.head.commit] = loaded.key

    def _persisted_index(self) -> CellIndex | None:
        """The index for HEAD without touching git objects, when already known."""
        if not self.autocommit:
            return None
        commit = self.git.head().commit
        if commit is None:
            return None
        key = self._key_of_commit.get(commit)
        if key is not None and key in self.cache.indexes:
            return self.cache.indexes[key]
        if self.cache.indexes:
            return None  # warm process: re-listing the tree is cheaper than unpickling
        loaded = self.cache.load_persisted(commit, hive_tree(self.git.paths, commit))
        if loaded is not None:
            self._key_of_commit[commit] = loaded.key
        return loaded

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
                event, wanted.subject_id, wanted.title, cell_ids, wanted.trailers
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
        """Register the post-write index so the next read or write needs no re-listing."""
        key = self.git.lookup_path(tree, CELLS_DIR, want_tree=True)
        if key is None:
            return
        entries = {cid: (path, sha, cell) for cid, (path, sha, cell, _) in written.items()}
        self.cache.last_write = (commit, self.cache.derive(base, key, entries))
        self._key_of_commit[commit] = key
        self._schedule_save()

    def has_unsaved(self) -> bool:
        """Whether this process read or wrote cells that no later process can load yet."""
        latest = self.cache.last_write or self.cache.unsaved
        return self.autocommit and latest is not None and latest[0] != self._saves.commit

    def save_cache(self, *, background: bool = False, ready_only: bool = False) -> None:
        """Leave what this process read or wrote last for the next process: a fresh CLI
        read then unpickles it instead of listing trees and re-parsing cells.

        ``background``: off the main thread (dulwich-free readers only); ``ready_only``:
        just the ready list, the quick part fresh readers wait for.
        """
        latest = self.cache.last_write or self.cache.unsaved
        if latest is None or not self.has_unsaved():
            return
        commit, index = latest
        with contextlib.suppress(Exception):  # best effort: a cache is never an error
            head = read_head_fast(self.git.paths) if background else self.git.head()
            if head is None or head.commit != commit:
                return
            if ready_only:
                tree = self._hive_tree(commit, background=background)
                self._save_ready_list(commit, index, tree)
            else:
                self._persist(commit, index, background=background)
                self._saves.commit = commit

    def save_after_writes(self, delay: float = 1.0) -> None:
        """For long-lived processes (the MCP server): save the cells in a background
        thread once writes have paused for ``delay`` seconds, so a fresh ``hive ready``
        in another process finds them."""
        self._saves.delay = delay

    def _schedule_save(self) -> None:
        """After a write in a long-lived process: the ready list almost at once (fresh
        readers wait for it), everything else once writes pause."""
        saves = self._saves
        if saves.delay is None:
            return
        self.mark_save_pending()
        with saves.lock:
            for timer in saves.timers:
                timer.cancel()
            saves.timers = [
                threading.Timer(
                    READY_SAVE_DELAY,
                    self.save_cache,
                    kwargs={"background": True, "ready_only": True},
                ),
                threading.Timer(saves.delay, self.save_cache, kwargs={"background": True}),
            ]
            for timer in saves.timers:
                timer.daemon = True
                timer.start()

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
    ) -> str:
        trailers = [("Hive-Cell", cell_id) for cell_id in dict.fromkeys(cell_ids or [subject_id])]
        trailers += [*self.trailers(event), *extra]
        subject = without_control_chars(f"hive: {event} {subject_id} {title}")
        return format_message(subject, trailers)

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


def check_actor(name: str) -> str:
    cleaned = name.strip()
    if not _ACTOR_RE.match(cleaned):
        raise InvalidInput(
            f"invalid agent name {name!r}: use letters, digits, spaces and . _ @ + - (max 64)"
        )
    return cleaned


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9.+-]+", ".", name.lower()).strip(".") or "agent"


def _os_user() -> str | None:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return None
