"""Exclusive reservations taken in two clones for overlapping files.

Within one clone two agents can never both hold overlapping exclusive
reservations (``reserve`` refuses). Clones that reserve offline can: the
overlap appears when their states meet (``hive sync``, or a git merge). The
rule, computed from the reservation files alone so every clone reaches the
same answer: **the earliest grant wins** (``created_at``, then agent name,
then reservation id). Patterns are compared case folded (``SRC/**`` and
``src/**`` overlap; ``foldcase.fold``), in every clone whatever its file system: a
clone whose file system ignores case folds them in its pre-commit hook, and the
answer must be the same everywhere, a function of the files alone. The other
reservation *yields*: it is kept in its holder's file, marked ``yielded_to`` the one
that won, and no longer counts (the pre-commit hook, ``reserve`` and ``hive
reservations`` treat it as not held). ``hive sync`` marks it in its merge commit and
tells both agents by mail; ``hive reservations`` lists yielded reservations; ``hive
doctor`` reports overlaps a plain git merge brought in and no sync has settled yet.
"""

from __future__ import annotations

from datetime import datetime

from hive.domain.reservations import decode_file, encode_file
from hive.domain.reservecore import RESERVATIONS_DIR, overlapping
from hive.domain.workspace import Workspace
from hive.errors import CorruptFile
from hive.git.repo import Change, Snapshot
from hive.models import utc_now
from hive.models.reservation import Contest, Override, Reservation, ReservationFile


def grant_order(item: Reservation) -> tuple[datetime, str, int, str]:
    return (item.created_at, item.agent, item.id, item.path_pattern)


def find_contests(files: dict[str, ReservationFile], now: datetime) -> list[Contest]:
    """Overlapping active exclusive reservations of different agents, in grant order:
    each later one yields to the first earlier one it overlaps. Forced grants (a
    coordinator's deliberate override) are not contests."""
    entries = sorted(
        (
            item
            for data in files.values()
            for item in data.reservations
            if item.exclusive and item.active(now) and not item.forced
        ),
        key=grant_order,
    )
    kept: list[Reservation] = []
    found: list[Contest] = []
    for item in entries:
        winner = next((k for k in kept if k.agent != item.agent and overlapping(k, item)), None)
        if winner is None:
            kept.append(item)
        else:
            found.append(Contest(kept=winner, yielded=item))
    return found


def _files_after(
    ws: Workspace, snap: Snapshot, changes: list[Change]
) -> dict[str, ReservationFile]:
    """Every readable reservation file of ``snap`` with ``changes`` applied."""
    listing = snap.listing(RESERVATIONS_DIR)
    contents: dict[str, bytes | None] = {
        path: ws.git.read_blob(sha) for path, sha in listing.items()
    }
    for change in changes:
        if change.path.startswith(RESERVATIONS_DIR + "/"):
            contents[change.path] = change.content
    files: dict[str, ReservationFile] = {}
    for path, content in contents.items():
        if content is None:
            continue
        try:
            files[path] = decode_file(content, path)
        except CorruptFile:
            continue  # untrusted files are reported by doctor and refused by reserve
    return files


def settle_contests(
    ws: Workspace, snap: Snapshot, changes: list[Change]
) -> tuple[list[Change], list[Contest]]:
    """Mark the losers of new contests in the state ``changes`` leads to.

    Returns the full list of changes (the given ones, with reservation files
    rewritten where an entry yields) and the contests settled now.
    """
    files = _files_after(ws, snap, changes)
    contests = find_contests(files, utc_now())
    if not contests:
        return changes, []
    rewritten: dict[str, ReservationFile] = {}
    for contest in contests:
        lost = contest.yielded
        path = next(p for p, data in files.items() if lost in data.reservations)
        data = rewritten.get(path, files[path])
        marker = Override(
            reservation_id=contest.kept.id,
            holder=contest.kept.agent,
            pattern=contest.kept.path_pattern,
        )
        entries = [
            item.model_copy(update={"yielded_to": marker}) if item == lost else item
            for item in data.reservations
        ]
        rewritten[path] = ReservationFile(agent=data.agent, reservations=entries)
    updated = [c for c in changes if c.path not in rewritten]
    updated += [Change(path, encode_file(data)) for path, data in sorted(rewritten.items())]
    return updated, contests


def unsettled_contests(ws: Workspace, snap: Snapshot | None = None) -> list[Contest]:
    """Overlaps in the current files that no sync has marked yet (for ``hive doctor``)."""
    return find_contests(_files_after(ws, snap or ws.snapshot(), []), utc_now())


def yielded_reservations(ws: Workspace, snap: Snapshot | None = None) -> list[Reservation]:
    """Unexpired reservations that yielded to an earlier grant from another clone."""
    now = utc_now()
    files = _files_after(ws, snap or ws.snapshot(), [])
    return sorted(
        (
            item
            for data in files.values()
            for item in data.reservations
            if item.yielded_to is not None and item.expires_at > now
        ),
        key=grant_order,
    )
