"""Read models for people watching a swarm (``hive serve``): one function per view.

Each view is built from the same domain reads as the CLI (``list_cells``,
``epic_status``, ``list_reservations``, ``cell_log``, ``review``,
``load_outcomes``), so it sees whatever state index they use. ``state_token``
is the cheap "did anything change?" probe that live views poll.
"""

from __future__ import annotations

import hashlib
import math
import os
import statistics
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

from hive.domain.cells import list_cells, parse_priority, parse_status, parse_type, show_cell
from hive.domain.epics import epic_status
from hive.domain.history import cell_log
from hive.domain.outcomes import load_outcomes
from hive.domain.reservations import list_reservations, reservation_problems, staleness
from hive.domain.swarm.review import review
from hive.domain.workspace import Workspace
from hive.errors import HiveError, InvalidInput, NotFound
from hive.git.refs import read_head_fast
from hive.models import STATUSES, Cell, utc_now
from hive.models.outcome import Outcome
from hive.models.reservation import Reservation
from hive.models.views import (
    AgentReservations,
    BoardColumn,
    BoardFilters,
    BoardPage,
    CellView,
    Edge,
    EpicSummary,
    EpicView,
    HeldReservation,
    OutcomePoint,
    OutcomeStats,
    ReservationsView,
    StrategySeries,
)

MAX_PER_PAGE = 200
HISTORY_LIMIT = 200
_MAX_TEXT = 200


# ------------------------------------------------------------------ change probe


def state_token(ws: Workspace) -> str:
    """A short digest of everything the views show: HEAD and the refs under
    ``refs/hive/`` (mail), read from git's files without parsing any object.
    It changes whenever any process commits a cell, sends mail or moves HEAD."""
    paths = ws.git.paths
    parts: list[str] = []
    head = read_head_fast(paths)
    if head is None:
        head_commit = ws.git.head().commit
        parts.append(f"HEAD {head_commit}")
    else:
        parts.append(f"HEAD {head.ref} {head.commit}")
    parts += _hive_refs(paths.common_dir)
    parts.append(_stamp(os.path.join(paths.common_dir, "packed-refs")))
    if not ws.autocommit:  # staging mode: the views read the index too
        parts.append(_stamp(paths.index_path))
    return hashlib.sha1("\n".join(parts).encode(), usedforsecurity=False).hexdigest()[:16]


def _hive_refs(common_dir: str) -> list[str]:
    found = []
    top = os.path.join(common_dir, "refs", "hive")
    for folder, _, files in os.walk(top):
        for name in sorted(files):
            path = os.path.join(folder, name)
            try:
                with open(path, encoding="ascii", errors="replace") as handle:
                    found.append(f"{os.path.relpath(path, top)} {handle.read().strip()}")
            except OSError:
                continue
    return sorted(found)


def _stamp(path: str) -> str:
    try:
        info = os.stat(path)
    except OSError:
        return f"{path} -"
    return f"{path} {info.st_mtime_ns} {info.st_size} {info.st_ino}"


# ------------------------------------------------------------------ board


def board(
    ws: Workspace,
    *,
    status: str | None = None,
    type: str | None = None,
    priority: int | str | None = None,
    assignee: str | None = None,
    label: str | None = None,
    text: str | None = None,
    page: int = 1,
    per_page: int = 50,
) -> BoardPage:
    """Cells by status column, filtered; each column holds page ``page`` of its cells.

    ``text`` matches (case-insensitively) the id, title, description, notes,
    labels and assignee. Only the requested page of each column is returned,
    so a 10,000-cell board sends a few hundred cells at most.
    """
    filters = BoardFilters(
        status=parse_status(status or None),
        type=parse_type(type or None),
        priority=parse_priority(priority if priority not in ("", None) else None),
        assignee=assignee or None,
        label=label or None,
        text=(text or "").strip()[:_MAX_TEXT] or None,
        page=_bounded(page, "page", 1, 1_000_000),
        per_page=_bounded(per_page, "per_page", 1, MAX_PER_PAGE),
    )
    everything = list_cells(ws, status="all")
    matching = [cell for cell in everything if _wanted(cell, filters)]
    by_status: dict[str, list[Cell]] = {name: [] for name in STATUSES}
    for cell in matching:
        by_status[cell.status].append(cell)
    shown = [filters.status] if filters.status else list(STATUSES)
    columns = [_column(name, by_status[name], filters) for name in shown]
    return BoardPage(
        filters=filters,
        total=len(matching),
        columns=columns,
        assignees=sorted({c.assignee for c in everything if c.assignee}),
        labels=sorted({label for c in everything for label in c.labels}),
        problems=sorted(err.message for err in ws.cells().problems.values()),
    )


