"""The coordinator queue (seed 000's ``coord_*``): FIFO work items with leases.

An item is ``queued``, ``claimed`` (by one agent, until ``lease_until``) or
``done``. Nothing reaps expired leases: a claimed item whose lease has run out
counts as queued again, so ``coord_next`` hands it to the next agent and the old
holder can no longer extend or complete it once someone else has claimed it.
Every operation is one ``BEGIN IMMEDIATE`` transaction in the coordination store,
so no item is ever handed to two agents at once.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import time
from typing import Any

from hive.domain.context import check_key, current_phase, encode_value, state_dir
from hive.domain.workspace import Workspace
from hive.errors import AlreadyClaimed, Conflict, InvalidInput, NotFound
from hive.models.coordination import (
    Claimed,
    Completed,
    Enqueued,
    Extended,
    QueueCounts,
    QueueFront,
    QueueItem,
    QueueNext,
    QueueRecord,
    QueueStatus,
)
from hive.store import coord_db

DEFAULT_LEASE = 180
MAX_LEASE = 7 * 86_400
MAX_PAYLOAD_BYTES = 256_000
MAX_RESULT_BYTES = 1_000_000
_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
_COLUMNS = (
    "id, kind, payload, status, claimed_by, lease_until, result, enqueued_by, created_at, done_at"
)
_AVAILABLE = "(status = 'queued' OR (status = 'claimed' AND lease_until <= ?))"


def _now() -> float:
    return round(time.time(), 3)


def _check_lease(seconds: float, what: str) -> float:
    if isinstance(seconds, bool) or not 1 <= seconds <= MAX_LEASE:
        raise InvalidInput(f"{what} must be between 1 and {MAX_LEASE} seconds", field=what)
    return float(seconds)


def enqueue(ws: Workspace, *, kind: str, payload: Any) -> Enqueued:
    check_key(kind, "kind")
    if not isinstance(payload, dict):
        raise InvalidInput("payload must be a JSON object", field="payload")
    text = encode_value(payload, MAX_PAYLOAD_BYTES, "payload")
    item_id = "q-" + "".join(secrets.choice(_ALPHABET) for _ in range(8))
    with coord_db.write(state_dir(ws)) as db:
        db.execute(
            "INSERT INTO queue (id, kind, payload, status, enqueued_by, created_at)"
            " VALUES (?, ?, ?, 'queued', ?, ?)",
            (item_id, kind, text, ws.actor, _now()),
        )
    return Enqueued(id=item_id, kind=kind)


def next_item(ws: Workspace, *, lease_sec: float = DEFAULT_LEASE) -> QueueNext:
    """Lease the oldest available item (queued, or claimed with an expired lease)."""
    lease = _check_lease(lease_sec, "lease_sec")
    agent = ws.actor
    with coord_db.write(state_dir(ws)) as db:
        now = _now()
        row = _front(db, now)
        if row is None:
            return QueueNext(item=None)
        item_id, kind, payload = row
        until = round(now + lease, 3)
        db.execute(
            "UPDATE queue SET status = 'claimed', claimed_by = ?, lease_until = ? WHERE id = ?",
            (agent, until, item_id),
        )
    return QueueNext(
        item=QueueItem(
            id=item_id, kind=kind, payload=json.loads(payload), lease_until=until, claimed_by=agent
        )
    )


def _front(db: sqlite3.Connection, now: float) -> tuple[str, str, str] | None:
    queued = db.execute(
        "SELECT seq, id, kind, payload FROM queue WHERE status = 'queued' ORDER BY seq LIMIT 1"
    ).fetchone()
    lapsed = db.execute(
        "SELECT seq, id, kind, payload FROM queue WHERE status = 'claimed' AND lease_until <= ?"
        " ORDER BY seq LIMIT 1",
        (now,),
    ).fetchone()
    found = [row for row in (queued, lapsed) if row is not None]
    if not found:
        return None
    _, item_id, kind, payload = min(found)
    return item_id, kind, payload


def _load(db: sqlite3.Connection, item_id: str) -> tuple[Any, ...]:
    check_key(item_id, "id")
    row = db.execute(f"SELECT {_COLUMNS} FROM queue WHERE id = ?", (item_id,)).fetchone()
    if row is None:
        raise NotFound(f"no queue item {item_id!r}", id=item_id)
    return tuple(row)


def _available(
    db: sqlite3.Connection, item_id: str, agent: str, now: float, verb: str
) -> tuple[Any, ...]:
    """The item's row, unless it is done or another agent holds a live lease on it."""
    row = _load(db, item_id)
    status, holder, until = row[3:6]
    if status == "done":
        raise Conflict(f"queue item {item_id} is already done: take the next item", id=item_id)
    if status == "claimed" and holder != agent and until > now:
        raise AlreadyClaimed(
            f"queue item {item_id} is claimed by {holder} for {until - now:.0f}s more;"
            f" only the holder can {verb} it: take the next item instead, or try again"
            " once the lease ends",
            id=item_id,
            claimed_by=holder,
            lease_until=until,
        )
    return row


