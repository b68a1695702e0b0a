"""Cell operations: create, read, list, ready, update, claim, close, delete, deps.

Each write runs inside :meth:`Workspace.write`, so its checks and changes are
computed from the state at the moment of the commit (re-run on retry): a
claim, a close or a dependency edge can never be based on stale data.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from hive.domain.cellinput import clean_labels, parse_dep_specs
from hive.domain.cellinput import normalize_files as _normalize_files
from hive.domain.cellinput import parse_dep_spec as parse_dep_spec
from hive.domain.cellinput import parse_priority as parse_priority
from hive.domain.cellinput import parse_status as parse_status
from hive.domain.cellinput import parse_type as parse_type
from hive.domain.deadlines import flag_expired
from hive.domain.graph import (
    TREE_DIRECTIONS,
    dependency_tree,
    open_blockers,
    ready_cell_ids,
    ready_cells,
    refuse_cycle,
    refuse_new_cell_cycle,
)
from hive.domain.limits import (
    MAX_ITEMS,
    MAX_LABELS,
    check_count,
    check_name,
    check_text,
)
from hive.domain.ownership import OwnerGuard, record_overrides
from hive.domain.workspace import MixedPlan, Workspace
from hive.errors import (
    AlreadyClaimed,
    BlockedByDependency,
    Conflict,
    CorruptFile,
    HiveError,
    InvalidInput,
    NotFound,
)
from hive.git.repo import Snapshot
from hive.models import Cell, Dependency, utc_now
from hive.models.cell import Page, check_title, first_error
from hive.models.cellresults import DependencyNode
from hive.store.cache import CellIndex, IdSet
from hive.store.ids import new_child_id, new_root_id, resolve_among
from hive.store.layout import cell_path


def _validated(data: dict[str, Any]) -> Cell:
    """A cell to be written: the model's rules plus the stricter ones for new text."""
    try:
        cell = Cell.model_validate(data)
    except ValidationError as exc:
        field, why = first_error(exc)
        raise InvalidInput(f"invalid {field or 'cell'}: {why}") from None
    try:
        check_title(cell.title)
    except ValueError as exc:
        raise InvalidInput(f"invalid title: {exc}") from None
    return cell


def _noted(cell: Cell, note: str) -> str:
    """``cell``'s notes with ``note`` appended on a line of its own."""
    return (cell.notes.rstrip("\n") + "\n" if cell.notes else "") + note


def _changed(cell: Cell, **changes: Any) -> Cell:
    data = cell.model_dump()
    data.update(changes)
    data["updated_at"] = utc_now()
    return _validated(data)


# ------------------------------------------------------------------ ids


def resolve_id(index: CellIndex, given: str) -> str:
    """The full id for ``given``: exact, or an unambiguous prefix (with or without
    ``prefix-``), as :func:`hive.store.ids.resolve_among` decides it over every id."""

    def deleted(cell_id: str) -> bool:
        cell = index.cells.get(cell_id)  # an unreadable file counts as live
        return cell is not None and cell.is_deleted

    return resolve_among(given, index.known_ids(), deleted)


def explain_not_found(ws: Workspace, error: NotFound) -> NotFound:
    """``error`` saying why when the cell it names is only staged (made with
    ``HIVE_AUTOCOMMIT=0`` and not committed: a committing process reads HEAD)."""
    given = str(error.details.get("id") or "").strip().lower()
    if not ws.autocommit or not given:
        return error
    try:
        staged = ws.git.snapshot(staged=True).overlay.get(cell_path(given))
    except (HiveError, OSError, ValueError):
        return error
    if staged is None:
        return error
    return NotFound(
        f"{error.message}: {given} is staged but not committed (made with"
        " HIVE_AUTOCOMMIT=0): commit it, or read it with HIVE_AUTOCOMMIT=0",
        **error.details,
    )


def get_cell(index: CellIndex, given: str, *, allow_deleted: bool = False) -> Cell:
    cell_id = resolve_id(index, given)
    cell = index.cells.get(cell_id)
    if cell is None:
        problem = next(
            (err for path, err in index.problems.items() if path.endswith(f"/{cell_id}.yaml")),
            None,
        )
        if problem is not None:
            path = problem.details.get("path")
            fix = f" (hive reads the committed file: fix it and commit it, git commit {path})"
            raise CorruptFile(problem.message + fix, path=path)
        raise NotFound(f"no cell {cell_id}", id=cell_id)
    if cell.is_deleted and not allow_deleted:
        raise NotFound(f"cell {cell_id} was deleted", id=cell_id)
    return cell


