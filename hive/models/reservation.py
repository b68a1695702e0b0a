"""File reservations: who may edit what, until when."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from hive.models.base import HiveModel, Time


class Override(HiveModel):
    """Another agent's reservation that a coordinator's ``force`` overrode."""

    reservation_id: int
    holder: str
    pattern: str


class Reservation(HiveModel):
    """One reserved glob pattern held by one agent."""

    id: int = Field(ge=1)
    agent: str
    path_pattern: str
    exclusive: bool = True
    reason: str | None = None
    cell: str | None = None
    created_at: Time
    expires_at: Time
    forced: bool = False
    overrides: list[Override] = Field(default_factory=list)
    # Set when this grant met an earlier overlapping grant from another clone at a
    # sync: it yielded (earliest grant wins) and no longer counts (hive.domain.contest).
    yielded_to: Override | None = None
    # Set when a merge of two clones' copies of the agent's file found this id also
    # given to another grant: the earliest grant kept the number, this one took the
    # next free one (hive.domain.merge). A release by the old number is then refused as
    # ambiguous rather than releasing the wrong one.
    renumbered_from: int | None = None

    def active(self, now: datetime) -> bool:
        return self.expires_at > now and self.yielded_to is None


class ReservationSummary(HiveModel):
    """A reservation in a list, as an agent gets it by default (the whole record with
    ``verbose``): who holds which pattern, for which cell, until when."""

    id: int
    agent: str
    path_pattern: str
    exclusive: bool
    cell: str | None = None
    expires_at: Time

    @classmethod
    def of(cls, item: Reservation) -> ReservationSummary:
        return cls.model_validate({name: getattr(item, name) for name in cls.model_fields})


class ReservationFile(HiveModel):
    """``.hive/reservations/<agent>.yaml``: one agent's reservations."""

    agent: str
    reservations: list[Reservation] = Field(default_factory=list)


class ConflictDetail(HiveModel):
    requested: str
    holder: str
    pattern: str
    exclusive: bool
    cell: str | None = None
    expires_at: Time
    reservation_id: int
    branch: str | None = None  # held in another worktree (on this branch)


class ReserveResult(HiveModel):
    granted: list[Reservation]
    renewed: list[int] = Field(default_factory=list)
    overridden: list[ConflictDetail] = Field(default_factory=list)


class ReservationProblem(HiveModel):
    """A reservation file that cannot be trusted (its reservations cannot be enforced)."""

    path: str
    message: str


class ReleaseResult(HiveModel):
    released: list[Reservation]
    not_found: list[str] = Field(default_factory=list)


class Contest(HiveModel):
    """Overlapping exclusive reservations of two agents, granted in different clones:
    the earliest grant is ``kept``, the other ``yielded`` (see hive.domain.contest)."""

    kept: Reservation
    yielded: Reservation

    @property
    def key(self) -> str:
        """The same string in every clone (one notice per contest)."""
        return f"contest:{_ident(self.kept)}:{_ident(self.yielded)}"

    def explanation(self) -> str:
        kept, lost = self.kept, self.yielded
        return (
            f"{kept.agent} and {lost.agent} were both granted exclusive reservations for"
            f" overlapping files in different clones: {kept.path_pattern!r} (#{kept.id},"
            f" granted {_stamp(kept.created_at)}) and {lost.path_pattern!r} (#{lost.id},"
            f" granted {_stamp(lost.created_at)}). The earliest grant wins: {kept.agent}"
            f" keeps it and {lost.agent}'s reservation no longer counts. {lost.agent}:"
            f" coordinate with {kept.agent} before editing those files, or reserve others."
        )


def _stamp(value: datetime) -> str:
    return value.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _ident(item: Reservation) -> str:
    return f"{item.agent}#{item.id}@{_stamp(item.created_at)}"
