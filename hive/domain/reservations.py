"""File reservations that are enforced, not advisory.

Each agent's reservations live in ``.hive/reservations/<agent>.yaml`` on the
working branch, so ``swarm_complete`` can release them in the same commit
that closes the cell. A request is checked, pattern against pattern, against
every other agent's active reservation inside the write transaction, so two
agents can never both be granted intersecting exclusive patterns. A
conflicting request is refused with ``reservation_conflict``; only a
coordinator may ``force`` it, and the override is recorded.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from pydantic import ValidationError

from hive.domain.globs import normalize_pattern, patterns_intersect
from hive.domain.workspace import Workspace
from hive.errors import (
    CorruptFile,
    InvalidInput,
    NotFound,
    PathOutsideRepository,
    PermissionDenied,
    ReservationConflict,
)
from hive.git.repo import Change, Snapshot, blob_sha_of, format_message
from hive.models import utc_now
from hive.models.reservation import (
    ConflictDetail,
    ReleaseResult,
    Reservation,
    ReservationFile,
    ReserveResult,
)
from hive.store.yamlio import dumps, load_mapping

RESERVATIONS_DIR = ".hive/reservations"
GLOB_CHARS = re.compile(r"[*?\[{\\]")
MAX_TTL = 7 * 24 * 3600
DEFAULT_COORDINATORS = ("coordinator",)
BLOB_CACHE = "reservation_blobs"


# ------------------------------------------------------------------ storage


def reservation_path(agent: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9._@+-]", "_", agent)
    return f"{RESERVATIONS_DIR}/{slug}.yaml"


def encode_file(data: ReservationFile) -> bytes:
    document: dict[str, Any] = {"agent": data.agent, "reservations": []}
    for item in data.reservations:
        entry = item.model_dump(mode="json", exclude_none=True)
        if not entry.get("forced"):
            entry.pop("forced", None)
        entry["created_at"] = _stamp(item.created_at)
        entry["expires_at"] = _stamp(item.expires_at)
        document["reservations"].append(entry)
    return dumps(document).encode("utf-8")


def _stamp(value: datetime) -> str:
    from hive.store.cells import format_time

    return format_time(value)


def decode_file(content: bytes, path: str) -> ReservationFile:
    mapping = load_mapping(content.decode("utf-8", errors="replace"), path)
    try:
        return ReservationFile.model_validate(mapping)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        raise CorruptFile(f"{path}: invalid field {where!r}: {error['msg']}", path=path) from None


def load_all(ws: Workspace, snap: Snapshot) -> dict[str, ReservationFile]:
    """Every agent's reservation file at ``snap`` (unreadable files are skipped)."""
    cache: dict[str, ReservationFile | None] = ws.state.setdefault(BLOB_CACHE, {})
    files: dict[str, ReservationFile] = {}
    for path, sha in snap.listing(RESERVATIONS_DIR).items():
        if sha not in cache:
            try:
                cache[sha] = decode_file(ws.git.read_blob(sha), path)
            except CorruptFile:
                cache[sha] = None
        parsed = cache[sha]
        if parsed is not None:
            files[parsed.agent] = parsed
    return files


def active_reservations(files: dict[str, ReservationFile], now: datetime) -> list[Reservation]:
    return [r for data in files.values() for r in data.reservations if r.active(now)]


# ------------------------------------------------------------------ paths


def normalize_request(ws: Workspace, path: str) -> str:
    """A reservation pattern relative to the repository root, in canonical form.

    Absolute paths inside the repository are made relative; an existing
    directory named without a glob means everything below it.
    """
    raw = path.strip()
    if os.path.isabs(raw):
        full = os.path.normpath(raw)
        root = os.path.normpath(ws.root)
        if full != root and not full.startswith(root + os.sep):
            raise PathOutsideRepository(f"{path!r} is outside the repository {ws.root}")
        raw = os.path.relpath(full, root).replace(os.sep, "/")
        if raw == ".":
            raw = "**"
    pattern = normalize_pattern(raw)
    if not GLOB_CHARS.search(pattern) and os.path.isdir(os.path.join(ws.root, pattern)):
        pattern = f"{pattern}/**"
    return pattern


@functools.lru_cache(maxsize=8192)
def literal_prefix(pattern: str) -> str:
    match = GLOB_CHARS.search(pattern)
    return pattern if match is None else pattern[: match.start()]


