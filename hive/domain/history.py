"""History from commit trailers: which commits touched a cell."""

from __future__ import annotations

from hive.domain.cells import resolve_id
from hive.domain.workspace import Workspace
from hive.errors import NotFound
from hive.models.results import LogEntry


def cell_log(
    ws: Workspace, *, cell_id: str | None = None, limit: int | None = None
) -> list[LogEntry]:
    """hive commits (newest first), only those carrying ``Hive-Cell: <id>`` if an id is given."""
    wanted = None
    known = True
    if cell_id is not None:
        try:
            wanted = resolve_id(ws.cells(), cell_id)
        except NotFound:  # a cell that no longer exists may still have history
            wanted, known = cell_id.strip().lower(), False
    entries: list[LogEntry] = []
    for commit in ws.git.iter_commits():
        trailers = commit.trailers()
        cells = trailers.get("Hive-Cell", [])
        if "Hive-Event" not in trailers and not cells:
            continue
        if wanted is not None and wanted not in cells:
            continue
        entries.append(
            LogEntry(
                commit=commit.sha,
                time=commit.time,
                author=commit.author,
                subject=commit.subject,
                cells=cells,
                agent=_first(trailers.get("Hive-Agent")),
                event=_first(trailers.get("Hive-Event")),
            )
        )
        if limit is not None and len(entries) >= limit:
            break
    if not known and not entries:
        raise NotFound(f"no cell {cell_id!r} and no hive commits mention it")
    return entries


def _first(values: list[str] | None) -> str | None:
    return values[0] if values else None
