"""Epics: a cell of type epic plus its subtasks, created in one commit."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from pydantic import ValidationError

from hive.domain.cells import _new_cell_fields, build_cell, get_cell, parse_priority
from hive.domain.graph import is_ready
from hive.domain.workspace import Workspace
from hive.errors import DependencyCycle, InvalidInput
from hive.git.repo import Snapshot
from hive.models import Cell, Dependency
from hive.models.cell import first_error
from hive.models.epic import SubtaskSpec
from hive.models.results import EpicStatus
from hive.store.cache import CellIndex


def check_subtask_order(subtasks: Sequence[SubtaskSpec]) -> None:
    """Dependency indexes must be in range, not self-referencing, and acyclic."""
    count = len(subtasks)
    for position, spec in enumerate(subtasks):
        for dep in spec.dependencies:
            if not 0 <= dep < count:
                raise InvalidInput(
                    f"subtask {position} ({spec.title!r}) depends on index {dep}, "
                    f"but there are only {count} subtasks (0-{count - 1})"
                )
            if dep == position:
                raise DependencyCycle(f"subtask {position} ({spec.title!r}) depends on itself")
    cycle = _index_cycle([spec.dependencies for spec in subtasks])
    if cycle:
        raise DependencyCycle(
            "subtask dependencies form a cycle: " + " -> ".join(str(i) for i in cycle)
        )


def _index_cycle(edges: list[list[int]]) -> list[int] | None:
    state = [0] * len(edges)
    for start in range(len(edges)):
        trail: list[int] = []
        found = _dfs(start, edges, state, trail)
        if found:
            return found
    return None


def _dfs(node: int, edges: list[list[int]], state: list[int], trail: list[int]) -> list[int] | None:
    if state[node] == 2:
        return None
    if state[node] == 1:
        return [*trail[trail.index(node) :], node]
    state[node] = 1
    trail.append(node)
    for nxt in edges[node]:
        found = _dfs(nxt, edges, state, trail)
        if found:
            return found
    trail.pop()
    state[node] = 2
    return None


def create_epic(
    ws: Workspace,
    *,
    title: str,
    subtasks: Sequence[SubtaskSpec | dict[str, Any] | str],
    description: str = "",
    priority: int | str = 2,
    labels: Sequence[str] = (),
    metadata: dict[str, Any] | None = None,
) -> list[Cell]:
    """Create the epic and all subtasks in one commit; returns [epic, *subtasks].

    Each subtask keeps its ``files`` as ``files_owned`` and its dependency
    indexes as ``blocks`` edges on the sibling cells.
    """
    specs = [_spec(item) for item in subtasks]
    check_subtask_order(specs)
    epic_priority = parse_priority(priority, 2) or 0
    epic_fields = _new_cell_fields(
        title=title,
        type="epic",
        priority=epic_priority,
        description=description,
        labels=labels,
        files=[],
        assignee=None,
        notes="",
        metadata=metadata,
    )
    sub_fields = [_subtask_fields(spec, epic_priority) for spec in specs]

    def plan(snap: Snapshot, index: CellIndex) -> tuple[list[Cell], str, str, Any]:
        cells = _epic_cells(ws, snap, index, epic_fields, sub_fields, specs)
        return cells, cells[0].id, cells[0].title, cells

    result: list[Cell] = ws.write(plan, event="create-epic").result
    return result


def _subtask_fields(spec: SubtaskSpec, epic_priority: int) -> dict[str, Any]:
    """The checked fields of a subtask's cell (the epic's priority unless it has one)."""
    return _new_cell_fields(
        title=spec.title,
        type=spec.type,
        priority=spec.priority if spec.priority is not None else epic_priority,
        description=spec.description,
        labels=spec.labels,
        files=spec.files,
        assignee=None,
        notes="",
        metadata=_subtask_metadata(spec),
    )


def _subtask_metadata(spec: SubtaskSpec) -> dict[str, Any]:
    """A subtask's metadata with its ``estimated_complexity``, when it has one."""
    complexity = (
        {"estimated_complexity": spec.estimated_complexity} if spec.estimated_complexity else {}
    )
    return {**spec.metadata, **complexity}


def _epic_cells(
    ws: Workspace,
    snap: Snapshot,
    index: CellIndex,
    epic_fields: dict[str, Any],
    sub_fields: list[dict[str, Any]],
    specs: list[SubtaskSpec],
) -> list[Cell]:
    """The new epic and its subtasks (with their ``blocks`` edges), ids new at ``snap``."""
    known = index.known_ids()
    epic = build_cell(ws, snap, known, epic_fields)
    # One millisecond apart, so "oldest first" keeps the order they were given in.
    children = [
        build_cell(
            ws,
            snap,
            known,
            fields,
            parent_id=epic.id,
            created_at=epic.created_at + timedelta(milliseconds=position + 1),
        )
        for position, fields in enumerate(sub_fields)
    ]
    return [epic, *_linked_siblings(children, specs)]


def _linked_siblings(children: list[Cell], specs: list[SubtaskSpec]) -> list[Cell]:
    """Each subtask with ``blocks`` edges on the siblings its spec's indexes name."""
    return [
        child.model_copy(
            update={
                "dependencies": [
                    Dependency(type="blocks", target=children[dep].id) for dep in spec.dependencies
                ]
            }
        )
        for child, spec in zip(children, specs, strict=True)
    ]


def _spec(item: SubtaskSpec | dict[str, Any] | str) -> SubtaskSpec:
    if isinstance(item, SubtaskSpec):
        return item
    try:
        if isinstance(item, str):
            return SubtaskSpec(title=item)
        return SubtaskSpec.model_validate(item)
    except ValidationError as exc:
        field, why = first_error(exc)
        raise InvalidInput(f"invalid subtask {field or 'spec'}: {why}") from None


def _epic_above(index: CellIndex, cell: Cell) -> str | None:
    """The nearest epic among ``cell``'s ancestors, if any."""
    from hive.domain.maillog import epic_above

    def type_of(cell_id: str) -> str | None:
        found = index.cells.get(cell_id)
        return None if found is None else found.type

    return epic_above(cell.id, type_of, lambda cell_id: index.cells[cell_id].parent)


def epic_status(ws: Workspace, *, epic_id: str) -> EpicStatus:
    """Progress of an epic: counts by status, percent closed, ready and blocked subtasks."""
    index = ws.cells()
    epic = get_cell(index, epic_id, allow_deleted=True)
    children = sorted(
        (index.cells[c] for c in index.children_of(epic.id) if not index.cells[c].is_deleted),
        key=lambda c: (c.priority, c.created_at, c.id),
    )
    if epic.type != "epic" and not children:
        above = _epic_above(index, epic)
        named = f"; give its epic, {above}" if above else ""
        raise InvalidInput(f"{epic.id} is a {epic.type}, not an epic, and has no subtasks{named}")
    by_status: dict[str, int] = {}
    for child in children:
        by_status[child.status] = by_status.get(child.status, 0) + 1
    closed = by_status.get("closed", 0)
    total = len(children)
    ready = [c.id for c in children if is_ready(c, index)]
    blocked = [
        c.id
        for c in children
        if not c.is_closed and c.id not in ready and c.status != "in_progress"
    ]
    return EpicStatus(
        epic=epic,
        total=total,
        by_status=by_status,
        closed=closed,
        percent_complete=round(100 * closed / total) if total else 0,
        ready=ready,
        blocked=blocked,
        children=children,
    )
