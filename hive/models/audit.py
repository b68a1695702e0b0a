"""What ``hive events`` and ``hive proposals decide`` return."""

from __future__ import annotations

from pydantic import ConfigDict

from hive.models.base import HiveModel


class Event(HiveModel):
    """One line of the event log (``hive/domain/events.py``): a tool call (agent,
    tool, args digest, duration, outcome, hook runs) or an ownership override
    (``event: override``). Lines differ in their keys: every key is kept as written
    (``model_dump(exclude_unset=True)`` gives the line back)."""

    model_config = ConfigDict(extra="allow")

    ts: float | None = None
    agent: str | None = None
    tool: str | None = None
    outcome: str | None = None
    duration_ms: float | None = None


class Decided(HiveModel):
    """What an arbiter's decision did to a proposal (``no_pending_proposal``: it
    named none)."""

    path: str
    status: str
    id: str | None = None
    result: str | None = None
