"""Cell operations: create, query (show/list), ready, update, start, close, reopen,
delete, comment, resolve, dependencies. Each is described once; the CLI commands
and the agent tools are generated from these descriptions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BeforeValidator, Field, WithJsonSchema

from hive.domain.limits import (
    MAX_DEPS,
    MAX_ID,
    MAX_ITEMS,
    MAX_LABELS,
    MAX_TEXT,
    MAX_TITLE,
)
from hive.errors import (
    AlreadyClaimed,
    AmbiguousId,
    BlockedByDependency,
    Conflict,
    DependencyCycle,
    InvalidInput,
    NotFound,
    NotOwner,
    NotRegistered,
)
from hive.models import Cell
from hive.models.cell import (
    CELL_TYPES,
    CellSummary,
    ChangedCell,
    CommentedCell,
    Page,
    UpdatedCell,
)
from hive.models.cell import STATUSES as CELL_STATUSES
from hive.models.cellresults import (
    BlockedCell,
    BlockedSummary,
    CellDetail,
    CellStats,
    DependencyNode,
)
from hive.ops.spec import (
    OVERRIDE,
    REASON,
    Command,
    Glob,
    NoParams,
    Operation,
    Params,
    Short,
    cli_help_only,
    declare,
)

if TYPE_CHECKING:
    from hive.domain.workspace import Workspace

CellType = Literal["bug", "feature", "task", "epic", "chore"]
ID_HELP = "cell id (a unique prefix works)"
Reason: Any = Field(
    default=None, max_length=5000, description=REASON, json_schema_extra=cli_help_only
)
VERBOSE = "whole cells"
PERSON = {"verbose": True, "limit": 50}  # a person's page: a screenful of whole cells
TYPE_SHORT = {"type": ("-t",)}
LOOKUP = (NotFound, AmbiguousId)
OWNED = (*LOOKUP, NotOwner, InvalidInput)


def _priority(value: Any) -> int | None:
    from hive.domain.cells import parse_priority

    return parse_priority(value)


PRIORITY = {"priority": _priority}


def _priority_word(value: Any) -> Any:
    """A priority as a tool call gives it, in the spellings the command line takes: 0-4
    (``2.0`` too: a whole number), ``P0``-``P4`` in any case; anything else (``high``, out
    of range, a bool) refused with the command line's words, which say what is taken. A
    quoted number is left to the model's strict check (send it without quotes), as
    every number argument of a tool is."""
    if isinstance(value, str) and value.strip().isdecimal():
        return value
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    try:
        return _priority(value)
    except InvalidInput as exc:
        raise ValueError(str(exc)) from None


# a person's --help for the values a filter or an update takes (not in the tool schemas)
TYPES = "|".join(CELL_TYPES)
STATUSES = "|".join(CELL_STATUSES)
PRIORITIES = "0-4 or P0-P4 (0 most urgent)"

# 0-4 or P0-P4: the schema says both (a string's pattern, a number's bounds) in a few
# characters, as every agent pays for each of them
Priority = Annotated[
    int,
    BeforeValidator(_priority_word),
    Field(ge=0, le=4),
    WithJsonSchema(
        {"type": ["integer", "string"], "minimum": 0, "maximum": 4, "pattern": "^[Pp][0-4]$"}
    ),
]


def _type(value: Any) -> str | None:
    """``--type`` in any case (``Bug``); anything else refused naming the option."""
    from hive.domain.cells import parse_type

    try:
        return parse_type(value)
    except InvalidInput as exc:
        raise InvalidInput(
            str(exc).replace("invalid type", "invalid --type"), field="type"
        ) from None


# A person types a type as a status or a priority, in any case (``-t Bug``, as ``hive
# list -t BUG`` and ``-s In-Progress`` read it); the tools' schemas keep the enum.
TYPED = {**PRIORITY, "type": _type}


class IdParams(Params):
    id: str = Field(
        min_length=1, max_length=MAX_ID, description=ID_HELP, json_schema_extra=cli_help_only
    )


# ------------------------------------------------------------------ create


class CreateParams(Params):
    title: str = Field(min_length=1, max_length=MAX_TITLE, description="one-line title")
    type: CellType = "task"
    priority: Priority = Field(default=2, description="0 most urgent")
    description: str = Field(default="", max_length=MAX_TEXT)
    parent: Short | None = Field(
        default=None, description="parent cell (the id shows it)", json_schema_extra=cli_help_only
    )
    deps: list[Short] = Field(
        default_factory=list,
        max_length=MAX_DEPS,
        description="TYPE:ID, e.g. blocks:hv-ab12",
    )
    labels: list[Short] = Field(
        default_factory=list,
        max_length=MAX_LABELS,
        description="a,b: two labels",
        json_schema_extra=cli_help_only,
    )
    files: list[Glob] = Field(default_factory=list, max_length=MAX_ITEMS, description="owned globs")
    assignee: Short | None = None


def _create(ws: Workspace, a: CreateParams) -> Cell:
    from hive.domain.cells import create_cell

    return create_cell(
        ws,
        title=a.title,
        type=a.type,
        priority=a.priority,
        description=a.description,
        parent=a.parent,
        deps=a.deps,
        labels=a.labels,
        files=a.files,
        assignee=a.assignee,
    )


# ------------------------------------------------------------------ query


Status = Literal["open", "in_progress", "blocked", "deferred", "closed", "all"]


class QueryParams(Params):
    id: Short | None = Field(
        default=None, description="show one cell", json_schema_extra=cli_help_only
    )
    status: Short | None = Field(
        default=None, description="open|in_progress|blocked|deferred|closed|all"
    )
    type: Short | None = Field(default=None, description=TYPES, json_schema_extra=cli_help_only)
    priority: Priority | None = Field(
        default=None, description=PRIORITIES, json_schema_extra=cli_help_only
    )
    parent: Short | None = Field(
        default=None, description="its subtasks", json_schema_extra=cli_help_only
    )
    label: Short | None = Field(
        default=None, description="one label", json_schema_extra=cli_help_only
    )
    assignee: Short | None = Field(
        default=None, description="one name", json_schema_extra=cli_help_only
    )
    include_deleted: bool = False
    limit: int = Field(default=20, ge=1, le=100_000)
    all: bool = Field(
        default=False, description="every match (no limit)", json_schema_extra=cli_help_only
    )
    verbose: bool = Field(default=False, description=VERBOSE)


def _page(cells: list[Cell], verbose: bool) -> Page[Cell] | Page[CellSummary]:
    """The page as asked for (summaries unless ``verbose``), keeping its ``total``."""
    total = cells.total if isinstance(cells, Page) else None
    if verbose:
        return Page(cells, total=total)
    return Page((CellSummary.of(cell) for cell in cells), total=total)


def _query(ws: Workspace, a: QueryParams) -> CellDetail | Page[Cell] | Page[CellSummary]:
    from hive.domain.cells import list_cells
    from hive.domain.stats import show_cells

    if a.id:
        _refuse_filters_with_id(a)
        return show_cells(ws, cell_ids=[a.id])[0]
    found = list_cells(
        ws,
        status=a.status,
        type=a.type,
        priority=a.priority,
        parent=a.parent,
        label=a.label,
        assignee=a.assignee,
        include_deleted=a.include_deleted,
        limit=None if a.all else a.limit,
    )
    return _page(found, a.verbose)


ID_FILTERS = ("status", "type", "priority", "parent", "label", "assignee")


def _refuse_filters_with_id(a: QueryParams) -> None:
    """A filter given with ``id``: refused, not ignored (``id`` and ``status: open``
    answered a closed cell as if it matched)."""
    for name in ID_FILTERS:
        if getattr(a, name) is not None:
            raise InvalidInput(
                f"hive_query: id shows that one cell whatever its {name}; {name} filters a"
                f" list: leave out id to list the cells by {name}, or leave out {name} and"
                f" read the cell's {name} in the answer",
                field=name,
            )


def _show_many(ws: Workspace, ids: list[str]) -> list[CellDetail]:
    from hive.domain.stats import show_cells

    return show_cells(ws, cell_ids=ids)


LIST_FILTERS = frozenset(
    {"status", "type", "priority", "parent", "label", "assignee", "include_deleted", "limit", "all"}
    | {"verbose"}
)


# ------------------------------------------------------------------ ready


class ReadyParams(Params):
    limit: int = Field(default=10, ge=1, le=100_000)
    all: bool = Field(
        default=False, description="every ready cell", json_schema_extra=cli_help_only
    )
    claim: bool = Field(default=False, description="atomically start the first")
    verbose: bool = Field(default=False, description=VERBOSE)


def _ready(ws: Workspace, a: ReadyParams) -> Page[Cell] | Page[CellSummary]:
    from hive.domain.cells import ready

    found = ready(ws, limit=None if a.all or a.claim else a.limit, claim=a.claim)
    return _page(found, a.verbose or a.claim)


# ------------------------------------------------------------------ update & lifecycle


class UpdateParams(Params):
    id: str = Field(
        min_length=1, max_length=MAX_ID, description=ID_HELP, json_schema_extra=cli_help_only
    )
    status: Short | None = Field(
        default=None, description=STATUSES, json_schema_extra=cli_help_only
    )
    priority: Priority | None = Field(
        default=None, description=PRIORITIES, json_schema_extra=cli_help_only
    )
    type: CellType | None = None
    title: str | None = Field(default=None, max_length=MAX_TITLE)
    description: str | None = Field(default=None, max_length=MAX_TEXT)
    design: str | None = Field(default=None, max_length=MAX_TEXT)  # CLI help: UPDATE_HELPS
    acceptance: str | None = Field(default=None, max_length=MAX_TEXT)
    assignee: Short | None = Field(default=None, description="'' clears")
    append_notes: str | None = Field(default=None, max_length=MAX_TEXT)
    add_labels: list[Short] = Field(
        default_factory=list,
        max_length=MAX_LABELS,
        description="a,b: two labels",
        json_schema_extra=cli_help_only,
    )
    remove_labels: list[Short] = Field(
        default_factory=list,
        max_length=MAX_LABELS,
        description="a,b: two labels",
        json_schema_extra=cli_help_only,
    )
    files: list[Glob] | None = Field(
        default=None, max_length=MAX_ITEMS, description="owned globs (replaces)"
    )
    force: bool = Field(default=False, description="past open blockers; " + OVERRIDE)
    reason: str | None = Reason


def _update(ws: Workspace, a: UpdateParams) -> ChangedCell:
    return _update_many(ws, a, [a.id])[0]


def _updated(cell: ChangedCell, a: UpdateParams) -> UpdatedCell:
    """An agent's answer to ``hive_update``: the summary and the fields it changed
    (the whole cell, ~15 kB once notes and comments build up, is ``hive_query``'s)."""
    summary = CellSummary.of(cell).model_dump()
    now = cell.model_dump(mode="json", include=set(cell.changed) - set(summary) - {"notes"})
    return UpdatedCell(**summary, changed=list(cell.changed), **now)


class StartParams(IdParams):
    force: bool = Field(default=False, description="past open blockers (recorded)")
    reason: str | None = Reason


def _start(ws: Workspace, a: StartParams) -> Cell:
    from hive.domain.cells import start_cell

    return start_cell(ws, cell_id=a.id, force=a.force, reason=a.reason)


def _start_many(ws: Workspace, a: StartParams, ids: list[str]) -> list[Cell]:
    from hive.domain.cells import start_cells

    return start_cells(ws, cell_ids=ids, force=a.force, reason=a.reason)


def _update_many(ws: Workspace, a: UpdateParams, ids: list[str]) -> list[ChangedCell]:
    from hive.domain.cells import update_cells_reporting

    done = update_cells_reporting(
        ws,
        cell_ids=ids,
        status=a.status,
        priority=a.priority,
        title=a.title,
        description=a.description,
        assignee=a.assignee,
        append_notes=a.append_notes,
        type=a.type,
        add_labels=a.add_labels,
        remove_labels=a.remove_labels,
        files=a.files,
        force=a.force,
        reason=a.reason,
        design=a.design,
        acceptance_criteria=a.acceptance,
    )
    return [ChangedCell.of(cell, changed) for cell, changed in done]


def _close_many(ws: Workspace, a: CloseParams, ids: list[str]) -> list[Cell]:
    from hive.domain.cells import close_cells

    return close_cells(ws, cell_ids=ids, reason=a.reason, force=a.force)


def _reopen_many(ws: Workspace, a: IdParams, ids: list[str]) -> list[Cell]:
    from hive.domain.cells import reopen_cells

    return reopen_cells(ws, cell_ids=ids)


def _delete_many(ws: Workspace, a: DeleteParams, ids: list[str]) -> list[Cell]:
    from hive.domain.cells import delete_cells

    return delete_cells(ws, cell_ids=ids, force=a.force, reason=a.reason)


class CloseParams(IdParams):
    reason: str | None = Reason
    force: bool = Field(default=False, description="past open blockers; " + OVERRIDE)


def _close(ws: Workspace, a: CloseParams) -> Cell:
    from hive.domain.cells import close_cell

    return close_cell(ws, cell_id=a.id, reason=a.reason, force=a.force)


def _reopen(ws: Workspace, a: IdParams) -> Cell:
    from hive.domain.cells import reopen_cell

    return reopen_cell(ws, cell_id=a.id)


class DeleteParams(IdParams):
    force: bool = Field(default=False, description="also with live subtasks; " + OVERRIDE)
    reason: str | None = Reason


def _delete(ws: Workspace, a: DeleteParams) -> Cell:
    from hive.domain.cells import delete_cell

    return delete_cell(ws, cell_id=a.id, force=a.force, reason=a.reason)


class CommentParams(IdParams):
    text: str = Field(
        min_length=1,
        max_length=MAX_TEXT,
        description="the comment",
        json_schema_extra=cli_help_only,
    )


def _comment(ws: Workspace, a: CommentParams) -> Cell:
    from hive.domain.annotate import add_comment

    return add_comment(ws, cell_id=a.id, text=a.text)


def _commented(cell: Cell, a: CommentParams) -> CommentedCell:
    """An agent's answer to ``hive_comment``: the summary and the comment it made
    (appended last), not every comment so far."""
    return CommentedCell(**CellSummary.of(cell).model_dump(), comment=cell.comments[-1])


def _summary(cell: Cell, a: Any) -> CellSummary:
    return CellSummary.of(cell)


class ResolveParams(IdParams):
    field: Short | None = Field(default=None, description="only this field's conflicts")
    use_other: bool = Field(default=False, description="take the value the merge did not keep")
    force: bool = Field(default=False, description=OVERRIDE)
    reason: str | None = Reason


def _resolve(ws: Workspace, a: ResolveParams) -> Cell:
    from hive.domain.annotate import resolve_conflicts

    return resolve_conflicts(
        ws, cell_id=a.id, field=a.field, use_other=a.use_other, force=a.force, reason=a.reason
    )


# ------------------------------------------------------------------ dependencies


class DepParams(IdParams):
    action: Literal["add", "remove", "tree"] = "tree"
    target: Short | None = Field(default=None, description="add/remove: the other cell")
    type: Literal["blocks", "parent-child", "related", "discovered-from"] | None = Field(
        default=None, description="add: blocks if not given; remove: only this kind, else all"
    )
    force: bool = Field(default=False, description=OVERRIDE)
    reason: str | None = Reason
    direction: Literal["down", "up", "both"] = Field(
        default="down", description="tree: up = what depends on id"
    )
    reverse: bool = Field(
        default=False,
        description="what depends on ID instead (as --direction up)",
        json_schema_extra=cli_help_only,
    )


TREE_ONLY = frozenset({"direction", "reverse"})  # fields only ``dep tree`` offers


def _dep(ws: Workspace, a: DepParams) -> Cell | DependencyNode:
    from hive.domain.cells import add_dependency, dep_tree, remove_dependency

    if a.action == "tree":
        if a.reverse and a.direction == "both":
            raise InvalidInput(
                "reverse is the same as direction up: give one of them, or direction both alone",
                field="reverse",
            )
        return dep_tree(ws, cell_id=a.id, direction="up" if a.reverse else a.direction)
    _refuse_tree_options(a)
    if not a.target:
        raise InvalidInput(
            f"hive_dep {a.action} needs a target: the cell that id depends on", field="target"
        )
    if a.action == "add":
        return add_dependency(
            ws,
            cell_id=a.id,
            target=a.target,
            dep_type=a.type or "blocks",
            force=a.force,
            reason=a.reason,
        )
    return remove_dependency(
        ws, cell_id=a.id, target=a.target, dep_type=a.type, force=a.force, reason=a.reason
    )


def _refuse_tree_options(a: DepParams) -> None:
    """``reverse`` or ``direction`` given with add/remove: refused, not ignored (with
    add, an agent meaning "target waits for id" had the edge added the other way)."""
    defaults = DepParams.model_fields
    for name in sorted(TREE_ONLY, reverse=True):  # reverse, then direction
        if getattr(a, name) != defaults[name].default:
            raise InvalidInput(
                f"{name} is for action tree; {a.action} takes id (the cell that waits) and"
                " target (the cell it waits for): swap id and target for the other way round",
                field=name,
            )


class BlockedParams(Params):
    limit: int | None = Field(default=10, ge=1, le=100_000, description="null: all")
    verbose: bool = Field(default=False, description="blockers' titles")


def _blocked(ws: Workspace, a: BlockedParams) -> list[BlockedCell] | list[BlockedSummary]:
    from hive.domain.stats import blocked_cells

    found = blocked_cells(ws, limit=a.limit)
    return found if a.verbose else [cell.summary() for cell in found]


def _stats(ws: Workspace, a: NoParams) -> CellStats:
    from hive.domain.stats import cell_stats

    return cell_stats(ws)


def _globs(a: Any) -> list[str]:
    return list(a.files or [])


ID_ARG = ("id",)
# Help of the command line only: the tools' schemas are kept within their token budget
STDIN = "'-' reads standard input"
UPDATE_HELPS = {
    "description": STDIN,
    "design": f"design notes (replaces them; {STDIN})",
    "acceptance": f"acceptance criteria (replaces them; {STDIN})",
    "append_notes": STDIN,
}
UPDATE_SHORT = {
    "status": ("-s",),
    "priority": ("-p",),
    "description": ("-d",),
    "type": ("-t",),
    "add_labels": ("--add-label",),
    "remove_labels": ("--remove-label",),
}

declare(
    Operation(
        name="hive_create",
        summary="Create a cell (one commit).",
        params=CreateParams,
        result=Cell,
        run=_create,
        writes=True,
        errors=(InvalidInput, NotFound, AmbiguousId, DependencyCycle),
        patterns=_globs,
        parsers=TYPED,
        commands=(
            Command(
                ("create",),
                arguments=("title",),
                short={
                    **TYPE_SHORT,
                    "priority": ("-p",),
                    "description": ("-d",),
                    "deps": ("--dep",),
                    "labels": ("-l", "--label"),
                },
                helps={
                    "description": STDIN,
                    "deps": "TYPE:ID, e.g. blocks:hv-ab12; a,b: two (repeatable)",
                },
            ),
        ),
        help="Create a cell (one commit), or many with --from FILE (one commit for all).",
    ),
    Operation(
        name="hive_query",
        summary="Show one cell (id) or list cells by filters.",
        params=QueryParams,
        result=CellDetail | list[Cell] | list[CellSummary],
        run=_query,
        batch=lambda ws, a, ids: _show_many(ws, ids),
        writes=False,
        errors=(*LOOKUP, InvalidInput),
        parsers=PRIORITY,
        commands=(
            Command(
                ("show",),
                arguments=ID_ARG,
                required=frozenset({"id"}),
                many=True,
                hidden=LIST_FILTERS,
                help="Show cells, with the blockers still open (partial ids work when"
                " unambiguous).",
            ),
            Command(
                ("list",),
                hidden=frozenset({"id"}),
                short={
                    "status": ("-s",),
                    **TYPE_SHORT,
                    "priority": ("-p",),
                    "label": ("-l",),
                    "include_deleted": ("--deleted",),
                    "limit": ("-n",),
                },
                helps={"include_deleted": "also deleted cells (tombstones, hive delete)"},
                defaults=PERSON,
                help="List cells (open first, most urgent first; a page unless --all).\n\n"
                "When there are more, stderr says so ('showing 50 of 704 cells'), with --json"
                " too.",
            ),
        ),
    ),
    Operation(
        name="hive_ready",
        summary="Ready work, most urgent first.",
        params=ReadyParams,
        result=list[Cell] | list[CellSummary],
        run=_ready,
        writes=True,
        access="anyone",
        errors=(InvalidInput, NotRegistered),
        commands=(Command(("ready",), short={"limit": ("-n",)}, defaults=PERSON),),
        help="Cells ready to work on: open, unblocked, most urgent and oldest first.\n\n"
        "--claim atomically starts the first one that is unassigned or yours, as you (a"
        " person, or an agent by its credential; -n and --all do not apply to it). A page"
        " unless --all: when there are more, stderr says so, with --json too.",
    ),
    Operation(
        name="hive_update",
        summary="Change fields of a cell.",
        params=UpdateParams,
        result=Cell | UpdatedCell,  # an agent's answer: the summary and the fields changed
        run=_update,
        answer=_updated,
        writes=True,
        access="owner",
        errors=(*OWNED, BlockedByDependency),
        patterns=_globs,
        parsers=TYPED,
        batch=_update_many,
        commands=(
            Command(
                ("update",), arguments=ID_ARG, short=UPDATE_SHORT, helps=UPDATE_HELPS, many=True
            ),
        ),
        help="Change fields of cells (one commit for all; none changes if one is refused)."
        "\n\nA cell claimed by someone else needs --force (recorded; a coordinator also"
        " gives --reason)."
        " -s in_progress and -s closed follow start's and close's rule: refused while a"
        " blocker is open, unless --force (recorded). Values a cell already has change"
        " nothing: no commit, and it says 'nothing to change in' the cell.",
    ),
    Operation(
        name="hive_start",
        summary="Claim a cell atomically.",
        params=StartParams,
        result=Cell | CellSummary,  # an agent's answer: the summary
        run=_start,
        answer=_summary,
        batch=_start_many,
        writes=True,
        access="agent",
        errors=(*LOOKUP, AlreadyClaimed, NotRegistered, BlockedByDependency),
        commands=(Command(("start",), arguments=ID_ARG, many=True),),
        help="Claim cells (atomic: a second claimant gets 'already claimed').\n\nA cell"
        " with an open blocker is refused (see 'hive blocked') unless --force, which is"
        " recorded.",
    ),
    Operation(
        name="hive_close",
        summary="Close a cell.",
        params=CloseParams,
        result=Cell,
        run=_close,
        writes=True,
        access="owner",
        errors=(*OWNED, BlockedByDependency),
        batch=_close_many,
        commands=(Command(("close",), arguments=ID_ARG, short={"reason": ("-r",)}, many=True),),
        help="Close cells (one commit for all; none closes if one is refused).\n\nRefused"
        " while a blocking dependency is open (a blocker closed in the same command counts"
        " as closed). A cell claimed by someone else needs --force (recorded; a coordinator"
        " also gives --reason).",
    ),
    Operation(
        name="hive_reopen",
        summary="Reopen a closed cell.",
        params=IdParams,
        result=Cell,
        run=_reopen,
        batch=_reopen_many,
        writes=True,
        errors=LOOKUP,
        commands=(Command(("reopen",), arguments=ID_ARG, many=True),),
        help="Reopen closed cells (one commit for all).",
    ),
    Operation(
        name="hive_delete",
        summary="Delete (tombstone) a cell.",
        params=DeleteParams,
        result=Cell,
        run=_delete,
        writes=True,
        access="owner",
        errors=(*OWNED, Conflict),
        batch=_delete_many,
        commands=(Command(("delete",), arguments=ID_ARG, many=True),),
        help="Delete cells (kept as tombstones so merges cannot resurrect them; one commit"
        " for all, none deleted if one is refused).",
    ),
    Operation(
        name="hive_comment",
        summary="Comment on a cell.",
        params=CommentParams,
        result=Cell | CommentedCell,  # an agent's answer: the summary and the comment
        run=_comment,
        answer=_commented,
        writes=True,
        errors=(*LOOKUP, InvalidInput),
        commands=(
            Command(
                ("comment",), arguments=("id", "text"), helps={"text": f"the comment ({STDIN})"}
            ),
        ),
        help="Add a comment to a cell (merges keep the comments of both sides).",
    ),
    Operation(
        name="hive_resolve",
        summary="Clear a cell's recorded merge conflicts.",
        params=ResolveParams,
        result=Cell,
        run=_resolve,
        writes=True,
        errors=(*LOOKUP, InvalidInput),
        commands=(Command(("resolve",), arguments=ID_ARG),),
        help="Clear the merge conflicts recorded on a cell (see 'hive show ID').",
    ),
    Operation(
        name="hive_dep",
        summary="Add, remove or show (tree) a cell's dependencies.",
        params=DepParams,
        result=Cell | DependencyNode,
        run=_dep,
        writes=True,
        errors=(*LOOKUP, InvalidInput, DependencyCycle),
        commands=(
            Command(
                ("dep", "add"),
                arguments=("id", "target"),
                fixed={"action": "add"},
                required=frozenset({"target"}),
                hidden=TREE_ONLY,
                helps={"target": "the cell ID depends on (waits for)"},
                short=TYPE_SHORT,
                help="ID depends on TARGET (cycles are refused).",
            ),
            Command(
                ("dep", "remove"),
                arguments=("id", "target"),
                fixed={"action": "remove"},
                required=frozenset({"target"}),
                helps={
                    "target": "the cell ID no longer depends on",
                    "type": "only this kind (default: every kind of link to TARGET)",
                },
                hidden=TREE_ONLY,
                short=TYPE_SHORT,
                help="Remove ID's dependencies on TARGET (with --type, only that kind).",
            ),
            Command(
                ("dep", "tree"),
                arguments=ID_ARG,
                fixed={"action": "tree"},
                hidden=frozenset({"type", "target", "force", "reason"}),
                helps={"direction": "down (what ID depends on), up (what depends on ID), both"},
                help="What ID depends on, or what depends on it.",
            ),
        ),
    ),
    Operation(
        name="hive_blocked",
        summary="Cells waiting on open blockers, and which.",
        params=BlockedParams,
        result=list[BlockedCell] | list[BlockedSummary],
        run=_blocked,
        writes=False,
        commands=(
            Command(
                ("blocked",), short={"limit": ("-n",)}, defaults={"limit": None, "verbose": True}
            ),
        ),
        help="Cells waiting on open blockers, and which (most urgent first).",
    ),
    Operation(
        name="hive_stats",
        summary="Cell counts by status, type, priority, assignee; lead time.",
        params=NoParams,
        result=CellStats,
        run=_stats,
        writes=False,
        commands=(Command(("stats",)),),
        help="Counts by status, type, priority and assignee; ready, blocked; lead time.",
    ),
)