# ------------------------------------------------------------------ reading


def show_cell(ws: Workspace, *, cell_id: str) -> Cell:
    return get_cell(ws.cells(), cell_id, allow_deleted=True)


def list_cells(
    ws: Workspace,
    *,
    status: str | None = None,
    type: str | None = None,
    priority: int | str | None = None,
    parent: str | None = None,
    label: str | None = None,
    assignee: str | None = None,
    include_deleted: bool = False,
    limit: int | None = None,
) -> Page[Cell]:
    """Cells matching every filter given, most urgent first: the first ``limit``, and
    how many match in all (``total``)."""
    index = ws.cells()
    wanted_status = parse_status(status, also=("all",))
    wanted_status = None if wanted_status == "all" else wanted_status
    wanted_type = parse_type(type)
    wanted_priority = parse_priority(priority)
    wanted_parent = resolve_id(index, parent) if parent else None
    nodes = [
        node
        for node in index.nodes.values()
        if (include_deleted or not node.deleted)
        and (wanted_status is None or node.status == wanted_status)
        and (wanted_type is None or node.type == wanted_type)
        and (wanted_priority is None or node.priority == wanted_priority)
        and (wanted_parent is None or node.parent == wanted_parent)
        and (assignee is None or node.assignee == assignee)
    ]
    if label is not None:  # the one filter the light facts lack: decode only these
        nodes = [node for node in nodes if label in index.cells[node.id].labels]
    # creation as a timestamp orders as the time itself (distinct to the microsecond)
    nodes.sort(key=lambda n: (n.status == "closed", n.priority, n.created, n.id))
    shown = nodes[:limit] if limit is not None else nodes
    return Page((index.cells[node.id] for node in shown), total=len(nodes))


def ready(ws: Workspace, *, limit: int | None = None, claim: bool = False) -> list[Cell]:
    """Ready work, most urgent first; with ``claim``, atomically start the first one.

    A claim skips cells assigned to another actor (``start`` refuses those too).
    """
    if limit is not None and limit < 1:
        raise InvalidInput(f"limit must be at least 1, got {limit}")
    if not claim:
        index = ws.cells()
        return Page(flag_expired(ready_cells(index, limit)), total=len(ready_cell_ids(index)))

    actor = ws.require_agent("claiming a cell")

    def plan(snap: Snapshot, index: CellIndex) -> tuple[list[Cell], str, str, Any]:
        ready_now = ready_cells(index)
        mine = (c for c in ready_now if c.assignee in (None, actor) and _may_start(ws, c, actor))
        first = next(mine, None)
        if first is None:
            return [], "", "", []
        claimed = _claimed(first, actor)
        return [claimed], claimed.id, claimed.title, [claimed]

    result: list[Cell] = ws.write(plan, event="start").result
    return flag_expired(result)


# ------------------------------------------------------------------ writing


def create_cell(
    ws: Workspace,
    *,
    title: str,
    type: str = "task",
    priority: int | str = 2,
    description: str = "",
    parent: str | None = None,
    deps: Sequence[str] = (),
    labels: Sequence[str] = (),
    files: Sequence[str] = (),
    assignee: str | None = None,
    notes: str = "",
    metadata: dict[str, Any] | None = None,
    design: str = "",
    acceptance_criteria: str = "",
) -> Cell:
    """Create one cell (a child of ``parent`` if given) in one commit."""
    fields = _new_cell_fields(
        title=title,
        type=type,
        priority=priority,
        description=description,
        labels=labels,
        files=files,
        assignee=assignee,
        notes=notes,
        metadata=metadata,
    )
    fields.update(_texts(design=design, acceptance_criteria=acceptance_criteria))
    dep_specs = parse_dep_specs(deps)

    def plan(snap: Snapshot, index: CellIndex) -> tuple[list[Cell], str, str, Any]:
        parent_id = get_cell(index, parent).id if parent else None
        dependencies = resolve_deps(index, dep_specs)
        refuse_new_cell_cycle(index, parent_id, [(d.type, d.target) for d in dependencies])
        cell = build_cell(
            ws, snap, index.known_ids(), fields, parent_id=parent_id, dependencies=dependencies
        )
        return [cell], cell.id, cell.title, cell

    result: Cell = ws.write(plan, event="create").result
    return result