def _bounded(value: int, name: str, low: int, high: int) -> int:
    if not low <= value <= high:
        raise InvalidInput(f"{name} must be between {low} and {high}, got {value}")
    return value


def _wanted(cell: Cell, filters: BoardFilters) -> bool:
    """``list_cells``' filters (status, type, priority, assignee, label) plus text."""
    return (
        (filters.status is None or cell.status == filters.status)
        and (filters.type is None or cell.type == filters.type)
        and (filters.priority is None or cell.priority == filters.priority)
        and (filters.assignee is None or cell.assignee == filters.assignee)
        and (filters.label is None or filters.label in cell.labels)
        and (filters.text is None or _matches(cell, filters.text.lower()))
    )


def _matches(cell: Cell, needle: str) -> bool:
    fields: Iterable[str] = (
        cell.id,
        cell.title,
        cell.description,
        cell.notes,
        cell.assignee or "",
        *cell.labels,
    )
    return any(needle in field.lower() for field in fields)


def _column(status: str, cells: list[Cell], filters: BoardFilters) -> BoardColumn:
    """Closed cells most recently closed first; the others most urgent first and,
    within a priority, most recently changed first (so activity shows at the top)."""
    if status == "closed":
        cells = sorted(cells, key=lambda c: (c.closed_at or c.updated_at, c.id), reverse=True)
    else:
        cells = sorted(cells, key=lambda c: (-c.priority, c.updated_at, c.id), reverse=True)
    pages = max(1, math.ceil(len(cells) / filters.per_page))
    page = min(filters.page, pages)
    start = (page - 1) * filters.per_page
    return BoardColumn(
        status=status,
        total=len(cells),
        page=page,
        pages=pages,
        cells=cells[start : start + filters.per_page],
    )


# ------------------------------------------------------------------ epics


def list_epics(ws: Workspace) -> list[EpicSummary]:
    """Every epic with its progress (direct subtasks closed), open epics first."""
    cells = list_cells(ws, status="all")
    children: dict[str, list[Cell]] = {}
    for cell in cells:
        if cell.parent:
            children.setdefault(cell.parent, []).append(cell)
    summaries = []
    for epic in (c for c in cells if c.type == "epic"):
        mine = children.get(epic.id, [])
        closed = sum(1 for c in mine if c.is_closed)
        summaries.append(
            EpicSummary(
                epic=epic,
                total=len(mine),
                closed=closed,
                percent_complete=round(100 * closed / len(mine)) if mine else 0,
            )
        )
    return summaries


def epic_view(ws: Workspace, *, epic_id: str) -> EpicView:
    """An epic's progress and the dependency graph of its subtasks."""
    status = epic_status(ws, epic_id=epic_id)
    members = {child.id for child in status.children}
    edges = [
        Edge(source=child.id, target=dep.target, type=dep.type)
        for child in status.children
        for dep in child.dependencies
        if dep.type in ("blocks", "related") and dep.target != status.epic.id
    ]
    outside_ids = sorted({e.target for e in edges if e.target not in members})
    outside = []
    for cell_id in outside_ids:
        try:
            outside.append(show_cell(ws, cell_id=cell_id))
        except HiveError:  # a dangling dependency: the graph shows the id alone
            continue
    return EpicView(status=status, edges=edges, outside=outside)


# ------------------------------------------------------------------ cells


