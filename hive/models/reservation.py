"""File reservations: who may edit what, until when."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field


class Override(BaseModel):
    """Another agent's reservation that a coordinator's ``force`` overrode."""

    reservation_id: int
    holder: str
    pattern: str


class Reservation(BaseModel):
    """One reserved glob pattern held by one agent."""

    id: int = Field(ge=1)
    agent: str
    path_pattern: str
    exclusive: bool = True
    reason: str | None = None
    cell: str | None = None
    created_at: datetime
    expires_at: datetime
    forced: bool = False
    overrides: list[Override] = Field(default_factory=list)

    def active(self, now: datetime) -> bool:
        return self.expires_at > now


class ReservationFile(BaseModel):
    """``.hive/reservations/<agent>.yaml``: one agent's reservations."""

    agent: str
    reservations: list[Reservation] = Field(default_factory=list)


class ConflictDetail(BaseModel):
    requested: str
    holder: str
    pattern: str
    exclusive: bool
    cell: str | None = None
    expires_at: datetime
    reservation_id: int
    branch: str | None = None  # held in another worktree (on this branch)


class ReserveResult(BaseModel):
    granted: list[Reservation]
    renewed: list[int] = Field(default_factory=list)
    overridden: list[ConflictDetail] = Field(default_factory=list)


class ReservationProblem(BaseModel):
    """A reservation file that cannot be trusted (its reservations cannot be enforced)."""

    path: str
    message: str


class ReleaseResult(BaseModel):
    released: list[Reservation]
    not_found: list[str] = Field(default_factory=list)
