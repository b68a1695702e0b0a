"""A Workspace: one repository, one actor, the caches, and the write path.

Every operation in the domain takes a Workspace as its first argument and
keyword arguments after it, and returns a model. The CLI, the tool registry
and the MCP server all build a Workspace and call the same functions.

The Workspace is a façade: who acts is resolved in :mod:`hive.domain.principal`,
reads and caches live in :mod:`hive.domain.reading`, commits are made by
:mod:`hive.domain.commits`.
"""

from __future__ import annotations

import copy
import os
import uuid
from collections.abc import Callable
from typing import Any

from hive.domain import commits, principal
from hive.domain.actors import check_actor as check_actor
from hive.domain.actors import commit_identity, event_trailers
from hive.domain.commits import Committer
from hive.domain.commits import MixedPlan as MixedPlan
from hive.domain.reading import StateReader
from hive.errors import HiveError
from hive.git.repo import Change, GitRepo, Identity, Plan, Snapshot, WriteResult
from hive.models import Cell, HiveConfig
from hive.models.principal import Principal
from hive.store.cache import CellCache, CellIndex
from hive.store.index import StateIndex

FLAG_OFF = ("0", "false", "no", "off")
FLAG_ON = ("1", "true", "yes", "on")


def _autocommit() -> bool:
    """``HIVE_AUTOCOMMIT`` (unset or empty: on); a value that is neither a yes nor a no
    is refused rather than read as on (``=O``, ``=disabled`` asked for staging)."""
    value = os.environ.get("HIVE_AUTOCOMMIT", "")
    word = value.strip().lower()
    if word in FLAG_OFF:
        return False
    if word in ("", *FLAG_ON):
        return True
    from hive.errors import InvalidInput

    raise InvalidInput(
        "HIVE_AUTOCOMMIT must be 0 (stage hive's changes for your next commit) or 1 (commit"
        f" each one; also false/true, no/yes, off/on), got {value!r}"
    )


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
        self.autocommit = _autocommit() if autocommit is None else autocommit
        self._principal: Principal | None = None
        self._claim = claim
        self._token = token
        if from_env:
            self._claim = claim or os.environ.get("HIVE_AGENT") or None
            self._token = token or os.environ.get("HIVE_AGENT_TOKEN") or None
        if actor is not None:
            self._principal = Principal(check_actor(actor), "agent")
        elif unregistered:
            self._principal = Principal(principal.person_name(self.git), "unregistered")
        self.identity_error: HiveError | None = None
        self.reader = StateReader(self.git, persist=persist_cache)
        # per-workspace caches of domain modules (mail state, reservations, ...)
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
            self._principal = principal.resolve_principal(
                self.git, token=self._token, claim=self._claim
            )
        return self._principal

    @property
    def actor(self) -> str:
        return self.principal.name

    def require_agent(self, action: str) -> str:
        """The actor's name, when it may act as an agent (claim, reserve, use mail)."""
        return principal.agent_name(self.principal, action)

    def identity(self) -> Identity:
        """Author and committer of this workspace's commits: the acting identity."""
        return commit_identity(self.git, self.principal)

    def trailers(self, event: str) -> list[tuple[str, str]]:
        """``Hive-Agent`` and ``Hive-Event`` (+ ``Hive-Identity`` for non-agents)."""
        return event_trailers(self.principal, event)

    def for_actor(self, name: str) -> Workspace:
        """This workspace acting as ``name`` (sharing its caches and git handle)."""
        checked = check_actor(name)
        if self._principal == Principal(checked, "agent"):
            return self
        other = copy.copy(self)
        other._principal = Principal(checked, "agent")
        other.identity_error = None
        return other

    # ------------------------------------------------------------ reading

    @property
    def cache(self) -> CellCache:
        return self.reader.cache

    @property
    def progress(self) -> Callable[[int, int], None] | None:
        """Called as progress(done, total) while a large state is indexed."""
        return self.reader.progress

    @progress.setter
    def progress(self, value: Callable[[int, int], None] | None) -> None:
        self.reader.progress = value

    @property
    def state_index(self) -> StateIndex:
        """The clone's state index (``<git common dir>/hive/index.sqlite3``)."""
        return self.reader.state_index

    def notices(self) -> list[str]:
        """Things worth telling a person (an index rebuilt), each said once."""
        return self.reader.notices()

    def snapshot(self) -> Snapshot:
        return self.git.snapshot(staged=not self.autocommit)

    def config(self, snap: Snapshot | None = None) -> HiveConfig:
        return self.reader.config(snap or self.snapshot())

    def cells(self, snap: Snapshot | None = None, *, config_loads: bool = True) -> CellIndex:
        """All cells of ``snap`` (default: the current state, HEAD's or staged); the
        config must load first unless ``config_loads`` is False (``hive doctor``)."""
        if snap is not None or not self.autocommit:
            return self.reader.cells(snap or self.snapshot(), config_loads=config_loads)
        return self.reader.head_cells()

    # ------------------------------------------------------------ writing

    def _committer(self) -> Committer:
        return Committer(self.identity(), self.lock_timeout(), stage_only=not self.autocommit)

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
        code) in the same commit; the plan may name another ``event`` (``MixedPlan.event``)
        from the state it saw."""
        by = self._committer()
        return commits.write_cells(self.reader, plan, event=event, trailers=self.trailers, by=by)

    def write_files(self, plan: Callable[[Snapshot], tuple[list[Change], str, Any]]) -> WriteResult:
        """Lower-level write for non-cell files (config)."""

        def git_plan(snap: Snapshot) -> Plan:
            changes, message, result = plan(snap)
            return Plan(changes=changes, message=message, result=result)

        return commits.write_files(self.git, git_plan, by=self._committer())

    def lock_timeout(self, *, config_optional: bool = False) -> float:
        return commits.lock_timeout(self.config, config_optional=config_optional)
