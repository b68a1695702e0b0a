"""Dependency graph rules: readiness, blocking, cycles, trees."""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import pairwise
from typing import Any, Protocol

from hive.domain import readiness
from hive.domain.readiness import ready_ids
from hive.errors import DependencyCycle
from hive.models import Cell
from hive.store.cache import CellIndex, node_of

ORDERING_TYPES = frozenset({"blocks", "parent-child"})


def open_blockers(cell: Cell, index: CellIndex) -> list[str]:
    """``blocks`` targets of ``cell`` that are neither closed nor deleted.

    A target whose file does not parse counts as open (its state is unknown:
    ``hive doctor`` explains it); a target that does not exist at all does not.
    """
    return readiness.open_blockers(node_of(cell), index.nodes, index.unreadable_ids())


def is_blocked(cell: Cell, index: CellIndex) -> bool:
    """Blocked by its own status, an open blocker, or a blocked/deferred ancestor."""
    return readiness.is_blocked(node_of(cell), index.nodes, index.unreadable_ids())


def has_open_children(cell: Cell, index: CellIndex) -> bool:
    return readiness.has_open_children(cell.id, index.nodes, index.children())


def is_ready(cell: Cell, index: CellIndex) -> bool:
    """Open, not deleted, not blocked; an epic only while it has no open children."""
    return readiness.is_ready(node_of(cell), index.nodes, index.unreadable_ids(), index.children())


def ready_cells(index: CellIndex, limit: int | None = None) -> list[Cell]:
    """Ready work, most urgent first (priority, then age, then id); computed once per
    state of the cells from light facts (only the cells returned are decoded)."""
    ids = ready_cell_ids(index)
    return [index.cells[cell_id] for cell_id in (ids if limit is None else ids[:limit])]


def ready_cell_ids(index: CellIndex) -> list[str]:
    return index.memo(
        "ready", lambda: ready_ids(index.nodes, index.unreadable_ids(), index.children())
    )


# Ordering (for deadlock checks) is a graph over two states of each cell:
#   DONE(x): x can be closed.  FREE(x): x is not blocked.
# DONE(x) needs FREE(x) and, for an epic, DONE of each subtask (an epic waits
# for its subtasks); FREE(x) needs DONE of each ``blocks`` target and FREE of
# its parent and of its ``parent-child`` targets (a child of a blocked cell is
# blocked). A cycle in this graph is a deadlock: nothing on it can ever finish.
DONE = "done"
FREE = "free"
Node = tuple[str, str]


def _successors(index: OrderingGraph, node: Node) -> list[Node]:
    """The states ``node`` waits for."""
    state, cell_id = node
    cell = index.cells.get(cell_id)
    if cell is None or cell.is_deleted:
        return []
    if state == DONE:
        found: list[Node] = [(FREE, cell_id)]
        if cell.type == "epic":
            found += [
                (DONE, child)
                for child in index.children_of(cell_id)
                if not index.cells[child].is_deleted
            ]
        return found
    found = [
        _wait_node(dep.type, dep.target) for dep in cell.dependencies if dep.type in ORDERING_TYPES
    ]
    if cell.parent:
        found.append((FREE, cell.parent))
    return found


def _wait_node(dep_type: str, target: str) -> Node:
    """What a dependency of ``dep_type`` on ``target`` waits for."""
    return (DONE, target) if dep_type == "blocks" else (FREE, target)


def _find_path(index: CellIndex, start: Node, goal: Node) -> list[Node] | None:
    """A path start -> ... -> goal in the ordering graph, or None."""
    stack: list[tuple[Node, list[Node]]] = [(start, [start])]
    seen: set[Node] = set()
    while stack:
        node, path = stack.pop()
        if node == goal:
            return path
        if node in seen:
            continue
        seen.add(node)
        stack.extend((nxt, [*path, nxt]) for nxt in _successors(index, node) if nxt not in seen)
    return None


def _describe(cell_ids: list[str], path: list[Node]) -> str:
    """``a -> b -> a``, plus why when the cycle runs through an epic's subtasks."""
    chain = [cell_ids[0]]
    for cell_id in cell_ids[1:]:
        if cell_id != chain[-1]:
            chain.append(cell_id)
    through_epic = any(a[0] == DONE and b[0] == DONE and a[1] != b[1] for a, b in pairwise(path))
    why = " (an epic waits for its subtasks)" if through_epic else ""
    return " -> ".join(chain) + why


