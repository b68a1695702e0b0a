"""The cells whose merged version may close a dependency cycle, without the models.

Each clone refuses a dependency that closes a cycle (``graph.refuse_cycle``), but two
clones can each add one edge of a cycle offline (a blocks b here, b blocks a there):
the sync that merges them makes the cycle, a deadlock ``hive ready`` then hides
both cells for. A new cycle needs a new edge of the ordering graph (``graph``'s
``DONE``/``FREE`` states), so the sync looks for cycles only through the cells whose
merged file adds one: a ``blocks`` or ``parent-child`` dependency, a parent set or
changed, a type changed to ``epic``, a tombstone lifted. A new cell adds edges only
through its dependencies (its parent alone closes no cycle the state did not hold:
the parent's ``FREE`` never waits for its own ``DONE``). The files are read with the
plain reader (``yamlfast``); one it declines is counted as adding an edge.
"""

from __future__ import annotations

from hive.store.layout import cell_id_from_path
from hive.store.yamlfast import fast_loads

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from typing import Any

    from hive.git.repo import Change, Snapshot

ORDERING_TYPES = ("blocks", "parent-child")  # graph.ORDERING_TYPES (graph imports the models)

_Edges = tuple[frozenset[tuple[str, str]], str | None, bool, bool]  # deps, parent, epic, deleted


def cells_adding_edges(snap: Snapshot, changes: list[Change]) -> list[str]:
    """The ids of the cells whose file in ``changes`` adds an ordering edge to the
    one in ``snap`` (this branch's, before the merge), sorted."""
    found: set[str] = set()
    for change in changes:
        cell_id = cell_id_from_path(change.path)
        if cell_id is None or change.content is None:
            continue
        if _adds(_edges(snap.read(change.path)), _edges(change.content)):
            found.add(cell_id)
    return sorted(found)


_UNKNOWN: _Edges = (frozenset(), None, False, False)  # a file the plain reader declines


def _edges(data: bytes | None) -> _Edges | None:
    """What the ordering graph reads of a cell file: None when there is no file,
    :data:`_UNKNOWN` when the plain reader declines it or it is not a cell's shape."""
    if data is None:
        return None
    try:
        document: Any = fast_loads(data.decode("utf-8"))
        deps = frozenset(
            (str(dep["type"]), str(dep["target"]))
            for dep in document.get("dependencies") or []
            if dep["type"] in ORDERING_TYPES
        )
        epic = document.get("type") == "epic"
        return deps, document.get("parent"), epic, bool(document.get("deleted_at"))
    except (AttributeError, KeyError, TypeError, UnicodeDecodeError):
        return _UNKNOWN


def _adds(old: _Edges | None, new: _Edges | None) -> bool:
    """Whether ``new`` has an ordering edge ``old`` had not (see the module doc)."""
    if new is _UNKNOWN or old is _UNKNOWN:
        return new is not None
    if new is None or new[3]:
        return False  # removed, or a tombstone: no edge
    if old is None:
        return bool(new[0])
    deps, parent, epic, _ = new
    return (
        not deps <= old[0]
        or (parent is not None and parent != old[1])
        or (epic and not old[2])
        or old[3]
    )