def _new_cell_fields(
    *,
    title: str,
    type: str,
    priority: int | str,
    description: str,
    labels: Sequence[str],
    files: Sequence[str],
    assignee: str | None,
    notes: str,
    metadata: dict[str, Any] | None,
) -> dict[str, Any]:
    check_count(list(labels), "labels", MAX_LABELS)
    check_count(list(files), "file patterns", MAX_ITEMS)
    return {
        "title": title,
        "type": parse_type(type),
        "priority": parse_priority(priority, 2),
        "description": check_text(description, "description"),
        "labels": clean_labels(labels),
        "files_owned": _normalize_files(files),
        "assignee": check_name(assignee, "assignee") if assignee else None,
        "notes": check_text(notes, "notes"),
        "metadata": dict(metadata or {}),
    }


def _texts(**texts: str | None) -> dict[str, str]:
    """The long text fields given (``design``, ``acceptance_criteria``), each checked
    as every cell text is; those not given (None) left out."""
    label = {"acceptance_criteria": "acceptance criteria"}
    return {
        name: check_text(text, label.get(name, name))
        for name, text in texts.items()
        if text is not None
    }


def resolve_deps(index: CellIndex, dep_specs: Sequence[tuple[str, str]]) -> list[Dependency]:
    """Dependencies with their targets resolved to full ids of existing cells."""
    resolved: list[Dependency] = []
    for dep_type, target in dep_specs:
        dep = Dependency(type=dep_type, target=get_cell(index, target).id)
        if dep not in resolved:
            resolved.append(dep)
    return resolved


def build_cell(
    ws: Workspace,
    snap: Snapshot,
    known: IdSet,
    fields: dict[str, Any],
    *,
    parent_id: str | None = None,
    dependencies: Sequence[Dependency] = (),
    created_at: datetime | None = None,
) -> Cell:
    """A new, validated cell with a fresh id (never in ``known``; ``known`` gains it)."""
    config = ws.config(snap)
    if parent_id is not None:
        cell_id = new_child_id(parent_id, config.child_id_length, known.__contains__)
    else:
        cell_id = new_root_id(config.prefix, config.id_length, known.__contains__)
    now = created_at or utc_now()
    cell = _validated(
        {
            **fields,
            "id": cell_id,
            "parent": parent_id,
            "dependencies": list(dependencies),
            "created_at": now,
            "updated_at": now,
            "created_by": ws.actor,
        }
    )
    known.add(cell_id)
    return cell


def _mutate(
    ws: Workspace,
    cell_id: str,
    event: str,
    change: Any,
    *,
    allow_deleted: bool = False,
    force: bool = False,
    reason: str | None = None,
) -> Cell:
    """Apply ``change(cell, index, guard) -> Cell | None`` to one cell in one commit."""
    changed = _mutate_many(
        ws, [cell_id], event, change, allow_deleted=allow_deleted, force=force, reason=reason
    )
    return changed[0]


def _mutate_many(
    ws: Workspace,
    cell_ids: Sequence[str],
    event: str,
    change: Any,
    *,
    allow_deleted: bool = False,
    force: bool = False,
    reason: str | None = None,
) -> list[Cell]:
    """Apply ``change(cell, index, guard) -> Cell | None`` to each cell, in order, in
    one commit: all of them or, when one is refused, none (the error names it).

    Each change sees the ones before it (closing a blocker and the cell it blocks
    works in one call). ``guard`` checks ownership on the fresh cell; an override it
    allows (``force`` with a ``reason``, by a coordinator or a person) goes into the
    commit as a ``Hive-Override`` trailer and into the event log.
    """
    if not cell_ids:
        raise InvalidInput("no cell id given")
    guards: list[OwnerGuard] = []

    def plan(snap: Snapshot, index: CellIndex) -> MixedPlan:
        guard = OwnerGuard(ws, snap, force=force, reason=reason)
        guards[:] = [guard]
        try:
            ids = list(dict.fromkeys(resolve_id(index, given) for given in cell_ids))
            results, written = _apply_all(ids, index, change, guard, allow_deleted)
        except HiveError as exc:
            if len(cell_ids) > 1:
                exc.message = f"{exc.message} (nothing was changed: all the cells given or none)"
                exc.args = (exc.message,)
            raise
        if not written:
            guard.overrides.clear()
        first = results[0]
        subject, title = (first.id, first.title) if len(results) == 1 else _many_subject(results)
        return MixedPlan(
            cells=list(written.values()),
            subject_id=subject,
            title=title,
            result=results,
            trailers=[*guard.trailers(), *guard.notes],
        )

    done = ws.write_mixed(plan, event=event)
    if guards and guards[0].overrides:
        record_overrides(ws, guards[0].overrides, done.commit)
    results: list[Cell] = done.result
    return results


