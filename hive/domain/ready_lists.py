"""The ready list of a state, stored in the state index for a fresh ``hive ready``.

Every write makes a new state, and the first ``hive ready`` after it finds no list for
that state. Computing it from every cell (10,000 rows read, decoded and ranked: ~75 ms
at 10,000 cells) is what :func:`store_ready_list` does only when it must: first it
derives the list from the stored list of the nearest state that has one
(:meth:`StateIndex.ready_sources`):

* the cell files that differ between the two states come from an SQL diff of their
  trees (:meth:`StateIndex.changed_paths`);
* readiness (``hive/domain/readiness.py``) of a cell looks at its own facts, those of
  its ``blocks`` targets, of its ancestors and their targets, and (an epic) of its
  children. So the cells whose readiness can change are the changed ones, the cells
  that wait on one (the exact ``dependents`` table), every descendant of those, and
  the parents (before and after) of the changed ones;
* their facts, and all the facts their readiness reads, are looked up by id in the
  new state, readiness is decided for them alone, and the result is stored as a delta
  over a whole stored list (:meth:`StateIndex.store_derived`): which ids leave it, and
  where the ready ones go in its order (a binary search over its ranks).

It falls back to the whole computation when there is no such list, when many cells
changed, and whenever a cell file lies outside its cell's own place (which of two
copies is the cell then depends on the order of the whole listing). A property test
(``tests/test_ready_lists.py``) checks the derived list equals the whole one after
random sequences of writes.
"""

from __future__ import annotations

from hive.domain.readiness import is_ready, ready_ids
from hive.store.index import Node, StateIndex, is_own_path, nodes_of
from hive.store.layout import cell_id_from_path

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from collections.abc import Iterable

    from hive.store.index import DeltaRow, Entry

MOST_CHANGED = 200  # cell files changed since the nearest list: past this, all cells
MOST_AFFECTED = 500  # cells whose readiness is decided again
# Rows of a derived list (it grows with each write since its base, and so does each
# read of it): past this many the list is stored whole instead (re-based: its base's
# rows merged with the delta in one copy, ~25 ms of CPU at 10,000 cells where the
# computation from every cell took ~110 ms), and the lists after it derive from it.
REBASE_DELTA = 100


def store_ready_list(index: StateIndex, key: str) -> bool:
    """Store the ready list of state ``key`` (derived when it can be, else computed from
    every cell); False when the state is no longer stored (the file was rebuilt)."""
    if derive_ready_list(index, key):
        return True
    entries = index.stored_entries(key)
    if entries is None:
        return False
    blob_of: dict[str, str] = {}
    nodes, unreadable = nodes_of(entries, blob_of)
    ranked = [(cell_id, blob_of[cell_id]) for cell_id in ready_ids(nodes, unreadable)]
    index.store_ready(key, ranked, strays=strays(entries))
    return True


def strays(entries: Iterable[Entry]) -> int:
    """How many cell files lie outside their cell's own place (a copy in another shard,
    a file directly in ``.hive/cells``)."""
    count = 0
    for entry in entries:
        cell_id = cell_id_from_path(entry.path)
        if cell_id is not None and not is_own_path(entry.path, cell_id):
            count += 1
    return count


def derive_ready_list(index: StateIndex, key: str) -> bool:
    """Store the ready list of ``key`` derived from the nearest stored one; False when
    that cannot be done for sure (the caller computes it from every cell)."""
    sources = index.ready_sources(key)
    if not sources or sources[0][0] == key:
        return False
    source, base, stray_files = sources[0]
    if stray_files:
        return False
    affected = _affected(index, source, key)
    if affected is None:
        return False
    facts = _Facts(index, key)
    verdict = facts.readiness(affected)
    if verdict is None:
        return False
    return _store_delta(index, key, source, base, facts, verdict)


def _affected(index: StateIndex, source: str, key: str) -> set[str] | None:
    """The cells whose readiness may differ between ``source`` and ``key`` (more is
    harmless); None when too many, or when a changed file is not its cell's own."""
    paths = index.changed_paths(source, key, MOST_CHANGED)
    if paths is None:
        return None
    changed: set[str] = set()
    for path in paths:
        cell_id = cell_id_from_path(path)
        if cell_id is None or not is_own_path(path, cell_id):
            return None  # a copy elsewhere: which file is the cell follows the listing
        changed.add(cell_id)
    before = index.files_of(source, ids=sorted(changed))
    after = index.files_of(key, ids=sorted(changed))
    if before is None or after is None:
        return None
    parents = {entry.parent for entry in [*before, *after] if entry.parent}  # epics
    seeds = changed | index.dependent_ids(changed)
    affected = seeds | parents
    seen, frontier = set(seeds), seeds
    while frontier:  # every descendant: an ancestor's facts decide readiness
        below = index.files_of(key, parents=sorted(frontier))
        if below is None:
            return None
        frontier = _ids_of(below) - seen
        seen |= frontier
        affected |= frontier
        if len(affected) > MOST_AFFECTED:
            return None
    return affected


