"""What is stuck and how the work is going: ``hive blocked`` and ``hive stats``."""

from __future__ import annotations

import statistics
from collections import Counter

from hive.domain.cells import get_cell
from hive.domain.graph import open_blockers as open_blockers_of
from hive.domain.graph import ready_cell_ids
from hive.domain.readiness import open_blockers
from hive.domain.workspace import Workspace
from hive.models import STATUSES, Cell
from hive.models.cellresults import BlockedCell, CellDetail, CellRef, CellStats, LeadTime
from hive.store.cache import CellIndex

UNASSIGNED = "(unassigned)"


def blocked_cells(ws: Workspace, *, limit: int | None = None) -> list[BlockedCell]:
    """Cells (not closed, not deleted) waiting on open ``blocks`` dependencies, most
    urgent first, each with the blockers still open."""
    index = ws.cells()
    unreadable = index.unreadable_ids()
    waiting = [
        (node, found)
        for node in index.nodes.values()
        if not node.deleted
        and node.status != "closed"
        and (found := open_blockers(node, index.nodes, unreadable))
    ]
    waiting.sort(key=lambda pair: (pair[0].priority, pair[0].created, pair[0].id))
    shown = waiting if limit is None else waiting[:limit]
    return [_blocked(index, index.cells[node.id], found) for node, found in shown]


def _blocked(index: CellIndex, cell: Cell, blockers: list[str]) -> BlockedCell:
    return BlockedCell(
        id=cell.id,
        title=cell.title,
        status=cell.status,
        priority=cell.priority,
        type=cell.type,
        assignee=cell.assignee,
        blocked_by=blockers,
        blocked_by_count=len(blockers),
        open_blockers=[cell_ref(index, target) for target in blockers],
    )


def cell_ref(index: CellIndex, cell_id: str) -> CellRef:
    """The id, title, status and assignee of ``cell_id`` (``unknown`` when unreadable)."""
    other = index.cells.get(cell_id)
    if other is None:
        state = "unreadable" if index.is_unreadable(cell_id) else "unknown"
        return CellRef(id=cell_id, status=state)
    return CellRef(id=other.id, title=other.title, status=other.status, assignee=other.assignee)


def show_cells(ws: Workspace, *, cell_ids: list[str]) -> list[CellDetail]:
    """Cells (partial ids work when unambiguous; deleted ones too) with the blockers
    still open. An unknown id fails the whole call, naming it."""
    index = ws.cells()
    shown = []
    for given in cell_ids:
        cell = get_cell(index, given, allow_deleted=True)
        found = open_blockers_of(cell, index) if not cell.is_closed else []
        refs = [cell_ref(index, target) for target in found]
        shown.append(CellDetail(**dict(cell), blocked_by=found, open_blockers=refs))
    return shown


def cell_stats(ws: Workspace) -> CellStats:
    """Counts by status, type, priority and assignee, ready and blocked work, and the
    lead time (creation to close) of the closed cells."""
    index = ws.cells()
    cells = index.live()
    unreadable = index.unreadable_ids()
    by_status = Counter({status: 0 for status in STATUSES})
    by_status.update(cell.status for cell in cells)
    blocked = sum(
        1
        for cell in cells
        if not cell.is_closed and open_blockers(index.nodes[cell.id], index.nodes, unreadable)
    )
    priorities = Counter(cell.priority for cell in cells)
    return CellStats(
        total=len(cells),
        open=sum(1 for cell in cells if not cell.is_closed),
        ready=len(ready_cell_ids(index)),
        blocked=blocked,
        by_status=dict(by_status),
        by_type=dict(sorted(Counter(cell.type for cell in cells).items())),
        by_priority={f"P{level}": priorities[level] for level in range(5)},
        by_assignee=dict(Counter(cell.assignee or UNASSIGNED for cell in cells).most_common()),
        lead_time=lead_time(cells),
    )


HOUR_DIGITS = 6  # ~4 ms: a cell closed within seconds is not 0.0 hours


def lead_time(cells: list[Cell]) -> LeadTime:
    hours = [
        (cell.closed_at - cell.created_at).total_seconds() / 3600
        for cell in cells
        if cell.is_closed and cell.closed_at is not None
    ]
    if not hours:
        return LeadTime()
    return LeadTime(
        closed=len(hours),
        mean_hours=round(statistics.fmean(hours), HOUR_DIGITS),
        median_hours=round(statistics.median(hours), HOUR_DIGITS),
        max_hours=round(max(hours), HOUR_DIGITS),
    )