def may_intersect(a: str, b: str) -> bool:
    """Cheap necessary condition: the literal prefixes must be compatible."""
    pa, pb = literal_prefix(a), literal_prefix(b)
    return pa.startswith(pb) or pb.startswith(pa)


def conflicts_with(requested: str, exclusive: bool, held: Reservation) -> bool:
    if not exclusive and not held.exclusive:
        return False
    return may_intersect(requested, held.path_pattern) and patterns_intersect(
        requested, held.path_pattern
    )


# ------------------------------------------------------------------ operations


def reserve(
    ws: Workspace,
    *,
    paths: Sequence[str],
    reason: str | None = None,
    exclusive: bool = True,
    ttl_seconds: int = 3600,
    cell: str | None = None,
    force: bool = False,
) -> ReserveResult:
    """Reserve glob patterns for the actor, or refuse with the conflicts."""
    agent = ws.actor
    if not paths:
        raise InvalidInput("give at least one path or pattern to reserve")
    if not 1 <= ttl_seconds <= MAX_TTL:
        raise InvalidInput(f"ttl_seconds must be between 1 and {MAX_TTL}, got {ttl_seconds}")
    patterns = list(dict.fromkeys(normalize_request(ws, p) for p in paths))
    cell_id = _resolve_cell(ws, cell)

    def plan(snap: Snapshot) -> tuple[list[Change], str, Any]:
        if force:
            _require_coordinator(ws, snap, agent)
        now = utc_now()
        files = load_all(ws, snap)
        found = _conflicts(files, agent, patterns, exclusive, now)
        if found and not force:
            raise _conflict_error(found)
        mine = _pruned(files.get(agent), agent, now)
        result = _grant(mine, patterns, exclusive, reason, cell_id, ttl_seconds, now, files, found)
        change = file_change(ws, mine)
        verb = "force-reserve" if force and found else "reserve"
        message = _message(ws, verb, f"{agent} {', '.join(patterns)}", cell_id)
        return [change], message, result

    outcome: ReserveResult = ws.write_files(plan).result
    return outcome


def _grant(
    mine: ReservationFile,
    patterns: list[str],
    exclusive: bool,
    reason: str | None,
    cell_id: str | None,
    ttl_seconds: int,
    now: datetime,
    files: dict[str, ReservationFile],
    found: list[ConflictDetail],
) -> ReserveResult:
    expires = now + timedelta(seconds=ttl_seconds)
    next_id = 1 + max((r.id for data in files.values() for r in data.reservations), default=0)
    granted: list[Reservation] = []
    renewed: list[int] = []
    for pattern in patterns:
        existing = next((r for r in mine.reservations if r.path_pattern == pattern), None)
        values = {
            "exclusive": exclusive,
            "reason": reason,
            "cell": cell_id,
            "expires_at": expires,
            "forced": bool(found),
        }
        if existing is not None:
            updated = existing.model_copy(update=values)
            mine.reservations[mine.reservations.index(existing)] = updated
            granted.append(updated)
            renewed.append(existing.id)
            continue
        item = Reservation(
            id=next_id, agent=mine.agent, path_pattern=pattern, created_at=now, **values
        )
        next_id += 1
        mine.reservations.append(item)
        granted.append(item)
    return ReserveResult(granted=granted, renewed=renewed, overridden=found)


def _pruned(data: ReservationFile | None, agent: str, now: datetime) -> ReservationFile:
    if data is None:
        return ReservationFile(agent=agent)
    return ReservationFile(
        agent=agent, reservations=[r for r in data.reservations if r.active(now)]
    )


def _conflicts(
    files: dict[str, ReservationFile],
    agent: str,
    patterns: Iterable[str],
    exclusive: bool,
    now: datetime,
) -> list[ConflictDetail]:
    found = []
    others = [r for r in active_reservations(files, now) if r.agent != agent]
    for pattern in patterns:
        for held in others:
            if conflicts_with(pattern, exclusive, held):
                found.append(
                    ConflictDetail(
                        requested=pattern,
                        holder=held.agent,
                        pattern=held.path_pattern,
                        exclusive=held.exclusive,
                        cell=held.cell,
                        expires_at=held.expires_at,
                        reservation_id=held.id,
                    )
                )
    return found


def _conflict_error(found: list[ConflictDetail]) -> ReservationConflict:
    first = found[0]
    where = f" for {first.cell}" if first.cell else ""
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    message = (
        f"{first.requested} conflicts with {first.pattern} reserved by {first.holder}{where}"
        f" until {_stamp(first.expires_at)}{more}"
    )
    return ReservationConflict(message, conflicts=[c.model_dump(mode="json") for c in found])