def _apply_all(
    ids: list[str], index: CellIndex, change: Any, guard: OwnerGuard, allow_deleted: bool
) -> tuple[list[Cell], dict[str, Cell]]:
    """Each cell changed, in any order that works: a change refused by the state
    (a blocker still open, a subtask still live) is tried again after the others, so
    ``close A B`` closes B's blocker A first whatever order they are given in."""
    done: dict[str, Cell] = {}
    written: dict[str, Cell] = {}
    waiting = list(ids)
    while waiting:
        refused: list[tuple[str, Conflict]] = []
        for one in waiting:
            current = index.overlay(written) if written else index
            cell = get_cell(current, one, allow_deleted=allow_deleted)
            try:
                updated = change(cell, current, guard)
            except (BlockedByDependency, Conflict) as exc:
                refused.append((one, exc))
                continue
            if updated is not None and updated != cell:
                written[updated.id] = updated
                cell = updated
            done[one] = cell
        if refused and len(refused) == len(waiting):
            raise refused[0][1]
        waiting = [one for one, _ in refused]
    return [done[one] for one in ids], written


def _many_subject(cells: Sequence[Cell]) -> tuple[str, str]:
    """A commit subject naming several cells: ``3 cells hv-a hv-b hv-c``."""
    shown = " ".join(cell.id for cell in cells[:6]) + (" ..." if len(cells) > 6 else "")
    return f"{len(cells)} cells", shown


def update_cell(ws: Workspace, *, cell_id: str, **changes: Any) -> Cell:
    """Change fields of one cell (see :func:`update_cells_reporting`)."""
    return update_cells(ws, cell_ids=[cell_id], **changes)[0]


def update_cells(ws: Workspace, *, cell_ids: Sequence[str], **changes: Any) -> list[Cell]:
    """Change fields of cells, all in one commit (see :func:`update_cells_reporting`):
    the cells as the update left them."""
    return [cell for cell, _ in update_cells_reporting(ws, cell_ids=cell_ids, **changes)]


@dataclass(frozen=True)
class _CellUpdate:
    """The checked changes ``update_cells`` makes to each of its cells."""

    status: str | None
    priority: int | None
    type: str | None
    added: list[str]
    removed: set[str]
    files: list[str] | None
    texts: dict[str, str]
    title: str | None
    description: str | None
    assignee: str | None
    append_notes: str | None
    force: bool


def update_cells_reporting(
    ws: Workspace,
    *,
    cell_ids: Sequence[str],
    status: str | None = None,
    priority: int | str | None = None,
    title: str | None = None,
    description: str | None = None,
    assignee: str | None = None,
    type: str | None = None,
    append_notes: str | None = None,
    add_labels: Sequence[str] = (),
    remove_labels: Sequence[str] = (),
    files: Sequence[str] | None = None,
    force: bool = False,
    reason: str | None = None,
    design: str | None = None,
    acceptance_criteria: str | None = None,
) -> list[tuple[Cell, list[str]]]:
    """Change fields of cells, all in one commit. ``status='closed'`` follows the rules
    of close (after the other changes are applied), ``status='in_progress'`` those of
    start (from open, deferred or closed: refused past an open blocker unless ``force``,
    recorded).

    A claimed cell is its assignee's: anyone else changing it is refused
    (``not_owner``) unless a coordinator or a person forces it with a ``reason``
    (recorded). Each cell comes back with the fields that really changed (none: the
    values it already had; no commit when no cell changed), in :data:`UPDATABLE`'s order."""
    update = _CellUpdate(  # checked in this order: the first error is the one reported
        status=parse_status(status),
        priority=parse_priority(priority),
        type=parse_type(type),
        added=clean_labels(add_labels),
        removed=set(clean_labels(remove_labels, stored=True)),
        files=None if files is None else _normalize_files(files),
        description=_checked_text(description, "description"),
        append_notes=_checked_text(append_notes, "notes"),
        texts=_texts(design=design, acceptance_criteria=acceptance_criteria),
        assignee=_checked_assignee(assignee),
        title=_checked_new_title(title),
        force=force,
    )

    changes: dict[str, list[str]] = {}  # each cell's, as the last (committed) try made it

    def change(cell: Cell, index: CellIndex, guard: OwnerGuard) -> Cell:
        updated = _updated_cell(cell, index, guard, update)
        if updated.status == "in_progress" and cell.status not in RESUMED:
            _authorized_start(ws, updated, ws.actor)  # a start: a task needing a grant needs it
        changes[cell.id] = changed_fields(cell, updated)
        return updated

    event = "close" if update.status == "closed" else "update"
    cells = _mutate_many(ws, cell_ids, event, change, force=force, reason=reason)
    return [(cell, changes.get(cell.id, [])) for cell in cells]