def cell_view(ws: Workspace, *, cell_id: str, with_patch: bool = True) -> CellView:
    """One cell with its history (hive commits naming it) and the review of its work."""
    cell = show_cell(ws, cell_id=cell_id)
    children = list_cells(ws, status="all", parent=cell.id)
    blockers = []
    for target in cell.blockers():
        try:
            blockers.append(show_cell(ws, cell_id=target))
        except NotFound:
            continue
    held = [r for r in list_reservations(ws) if r.cell == cell.id]
    return CellView(
        cell=cell,
        history=cell_log(ws, cell_id=cell.id, limit=HISTORY_LIMIT),
        review=review(ws, target=cell.id, with_patch=with_patch),
        children=children,
        blockers=blockers,
        reservations=held,
    )


# ------------------------------------------------------------------ reservations


def reservations_view(ws: Workspace) -> ReservationsView:
    """Reservations by agent, soonest expiry first; expired entries still in a file
    and reservations for closed cells are marked stale (a coordinator may release them)."""
    now = utc_now()
    statuses: dict[str, str] = {c.id: c.status for c in list_cells(ws, status="all")}
    by_agent: dict[str, list[HeldReservation]] = {}
    for held in list_reservations(ws, include_expired=True):
        by_agent.setdefault(held.agent, []).append(_held(held, now, statuses))
    agents = [
        AgentReservations(agent=agent, reservations=entries)
        for agent, entries in sorted(by_agent.items(), key=lambda item: item[0].lower())
    ]
    return ReservationsView(now=now, agents=agents, problems=reservation_problems(ws))


def _held(held: Reservation, now: datetime, statuses: dict[str, str]) -> HeldReservation:
    cell_status = statuses.get(held.cell) if held.cell else None
    return HeldReservation(
        reservation=held,
        expired=not held.active(now),
        cell_status=cell_status,
        stale=staleness(held, now, cell_status),
    )


# ------------------------------------------------------------------ outcomes


def outcome_stats(ws: Workspace, *, bucket: str | None = None) -> OutcomeStats:
    """Success rate and duration per strategy over time (day, week or month buckets;
    by default the finest that keeps the chart under ~60 points)."""
    outcomes = load_outcomes(ws)
    if bucket not in (None, "day", "week", "month"):
        raise InvalidInput(f"invalid bucket {bucket!r}: use day, week or month")
    chosen = bucket or _auto_bucket(outcomes)
    grouped: dict[str, dict[datetime, list[Outcome]]] = {}
    for outcome in outcomes:
        start = _bucket_start(outcome.recorded_at, chosen)
        name = outcome.strategy or "unknown"
        grouped.setdefault(name, {}).setdefault(start, []).append(outcome)
    series = [_series(name, points) for name, points in sorted(grouped.items())]
    return OutcomeStats(bucket=chosen, total=len(outcomes), strategies=series)


def _auto_bucket(outcomes: list[Outcome]) -> str:
    if not outcomes:
        return "day"
    span = outcomes[-1].recorded_at - outcomes[0].recorded_at
    if span <= timedelta(days=60):
        return "day"
    return "week" if span <= timedelta(weeks=60) else "month"


def _bucket_start(moment: datetime, bucket: str) -> datetime:
    day = moment.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    if bucket == "week":
        return day - timedelta(days=day.weekday())
    if bucket == "month":
        return day.replace(day=1)
    return day


def _series(name: str, buckets: dict[datetime, list[Outcome]]) -> StrategySeries:
    points = []
    for start in sorted(buckets):
        group = buckets[start]
        wins = sum(1 for o in group if o.success)
        durations = [o.duration_seconds for o in group]
        points.append(
            OutcomePoint(
                start=start,
                count=len(group),
                successes=wins,
                success_rate=wins / len(group),
                mean_duration=statistics.fmean(durations),
                median_duration=statistics.median(durations),
            )
        )
    total = sum(p.count for p in points)
    successes = sum(p.successes for p in points)
    return StrategySeries(
        strategy=name,
        total=total,
        successes=successes,
        success_rate=successes / total if total else 0.0,
        points=points,
    )