def _require_coordinator(ws: Workspace, snap: Snapshot, agent: str) -> None:
    extra = ws.config(snap).extra_settings()
    coordinators = extra.get("coordinators") or list(DEFAULT_COORDINATORS)
    if agent not in coordinators:
        raise PermissionDenied(
            f"only a coordinator ({', '.join(coordinators)}) may force a reservation;"
            f" {agent} is not one"
        )


def _resolve_cell(ws: Workspace, cell: str | None) -> str | None:
    if cell is None:
        return None
    from hive.domain.cells import get_cell

    return get_cell(ws.cells(), cell).id


def _message(ws: Workspace, verb: str, subject: str, cell_id: str | None) -> str:
    trailers = [("Hive-Cell", cell_id)] if cell_id else []
    trailers += [("Hive-Agent", ws.actor), ("Hive-Event", verb)]
    return format_message(f"hive: {verb} {subject}", trailers)


def release(
    ws: Workspace,
    *,
    paths: Sequence[str] | None = None,
    reservation_ids: Sequence[int] | None = None,
) -> ReleaseResult:
    """Release the actor's reservations: given patterns/ids, or all of them."""
    agent = ws.actor
    wanted_patterns = [normalize_request(ws, p) for p in paths or []]
    wanted_ids = list(reservation_ids or [])

    def plan(snap: Snapshot) -> tuple[list[Change], str, Any]:
        now = utc_now()
        files = load_all(ws, snap)
        mine = _pruned(files.get(agent), agent, now)
        released, kept, missing = split_release(mine.reservations, wanted_patterns, wanted_ids)
        if (wanted_patterns or wanted_ids) and not released:
            raise NotFound(f"{agent} holds no active reservation matching {', '.join(missing)}")
        current = files.get(agent)
        if current is None or (not released and len(current.reservations) == len(kept)):
            return [], "", ReleaseResult(released=[], not_found=missing)
        change = release_change(agent, kept, ws)
        subject = f"{agent} {', '.join(r.path_pattern for r in released) or '(expired)'}"
        return (
            [change],
            _message(ws, "release", subject, None),
            ReleaseResult(released=released, not_found=missing),
        )

    outcome: ReleaseResult = ws.write_files(plan).result
    return outcome


def split_release(
    held: list[Reservation], patterns: list[str], ids: list[int]
) -> tuple[list[Reservation], list[Reservation], list[str]]:
    """(released, kept, requested-but-not-held) for a release request."""
    if not patterns and not ids:
        return list(held), [], []
    released = [r for r in held if r.path_pattern in patterns or r.id in ids]
    kept = [r for r in held if r not in released]
    held_patterns = {r.path_pattern for r in held}
    held_ids = {r.id for r in held}
    missing = [p for p in patterns if p not in held_patterns]
    missing += [f"#{i}" for i in ids if i not in held_ids]
    return released, kept, missing


def release_change(agent: str, kept: list[Reservation], ws: Workspace | None = None) -> Change:
    """The file change that leaves ``agent`` holding only ``kept``."""
    if not kept:
        return Change(reservation_path(agent), None)
    return file_change(ws, ReservationFile(agent=agent, reservations=kept))


def file_change(ws: Workspace | None, data: ReservationFile) -> Change:
    """The change that stores ``data``; remembers it parsed so it is never re-read."""
    content = encode_file(data)
    if ws is not None:
        cache: dict[str, ReservationFile | None] = ws.state.setdefault(BLOB_CACHE, {})
        # Reservations are never mutated (renewal copies), so sharing them is safe.
        held = list(data.reservations)
        cache[blob_sha_of(content)] = ReservationFile(agent=data.agent, reservations=held)
    return Change(reservation_path(data.agent), content)


def list_reservations(
    ws: Workspace, *, agent: str | None = None, include_expired: bool = False
) -> list[Reservation]:
    """Active reservations (all agents, or one), soonest expiry first."""
    now = utc_now()
    files = load_all(ws, ws.snapshot())
    found = [
        r
        for data in files.values()
        for r in data.reservations
        if (include_expired or r.active(now)) and (agent is None or r.agent == agent)
    ]
    return sorted(found, key=lambda r: (r.expires_at, r.id))
