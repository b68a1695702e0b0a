"""Comments on cells, and resolving what a merge could not settle.

``add_comment`` appends a comment (merges keep the comments of both sides);
``resolve_conflicts`` clears the conflict records a merge left on a cell (see
:mod:`hive.domain.merge`), optionally taking the value the merge did not keep.
"""

from __future__ import annotations

import secrets
from typing import Any

from hive.domain.cells import _changed, _mutate
from hive.domain.limits import check_text
from hive.domain.ownership import OwnerGuard
from hive.domain.workspace import Workspace
from hive.errors import InvalidInput, NotFound
from hive.models import Cell, Comment, utc_now
from hive.store.cache import CellIndex

SETTABLE = ("title", "description", "design", "acceptance_criteria", "assignee")


def add_comment(ws: Workspace, *, cell_id: str, text: str) -> Cell:
    """Add a comment by the acting agent to a cell (one commit)."""
    body = check_text(text, "comment")
    if not body.strip():
        raise InvalidInput("comment must not be empty")
    author = ws.actor

    def change(cell: Cell, index: CellIndex, guard: OwnerGuard) -> Cell:
        comment = Comment(
            id=f"c-{secrets.token_hex(5)}", author=author, text=body, created_at=utc_now()
        )
        return _changed(cell, comments=[*cell.comments, comment])

    return _mutate(ws, cell_id, "comment", change, allow_deleted=True)


def resolve_conflicts(
    ws: Workspace,
    *,
    cell_id: str,
    field: str | None = None,
    use_other: bool = False,
    force: bool = False,
    reason: str | None = None,
) -> Cell:
    """Clear the merge conflict records of a cell (of one ``field`` if given).

    ``use_other``: set the field to the value the merge did not keep first
    (only for one field, and only for a field hive can set); on a claimed cell only
    its assignee may, or a coordinator or person with ``force`` and a ``reason``.
    """
    if use_other and field is None:
        raise InvalidInput(
            "use_other (--use-other) needs the field whose other value to take", field="field"
        )
    if use_other and field not in SETTABLE:
        raise InvalidInput(
            f"cannot take the other value of {field!r}: use one of {', '.join(SETTABLE)}"
        )

    def change(cell: Cell, index: CellIndex, guard: OwnerGuard) -> Cell:
        matching = [r for r in cell.conflicts if field is None or r.field == field]
        if not matching:
            what = f" on {field}" if field else ""
            raise NotFound(f"{cell.id} has no merge conflict{what}", id=cell.id)
        updates: dict[str, Any] = {"conflicts": [r for r in cell.conflicts if r not in matching]}
        if use_other:
            updates[str(field)] = matching[-1].other
            if updates[str(field)] != getattr(cell, str(field)):
                guard.check_cell(cell, f"change the {str(field).replace('_', ' ')} of")
        return _changed(cell, **updates)

    return _mutate(ws, cell_id, "resolve", change, allow_deleted=True, force=force, reason=reason)
