"""The merge rules of :mod:`hive.domain.merge` without the models.

git starts one merge-driver process per ``.hive`` file both sides changed, so
what such a process imports is paid per file. This module holds what a merge of
cell files needs without pydantic, dulwich or the models: the field-by-field rules
on *plain cells* (``hive/store/celldoc.py``: dicts holding exactly what
``Cell.model_dump()`` holds), and the search of both histories for the right base.
:mod:`hive.domain.merge` (the full path: ``hive sync``, every file the plain path
declines) runs the same rules on its models' dumps, so there is one set of rules.

:func:`merge_plain` merges one file when the result is certainly what the full path
gives, byte for byte, and declines (None) everything else: files hive does not merge,
cells the plain reader leaves to the model (earlier merge conflicts, anything not in
hive's canonical form), objects only dulwich reads. Reservation files, the context and
the config follow the rules of :mod:`hive.domain.mergefiles` the same way. The caller
then runs the full path (``tests/test_merge_driver_lean.py`` compares the two).
"""

from __future__ import annotations

from datetime import timedelta

from hive.domain.mergefiles import set_merge
from hive.store import layout
from hive.store.layout import CELLS_DIR, cell_id_from_path

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from datetime import datetime
    from typing import Any, Protocol, TypeVar

    _Version = TypeVar("_Version", str, bytes)  # a file's content, or its blob id

    class History(Protocol):
        """What a merge asks of the repository (``hive/git/pathhistory.py``)."""

        def head_commit(self) -> str | None: ...
        def blob_at(self, commit: str, path: str) -> str | None: ...
        def versions(self, commit: str, path: str, *, limit: int) -> list[str]: ...
        def read_blob(self, sha: str) -> bytes: ...


TOMBSTONE_TTL = timedelta(days=30)
HISTORY_LIMIT = 2000  # commits searched for the versions of a file a side already had
RESERVATIONS_DIR = ".hive/reservations"
CONTEXT_PATH = layout.CONTEXT_PATH
CONFIG_PATH = ".hive/config.yaml"
CONFLICT_FIELDS = ("title", "description", "design", "acceptance_criteria", "assignee")
SCALAR_FIELDS = (
    "title",
    "description",
    "design",
    "acceptance_criteria",
    "type",
    "priority",
    "parent",
    "assignee",
    "created_by",
)


def is_mergeable_path(path: str) -> bool:
    """Files the field-level merge understands (cells, reservation files, context,
    the config)."""
    return is_cell_path(path) or is_reservation_path(path) or path in (CONTEXT_PATH, CONFIG_PATH)


def is_cell_path(path: str) -> bool:
    return path.startswith(CELLS_DIR + "/") and cell_id_from_path(path) is not None


def is_reservation_path(path: str) -> bool:
    return path.startswith(RESERVATIONS_DIR + "/") and path.endswith(".yaml")


def settled(base: bytes | None, ours: bytes | None, theirs: bytes | None) -> bytes | None:
    """The merged file when no rule is needed (a side missing or unchanged, both
    alike), else None."""
    if ours is None or theirs is None:
        kept = ours if ours is not None else theirs
        return kept or b""  # hive never deletes a file by merging
    return settled_sides(base, ours, theirs)


def settled_sides(base: _Version | None, ours: _Version, theirs: _Version) -> _Version | None:
    """The merged version of two present sides when no rule is needed (a side unchanged
    from the base, or both alike), else None: the same by content as by blob id
    (``auditfiles.AuditFiles.merges_to``)."""
    if ours == theirs or (base is not None and ours == base):
        return theirs
    if base is not None and theirs == base:
        return ours
    return None


# ------------------------------------------------------------------ the histories