UPDATABLE = (  # the fields update_cells sets, in the order an answer lists them
    "status",
    "priority",
    "type",
    "title",
    "description",
    "design",
    "acceptance_criteria",
    "assignee",
    "notes",
    "labels",
    "files_owned",
)


def changed_fields(cell: Cell, updated: Cell) -> list[str]:
    """The fields of :data:`UPDATABLE` that hold another value in ``updated``."""
    return [name for name in UPDATABLE if getattr(cell, name) != getattr(updated, name)]


def _checked_text(text: str | None, what: str) -> str | None:
    """``text`` as given, once checked as every cell text is (None: not given)."""
    if text is not None:
        check_text(text, what)
    return text


def _checked_assignee(assignee: str | None) -> str | None:
    """``assignee`` as given (empty: unassign), a name checked when there is one."""
    if assignee:
        check_name(assignee, "assignee")
    return assignee


def _checked_new_title(title: str | None) -> str | None:
    """``title`` as given; a blank one is refused."""
    if title is not None and not title.strip():
        raise InvalidInput("title must not be blank")
    return title


def _updated_cell(cell: Cell, index: CellIndex, guard: OwnerGuard, update: _CellUpdate) -> Cell:
    """``cell`` with ``update`` applied, checked as the change it makes (a close, a
    start, an update); ``cell`` itself when nothing differs (no commit)."""
    closes = update.status == "closed" and not cell.is_closed
    updates = _field_updates(cell, update, closes=closes)
    _check_update_allowed(cell, index, guard, update, updates, closes=closes)
    updated = _changed(cell, **updates) if updates else cell
    if closes:
        return _closing(updated, index, reason=None, force=update.force, guard=guard)
    return updated if _fields_differ(cell, updated) else cell  # the same: no commit


def _field_updates(cell: Cell, update: _CellUpdate, *, closes: bool) -> dict[str, Any]:
    """The fields ``update`` sets on ``cell`` (a close's status is left to ``_closing``)."""
    updates: dict[str, Any] = {}
    if update.status is not None and not closes:
        updates.update(_status_updates(cell, update.status))
    if update.priority is not None:
        updates["priority"] = update.priority
    if update.title is not None:
        updates["title"] = update.title
    if update.description is not None:
        updates["description"] = update.description
    updates.update(update.texts)
    if update.assignee is not None:
        updates["assignee"] = update.assignee or None
    if update.type is not None:
        updates["type"] = update.type
    if update.append_notes:
        updates["notes"] = _noted(cell, update.append_notes)
    if update.added or update.removed:
        labels = [lb for lb in cell.labels if lb not in update.removed]
        updates["labels"] = labels + [lb for lb in update.added if lb not in labels]
    if update.files is not None:
        updates["files_owned"] = update.files
    return updates


def _status_updates(cell: Cell, status: str) -> dict[str, Any]:
    """The fields a new ``status`` sets: a reopened cell's close cleared, a first start
    timed (as hive_start: outcomes time from it)."""
    updates: dict[str, Any] = {"status": status}
    if cell.is_closed and status != "closed":
        updates.update(closed_at=None, close_reason=None)
    if status == "in_progress" and cell.started_at is None:
        updates["started_at"] = utc_now()
    return updates


