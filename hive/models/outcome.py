"""Outcome records: how one piece of work went, stored in ``.hive/outcomes/``."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from hive.models.base import HiveModel, Time

OutcomeSource = Literal["swarm_complete", "record_outcome", "swarm_progress", "swarm_run"]
GateState = Literal["passed", "skipped", "none"]


class Outcome(HiveModel):
    """One finished (or failed) subtask, as evidence for future decompositions."""

    id: str  # "<cell id>~<8 random base32 chars>": never collides across clones
    cell_id: str
    epic_id: str | None = None
    epic_title: str | None = None  # the epic-level task, compared with new tasks by learning
    agent: str
    title: str = ""
    strategy: str | None = None  # the epic's decomposition strategy, when known
    success: bool
    duration_seconds: float = Field(default=0.0, ge=0)
    error_count: int = Field(default=0, ge=0)
    retry_count: int = Field(default=0, ge=0)
    files_planned: list[str] = Field(default_factory=list)  # files_owned globs
    files_touched: list[str] = Field(default_factory=list)
    files_reserved: list[str] = Field(default_factory=list)  # reservations held at the end
    scope_violations: list[str] = Field(default_factory=list)
    summary: str = ""
    evaluation: dict[str, Any] | None = None
    criteria: list[str] | None = None  # evaluation criteria given to swarm_record_outcome
    gate: GateState | None = None  # the verification gate: passed, skipped (--no-gate), none
    source: OutcomeSource = "swarm_complete"
    recorded_at: Time
