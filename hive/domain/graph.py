"""Dependency graph rules: readiness, blocking, cycles, trees."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from hive.errors import DependencyCycle
from hive.models import Cell
from hive.store.cache import CellIndex

ORDERING_TYPES = frozenset({"blocks", "parent-child"})


def open_blockers(cell: Cell, index: CellIndex) -> list[str]:
    """``blocks`` targets of ``cell`` that are neither closed nor deleted."""
    found = []
    for target in cell.blockers():
        other = index.cells.get(target)
        if other is not None and not other.is_closed and not other.is_deleted:
            found.append(target)
    return found


def is_blocked(cell: Cell, index: CellIndex) -> bool:
    """Blocked by its own status, an open blocker, or a blocked/deferred ancestor."""
    seen: set[str] = set()
    current: Cell | None = cell
    while current is not None and current.id not in seen:
        seen.add(current.id)
        if current.status == "blocked" or open_blockers(current, index):
            return True
        if current is not cell and current.status == "deferred":
            return True
        current = index.cells.get(current.parent) if current.parent else None
    return False


def has_open_children(cell: Cell, index: CellIndex) -> bool:
    for child_id in index.children_of(cell.id):
        child = index.cells.get(child_id)
        if child is not None and not child.is_closed and not child.is_deleted:
            return True
    return False


def is_ready(cell: Cell, index: CellIndex) -> bool:
    """Open, not deleted, not blocked; an epic only while it has no open children."""
    if cell.status != "open" or cell.is_deleted:
        return False
    if cell.type == "epic" and has_open_children(cell, index):
        return False
    return not is_blocked(cell, index)


def _ready_in_context(cell: Cell, index: CellIndex) -> bool:
    """:func:`is_ready` for an open, live cell (a cell with no dependencies and no
    parent, the common case, is decided without walking anything)."""
    if cell.type == "epic" and has_open_children(cell, index):
        return False
    return not (cell.dependencies or cell.parent) or not is_blocked(cell, index)


def ready_cells(index: CellIndex, limit: int | None = None) -> list[Cell]:
    """Ready work, most urgent first (priority, then age, then id); computed once per
    state of the cells (a warm read of an unchanged hive is a list copy)."""
    ready = index.memo("ready", lambda: _compute_ready(index))
    return list(ready) if limit is None else ready[:limit]


def _compute_ready(index: CellIndex) -> list[Cell]:
    ready = [
        cell
        for cell in index.cells.values()
        if cell.status == "open" and cell.deleted_at is None and _ready_in_context(cell, index)
    ]
    ready.sort(key=lambda c: (c.priority, c.created_at, c.id))
    return ready


def ordering_edges(cell: Cell) -> Iterable[str]:
    """Cells that ``cell`` waits for: its blockers, parent-child targets and parent."""
    for dep in cell.dependencies:
        if dep.type in ORDERING_TYPES:
            yield dep.target
    if cell.parent:
        yield cell.parent


def find_path(
    index: CellIndex, start: str, goal: str, extra: dict[str, list[str]]
) -> list[str] | None:
    """A path start -> ... -> goal along ordering edges, or None."""
    stack: list[tuple[str, list[str]]] = [(start, [start])]
    seen: set[str] = set()
    while stack:
        node, path = stack.pop()
        if node == goal:
            return path
        if node in seen:
            continue
        seen.add(node)
        cell = index.cells.get(node)
        successors = list(ordering_edges(cell)) if cell is not None else []
        successors += extra.get(node, [])
        stack.extend((nxt, [*path, nxt]) for nxt in successors if nxt not in seen)
    return None


def refuse_cycle(
    index: CellIndex, source: str, target: str, extra: dict[str, list[str]] | None = None
) -> None:
    """Raise DependencyCycle if the edge source -> target would close a cycle."""
    if source == target:
        raise DependencyCycle(f"{source} cannot depend on itself")
    path = find_path(index, target, source, extra or {})
    if path is not None:
        chain = " -> ".join([source, *path])
        raise DependencyCycle(f"dependency would create a cycle: {chain}")


def find_cycles(index: CellIndex) -> list[list[str]]:
    """Every distinct ordering cycle in the stored graph (for ``doctor``)."""
    colour: dict[str, int] = {}
    cycles: list[list[str]] = []
    for root in index.cells:
        if colour.get(root):
            continue
        _visit(index, root, colour, [], cycles)
    return cycles


def _visit(
    index: CellIndex, root: str, colour: dict[str, int], trail: list[str], cycles: list[list[str]]
) -> None:
    stack: list[tuple[str, Iterable[str]]] = []
    colour[root] = 1
    trail.append(root)
    cell = index.cells.get(root)
    stack.append((root, iter(list(ordering_edges(cell)) if cell else [])))
    while stack:
        node, successors = stack[-1]
        advanced = False
        for nxt in successors:
            state = colour.get(nxt, 0)
            if state == 1:
                cycles.append([*trail[trail.index(nxt) :], nxt])
            elif state == 0 and nxt in index.cells:
                colour[nxt] = 1
                trail.append(nxt)
                nxt_cell = index.cells[nxt]
                stack.append((nxt, iter(list(ordering_edges(nxt_cell)))))
                advanced = True
                break
        if not advanced:
            colour[node] = 2
            trail.pop()
            stack.pop()


def dependency_tree(index: CellIndex, cell_id: str, depth: int = 10) -> dict[str, Any]:
    """What ``cell_id`` depends on, recursively, as nested dicts."""
    return _tree_node(index, cell_id, None, depth, set())


def _tree_node(
    index: CellIndex, cell_id: str, dep_type: str | None, depth: int, seen: set[str]
) -> dict[str, Any]:
    cell = index.cells.get(cell_id)
    node: dict[str, Any] = {"id": cell_id, "type": dep_type}
    if cell is None:
        node.update(title=None, status="missing", depends_on=[])
        return node
    node.update(title=cell.title, status=cell.status, depends_on=[])
    if depth <= 0 or cell_id in seen:
        return node
    seen = seen | {cell_id}
    node["depends_on"] = [
        _tree_node(index, dep.target, dep.type, depth - 1, seen) for dep in cell.dependencies
    ]
    return node