def _check_update_allowed(
    cell: Cell,
    index: CellIndex,
    guard: OwnerGuard,
    update: _CellUpdate,
    updates: dict[str, Any],
    *,
    closes: bool,
) -> None:
    """Refuse a change of someone else's claimed cell (unless forced) and a start past
    an open blocker."""
    if closes:
        guard.check_cell(cell, "close")
    elif _differs(cell, updates, "status", "assignee"):
        guard.check_cell(cell, "change the status or assignee of")
    elif _differs(cell, updates):
        guard.check_cell(cell, "update")
    if update.status == "in_progress" and cell.status not in RESUMED:  # starts it
        _past_blockers(cell, index, guard, verb="start", force=update.force)


def reopened_claims(index: CellIndex, agent: str, note: str) -> list[Cell]:
    """The cells ``agent`` has claimed (in progress) in ``index``, open again and
    unassigned with ``note`` appended (its identity is retired: nobody, a new agent
    of the name included, works them as it)."""
    reopened = []
    for cell_id, node in sorted(index.nodes.items()):
        if node.deleted or node.status != "in_progress":
            continue
        cell = index.cells[cell_id]
        if cell.assignee == agent:
            reopened.append(_changed(cell, status="open", assignee=None, notes=_noted(cell, note)))
    return reopened


RESUMED = ("in_progress", "blocked")  # to in_progress from these: work goes on, not a start


def _differs(cell: Cell, updates: dict[str, Any], *only: str) -> bool:
    """Whether ``updates`` change ``cell`` (in the fields ``only`` names, if given)."""
    keys = [key for key in updates if not only or key in only]
    return any(getattr(cell, key) != updates[key] for key in keys)


def _fields_differ(cell: Cell, updated: Cell) -> bool:
    """Whether ``updated`` holds another value than ``cell`` in any field but
    ``updated_at``: an update that asks for what the cell already has (``-p 2`` of a
    priority-2 cell) changes nothing and makes no commit."""
    return updated.model_dump(exclude={"updated_at"}) != cell.model_dump(exclude={"updated_at"})


def _authorized_start(ws: Workspace, cell: Cell, actor: str) -> None:
    """Refuse ``actor`` starting ``cell`` when it is a task delegated with
    ``requiresAuth`` that no live grant covers
    (:func:`hive.domain.permissions.require_task_grant`; imported only for such a task)."""
    if cell.metadata.get("requires_auth") is True:
        from hive.domain.permissions import require_task_grant

        require_task_grant(ws, cell, actor)


def _may_start(ws: Workspace, cell: Cell, actor: str) -> bool:
    """Whether :func:`_authorized_start` lets ``actor`` start ``cell``."""
    if cell.metadata.get("requires_auth") is not True:
        return True
    from hive.domain.permissions import AuthRequired

    try:
        _authorized_start(ws, cell, actor)
    except AuthRequired:
        return False
    return True


def _claimed(cell: Cell, actor: str) -> Cell:
    return _changed(cell, status="in_progress", assignee=actor, started_at=utc_now())


def start_cell(
    ws: Workspace, *, cell_id: str, force: bool = False, reason: str | None = None
) -> Cell:
    """Atomically claim a cell (see :func:`start_cells`)."""
    return start_cells(ws, cell_ids=[cell_id], force=force, reason=reason)[0]


def start_cells(
    ws: Workspace, *, cell_ids: Sequence[str], force: bool = False, reason: str | None = None
) -> list[Cell]:
    """Atomically claim cells for the actor: a second claimant gets AlreadyClaimed.

    A cell waiting on an open blocker is refused (``blocked_by_dependency``) unless
    ``force``; starting it anyway is recorded in the commit (``Hive-Override``)."""
    actor = ws.require_agent("claiming a cell")

    def change(cell: Cell, index: CellIndex, guard: OwnerGuard) -> Cell:
        if cell.status == "in_progress":
            if cell.assignee == actor:
                return cell
            raise AlreadyClaimed(
                f"{cell.id} is already claimed by {cell.assignee or 'someone'}",
                id=cell.id,
                holder=cell.assignee,
            )
        if cell.is_closed:
            raise Conflict(f"{cell.id} is closed; reopen it first", id=cell.id)
        if cell.assignee and cell.assignee != actor:
            raise AlreadyClaimed(
                f"{cell.id} is already claimed by {cell.assignee}", id=cell.id, holder=cell.assignee
            )
        _past_blockers(cell, index, guard, verb="start", force=force)
        _authorized_start(ws, cell, actor)  # not overridden by force
        return _claimed(cell, actor)

    return _mutate_many(ws, cell_ids, "start", change, reason=reason)


