"""What "ready" means, over light per-cell facts (no models needed).

One definition serves every reader: a warm process (the MCP server), a write
that needs the ready list, and a fresh ``hive ready`` that only has the state
index's columns. A cell is ready when it is open, not deleted, no ``blocks``
target is still open (an unreadable target counts as open), no ancestor is
``blocked``, ``deferred`` or waiting on an open blocker, and, for an epic, no
subtask is still open. Ready work is ordered by priority, then creation time,
then id.
"""

from __future__ import annotations

from hive.store.index import Node

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from collections.abc import Collection, Mapping


def open_blockers(node: Node, nodes: Mapping[str, Node], unreadable: Collection[str]) -> list[str]:
    found = []
    for target in node.blockers:
        other = nodes.get(target)
        if other is None:
            if target in unreadable:
                found.append(target)
        elif other.status != "closed" and not other.deleted:
            found.append(target)
    return found


def is_blocked(node: Node, nodes: Mapping[str, Node], unreadable: Collection[str]) -> bool:
    """Blocked by its own status, an open blocker, or a blocked/deferred ancestor."""
    seen: set[str] = set()
    current: Node | None = node
    while current is not None and current.id not in seen:
        seen.add(current.id)
        if current.status == "blocked" or open_blockers(current, nodes, unreadable):
            return True
        if current is not node and current.status == "deferred":
            return True
        current = nodes.get(current.parent) if current.parent else None
    return False


def children_map(nodes: Mapping[str, Node]) -> dict[str, list[str]]:
    children: dict[str, list[str]] = {}
    for node in nodes.values():
        if node.parent is not None:
            children.setdefault(node.parent, []).append(node.id)
    return children


def ready_ids(
    nodes: Mapping[str, Node],
    unreadable: Collection[str] = (),
    children: Mapping[str, list[str]] | None = None,
) -> list[str]:
    """Ids of the ready cells, most urgent first."""
    kids = children if children is not None else children_map(nodes)
    ready = [
        node
        for node in nodes.values()
        if node.status == "open" and not node.deleted and _ready(node, nodes, unreadable, kids)
    ]
    ready.sort(key=lambda n: (n.priority, n.created, n.id))
    return [node.id for node in ready]


def has_open_children(
    cell_id: str, nodes: Mapping[str, Node], children: Mapping[str, list[str]]
) -> bool:
    for child_id in children.get(cell_id, ()):
        child = nodes.get(child_id)
        if child is not None and child.status != "closed" and not child.deleted:
            return True
    return False


def is_ready(
    node: Node,
    nodes: Mapping[str, Node],
    unreadable: Collection[str],
    children: Mapping[str, list[str]],
) -> bool:
    """Open, not deleted, not blocked; an epic only while it has no open children."""
    return node.status == "open" and not node.deleted and _ready(node, nodes, unreadable, children)


def _ready(
    node: Node,
    nodes: Mapping[str, Node],
    unreadable: Collection[str],
    children: Mapping[str, list[str]],
) -> bool:
    if node.type == "epic" and has_open_children(node.id, nodes, children):
        return False
    # a cell with no dependencies and no parent (the common case) needs no walk
    return not (node.blockers or node.parent) or not is_blocked(node, nodes, unreadable)
