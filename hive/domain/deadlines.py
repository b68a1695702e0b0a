"""Deadlines of delegated tasks (``delegate_task``'s ``timeout``).

A cell whose ``metadata.deadline`` has passed while it is not closed is *expired*:
the ready list and ``query_swarm_state`` report it (``metadata.expired: true`` on
the ready list's copy; nothing is written)."""

from __future__ import annotations

from datetime import datetime

from hive.models import Cell
from hive.models.cell import utc_now
from hive.times import parse_time

DEADLINE = "deadline"


def deadline_of(cell: Cell) -> datetime | None:
    raw = cell.metadata.get(DEADLINE)
    if not isinstance(raw, str):
        return None
    try:
        return parse_time(raw)
    except ValueError:
        return None


def is_expired(cell: Cell, now: datetime | None = None) -> bool:
    deadline = deadline_of(cell)
    return deadline is not None and not cell.is_closed and (now or utc_now()) > deadline


def flag_expired(cells: list[Cell]) -> list[Cell]:
    """``cells`` with ``metadata.expired`` set on copies of the expired ones."""
    now = utc_now()
    return [
        cell.model_copy(update={"metadata": {**cell.metadata, "expired": True}})
        if is_expired(cell, now)
        else cell
        for cell in cells
    ]