def _past_blockers(
    cell: Cell, index: CellIndex, guard: OwnerGuard, *, verb: str, force: bool
) -> None:
    """Refuse ``verb`` while ``cell`` waits on an open blocker; with ``force``, note the
    override for the commit."""
    blockers = open_blockers(cell, index)
    if not blockers:
        return
    if not force:
        raise BlockedByDependency(
            f"{cell.id} is blocked by open {', '.join(blockers)};"
            " close those first, or override with force (--force; see 'hive blocked')",
            id=cell.id,
            blockers=blockers,
        )
    guard.note(f"{verb} {cell.id} despite open blockers {', '.join(blockers)}")


def _closing(
    cell: Cell, index: CellIndex, *, reason: str | None, force: bool, guard: OwnerGuard
) -> Cell:
    if cell.is_closed:
        raise Conflict(f"{cell.id} is already closed", id=cell.id)
    _past_blockers(cell, index, guard, verb="close", force=force)
    waiting = open_subtasks(cell, index) if cell.type == "epic" else []
    if waiting:
        if not force:
            named = ", ".join(waiting[:3]) + (
                f" and {len(waiting) - 3} more" if len(waiting) > 3 else ""
            )
            raise BlockedByDependency(
                f"epic {cell.id} still has open subtasks ({named}); close them first, or"
                " override with force (--force)",
                id=cell.id,
                open_subtasks=waiting,
            )
        guard.note(f"close epic {cell.id} with open subtasks")
    return _changed(cell, status="closed", closed_at=utc_now(), close_reason=reason or None)


def open_subtasks(cell: Cell, index: CellIndex) -> list[str]:
    """The ids of ``cell``'s subtasks neither closed nor deleted (sorted)."""
    children = (index.nodes.get(child_id) for child_id in index.children_of(cell.id))
    return sorted(
        n.id for n in children if n is not None and n.status != "closed" and not n.deleted
    )


def close_cell(
    ws: Workspace, *, cell_id: str, reason: str | None = None, force: bool = False
) -> Cell:
    """Close a cell (see :func:`close_cells`)."""
    return close_cells(ws, cell_ids=[cell_id], reason=reason, force=force)[0]


def close_cells(
    ws: Workspace, *, cell_ids: Sequence[str], reason: str | None = None, force: bool = False
) -> list[Cell]:
    """Close cells in one commit; refused while a ``blocks`` dependency is open unless
    ``force`` (recorded). A blocker closed earlier in the same call counts as closed.

    A claimed cell is closed by its assignee; a coordinator or a person may close
    someone else's with ``force`` and a ``reason`` (the override is recorded).
    """

    if reason:
        check_text(reason, "close reason")

    def change(cell: Cell, index: CellIndex, guard: OwnerGuard) -> Cell:
        guard.check_cell(cell, "close")
        return _closing(cell, index, reason=reason, force=force, guard=guard)

    return _mutate_many(ws, cell_ids, "close", change, force=force, reason=reason)


def reopen_cell(ws: Workspace, *, cell_id: str) -> Cell:
    return reopen_cells(ws, cell_ids=[cell_id])[0]


def reopen_cells(ws: Workspace, *, cell_ids: Sequence[str]) -> list[Cell]:
    """Reopen closed cells, in one commit."""

    def change(cell: Cell, index: CellIndex, guard: OwnerGuard) -> Cell:
        if not cell.is_closed:
            raise Conflict(f"{cell.id} is not closed (status {cell.status})", id=cell.id)
        return _changed(cell, status="open", closed_at=None, close_reason=None)

    return _mutate_many(ws, cell_ids, "reopen", change)


def delete_cell(
    ws: Workspace, *, cell_id: str, force: bool = False, reason: str | None = None
) -> Cell:
    return delete_cells(ws, cell_ids=[cell_id], force=force, reason=reason)[0]


