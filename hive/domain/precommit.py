"""The pre-commit check: reservations are enforced on ``git commit``, .hive/ is validated.

Staged paths (both sides of a rename, since a rename stages a deletion and
an addition) that fall under another agent's active exclusive reservation
block the commit. The committer is ``HIVE_AGENT``; with none set the
committer is a human, who is blocked the same way. ``HIVE_BYPASS=1`` (or
``git commit --no-verify``) skips the check. Staged ``.hive/`` files that do
not validate block the commit too.
"""

from __future__ import annotations

import os

from pydantic import BaseModel, Field

from hive.domain.globs import glob_matches
from hive.domain.reservations import (
    RESERVATIONS_DIR,
    active_reservations,
    decode_file,
    load_all,
    may_intersect,
)
from hive.domain.workspace import Workspace
from hive.errors import CorruptFile, NotInitialized
from hive.git.index import read_entries
from hive.models import utc_now
from hive.store.cells import decode_cell, decode_config
from hive.store.layout import CONFIG_PATH, HIVE_DIR, cell_id_from_path, cell_path


class Violation(BaseModel):
    path: str
    kind: str
    message: str
    holder: str | None = None
    cell: str | None = None


class PrecommitReport(BaseModel):
    committer: str | None
    staged: list[str] = Field(default_factory=list)
    violations: list[Violation] = Field(default_factory=list)
    bypassed: bool = False

    @property
    def ok(self) -> bool:
        return not self.violations


def staged_paths(ws: Workspace) -> list[str]:
    """Paths whose index entry differs from HEAD (added, modified, deleted, renamed)."""
    snap = ws.git.snapshot()
    head_files = snap.listing("") if snap.tree else {}
    staged: set[str] = set()
    entries = read_entries(ws.git.paths.index_path)
    for path, entry in entries.items():
        if entry.stage != 0 or head_files.get(path) != entry.sha.decode():
            staged.add(path)
    staged.update(path for path in head_files if path not in entries)
    return sorted(staged)


def check_staged(ws: Workspace, *, committer: str | None = None) -> PrecommitReport:
    """What would block the commit being made right now."""
    agent = committer if committer is not None else (os.environ.get("HIVE_AGENT") or None)
    if os.environ.get("HIVE_BYPASS") == "1":
        return PrecommitReport(committer=agent, bypassed=True)
    staged = staged_paths(ws)
    report = PrecommitReport(committer=agent, staged=staged)
    snap = ws.git.snapshot()
    if snap.blob_sha(CONFIG_PATH) is None and not any(p.startswith(HIVE_DIR + "/") for p in staged):
        return report  # no hive here: nothing to enforce
    report.violations += _reservation_violations(ws, staged, agent)
    report.violations += _hive_file_violations(ws, staged)
    return report


def _reservation_violations(ws: Workspace, staged: list[str], agent: str | None) -> list[Violation]:
    try:
        held = active_reservations(load_all(ws, ws.git.snapshot()), utc_now())
    except NotInitialized:
        return []
    blocking = [r for r in held if r.exclusive and r.agent != agent]
    found = []
    for path in staged:
        if path.startswith(HIVE_DIR + "/"):
            continue
        for item in blocking:
            if may_intersect(path, item.path_pattern) and glob_matches(item.path_pattern, path):
                who = agent or "you (no HIVE_AGENT set)"
                cell = f" for {item.cell}" if item.cell else ""
                found.append(
                    Violation(
                        path=path,
                        kind="reserved",
                        holder=item.agent,
                        cell=item.cell,
                        message=(
                            f"{path} is reserved by {item.agent}{cell} ({item.path_pattern}) until "
                            f"{item.expires_at:%Y-%m-%d %H:%M:%S}Z; {who} may not commit it"
                        ),
                    )
                )
                break
    return found


def _hive_file_violations(ws: Workspace, staged: list[str]) -> list[Violation]:
    entries = read_entries(ws.git.paths.index_path, HIVE_DIR + "/")
    found = []
    for path in staged:
        entry = entries.get(path)
        if not path.startswith(HIVE_DIR + "/") or entry is None:
            continue
        try:
            _validate_hive_file(path, ws.git.read_blob(entry.sha.decode()))
        except CorruptFile as exc:
            found.append(Violation(path=path, kind="invalid-hive-file", message=exc.message))
    return found


def _validate_hive_file(path: str, content: bytes) -> None:
    if path == CONFIG_PATH:
        decode_config(content, path)
        return
    if path.startswith(RESERVATIONS_DIR + "/"):
        decode_file(content, path)
        return
    cell_id = cell_id_from_path(path)
    if cell_id is None:
        return
    cell = decode_cell(content, path)
    if cell.id != cell_id or cell_path(cell.id) != path:
        raise CorruptFile(f"{path}: contains id {cell.id!r}, expected it at {cell_path(cell.id)}")
