"""What is stuck and how the work is going: ``hive blocked`` and ``hive stats``."""

from __future__ import annotations

import statistics
from collections import Counter
from datetime import timedelta

from hive.domain.cells import get_cell
from hive.domain.graph import open_blockers as open_blockers_of
from hive.domain.graph import ready_cell_ids
from hive.domain.readiness import open_blockers
from hive.domain.workspace import Workspace
from hive.models import STATUSES, Cell
from hive.models.cellresults import BlockedCell, CellDetail, CellRef, CellStats, LeadTime
from hive.store.cache import DOCUMENT_BATCH, CellIndex, top_level_string
from hive.times import parse_time

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
    still open, their subtasks and the cells they block. An unknown id fails the whole
    call, naming it."""
    index = ws.cells()
    shown = []
    for given in cell_ids:
        cell = get_cell(index, given, allow_deleted=True)
        found = open_blockers_of(cell, index) if not cell.is_closed else []
        refs = [cell_ref(index, target) for target in found]
        subtasks = _live_refs(index, index.children_of(cell.id))
        blocks = _live_refs(index, _dependents(index).get(cell.id, []))
        detail = {**dict(cell), "blocked_by": found, "open_blockers": refs}
        shown.append(CellDetail(**detail, subtasks=subtasks, blocks=blocks))
    return shown


def _dependents(index: CellIndex) -> dict[str, list[str]]:
    """For each cell id, the cells with a ``blocks`` dependency on it (once per index)."""

    def compute() -> dict[str, list[str]]:
        waiting: dict[str, list[str]] = {}
        for node in index.nodes.values():
            for target in node.blockers:
                waiting.setdefault(target, []).append(node.id)
        return waiting

    return index.memo("dependents", compute)


def _live_refs(index: CellIndex, cell_ids: list[str]) -> list[CellRef]:
    """``cell_ids`` not deleted, oldest first, as CellRefs read from the stored JSON (no
    cell decoded into a model)."""
    nodes = [index.nodes[cell_id] for cell_id in set(cell_ids)]
    live = sorted((node for node in nodes if not node.deleted), key=lambda n: (n.created, n.id))
    return [
        CellRef(id=cell_id, title=doc["title"], status=doc["status"], assignee=doc.get("assignee"))
        for cell_id, doc in index.documents(node.id for node in live)
    ]


def cell_stats(ws: Workspace) -> CellStats:
    """Counts by status, type, priority and assignee, ready and blocked work, and the
    lead time (creation to close) of the closed cells.

    Answered from each cell's light facts (the state index's rows) and, for the closed
    cells only, the two times of its stored JSON: no cell is decoded into a model."""
    index = ws.cells()
    live = [node for node in index.nodes.values() if not node.deleted]
    unreadable = index.unreadable_ids()
    by_status = Counter({status: 0 for status in STATUSES})
    by_status.update(node.status for node in live)
    blocked = sum(
        1
        for node in live
        if node.status != "closed" and open_blockers(node, index.nodes, unreadable)
    )
    priorities = Counter(node.priority for node in live)
    closed = [node.id for node in live if node.status == "closed"]
    return CellStats(
        total=len(live),
        open=len(live) - len(closed),
        ready=len(ready_cell_ids(index)),
        blocked=blocked,
        by_status=dict(by_status),
        by_type=dict(sorted(Counter(node.type for node in live).items())),
        by_priority={f"P{level}": priorities[level] for level in range(5)},
        by_assignee=dict(Counter(node.assignee or UNASSIGNED for node in live).most_common()),
        lead_time=lead_time(_closed_hours(index, closed)),
    )


def _closed_hours(index: CellIndex, closed: list[str]) -> list[float]:
    """Hours from creation to close of each of the ``closed`` cells that has a close
    time, in their order (the two times read from the stored JSON, exact to the
    microsecond: no cell is decoded, and no document parsed beyond them)."""
    hours = []
    for start in range(0, len(closed), DOCUMENT_BATCH):
        part = closed[start : start + DOCUMENT_BATCH]
        printed = index.json_of([index.blobs[cell_id] for cell_id in part])
        for cell_id in part:
            span = _lead(index, cell_id, printed[index.blobs[cell_id]])
            if span is not None:
                hours.append(span.total_seconds() / 3600)
    return hours


def _lead(index: CellIndex, cell_id: str, printed: bytes) -> timedelta | None:
    """Creation to close of one closed cell (None: it has no close time)."""
    try:
        closed_at = top_level_string(printed, "closed_at")
        if closed_at is None:
            return None
        return parse_time(closed_at) - parse_time(top_level_string(printed, "created_at") or "")
    except (KeyError, ValueError):  # a year before 1000 (written unpadded), damaged
        # pages: the model reads it (and a damaged index is rebuilt, with a notice)
        cell = index.cells[cell_id]
        assert cell.closed_at is not None
        return cell.closed_at - cell.created_at


HOUR_DIGITS = 6  # ~4 ms: a cell closed within seconds is not 0.0 hours


def lead_time(hours: list[float]) -> LeadTime:
    """The lead-time summary of the given spans (hours from creation to close)."""
    if not hours:
        return LeadTime()
    return LeadTime(
        closed=len(hours),
        mean_hours=round(statistics.fmean(hours), HOUR_DIGITS),
        median_hours=round(statistics.median(hours), HOUR_DIGITS),
        max_hours=round(max(hours), HOUR_DIGITS),
    )