def refuse_cycle(index: CellIndex, source: str, target: str, dep_type: str = "blocks") -> None:
    """Raise DependencyCycle if ``source`` depending on ``target`` would deadlock."""
    if source == target:
        raise DependencyCycle(f"{source} cannot depend on itself")
    path = _find_path(index, _wait_node(dep_type, target), (FREE, source))
    if path is not None:
        chain = _describe([source, *(cell_id for _, cell_id in path)], path)
        raise DependencyCycle(f"dependency would create a cycle: {chain}")


def refuse_new_cell_cycle(
    index: CellIndex, parent: str | None, dependencies: Iterable[tuple[str, str]]
) -> None:
    """Raise DependencyCycle if a new child of ``parent`` with these (type, target)
    dependencies would deadlock (e.g. a subtask blocked by its own epic)."""
    epic = index.cells.get(parent) if parent else None
    if epic is None or epic.type != "epic":
        return  # nothing waits for a new cell except an epic parent
    for dep_type, target in dependencies:
        if dep_type not in ORDERING_TYPES:
            continue
        path = _find_path(index, _wait_node(dep_type, target), (DONE, epic.id))
        if path is not None:
            new = f"new subtask of {epic.id}"
            through = [cell_id for _, cell_id in path]
            chain = _describe([new, *through, new], [*path, (DONE, new)])
            raise DependencyCycle(f"dependency would create a cycle: {chain}")


def find_cycles(index: OrderingGraph) -> list[list[str]]:
    """Every distinct ordering cycle (deadlock) in the stored graph (for ``doctor``,
    which gives it the cells' light edges: :class:`LightGraph`)."""
    colour: dict[Node, int] = {}
    cycles: list[list[str]] = []
    for cell_id in index.cells:
        for root in ((DONE, cell_id), (FREE, cell_id)):
            if not colour.get(root):
                _visit(index, root, colour, cycles)
    return cycles


class Edge(Protocol):
    """A dependency as the ordering graph reads it."""

    @property
    def type(self) -> str: ...

    @property
    def target(self) -> str: ...


class GraphCell(Protocol):
    """A cell as the ordering graph reads it (a ``Cell``, or a :class:`LightCell`)."""

    @property
    def type(self) -> str: ...

    @property
    def parent(self) -> str | None: ...

    @property
    def is_deleted(self) -> bool: ...

    @property
    def dependencies(self) -> Sequence[Edge]: ...


class OrderingGraph(Protocol):
    """What the ordering graph reads: cells by id and the children of a cell."""

    @property
    def cells(self) -> Mapping[str, GraphCell]: ...

    def children_of(self, cell_id: str) -> list[str]: ...


class LightEdge:
    """A dependency read from a cell's stored JSON."""

    __slots__ = ("target", "type")

    def __init__(self, type: str, target: str) -> None:
        self.type = type
        self.target = target


class LightCell:
    """What the ordering graph reads of a cell, from its stored JSON (no model)."""

    __slots__ = ("dependencies", "is_deleted", "parent", "type")

    def __init__(self, document: Mapping[str, Any]) -> None:
        self.type: str = document["type"]
        self.parent: str | None = document["parent"]
        self.is_deleted = document["deleted_at"] is not None
        self.dependencies = [
            LightEdge(dep["type"], dep["target"]) for dep in document["dependencies"]
        ]


class LightGraph:
    """The ordering graph of an index's cells as :class:`LightCell`s (in the index's
    order, so that cycles are found and named as over the models)."""

    def __init__(self, index: CellIndex, cells: Mapping[str, LightCell]) -> None:
        self._index = index
        self.cells = {cell_id: cells[cell_id] for cell_id in index.blobs}

    def children_of(self, cell_id: str) -> list[str]:
        return self._index.children_of(cell_id)


class _WithNewCells:
    """``index`` plus cells that are not stored yet (a bulk creation being checked)."""

    def __init__(self, index: CellIndex, new: Mapping[str, GraphCell]) -> None:
        self._index = index
        self._cells: Mapping[str, GraphCell] = ChainMap(dict(new), index.cells)  # type: ignore[arg-type]
        self._children: dict[str, list[str]] = {}
        for cell_id, cell in new.items():
            if cell.parent is not None:
                self._children.setdefault(cell.parent, []).append(cell_id)

    @property
    def cells(self) -> Mapping[str, GraphCell]:
        return self._cells

    def children_of(self, cell_id: str) -> list[str]:
        stored = self._index.children_of(cell_id) if cell_id in self._index.cells else []
        return stored + self._children.get(cell_id, [])


