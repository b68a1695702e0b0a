"""The shared blackboard (seed 003's ``update_blackboard``): values with a TTL.

Entries live in the local coordination store. Expiry is decided at read time: an
entry whose TTL has passed reads as null everywhere (``read_blackboard``, the
snapshot in ``query_swarm_state``, ``hive blackboard``), with no reaper needed.
Expired rows are deleted an hour later by the next write.
"""

from __future__ import annotations

import json
import time
from typing import Any

from hive.domain.context import check_key, encode_value, state_dir
from hive.domain.workspace import Workspace
from hive.errors import InvalidInput
from hive.models.seeds import BlackboardEntry, BlackboardRead, BlackboardWrite
from hive.store import coord_db

MAX_TTL = 365 * 86_400.0
PURGE_AFTER = 3600.0


def _iso(epoch: float | None) -> str | None:
    if epoch is None:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(epoch)) + f".{int(epoch % 1 * 1000):03d}Z"


def update_blackboard(
    ws: Workspace, *, key: str, value: Any, ttl: float | None = None
) -> BlackboardWrite:
    """Write ``key`` (``ttl`` seconds to live; none: until overwritten)."""
    check_key(key)
    if ttl is not None and (isinstance(ttl, bool) or not 0 < ttl <= MAX_TTL):
        raise InvalidInput(f"ttl must be between 0 and {MAX_TTL:g} seconds", field="ttl")
    text = encode_value(value)
    now = time.time()
    expires = now + ttl if ttl is not None else None
    with coord_db.write(state_dir(ws)) as db:
        previous = _live(
            db.execute("SELECT value, expires_at FROM blackboard WHERE key = ?", (key,)).fetchone(),
            now,
        )
        db.execute(
            "INSERT INTO blackboard (key, value, source_agent, written_at, ttl, expires_at)"
            " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value,"
            " source_agent = excluded.source_agent, written_at = excluded.written_at,"
            " ttl = excluded.ttl, expires_at = excluded.expires_at",
            (key, text, ws.actor, now, ttl, expires),
        )
        db.execute(
            "DELETE FROM blackboard WHERE expires_at IS NOT NULL AND expires_at < ?",
            (now - PURGE_AFTER,),
        )
    return BlackboardWrite(
        success=True,
        key=key,
        previous_value=previous,
        source_agent=ws.actor,
        ttl=ttl,
        expires_at=_iso(expires),
    )


def _live(row: Any, now: float) -> Any:
    if row is None or (row[1] is not None and row[1] <= now):
        return None
    return json.loads(row[0])


def read_blackboard(ws: Workspace, *, key: str) -> BlackboardRead:
    """The live value of ``key``; null when it is missing or expired."""
    check_key(key)
    now = time.time()
    with coord_db.read(state_dir(ws)) as db:
        row = db.execute(
            "SELECT value, source_agent, written_at, ttl, expires_at FROM blackboard WHERE key = ?",
            (key,),
        ).fetchone()
    if row is None:
        return BlackboardRead(key=key, exists=False)
    entry = _entry(key, row)
    expired = row[4] is not None and row[4] <= now
    if expired:
        return BlackboardRead(key=key, exists=False, expired=True)
    return BlackboardRead(key=key, value=entry.value, exists=True, entry=entry)


def _entry(key: str, row: Any) -> BlackboardEntry:
    value, source, written, ttl, expires = row
    return BlackboardEntry(
        key=key,
        value=json.loads(value),
        source_agent=source,
        timestamp=_iso(written) or "",
        ttl=ttl,
        expires_at=_iso(expires),
    )


def snapshot(
    ws: Workspace, *, agents: list[str] | None = None, prefix: str | None = None
) -> dict[str, BlackboardEntry | None]:
    """Every entry by key (written by ``agents``, under ``prefix``); an expired entry
    is present with the value null."""
    now = time.time()
    with coord_db.read(state_dir(ws)) as db:
        rows = db.execute(
            "SELECT key, value, source_agent, written_at, ttl, expires_at FROM blackboard"
            " ORDER BY key"
        ).fetchall()
    found: dict[str, BlackboardEntry | None] = {}
    for key, *rest in rows:
        if prefix and not key.startswith(prefix):
            continue
        if agents and rest[1] not in agents:
            continue
        expired = rest[4] is not None and rest[4] <= now
        found[key] = None if expired else _entry(key, rest)
    return found


def delete_entry(ws: Workspace, *, key: str) -> BlackboardRead:
    """Remove ``key``; returns what it held (null when missing or expired)."""
    found = read_blackboard(ws, key=key)
    with coord_db.write(state_dir(ws)) as db:
        db.execute("DELETE FROM blackboard WHERE key = ?", (key,))
    return found
