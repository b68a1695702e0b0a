"""Result models of the cell operations (``hive show``, ``blocked``, ``stats``, ``dep
tree``): apart from the other results (``hive.models.results``, which re-exports them) so
that a cell command creates only these."""

from __future__ import annotations

from typing import Any

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from hive.models.base import HiveModel, without_none
from hive.models.cell import Cell


class DependencyNode(HiveModel):
    """A node of ``hive dep tree``: what it depends on (``depends_on``, the tree down)
    and what depends on it (``dependents``, the tree up); a key only where the tree
    walked that way (``type``: the dependency's type on the node above)."""

    id: str
    type: str | None = None
    title: str | None = None
    status: str
    deleted: bool = False  # a tombstone: as a blocker it blocks nothing
    depends_on: list[DependencyNode] | None = None
    dependents: list[DependencyNode] | None = None

    @classmethod
    def from_tree(cls, tree: dict[str, Any]) -> DependencyNode:
        return cls.model_validate(tree)

    @model_serializer(mode="wrap")
    def _walked_only(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """No ``depends_on`` / ``dependents`` key where the tree did not walk that way."""
        return without_none(handler(self), ("depends_on", "dependents"))


class CellRef(HiveModel):
    """Another cell named in a result: enough to recognise it."""

    id: str
    title: str = ""
    status: str = "unknown"
    assignee: str | None = None


class BlockedSummary(HiveModel):
    """A cell waiting on open blockers as an agent gets it by default (``hive_blocked``
    without ``verbose``): the cell's summary and the ids of the blockers still open."""

    id: str
    title: str
    status: str
    priority: int
    type: str
    assignee: str | None = None
    blocked_by: list[str] = Field(default_factory=list)


class BlockedCell(BlockedSummary):
    """A cell waiting on open blockers (``hive blocked``): which ones, and their state."""

    blocked_by_count: int = 0
    open_blockers: list[CellRef] = Field(default_factory=list)

    def summary(self) -> BlockedSummary:
        return BlockedSummary(**self.model_dump(include=set(BlockedSummary.model_fields)))


class LeadTime(HiveModel):
    """Hours from creation to close, over the closed cells (to 6 decimals: ~4 ms;
    ``hive stats`` shows each in a unit that fits)."""

    closed: int = 0
    mean_hours: float | None = None
    median_hours: float | None = None
    max_hours: float | None = None


class CellStats(HiveModel):
    """Counts of the live (not deleted) cells (``hive stats``)."""

    total: int
    open: int
    ready: int
    blocked: int
    by_status: dict[str, int]
    by_type: dict[str, int]
    by_priority: dict[str, int]
    by_assignee: dict[str, int]
    lead_time: LeadTime


class CellDetail(Cell):
    """A cell as ``hive show`` presents it: with the blockers still open, its subtasks
    and the cells it blocks (neither deleted; oldest first, as beads' ``bd show`` lists
    an epic's children and dependents)."""

    blocked_by: list[str] = Field(default_factory=list)
    open_blockers: list[CellRef] = Field(default_factory=list)
    subtasks: list[CellRef] = Field(default_factory=list)
    blocks: list[CellRef] = Field(default_factory=list)