def cycles_through(index: CellIndex, new: Mapping[str, GraphCell]) -> list[list[str]]:
    """Ordering cycles that pass through any of the ``new`` cells (not stored yet), in
    the graph of ``index`` plus them. Work is proportional to what they reach (stored
    cells are only decoded when a new cell's edges lead to them)."""
    graph = _WithNewCells(index, new)
    colour: dict[Node, int] = {}
    cycles: list[list[str]] = []
    for cell_id in new:
        for root in ((DONE, cell_id), (FREE, cell_id)):
            if not colour.get(root):
                _visit(graph, root, colour, cycles)
    return [cycle for cycle in cycles if any(cell_id in new for cell_id in cycle)]


def _visit(
    index: OrderingGraph, root: Node, colour: dict[Node, int], cycles: list[list[str]]
) -> None:
    trail: list[Node] = [root]
    colour[root] = 1
    stack: list[tuple[Node, Iterator[Node]]] = [(root, iter(_successors(index, root)))]
    while stack:
        node, successors = stack[-1]
        advanced = False
        for nxt in successors:
            state = colour.get(nxt, 0)
            if state == 1:
                _record(cycles, [*trail[trail.index(nxt) :], nxt])
            elif state == 0 and nxt[1] in index.cells:
                colour[nxt] = 1
                trail.append(nxt)
                stack.append((nxt, iter(_successors(index, nxt))))
                advanced = True
                break
        if not advanced:
            colour[node] = 2
            trail.pop()
            stack.pop()


def _record(cycles: list[list[str]], nodes: list[Node]) -> None:
    """Add the cycle of ``nodes`` as cell ids (each state change of one cell shown once)."""
    ids: list[str] = []
    for _, cell_id in nodes:
        if not ids or ids[-1] != cell_id:
            ids.append(cell_id)
    if len(ids) < 2:
        ids.append(ids[0])
    if ids not in cycles:
        cycles.append(ids)


TREE_DIRECTIONS = ("down", "up", "both")  # as beads' ``bd dep tree --direction``
Edges = Callable[[Cell], Iterable[tuple[str, str]]]  # a cell -> (other id, dependency type)


def dependency_tree(
    index: CellIndex, cell_id: str, depth: int = 10, direction: str = "down"
) -> dict[str, Any]:
    """What ``cell_id`` depends on (``down``: ``depends_on``), what depends on it (``up``:
    ``dependents``), or both, recursively, as nested dicts."""

    def down(cell: Cell) -> Iterable[tuple[str, str]]:
        return [(dep.target, dep.type) for dep in cell.dependencies]

    if direction == "down":
        return _tree_node(index, down, "depends_on", cell_id, None, depth, set())
    waiting = _dependents_by_type(index)

    def up(cell: Cell) -> Iterable[tuple[str, str]]:
        return waiting.get(cell.id, ())

    root = _tree_node(index, up, "dependents", cell_id, None, depth, set())
    if direction == "both":
        below = _tree_node(index, down, "depends_on", cell_id, None, depth, set())
        root["depends_on"] = below["depends_on"]
    return root


def _dependents_by_type(index: CellIndex) -> dict[str, list[tuple[str, str]]]:
    """target -> (id, dependency type) of each live cell with a dependency on it, oldest
    first; read from the stored JSON of the cells that have a dependency at all (no
    model decoded), once per index."""

    def compute() -> dict[str, list[tuple[str, str]]]:
        live = sorted(
            (node for node in index.nodes.values() if not node.deleted),
            key=lambda node: (node.created, node.id),
        )
        found: dict[str, list[tuple[str, str]]] = {}
        for cell_id, document in index.documents(
            (node.id for node in live), keep=lambda raw: b'"target"' in raw
        ):
            for dep in document.get("dependencies") or ():
                found.setdefault(dep["target"], []).append((cell_id, dep["type"]))
        return found

    return index.memo("dependents_by_type", compute)


def _tree_node(
    index: CellIndex,
    edges: Edges,
    key: str,
    cell_id: str,
    dep_type: str | None,
    depth: int,
    seen: set[str],
) -> dict[str, Any]:
    """``cell_id`` and, under ``key``, the cells ``edges`` leads to from it, recursively
    (each with the type of the dependency that leads there)."""
    cell = index.cells.get(cell_id)
    node: dict[str, Any] = {"id": cell_id, "type": dep_type}
    if cell is None:
        node.update({"title": None, "status": "missing", key: []})
        return node
    node.update({"title": cell.title, "status": cell.status, "deleted": cell.is_deleted, key: []})
    if depth <= 0 or cell_id in seen:
        return node
    seen = seen | {cell_id}
    node[key] = [
        _tree_node(index, edges, key, other, kind, depth - 1, seen) for other, kind in edges(cell)
    ]
    return node
