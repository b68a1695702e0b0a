"""History from commit trailers: which commits touched a cell."""

from __future__ import annotations

from hive.domain.cells import resolve_id
from hive.domain.workspace import Workspace
from hive.errors import NotFound
from hive.git.repo import CommitInfo
from hive.models.results import LogEntry
from hive.store.layout import HIVE_DIR, cell_path


def cell_log(
    ws: Workspace, *, cell_id: str | None = None, limit: int | None = None
) -> list[LogEntry]:
    """hive commits (newest first), only those that touched ``cell_id`` if an id is given.

    hive's own commits name their cells in ``Hive-Cell:`` trailers. A commit
    without hive trailers (one of yours, carrying cell changes staged with
    ``HIVE_AUTOCOMMIT=0``) counts for a cell when it changed the cell's file.
    """
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
        by_hive = "Hive-Event" in trailers or bool(cells)
        if wanted is None and not by_hive:
            continue
        if wanted is not None and wanted not in cells:
            if by_hive or not _changed_file(ws, commit, cell_path(wanted)):
                continue
            cells = [wanted]
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


def _changed_file(ws: Workspace, commit: CommitInfo, path: str) -> bool:
    """Whether ``commit`` changed ``path`` compared with each of its parents."""
    trees = [ws.git.commit_tree(sha) for sha in (commit.sha, *commit.parents)]
    if len(trees) > 1 and _same_hive_dir(ws, trees):
        return False  # most of your commits do not touch .hive/ at all: one tree read
    blob, *before = (ws.git.lookup_path(tree, path) for tree in trees)
    if not before:
        return blob is not None
    return all(blob != old for old in before)


def _same_hive_dir(ws: Workspace, trees: list[str]) -> bool:
    hive_dirs = {ws.git.lookup_path(tree, HIVE_DIR, want_tree=True) for tree in trees}
    return len(hive_dirs) == 1


def _first(values: list[str] | None) -> str | None:
    return values[0] if values else None