def history_base(
    history: History,
    path: str,
    base: bytes | None,
    ours: bytes,
    theirs: bytes,
    their_commits: Sequence[str],
) -> tuple[bytes | None, bytes | None]:
    """(the merged file, when one side's version is one the other already had; else
    the base to merge against): see :func:`hive.domain.merge.merge_in_repository`."""
    from hive.git.pathhistory import blob_sha_of

    if ours == theirs or (base is not None and base in (ours, theirs)):
        return None, base
    if not is_mergeable_path(path) or (base is not None and not their_commits):
        return None, base
    head = history.head_commit()
    ours_sha, theirs_sha = blob_sha_of(ours), blob_sha_of(theirs)
    if head is None or history.blob_at(head, path) != ours_sha:
        return None, base
    ours_had = history.versions(head, path, limit=HISTORY_LIMIT)
    if theirs_sha in ours_had:
        return ours, None  # theirs is a version this side already had
    for commit in their_commits:
        if history.blob_at(commit, path) != theirs_sha:
            continue
        theirs_had = set(history.versions(commit, path, limit=HISTORY_LIMIT))
        if ours_sha in theirs_had:
            return theirs, None  # ours is a version they already had
        common = next((sha for sha in ours_had if sha in theirs_had), None)
        if common is not None:
            base = history.read_blob(common)
        break
    return None, base


# ------------------------------------------------------------------ the plain path


def merge_plain(
    path: str,
    base: bytes | None,
    ours: bytes | None,
    theirs: bytes | None,
    history: Callable[[], History] | None,
    their_commits: Sequence[str] = (),
) -> tuple[bytes, list[str]] | None:
    """(the merged file, the fields whose losing value a conflict record keeps) as
    the full path would write them, or None to leave the file to the full path.
    ``history`` opens the repository (None: git's base only); what it raises is the
    full path's to handle, so the caller declines on it."""
    done = settled(base, ours, theirs)
    if done is not None:
        return done, []
    if ours is None or theirs is None or not is_mergeable_path(path):
        return None
    if history is not None:
        decided, base = history_base(history(), path, base, ours, theirs, their_commits)
        if decided is not None:
            return decided, []
    merged = merge_plain_records(path, base, ours, theirs)
    return None if merged is None else (merged[0], [record["field"] for record in merged[1]])


def merge_plain_records(
    path: str, base: bytes | None, ours: bytes | None, theirs: bytes | None
) -> tuple[bytes, list[dict[str, Any]]] | None:
    """``merge.merge_file`` without the models: the merged file and the conflict records
    it gained (``{field, kept, other}``, as ``MergeConflict`` holds them), when both are
    certainly the full path's, else None (the full path's to merge). git's merge driver
    (through :func:`merge_plain`) and ``hive sync`` merge with it."""
    done = settled(base, ours, theirs)
    if done is not None:
        return done, []
    if ours is None or theirs is None or not is_mergeable_path(path):
        return None
    if not is_cell_path(path):
        return _plain_file(path, base, ours, theirs)
    mine, other = _plain(ours), _plain(theirs)
    original = _plain(base) if base is not None else None
    if mine is None or other is None or (base is not None and original is None):
        return None
    if original is not None and original["id"] != mine["id"]:
        original = None
    from hive.store.celldoc import encode

    merged, records = merge_fields(original, mine, other)
    return encode(merged), records


def _plain_file(
    path: str, base: bytes | None, ours: bytes, theirs: bytes
) -> tuple[bytes, list[dict[str, Any]]] | None:
    """A reservation file, the context or the config, by the rules of
    :mod:`hive.domain.mergefiles` (None: the full path's)."""
    from hive.domain import mergefiles

    if is_reservation_path(path):
        merged = mergefiles.reservation_file(base, ours, theirs)
        return None if merged is None else (merged, [])
    if path == CONTEXT_PATH:
        context = mergefiles.context_file(base, ours, theirs)
        return None if context is None else (context, [])
    return mergefiles.config_file(base, ours, theirs)  # (the one file left)


def _plain(data: bytes) -> dict[str, Any] | None:
    """The plain cell ``data`` holds in hive's canonical form, comments included, else
    None."""
    from hive.store.celldoc import plain_cell
    from hive.store.yamlfast import fast_loads

    try:
        mapping = fast_loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(mapping, dict):
        return None
    comments = _plain_comments(mapping.pop("comments", []))
    cell = plain_cell(mapping)
    if cell is None or comments is None:
        return None
    cell["comments"] = comments
    return cell


