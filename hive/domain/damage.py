"""Damage in the working tree that hive's reads (which come from git) would not see:
a directory where a cell file should be (``show``, ``list``, ``ready`` and ``blocked``
warn about it), and an uncommitted edit that made a cell file unloadable (``show``,
``list``, ``ready`` and ``blocked`` warn of the cells they show). ``hive doctor``
reports both, since the next write of that cell would fail."""

from __future__ import annotations

import os

from hive.domain.workspace import Workspace
from hive.errors import CorruptFile
from hive.store.layout import CELL_SUFFIX, CELLS_DIR, EDIT_CHECK_LIMIT, cell_path


def directory_message(relative: str) -> str:
    return (
        f"{relative}: is a directory, not a cell file; move what is inside it elsewhere"
        " (hive cannot write that cell until then)"
    )


def cell_file_problem(ws: Workspace, cell_id: str) -> str | None:
    """Why the working tree cannot hold ``cell_id``'s file, or None."""
    relative = cell_path(cell_id)
    full = os.path.join(ws.root, relative)
    if os.path.isdir(full):
        return directory_message(relative)
    return _unloadable_edit(full, relative)


def unloadable_edits(ws: Workspace, cell_ids: list[str]) -> list[str]:
    """The problems of shown cells whose files an uncommitted edit left unloadable (a
    page of them: none are read past ``EDIT_CHECK_LIMIT``)."""
    if len(cell_ids) > EDIT_CHECK_LIMIT:
        return []
    found = []
    for cell_id in cell_ids:
        relative = cell_path(cell_id)
        problem = _unloadable_edit(os.path.join(ws.root, relative), relative)
        if problem is not None:
            found.append(problem)
    return found


def _unloadable_edit(full: str, relative: str) -> str | None:
    """The problem of a cell file edited in the working tree so that it no longer loads
    (hive shows the committed cell: the edit is not in effect), or None."""
    try:
        if os.path.islink(full) or not os.path.isfile(full):
            return None  # absent, or not a plain file: doctor words those
        with open(full, "rb") as handle:
            content = handle.read()
    except OSError:
        return None
    problem = decode_problem(content, relative)
    if problem is None:
        return None
    return (
        f"{problem} (an uncommitted edit: hive shows the committed cell; fix the"
        f" file, or discard the edit with 'git checkout -- {relative}')"
    )


def decode_problem(content: bytes, relative: str) -> str | None:
    """Why the cell file ``relative`` with ``content`` would not load, or None: the
    check of an edit in the working tree (doctor's, and the one hive shows a cell with)."""
    from hive.store.cells import decode_cell

    try:
        decode_cell(content, relative)
    except CorruptFile as exc:
        return exc.message
    return None


def directories_in_place_of_cells(ws: Workspace) -> list[str]:
    """Every directory under ``.hive/cells/<shard>/`` named like a cell file."""
    found: list[str] = []
    base = os.path.join(ws.root, CELLS_DIR)
    try:
        shards = sorted(
            (entry for entry in os.scandir(base) if entry.is_dir()), key=lambda e: e.name
        )
    except (FileNotFoundError, NotADirectoryError):
        return found
    for shard in shards:
        try:
            entries = sorted(os.scandir(shard.path), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if entry.name.endswith(CELL_SUFFIX) and entry.is_dir(follow_symlinks=False):
                found.append(f"{CELLS_DIR}/{shard.name}/{entry.name}")
    return found
