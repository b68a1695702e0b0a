"""What the watching views (``hive serve``) show: boards, epics, reservations, mail, outcomes."""

from __future__ import annotations

from pydantic import Field

from hive.models.base import HiveModel, Time
from hive.models.cell import Cell
from hive.models.mail import Importance
from hive.models.reservation import Reservation, ReservationProblem
from hive.models.results import EpicStatus, LogEntry
from hive.models.swarm import Review


class BoardFilters(HiveModel):
    """The filters of a board request; ``None`` means "any"."""

    status: str | None = None
    type: str | None = None
    priority: int | None = None
    assignee: str | None = None
    label: str | None = None
    text: str | None = None
    page: int = 1
    per_page: int = 50


class BoardColumn(HiveModel):
    """One status column: how many cells match and the page of them shown."""

    status: str
    total: int
    page: int
    pages: int
    cells: list[Cell]


class BoardPage(HiveModel):
    filters: BoardFilters
    total: int
    columns: list[BoardColumn]
    assignees: list[str] = Field(default_factory=list)  # every assignee, for the filter list
    labels: list[str] = Field(default_factory=list)
    problems: list[str] = Field(default_factory=list)  # cell files that could not be read


class EpicSummary(HiveModel):
    epic: Cell
    total: int
    closed: int
    percent_complete: int


class Edge(HiveModel):
    """``source`` waits for ``target`` (a ``blocks`` dependency) or relates to it."""

    source: str
    target: str
    type: str


class EpicView(HiveModel):
    status: EpicStatus
    edges: list[Edge]
    outside: list[Cell] = Field(default_factory=list)  # blockers that are not subtasks


class HeldReservation(HiveModel):
    """A reservation as a supervisor sees it: expired or stale ones are marked."""

    reservation: Reservation
    expired: bool
    cell_status: str | None = None
    stale: str | None = None  # why it looks stale (expired, cell closed), None if it does not


class AgentReservations(HiveModel):
    agent: str
    reservations: list[HeldReservation]


class ReservationsView(HiveModel):
    now: Time
    agents: list[AgentReservations]
    problems: list[ReservationProblem] = Field(default_factory=list)


class MailThread(HiveModel):
    """A conversation: every message with one thread id (a message without one is alone)."""

    key: str
    thread_id: str | None
    subject: str
    participants: list[str]
    count: int
    last_at: Time
    importance: Importance = "normal"


class ThreadMessage(HiveModel):
    id: int
    sender: str
    to: list[str]
    subject: str
    body: str
    thread_id: str | None = None
    importance: Importance = "normal"
    ack_required: bool = False
    sent_at: Time
    read_by: list[str] = Field(default_factory=list)
    acked_by: list[str] = Field(default_factory=list)


class ThreadView(HiveModel):
    key: str
    thread_id: str | None
    messages: list[ThreadMessage]


class CellView(HiveModel):
    cell: Cell
    history: list[LogEntry]
    review: Review
    children: list[Cell] = Field(default_factory=list)
    blockers: list[Cell] = Field(default_factory=list)
    reservations: list[Reservation] = Field(default_factory=list)


class OutcomePoint(HiveModel):
    """Outcomes of one strategy recorded in one time bucket."""

    start: Time
    count: int
    successes: int
    success_rate: float
    mean_duration: float
    median_duration: float


class StrategySeries(HiveModel):
    strategy: str
    total: int
    successes: int
    success_rate: float
    points: list[OutcomePoint]


class OutcomeStats(HiveModel):
    bucket: str  # day, week or month
    total: int
    strategies: list[StrategySeries]