def _ids_of(entries: Iterable[Entry]) -> set[str]:
    return {cell_id for entry in entries if (cell_id := cell_id_from_path(entry.path))}


class _Facts:
    """The readiness facts of some cells of one state, looked up by id."""

    def __init__(self, index: StateIndex, key: str) -> None:
        self.index = index
        self.key = key
        self.nodes: dict[str, Node] = {}
        self.unreadable: set[str] = set()
        self.blobs: dict[str, str] = {}
        self.loaded: set[str] = set()

    def load(self, ids: Iterable[str]) -> bool:
        """Look up the cells ``ids`` not looked up yet; False when the state is gone or
        a cell has more than one file (not expected here: then nothing is sure)."""
        wanted = sorted(set(ids) - self.loaded)
        if not wanted:
            return True
        entries = self.index.files_of(self.key, ids=wanted)
        if entries is None or len(_ids_of(entries)) != len(entries):
            return False
        nodes, unreadable = nodes_of(entries, self.blobs)
        self.nodes.update(nodes)
        self.unreadable |= unreadable
        self.loaded.update(wanted)
        return True

    def readiness(self, cells: set[str]) -> dict[str, bool] | None:
        """Whether each of ``cells`` is ready, as :func:`ready_ids` over every cell
        decides; None when the facts cannot all be looked up."""
        blockers: set[str] = set()
        chain, pending = set(cells), set(cells)
        while pending:  # the cells and their ancestors: their own facts and targets
            if not self.load(pending):
                return None
            following: set[str] = set()
            for cell_id in pending:
                node = self.nodes.get(cell_id)
                if node is None:
                    continue
                blockers.update(node.blockers)
                if node.parent and node.parent not in chain:
                    following.add(node.parent)
            chain |= following
            pending = following
        if not self.load(blockers):
            return None
        children = self._children(cells)
        if children is None:
            return None
        verdict: dict[str, bool] = {}
        for cell_id in cells:
            node = self.nodes.get(cell_id)
            verdict[cell_id] = node is not None and is_ready(
                node, self.nodes, self.unreadable, children
            )
        return verdict

    def _children(self, cells: set[str]) -> dict[str, list[str]] | None:
        """The children of each open epic of ``cells`` (an epic with an open child is
        not ready), looked up by the parent they name."""
        epics = sorted(
            cell_id
            for cell_id in cells
            if (node := self.nodes.get(cell_id)) is not None
            and node.type == "epic"
            and node.status == "open"
            and not node.deleted
        )
        if not epics:
            return {}
        below = self.index.files_of(self.key, parents=epics)
        if below is None or not self.load(_ids_of(below)):
            return None
        children: dict[str, list[str]] = {}
        for cell_id in _ids_of(below):
            node = self.nodes.get(cell_id)
            if node is not None and node.parent in epics:
                children.setdefault(node.parent, []).append(cell_id)
        return children


def _store_delta(
    index: StateIndex,
    key: str,
    source: str,
    base: str | None,
    facts: _Facts,
    verdict: dict[str, bool],
) -> bool:
    """Store the list of ``key``: the delta of ``source`` (none when its list is whole:
    then it is the base) with the rows of the cells decided again replaced."""
    base = base or source
    total = index.list_total(base)
    earlier = {} if base == source else {row[0]: row for row in index.list_delta(source)}
    if total is None:
        return False
    members = index.in_list(base, [cell_id for cell_id in verdict if cell_id not in earlier])
    rows: dict[str, DeltaRow] = {
        cell_id: row for cell_id, row in earlier.items() if cell_id not in verdict
    }
    for cell_id, ready in verdict.items():
        in_base = earlier[cell_id][3] if cell_id in earlier else int(cell_id in members)
        if ready:
            node = facts.nodes[cell_id]
            slot = index.list_slot(base, total, (node.priority, node.created, node.id))
            if slot is None:
                return False
            blob = facts.blobs[cell_id]
            rows[cell_id] = (cell_id, blob, 1, in_base, slot, node.priority, node.created, None)
        elif in_base:
            rows[cell_id] = (cell_id, "", 0, in_base, None, None, None, None)
    placed = _placed(list(rows.values()))
    if len(rows) > REBASE_DELTA:
        return index.store_rebased(key, base, placed)
    count = total - sum(row[3] for row in placed) + sum(row[2] for row in placed)
    return index.store_derived(key, base, placed, count)


def _placed(rows: list[DeltaRow]) -> list[DeltaRow]:
    """The rows with their ``at``: a ready row of slot ``s`` (``s`` base rows before it)
    goes between base ranks ``s - 1`` and ``s``, those of one slot in ready order."""
    slots: dict[int, list[DeltaRow]] = {}
    placed: list[DeltaRow] = []
    for row in rows:
        if row[2]:
            slots.setdefault(row[4], []).append(row)
        else:
            placed.append(row)
    for slot, together in slots.items():
        together.sort(key=lambda row: (row[5], row[6], row[0]))
        for number, row in enumerate(together):
            placed.append((*row[:7], slot - 1 + (number + 1) / (len(together) + 1)))
    return placed