_COMMENT_FIELDS = ("id", "author", "text", "created_at")  # the Comment model's, in its order


def _plain_comments(value: object) -> list[dict[str, Any]] | None:
    """Comments as ``Comment.model_dump()`` holds them, when certainly so, else None."""
    from hive.store.celldoc import exact_time

    if not isinstance(value, list):
        return None
    found = []
    for item in value:
        if not isinstance(item, dict) or not set(item) <= set(_COMMENT_FIELDS):
            return None
        comment_id, author = item.get("id"), item.get("author", "")
        text, created = item.get("text"), exact_time(item.get("created_at"))
        if not isinstance(comment_id, str) or not comment_id or not isinstance(author, str):
            return None
        if not isinstance(text, str) or created is None:
            return None
        found.append({"id": comment_id, "author": author, "text": text, "created_at": created})
    return found


# ------------------------------------------------------------------ cells, field by field


def merge_fields(
    base: dict[str, Any] | None, ours: dict[str, Any], theirs: dict[str, Any]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The merged plain cell and the conflict records (``{field, kept, other}``) it
    gained. Commutative in ours/theirs."""
    winner, loser = order(ours, theirs)
    records: list[dict[str, Any]] = []
    merged: dict[str, Any] = {"id": ours["id"]}
    for name in SCALAR_FIELDS:
        value, lost = _scalar(name, base, winner, loser)
        merged[name] = value
        if lost is not None and name in CONFLICT_FIELDS:
            records.append({"field": name, "kept": value, "other": lost})
    merged.update(_status(base, winner, loser))
    merged["notes"] = _notes(base, winner, loser)
    merged["labels"] = set_merge(_of(base, "labels"), ours["labels"], theirs["labels"], str)
    merged["files_owned"] = set_merge(
        _of(base, "files_owned"), ours["files_owned"], theirs["files_owned"], str
    )
    merged["dependencies"] = set_merge(
        _of(base, "dependencies"), ours["dependencies"], theirs["dependencies"], _dep_key
    )
    merged["comments"] = _comments(base, winner, loser)
    merged["metadata"] = _metadata(base, winner, loser)
    merged["created_at"] = min(ours["created_at"], theirs["created_at"])
    merged["updated_at"] = max(ours["updated_at"], theirs["updated_at"])
    merged["started_at"] = _earliest_change(base, ours, theirs, "started_at")
    merged["deleted_at"] = _tombstone(base, winner, loser)
    previous = set_merge(
        _of(base, "conflicts"), ours["conflicts"], theirs["conflicts"], _record_key
    )
    merged["conflicts"] = previous + [r for r in records if r not in previous]
    return merged, records


def _of(base: dict[str, Any] | None, name: str) -> Any:
    return None if base is None else base[name]


def order(ours: dict[str, Any], theirs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(winner, loser) for scalar fields: later ``updated_at``; equal times are
    decided by the encoded bytes, so both clones pick the same side (encoded only
    then: two cells with 100 comments took ~3 ms to encode, most of a merge)."""
    if ours["updated_at"] != theirs["updated_at"]:
        later = ours["updated_at"] > theirs["updated_at"]
        return (ours, theirs) if later else (theirs, ours)
    from hive.store.celldoc import encode

    return (ours, theirs) if encode(ours) >= encode(theirs) else (theirs, ours)


def _scalar(
    name: str, base: dict[str, Any] | None, winner: dict[str, Any], loser: dict[str, Any]
) -> tuple[Any, Any]:
    """(merged value, value that lost or None)."""
    new, old = winner[name], loser[name]
    if new == old:
        return new, None
    if base is not None:
        original = base[name]
        if new == original:
            return old, None
        if old == original:
            return new, None
    return new, old


def _status(
    base: dict[str, Any] | None, winner: dict[str, Any], loser: dict[str, Any]
) -> dict[str, Any]:
    """status, closed_at and close_reason, decided together: closed beats open."""

    def group(cell: dict[str, Any]) -> tuple[str, datetime | None, str | None]:
        return (cell["status"], cell["closed_at"], cell["close_reason"])

    new, old = group(winner), group(loser)
    chosen = new
    if new != old:
        original = group(base) if base is not None else None
        if new == original:
            chosen = old
        elif old == original:
            chosen = new
        elif (winner["status"] == "closed") != (loser["status"] == "closed"):
            chosen = new if winner["status"] == "closed" else old
    return {"status": chosen[0], "closed_at": chosen[1], "close_reason": chosen[2]}


def _notes(base: dict[str, Any] | None, winner: dict[str, Any], loser: dict[str, Any]) -> str:
    """Both sides' notes: text added on each side is kept, the earlier side's first."""
    new, old = winner["notes"], loser["notes"]
    original = base["notes"] if base is not None else ""
    if new == old or old == original or old in new:
        return str(new)
    if new == original or new in old:
        return str(old)
    if original and new.startswith(original) and old.startswith(original):
        added = [old[len(original) :], new[len(original) :]]
        return _join([original, *added])
    return _join([old, new])


def _join(parts: list[str]) -> str:
    pieces = [part.strip("\n") for part in parts if part.strip("\n")]
    unique = list(dict.fromkeys(pieces))
    return "\n".join(unique)


def _dep_key(dep: dict[str, Any]) -> tuple[str, str]:
    return (dep["type"], dep["target"])


def _record_key(record: dict[str, Any]) -> str:
    return repr((record["field"], record["kept"], record["other"]))


def _comments(
    base: dict[str, Any] | None, winner: dict[str, Any], loser: dict[str, Any]
) -> list[dict[str, Any]]:
    """Comments of both sides by id (an id edited on both sides: the winner's text)."""
    by_id: dict[str, dict[str, Any]] = {c["id"]: c for c in loser["comments"]}
    by_id.update({c["id"]: c for c in winner["comments"]})
    base_ids = {c["id"] for c in base["comments"]} if base is not None else set()
    ours_ids = {c["id"] for c in winner["comments"]}
    theirs_ids = {c["id"] for c in loser["comments"]}
    kept = [
        comment
        for cid, comment in by_id.items()
        if cid not in base_ids or (cid in ours_ids and cid in theirs_ids)
    ]
    return sorted(kept, key=lambda c: (c["created_at"], c["id"]))


def _metadata(
    base: dict[str, Any] | None, winner: dict[str, Any], loser: dict[str, Any]
) -> dict[str, Any]:
    original = base["metadata"] if base is not None else {}
    merged: dict[str, Any] = {}
    for key in sorted({*winner["metadata"], *loser["metadata"], *original}):
        missing = object()
        new = winner["metadata"].get(key, missing)
        old = loser["metadata"].get(key, missing)
        value = new if new is not missing else old
        if new != old and base is not None:
            value = old if new == original.get(key, missing) else new
        if value is missing:
            continue
        merged[key] = value
    return merged


def _earliest_change(
    base: dict[str, Any] | None, ours: dict[str, Any], theirs: dict[str, Any], name: str
) -> Any:
    a, b = ours[name], theirs[name]
    if a == b:
        return a
    if base is not None:
        original = base[name]
        if a == original:
            return b
        if b == original:
            return a
    present = [value for value in (a, b) if value is not None]
    return min(present) if present else None


def _tombstone(
    base: dict[str, Any] | None, winner: dict[str, Any], loser: dict[str, Any]
) -> datetime | None:
    """A delete wins over an edit made before it or up to the TTL after it."""
    a, b = winner["deleted_at"], loser["deleted_at"]
    if a is not None and b is not None:
        return min(a, b)  # type: ignore[no-any-return]
    if a is None and b is None:
        return None
    deleted, other = (winner, loser) if a is not None else (loser, winner)
    original = base["deleted_at"] if base is not None else None
    if original is not None and other["deleted_at"] is None and deleted["deleted_at"] == original:
        return None  # the other side restored it (undelete is explicit)
    if other["updated_at"] > deleted["deleted_at"] + TOMBSTONE_TTL:
        return None  # edited long after the delete by a clone that never saw it
    return deleted["deleted_at"]  # type: ignore[no-any-return]