def claim(ws: Workspace, *, id: str, lease_sec: float = DEFAULT_LEASE) -> Claimed:
    """Lease one item by id: refused when it is done or another agent's lease is live."""
    lease = _check_lease(lease_sec, "lease_sec")
    agent = ws.actor
    with coord_db.write(state_dir(ws)) as db:
        now = _now()
        kind = _available(db, id, agent, now, "claim")[1]
        until = round(now + lease, 3)
        db.execute(
            "UPDATE queue SET status = 'claimed', claimed_by = ?, lease_until = ? WHERE id = ?",
            (agent, until, id),
        )
    return Claimed(id=id, kind=kind, lease_until=until, claimed_by=agent)


def complete(ws: Workspace, *, id: str, result: Any = None) -> Completed:
    """Mark an item done with its result. Refused when another agent holds a live lease
    on it (or, after its lease ran out, has claimed it since)."""
    text = encode_value(result, MAX_RESULT_BYTES, "result")
    agent = ws.actor
    with coord_db.write(state_dir(ws)) as db:
        now = _now()
        _available(db, id, agent, now, "complete")
        db.execute(
            "UPDATE queue SET status = 'done', result = ?, done_at = ?, claimed_by = ?,"
            " lease_until = NULL WHERE id = ?",
            (text, now, agent, id),
        )
    return Completed(id=id)


def extend(ws: Workspace, *, id: str, extend_sec: float) -> Extended:
    """Lengthen the caller's lease (from now, if it already ran out and nobody took it)."""
    extra = _check_lease(extend_sec, "extend_sec")
    agent = ws.actor
    with coord_db.write(state_dir(ws)) as db:
        now = _now()
        # done, or another agent's live lease: refused as coord_claim/coord_complete are
        _, _, _, status, holder, until, *_ = _available(db, id, agent, now, "extend")
        if status != "claimed" or holder != agent:
            who = f"claimed by {holder}, whose lease ran out" if status == "claimed" else status
            raise Conflict(
                f"queue item {id} is {who}, not claimed by {agent}: claim it first (coord_claim)",
                id=id,
                status=status,
            )
        until = round(max(until or now, now) + extra, 3)
        db.execute("UPDATE queue SET lease_until = ? WHERE id = ?", (until, id))
    return Extended(id=id, lease_until=until)


def status(ws: Workspace) -> QueueStatus:
    """Queue length (items available now), the item ``coord_next`` would hand out,
    counts by state (an expired lease counts as queued) and the current phase."""
    with coord_db.read(state_dir(ws)) as db:
        now = _now()
        counts = QueueCounts(
            queued=db.execute(f"SELECT count(*) FROM queue WHERE {_AVAILABLE}", (now,)).fetchone()[
                0
            ],
            claimed=db.execute(
                "SELECT count(*) FROM queue WHERE status = 'claimed' AND lease_until > ?", (now,)
            ).fetchone()[0],
            done=db.execute("SELECT count(*) FROM queue WHERE status = 'done'").fetchone()[0],
        )
        row = _front(db, now)
    front = None
    if row is not None:
        front = QueueFront(id=row[0], kind=row[1], payload=json.loads(row[2]), status="queued")
    return QueueStatus(length=counts.queued, front=front, counts=counts, phase=current_phase(ws))


def list_items(ws: Workspace, *, status: str | None = None, limit: int = 100) -> list[QueueRecord]:
    """Items oldest first, for people (``hive queue list``)."""
    if status not in (None, "queued", "claimed", "done"):
        raise InvalidInput(f"status must be queued, claimed or done, got {status!r}")
    with coord_db.read(state_dir(ws)) as db:
        rows = db.execute(f"SELECT {_COLUMNS} FROM queue ORDER BY seq").fetchall()
    now = _now()
    records = [_record(row, now) for row in rows]
    return [r for r in records if status is None or r.status == status][:limit]


def _record(row: tuple[Any, ...], now: float) -> QueueRecord:
    item_id, kind, payload, state, holder, until, result, by, created, done = row
    expired = state == "claimed" and until is not None and until <= now
    return QueueRecord(
        id=item_id,
        kind=kind,
        payload=json.loads(payload),
        status="queued" if expired else state,
        claimed_by=holder,
        lease_until=until,
        result=json.loads(result) if result is not None else None,
        enqueued_by=by,
        created_at=created,
        done_at=done,
        lease_expired=expired,
    )
