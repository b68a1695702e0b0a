"""Cells (issues) and their dependencies."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, Literal, TypeVar, get_args

from pydantic import (
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    field_validator,
    model_serializer,
)

from hive.models.base import HiveModel, Time
from hive.text import code_point, first_control, without_control
from hive.times import utc_now as utc_now

CellType = Literal["bug", "feature", "task", "epic", "chore"]
Status = Literal["open", "in_progress", "blocked", "deferred", "closed"]
DependencyType = Literal["blocks", "parent-child", "related", "discovered-from"]

CELL_TYPES: tuple[str, ...] = get_args(CellType)
STATUSES: tuple[str, ...] = get_args(Status)
DEPENDENCY_TYPES: tuple[str, ...] = get_args(DependencyType)


def without_control_chars(text: str) -> str:
    """``text`` with each control character and invisible format character shown as
    ``?`` (for commit subjects)."""
    return without_control(text)


def check_title(title: str) -> None:
    """Refuse titles that would inject terminal escapes or break one-line output."""
    found = first_control(title)
    if found is not None:
        raise ValueError(f"title must not contain control characters (found {code_point(found)})")


def first_error(exc: ValidationError) -> tuple[str, str]:
    """(dotted field path, one-line message) of the first error in ``exc``.

    pydantic's own text is multi-line, ends in a documentation URL and prefixes
    messages of custom validators with ``Value error, ``; none of that is useful
    to a person or an agent.
    """
    error = exc.errors(include_url=False)[0]
    where = ".".join(str(part) for part in error["loc"])
    return where, str(error["msg"]).removeprefix("Value error, ")


def _as_utc(value: datetime) -> datetime:
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


class Dependency(HiveModel):
    """An edge from the owning cell to ``target``.

    ``blocks``: the target must be closed before the owning cell is ready.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    type: DependencyType
    target: str = Field(min_length=1)


class Comment(HiveModel):
    """A comment on a cell. Comments are only ever added, and a merge keeps the
    comments of both sides (identified by ``id``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1)
    author: str = ""
    text: str
    created_at: Time

    @field_validator("created_at")
    @classmethod
    def _normalise_time(cls, value: datetime) -> datetime:
        return _as_utc(value)


class MergeConflict(HiveModel):
    """A field both sides of a merge changed differently: the merge rules kept one
    value (``kept``) and this records the other, so nothing is lost silently.
    ``hive doctor`` reports it, ``hive show`` displays it, ``hive resolve`` clears it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    field: str
    kept: Any = None
    other: Any = None


class Cell(HiveModel):
    """One unit of tracked work. An epic is a cell of type ``epic``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    title: str = Field(min_length=1, max_length=500)
    description: str = ""
    type: CellType = "task"
    status: Status = "open"
    priority: int = Field(default=2, ge=0, le=4)
    labels: list[str] = Field(default_factory=list)
    assignee: str | None = None
    parent: str | None = None
    dependencies: list[Dependency] = Field(default_factory=list)
    files_owned: list[str] = Field(default_factory=list)
    design: str = ""
    acceptance_criteria: str = ""
    notes: str = ""
    comments: list[Comment] = Field(default_factory=list)
    created_at: Time
    created_by: str = ""
    updated_at: Time
    started_at: Time | None = None
    closed_at: Time | None = None
    close_reason: str | None = None
    deleted_at: Time | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    conflicts: list[MergeConflict] = Field(default_factory=list)

    @field_validator("created_at", "updated_at", "started_at", "closed_at", "deleted_at")
    @classmethod
    def _normalise_time(cls, value: datetime | None) -> datetime | None:
        return None if value is None else _as_utc(value)

    @field_validator("title")
    @classmethod
    def _strip_title(cls, value: str) -> str:
        stripped = value.strip()
        if not stripped:
            raise ValueError("title must not be blank")
        if "\n" in stripped:
            raise ValueError("title must be a single line")
        return stripped

    @property
    def is_closed(self) -> bool:
        return self.status == "closed"

    @property
    def is_deleted(self) -> bool:
        return self.deleted_at is not None

    def blockers(self) -> list[str]:
        """Targets of this cell's ``blocks`` dependencies."""
        return [dep.target for dep in self.dependencies if dep.type == "blocks"]


_Item = TypeVar("_Item")


class Page(list[_Item]):
    """One page of a longer list: its items (it is the list, as a surface shows it),
    and ``total``, how many match in all (a person is told what the page leaves out)."""

    def __init__(self, items: Iterable[_Item] = (), *, total: int | None = None) -> None:
        super().__init__(items)
        self.total = len(self) if total is None else total


class CellSummary(HiveModel):
    """A cell in a page of results, as an agent gets it by default (details with
    ``verbose``): what it needs to choose, at about a tenth of the bytes."""

    id: str
    title: str
    status: Status
    priority: int
    type: CellType
    assignee: str | None = None
    expired: Literal[True] | None = Field(
        default=None, description="a delegated task past its deadline (absent otherwise)"
    )

    @classmethod
    def of(cls, cell: Cell) -> CellSummary:
        return cls(
            id=cell.id,
            title=cell.title,
            status=cell.status,
            priority=cell.priority,
            type=cell.type,
            assignee=cell.assignee,
            expired=True if cell.metadata.get("expired") is True else None,
        )

    @model_serializer(mode="wrap")
    def _flagged_only(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """No ``expired`` key unless the deadline passed (the summary stays small)."""
        shown: dict[str, Any] = handler(self)
        if shown.get("expired") is None:
            shown.pop("expired", None)
        return shown


class ChangedCell(Cell):
    """A cell as an update left it, with the fields the update really changed
    (``changed``: not stored, not in its JSON; [] when it asked for what the cell had)."""

    changed: list[str] = Field(default_factory=list, exclude=True)

    @classmethod
    def of(cls, cell: Cell, changed: list[str]) -> ChangedCell:
        return cls.model_construct(cell.model_fields_set, **dict(cell), changed=changed)


class UpdatedCell(CellSummary):
    """``hive_update``'s answer to an agent: the cell's summary, the fields the call
    changed (none when it asked for what the cell already had: no commit) and each
    one's value now (extra keys: ``labels``, ``description``, ``files_owned`` ...; not the notes,
    which grow with every report). The whole cell grew with its notes and comments;
    ``hive_query`` with its id gives it."""

    model_config = ConfigDict(defer_build=True, extra="allow")

    changed: list[str]


class PlannedCell(CellSummary):
    """``hive_create_epic``'s answer to an agent, one per record: the summary, and what
    the plan became (the parent, the subtask's ``files`` as ``files_owned``, its
    dependencies as ``blocks`` edges to the subtasks' new ids); not the descriptions
    the agent sent itself."""

    parent: str | None = None
    files_owned: list[str] = Field(default_factory=list)
    dependencies: list[Dependency] = Field(default_factory=list)

    @classmethod
    def of(cls, cell: Cell) -> PlannedCell:
        summary = CellSummary.of(cell).model_dump()
        return cls(
            **summary,
            parent=cell.parent,
            files_owned=cell.files_owned,
            dependencies=cell.dependencies,
        )


class CommentedCell(CellSummary):
    """``hive_comment``'s answer to an agent: the cell's summary and the comment made."""

    comment: Comment