def delete_cells(
    ws: Workspace, *, cell_ids: Sequence[str], force: bool = False, reason: str | None = None
) -> list[Cell]:
    """Tombstone cells: the file stays (so merges cannot resurrect it), hidden from views.

    ``force`` also deletes a cell with live subtasks (subtasks deleted in the same
    call need no force, in any order); a claimed cell is its assignee's to delete (a
    coordinator or person overrides with force and a reason).
    """

    def change(cell: Cell, index: CellIndex, guard: OwnerGuard) -> Cell:
        guard.check_cell(cell, "delete")
        if not force:
            live = [c for c in index.children_of(cell.id) if not index.cells[c].is_deleted]
            if live:
                raise Conflict(
                    f"{cell.id} has subtasks ({', '.join(live[:5])});"
                    " delete them first, or override with force (--force)",
                    id=cell.id,
                )
        return _changed(cell, deleted_at=utc_now())

    return _mutate_many(
        ws, cell_ids, "delete", change, allow_deleted=False, force=force, reason=reason
    )


DEPENDENCIES = "change the dependencies of"


def add_dependency(
    ws: Workspace,
    *,
    cell_id: str,
    target: str,
    dep_type: str = "blocks",
    force: bool = False,
    reason: str | None = None,
) -> Cell:
    """``cell_id`` depends on ``target``; cycles and self-dependencies are refused.

    A claimed cell's dependencies are its assignee's (a blocker added by someone else
    would keep it from closing); a coordinator or a person overrides with ``force``
    and a ``reason`` (recorded)."""
    kind, _ = parse_dep_spec(f"{dep_type}:{target}")

    def change(cell: Cell, index: CellIndex, guard: OwnerGuard) -> Cell:
        guard.check_cell(cell, DEPENDENCIES)
        other = get_cell(index, target)
        if any(d.target == other.id and d.type == kind for d in cell.dependencies):
            return cell
        if kind in ("blocks", "parent-child"):
            refuse_cycle(index, cell.id, other.id, kind)
        elif cell.id == other.id:
            raise InvalidInput(f"{cell.id} cannot depend on itself")
        deps = [*cell.dependencies, Dependency(type=kind, target=other.id)]
        return _changed(cell, dependencies=deps)

    return _mutate(ws, cell_id, "dep-add", change, force=force, reason=reason)


def remove_dependency(
    ws: Workspace,
    *,
    cell_id: str,
    target: str,
    dep_type: str | None = None,
    force: bool = False,
    reason: str | None = None,
) -> Cell:
    """Remove ``cell_id``'s dependency on ``target`` (a claimed cell's: as for adding):
    the one of kind ``dep_type``, or with None every kind (a ``related`` link and a
    ``blocks`` edge to one target are two dependencies: removing the link keeps the
    blocker)."""
    kind = None if dep_type is None else parse_dep_spec(f"{dep_type}:{target}")[0]

    def change(cell: Cell, index: CellIndex, guard: OwnerGuard) -> Cell:
        guard.check_cell(cell, DEPENDENCIES)
        try:
            target_id = resolve_id(index, target)
        except NotFound:
            target_id = target.strip().lower()
        kept = [
            d
            for d in cell.dependencies
            if d.target != target_id or (kind is not None and d.type != kind)
        ]
        if len(kept) == len(cell.dependencies):
            which = "dependency" if kind is None else f"{kind} dependency"
            raise NotFound(f"{cell.id} has no {which} on {target_id}", id=cell.id)
        return _changed(cell, dependencies=kept)

    return _mutate(ws, cell_id, "dep-remove", change, force=force, reason=reason)


def dep_tree(ws: Workspace, *, cell_id: str, direction: str = "down") -> DependencyNode:
    """What ``cell_id`` depends on (``down``), what depends on it (``up``), or both."""
    if direction not in TREE_DIRECTIONS:
        raise InvalidInput(
            f"invalid direction {direction!r}: use down (what it depends on), up (what"
            " depends on it) or both",
            field="direction",
        )
    index = ws.cells()
    cell = get_cell(index, cell_id, allow_deleted=True)
    return DependencyNode.from_tree(dependency_tree(index, cell.id, direction=direction))


__all__ = [
    "add_dependency",
    "close_cell",
    "create_cell",
    "delete_cell",
    "dep_tree",
    "list_cells",
    "ready",
    "remove_dependency",
    "reopen_cell",
    "resolve_id",
    "show_cell",
    "start_cell",
    "update_cell",
    "update_cells_reporting",
]
