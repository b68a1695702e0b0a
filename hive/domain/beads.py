"""Interop with beads (``bd``): its JSONL export in, cells out, and back.

``import_beads`` turns every line of a beads export into one cell, all in one
commit; ``export_beads`` writes cells as beads JSONL. What maps:

* ids are kept (``bd-a1b2``, ``bd-a1b2.3``, ``bd-wisp-0385z``); a dotted id
  is a child of the id before its last dot, as in hive;
* title, description, design, acceptance_criteria, notes, priority (0-4),
  assignee, labels, created_by, timestamps (any time zone; stored in UTC with
  their microseconds, the text as written recorded where it differs), close_reason,
  comments;
* statuses and types hive has are kept; the others are mapped (``tombstone``
  -> a hive tombstone, ``hooked`` -> in_progress, ``pinned`` -> deferred, any
  other -> open; an unknown type -> task) and the original is recorded;
* dependencies of every type: ``blocks``, ``parent-child``, ``related`` and
  ``discovered-from`` are hive types, any other type becomes ``related`` with
  the original type recorded; each dependency's own fields are kept;
* every other field (owner, ephemeral, external_ref, deleted_by, ...) is kept
  verbatim.

Everything hive has no field for lives in the cell's ``metadata.beads``, so
an export of an import gives back the same records, times as written. Fields
hive has and beads lacks (owned files, metadata, started_at, merge conflicts)
are exported under a ``hive`` key, which an import reads back.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable, Container, Iterable, Iterator
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from hive.domain.graph import LightCell, cycles_through
from hive.domain.limits import (
    MAX_DEPS,
    MAX_LABELS,
    check_count,
    check_name,
    check_text,
    refuse_unprintable,
)
from hive.domain.workspace import MixedPlan, Workspace
from hive.errors import HiveError, InvalidInput, NotFound
from hive.git.repo import Snapshot, WriteResult
from hive.jsontext import dumps, nesting_depth
from hive.models import CELL_TYPES, DEPENDENCY_TYPES, STATUSES, Cell, Comment, Dependency
from hive.models.cell import check_title, first_error
from hive.models.results import BeadsExportResult, BeadsImportResult
from hive.store.cache import CellIndex
from hive.store.ids import is_valid_id, parent_from_id
from hive.store.yamlfast import MAX_NESTING
from hive.text import TEXT_KEPT, counted

Progress = Callable[[str, int, int], None]
BEADS_KEY = "beads"
HIVE_KEY = "hive"
STATUS_MAP = {"tombstone": "closed", "hooked": "in_progress", "pinned": "deferred"}
MAX_ERRORS_SHOWN = 10
MAX_FILE_BYTES = 512 * 1024 * 1024
GZIP_MAGIC = b"\x1f\x8b"
UTF8_BOM = b"\xef\xbb\xbf"
STDIN_NAME = "<stdin>"  # the name of standard input (``-``) in line errors
# beads fields hive stores in fields of its own (everything else is kept verbatim)
MAPPED = frozenset(
    {
        "id",
        "title",
        "description",
        "design",
        "acceptance_criteria",
        "notes",
        "status",
        "priority",
        "issue_type",
        "assignee",
        "labels",
        "dependencies",
        "comments",
        "created_at",
        "created_by",
        "updated_at",
        "closed_at",
        "close_reason",
        "deleted_at",
        HIVE_KEY,
    }
)
TEXT_FIELDS = ("description", "design", "acceptance_criteria", "notes")
TIME_FIELDS = ("created_at", "updated_at", "closed_at", "deleted_at")
# under metadata.beads: a record's times as written where hive's UTC text differs
TIME_TEXTS_KEY = "_times"
_SURROGATE_RE = re.compile("[\ud800-\udfff]")
_TIME_RE = re.compile(
    r"^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2})(?:\.(\d+))?(Z|z|[+-]\d{2}:?\d{2})?$"
)


class _LineError(ValueError):
    """A problem with one record (the caller adds the file name and line number)."""


# ------------------------------------------------------------------ times


def parse_time(value: Any, what: str) -> datetime:
    """An RFC 3339 time with any offset (or ``Z``) and up to nanoseconds, as UTC."""
    if not isinstance(value, str):
        raise _LineError(f"{what} must be a time string, got {value!r}")
    match = _TIME_RE.match(value.strip())
    if match is None:
        raise _LineError(f"{what} is not an RFC 3339 time: {value!r}")
    day, clock, fraction, zone = match.groups()
    micro = (fraction or "0")[:6].ljust(6, "0")
    offset = "+00:00" if zone in (None, "Z", "z") else zone
    if len(offset) == 5:
        offset = offset[:3] + ":" + offset[3:]
    try:
        parsed = datetime.fromisoformat(f"{day}T{clock}.{micro}{offset}")
    except ValueError as exc:
        raise _LineError(f"{what} is not a valid time: {value!r} ({exc})") from None
    return parsed.astimezone(UTC)


def format_time(value: datetime) -> str:
    """RFC 3339 in UTC, with as many fraction digits as the time has (beads reads any)."""
    text = value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S")
    if value.microsecond:
        text += f".{value.microsecond:06d}".rstrip("0")
    return text + "Z"


# ------------------------------------------------------------------ reading the file


# A record's fields nest two levels deeper in its cell file (cell, metadata, beads).
_RECORD_DEPTH = MAX_NESTING - 2


def _line_spans(data: bytes) -> Iterator[tuple[int, int, int]]:
    """(line number, start, end) of each line of ``data`` (the lines of
    ``data.split(b"\n")``, without making them all at once)."""
    start = 0
    number = 1
    while True:
        end = data.find(b"\n", start)
        if end < 0:
            yield number, start, len(data)
            return
        yield number, start, end
        start = end + 1
        number += 1


def _record_at(raw: bytes, name: str, number: int, errors: list[str]) -> dict[str, Any] | None:
    """The record on one line (None for a blank line, and for a malformed one, which is
    added to ``errors``)."""
    if not raw.strip():
        return None
    try:
        record = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        errors.append(f"{name}:{number}: not valid UTF-8 ({exc.reason})")
        return None
    except json.JSONDecodeError as exc:
        errors.append(f"{name}:{number}: invalid JSON: {exc.msg} (column {exc.colno})")
        return None
    except RecursionError:
        errors.append(f"{name}:{number}: invalid JSON: nested too deeply")
        return None
    if not isinstance(record, dict):
        errors.append(f"{name}:{number}: expected a JSON object, got {type(record).__name__}")
        return None
    if nesting_depth(record, MAX_NESTING) > _RECORD_DEPTH:
        errors.append(
            f"{name}:{number}: invalid JSON: nested more than {_RECORD_DEPTH} levels deep"
            f" (its fields go into a cell file's metadata.beads, which may nest"
            f" {MAX_NESTING} levels)"
        )
        return None
    if b"\\ud" in raw or b"\\uD" in raw:  # an escaped surrogate: paired, or not text
        where = _lone_surrogate(record)
        if where is not None:
            errors.append(
                f"{name}:{number}: {where} holds a lone surrogate (a \\ud800-\\udfff"
                " escape without its pair): not text hive can store"
            )
            return None
    return record


def _lone_surrogate(value: Any, where: str = "the record") -> str | None:
    """Where in ``value`` a string (or key) holds a lone surrogate, if anywhere."""
    if isinstance(value, str):
        return where if _SURROGATE_RE.search(value) else None
    if isinstance(value, list):
        for position, item in enumerate(value):
            found = _lone_surrogate(item, f"{where}[{position}]")
            if found is not None:
                return found
    if isinstance(value, dict):
        for key, item in value.items():
            label = key if where == "the record" else f"{where}.{key}"
            if _SURROGATE_RE.search(key):
                return f"a field name in {where}"
            found = _lone_surrogate(item, label)
            if found is not None:
                return found
    return None


def _raise_if(errors: list[str]) -> None:
    if not errors:
        return
    shown = "; ".join(errors[:MAX_ERRORS_SHOWN])
    more = f" (and {len(errors) - MAX_ERRORS_SHOWN} more)" if len(errors) > MAX_ERRORS_SHOWN else ""
    raise InvalidInput(f"{shown}{more}; nothing was imported", errors=errors[:100])


# ------------------------------------------------------------------ beads -> cell


def cell_from_record(record: dict[str, Any]) -> Cell:
    """One beads record as a cell (raises ``_LineError`` naming the bad field)."""
    cell_id = _required_text(record, "id").strip().lower()
    if not is_valid_id(cell_id):
        _refuse_unprintable(record["id"], "id")
        raise _LineError(f"id {record['id']!r} cannot be a hive id (letters, digits, - . _)")
    extra: dict[str, Any] = {key: value for key, value in record.items() if key not in MAPPED}
    empty = {k: v for k, v in record.items() if k in MAPPED and k != "id" and v in ("", [], None)}
    if empty:
        extra["empty"] = empty  # present but empty in beads: given back as they were
    fields: dict[str, Any] = {"id": cell_id, "parent": parent_from_id(cell_id)}
    title = _required_text(record, "title")
    fields["title"] = _one_line(title)
    if fields["title"] != title:
        extra["title"] = title
    for name in TEXT_FIELDS:
        fields[name] = _text(record, name)
    fields.update(_status(record, extra))
    fields["type"] = _type(record, extra)
    fields["priority"] = _priority(record)
    fields["assignee"] = _optional_text(record, "assignee") or None
    fields["created_by"] = _optional_text(record, "created_by")
    fields["labels"] = _labels(record)
    fields["dependencies"] = _dependencies(record, cell_id, extra)
    fields["comments"] = _comments(record)
    fields["created_at"] = parse_time(record.get("created_at"), "created_at")
    fields["updated_at"] = parse_time(
        record.get("updated_at", record.get("created_at")), "updated_at"
    )
    if record.get("closed_at"):
        fields["closed_at"] = parse_time(record["closed_at"], "closed_at")
    if record.get("close_reason"):
        fields["close_reason"] = _optional_text(record, "close_reason")
    fields.update(_hive_fields(record))
    _check_limits(fields)
    _keep_time_texts(record, fields, extra)
    # Always present on an imported cell (even empty): the export knows where it came from.
    fields["metadata"] = {**fields.get("metadata", {}), BEADS_KEY: extra}
    try:
        return Cell.model_validate(fields)
    except ValidationError as exc:
        where, why = first_error(exc)
        raise _LineError(f"invalid {where or 'record'}: {why}") from None


def _keep_time_texts(record: dict[str, Any], fields: dict[str, Any], extra: dict[str, Any]) -> None:
    """The record's times as beads wrote them (``-08:00``, nanoseconds), where hive's UTC
    text of the same instant differs, so that an export of the import gives them back
    (:func:`_export_time`); a comment's under its id."""
    texts = {
        name: record[name]
        for name in TIME_FIELDS
        if isinstance(record.get(name), str)
        and isinstance(fields.get(name), datetime)
        and format_time(fields[name]) != record[name]
    }
    comments = {
        comment.id: item["created_at"]
        for comment, item in zip(fields["comments"], record.get("comments") or [], strict=False)
        if format_time(comment.created_at) != item.get("created_at")
    }
    if comments:
        texts["comments"] = comments
    if texts:
        extra[TIME_TEXTS_KEY] = texts


def _one_line(title: str) -> str:
    """A beads title as a hive title, one line: stripped, and where it spans lines or
    holds a tab (beads takes any text) its runs of white space (line breaks of every
    kind: ``hive.text.TEXT_KEPT``) as one space; the caller records the original."""
    stripped = title.strip()
    return " ".join(stripped.split()) if not TEXT_KEPT.isdisjoint(stripped) else stripped


def _check_limits(fields: dict[str, Any]) -> None:
    """The limits every other surface applies (hive.domain.limits, the title's rule),
    per record."""
    try:
        check_title(fields["title"])
    except ValueError as exc:
        raise _LineError(f"invalid title: {exc}") from None
    try:
        for name in (*TEXT_FIELDS, "close_reason"):
            if fields.get(name):
                check_text(fields[name], name.replace("_", " "))
        for name in ("assignee", "created_by"):
            if fields.get(name):
                check_name(fields[name], name.replace("_", " "))
        check_count(fields["labels"], "labels", MAX_LABELS)
        for label in fields["labels"]:
            check_name(label, "label")
        check_count(fields["dependencies"], "dependencies", MAX_DEPS)
        for dep in fields["dependencies"]:
            refuse_unprintable(dep.target, "dependency target", spaced=False)
        for position, comment in enumerate(fields["comments"]):
            check_text(comment.text, f"comments[{position}].text")
            refuse_unprintable(comment.author, f"comments[{position}].author")
    except InvalidInput as exc:
        raise _LineError(exc.message) from None


def _refuse_unprintable(value: str, what: str) -> None:
    """The name-rule's refusal (:func:`hive.domain.limits.refuse_unprintable`) as this
    record's problem (an id: a plain space is refused too, so a no-break space is
    answered "remove it")."""
    try:
        refuse_unprintable(value, what, spaced=False)
    except InvalidInput as exc:
        raise _LineError(exc.message) from None


def _required_text(record: dict[str, Any], name: str) -> str:
    value = record.get(name)
    if not isinstance(value, str) or not value.strip():
        raise _LineError(f"missing or empty {name!r}")
    return value


def _text(record: dict[str, Any], name: str) -> str:
    value = record.get(name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _LineError(f"{name} must be a string, got {type(value).__name__}")
    return value


def _optional_text(record: dict[str, Any], name: str) -> str:
    return _text(record, name)


def _status(record: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    status = record.get("status") or "open"
    if not isinstance(status, str):
        raise _LineError(f"status must be a string, got {status!r}")
    found: dict[str, Any] = {}
    if status in STATUSES:
        found["status"] = status
    else:
        found["status"] = STATUS_MAP.get(status, "open")
        extra["status"] = status
    deleted = record.get("deleted_at")
    if status == "tombstone":
        found["deleted_at"] = parse_time(deleted or record.get("updated_at"), "deleted_at")
        if not deleted:
            extra["deleted_at"] = None
    elif deleted:
        extra["deleted_at"] = deleted  # beads kept it on a live record: so do we, as data
    return found


def _type(record: dict[str, Any], extra: dict[str, Any]) -> str:
    kind = record.get("issue_type") or "task"
    if kind in CELL_TYPES:
        return str(kind)
    extra["issue_type"] = kind
    return "task"


def _priority(record: dict[str, Any]) -> int:
    value = record.get("priority", 2)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 4:
        raise _LineError(f"priority must be 0-4, got {value!r}")
    return value


def _labels(record: dict[str, Any]) -> list[str]:
    labels = record.get("labels") or []
    if not isinstance(labels, list) or not all(isinstance(x, str) and x for x in labels):
        raise _LineError("labels must be a list of non-empty strings")
    return list(dict.fromkeys(labels))


def _dependencies(record: dict[str, Any], cell_id: str, extra: dict[str, Any]) -> list[Dependency]:
    deps = record.get("dependencies") or []
    if not isinstance(deps, list):
        raise _LineError("dependencies must be a list")
    found: list[Dependency] = []
    originals: dict[str, list[dict[str, Any]]] = {}
    for position, dep in enumerate(deps):
        if not isinstance(dep, dict):
            raise _LineError(f"dependencies[{position}] must be an object")
        target = dep.get("depends_on_id")
        if not isinstance(target, str) or not target.strip():
            raise _LineError(f"dependencies[{position}] has no depends_on_id")
        kind = dep.get("type") or "blocks"
        if not isinstance(kind, str):
            raise _LineError(f"dependencies[{position}].type must be a string")
        hive_type = kind if kind in DEPENDENCY_TYPES else "related"
        edge = Dependency(type=hive_type, target=target.strip().lower())
        if edge not in found:
            found.append(edge)
        kept = {k: v for k, v in dep.items() if k not in ("issue_id", "depends_on_id")}
        if kept.get("type") == hive_type:
            kept.pop("type")
        if dep.get("issue_id") not in (None, record.get("id")):
            kept["issue_id"] = dep["issue_id"]
        if kept:
            originals.setdefault(f"{hive_type}:{edge.target}", []).append(kept)
    if originals:
        extra["dependencies"] = originals
    return found


def _comments(record: dict[str, Any]) -> list[Comment]:
    comments = record.get("comments") or []
    if not isinstance(comments, list):
        raise _LineError("comments must be a list")
    found: list[Comment] = []
    for position, item in enumerate(comments):
        if not isinstance(item, dict) or not isinstance(item.get("text"), str):
            raise _LineError(f"comments[{position}] must be an object with a text")
        created = parse_time(item.get("created_at"), f"comments[{position}].created_at")
        ident = item.get("id")
        found.append(
            Comment(
                id=str(ident) if ident not in (None, "") else f"b-{position + 1}",
                author=str(item.get("author") or ""),
                text=item["text"],
                created_at=created,
            )
        )
    return found


def _hive_fields(record: dict[str, Any]) -> dict[str, Any]:
    """What an export from hive carried under the ``hive`` key."""
    data = record.get(HIVE_KEY)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise _LineError(f"{HIVE_KEY} must be an object")
    allowed = {"files_owned", "metadata", "started_at", "conflicts", "parent"}
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise _LineError(f"unknown {HIVE_KEY} field {unknown[0]!r}")
    fields = dict(data)
    if "started_at" in fields and fields["started_at"] is not None:
        fields["started_at"] = parse_time(fields["started_at"], "hive.started_at")
    return fields


# ------------------------------------------------------------------ cell -> beads


def record_from_cell(cell: Cell) -> dict[str, Any]:
    """A beads record for ``cell`` (the inverse of :func:`cell_from_record`).

    A recorded original (status, type, title) is used only while the cell still
    has the value it was mapped to; a cell changed in hive exports its new value.
    """
    beads = dict(cell.metadata.get(BEADS_KEY) or {})
    texts = beads.pop(TIME_TEXTS_KEY, None)
    texts = texts if isinstance(texts, dict) else {}
    title = beads.pop("title", None)
    record: dict[str, Any] = {"id": cell.id, "title": _original_title(title, cell.title)}
    for name in TEXT_FIELDS:
        if getattr(cell, name):
            record[name] = getattr(cell, name)
    record["status"] = _export_status(cell, beads.pop("status", None))
    record["priority"] = cell.priority
    kind = beads.pop("issue_type", None)
    record["issue_type"] = kind if kind is not None and cell.type == "task" else cell.type
    if cell.assignee:
        record["assignee"] = cell.assignee
    record["created_at"] = _export_time(cell.created_at, texts.get("created_at"))
    if cell.created_by:
        record["created_by"] = cell.created_by
    record["updated_at"] = _export_time(cell.updated_at, texts.get("updated_at"))
    if cell.closed_at:
        record["closed_at"] = _export_time(cell.closed_at, texts.get("closed_at"))
    if cell.close_reason:
        record["close_reason"] = cell.close_reason
    deleted = beads.pop("deleted_at", ...)
    if cell.deleted_at is not None and deleted is not None:
        record["deleted_at"] = _export_time(cell.deleted_at, texts.get("deleted_at"))
    elif deleted not in (..., None):
        record["deleted_at"] = deleted
    if cell.labels:
        record["labels"] = list(cell.labels)
    deps = _export_dependencies(cell, beads.pop("dependencies", {}))
    if deps:
        record["dependencies"] = deps
    if cell.comments:
        said = texts.get("comments")
        said = said if isinstance(said, dict) else {}
        record["comments"] = [_export_comment(cell.id, c, said.get(c.id)) for c in cell.comments]
    empty = beads.pop("empty", {})
    record.update(beads)
    for key, value in (empty if isinstance(empty, dict) else {}).items():
        record.setdefault(key, value)
    hive = _hive_only(cell)
    if hive:
        record[HIVE_KEY] = hive
    return record


def _original_title(original: Any, current: str) -> str:
    if isinstance(original, str) and " ".join(original.split()) == " ".join(current.split()):
        return original
    return current


def _export_status(cell: Cell, original: Any) -> str:
    if cell.is_deleted:
        return "tombstone"
    mapped = STATUS_MAP.get(original, "open") if isinstance(original, str) else None
    if original != "tombstone" and mapped == cell.status:
        return str(original)
    return cell.status


def _export_dependencies(cell: Cell, originals: dict[str, Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for dep in cell.dependencies:
        kept = originals.get(f"{dep.type}:{dep.target}") or [{}]
        for item in kept:
            entry = {"issue_id": cell.id, "depends_on_id": dep.target, "type": dep.type}
            entry.update(item)
            found.append(entry)
    has_edge = any(d.type == "parent-child" and d.target == cell.parent for d in cell.dependencies)
    if cell.parent and not has_edge and BEADS_KEY not in cell.metadata:
        # a hive child: beads says it with an edge
        found.append({"issue_id": cell.id, "depends_on_id": cell.parent, "type": "parent-child"})
    return found


def _export_time(value: datetime, text: Any) -> str:
    """``value`` as the record wrote it (``text``, kept by the import) while it is still
    that instant; else in UTC (a time changed in hive, or a cell made here)."""
    if isinstance(text, str):
        try:
            if parse_time(text, "time") == value:
                return text
        except _LineError:
            pass
    return format_time(value)


def _export_comment(cell_id: str, comment: Comment, text: Any = None) -> dict[str, Any]:
    ident: Any = int(comment.id) if comment.id.isdigit() else comment.id
    return {
        "id": ident,
        "issue_id": cell_id,
        "author": comment.author,
        "text": comment.text,
        "created_at": _export_time(comment.created_at, text),
    }


def _hive_only(cell: Cell) -> dict[str, Any]:
    found: dict[str, Any] = {}
    if cell.files_owned:
        found["files_owned"] = list(cell.files_owned)
    metadata = {k: v for k, v in cell.metadata.items() if k != BEADS_KEY}
    if metadata:
        found["metadata"] = metadata
    if cell.started_at is not None:
        found["started_at"] = format_time(cell.started_at)
    if cell.conflicts:
        found["conflicts"] = [c.model_dump(mode="json") for c in cell.conflicts]
    if cell.parent != parent_from_id(cell.id):
        found["parent"] = cell.parent
    return found


# ------------------------------------------------------------------ operations


def import_beads(
    ws: Workspace,
    *,
    path: str,
    update: bool = False,
    overwrite: bool = False,
    progress: Progress | None = None,
) -> BeadsImportResult:
    """Import a beads JSONL export: every record becomes a cell, in one commit.

    Any malformed line (bad JSON, a bad field) is reported with its line number
    and nothing is written. Ids already in the hive are skipped; with ``update`` a
    record replaces its cell when the record is newer (:func:`record_is_newer`: the
    later ``updated_at`` wins, beads' own rule), and the others are kept and named;
    ``overwrite`` replaces every cell the file has otherwise, whatever its time.

    The records are read and converted one at a time, twice: once to check every
    line and keep what the plan decides with (:class:`_Found`), once more as their
    cells are written (``MixedPlan.stream``), so no list of records or of cells is
    held (only the cells of ids the hive already has, to compare them).
    """
    name = STDIN_NAME if path == "-" else os.path.basename(path) or path
    source = _Source(_read_file(path), name)
    found, mapped_status, mapped_type = source.scan(progress, _ids_here(ws))

    def plan(snap: Snapshot, index: CellIndex) -> MixedPlan:
        ws.config(snap)
        return _import_plan(found, index, source, update, overwrite, progress)

    written = ws.write_mixed(plan, event="import")
    return _import_result(path, found, mapped_status, mapped_type, written, progress)


def _import_plan(
    found: list[_Found],
    index: CellIndex,
    source: _Source,
    update: bool,
    overwrite: bool,
    progress: Progress | None,
) -> MixedPlan:
    """The import's commit: the records new to the hive and those replacing their cells,
    and the counts and warnings :func:`_import_result` reports."""
    fresh = [f for f in found if f.id not in index.cells and not index.is_unreadable(f.id)]
    differ = [f for f in found if f.id in index.cells and index.cells[f.id] != source.cell(f)]
    replaced, kept = _replaced_and_kept(differ, index, update, overwrite, source)
    wanted = fresh + replaced
    if progress is not None:
        progress("committing", 0, len(wanted))
    result = {
        "imported": len(fresh),
        "updated": len(replaced),
        "skipped": len(found) - len(fresh) - len(replaced),
        # skipped, yet the file says something else: a person must hear of it
        "differing": [] if update or overwrite else [f.id for f in differ],
        "kept_ids": [f.id for f in kept],
        "warnings": _import_warnings(found, index, wanted),
    }
    title = f"{counted(len(wanted), 'cell')} from {source.name}"
    subject = wanted[0].id if len(wanted) == 1 else "beads"
    cells = (source.cell(f) for f in wanted)
    return MixedPlan(cells=[], subject_id=subject, title=title, result=result, stream=cells)


def _import_warnings(found: list[_Found], index: CellIndex, wanted: list[_Found]) -> list[str]:
    """Ids in the hive whose files cannot be read (neither skipped as the same nor
    replaced), then what the cells written do to the hive's graph."""
    unreadable = [f.id for f in found if f.id not in index.cells and index.is_unreadable(f.id)]
    new = {f.id: f.light for f in wanted}
    return unreadable_warnings(unreadable) + graph_warnings(index, new)


def _import_result(
    path: str,
    found: list[_Found],
    mapped_status: dict[str, int],
    mapped_type: dict[str, int],
    written: WriteResult,
    progress: Progress | None,
) -> BeadsImportResult:
    counts: dict[str, Any] = written.result
    differing: list[str] = counts.pop("differing")
    counts["kept"] = len(counts["kept_ids"])
    warnings: list[str] = counts.pop("warnings")
    if progress is not None:
        done = counts["imported"] + counts["updated"]
        progress("committing", done, done)
    changed = counts["imported"] + counts["updated"]
    return BeadsImportResult(
        source="standard input" if path == "-" else path,
        records=len(found),
        commit=written.commit if changed else None,
        mapped_statuses=mapped_status,
        mapped_types=mapped_type,
        differing=len(differing),
        differing_ids=differing[:MAX_ERRORS_SHOWN],
        warnings=warnings,
        **counts,
    )


class _Found:
    """One good record of the export: where it is, and what the plan needs of its cell
    without holding the cell (its graph facts; the cell itself only when the hive had
    its id when the file was read, to compare them)."""

    __slots__ = ("cell", "dated", "end", "id", "light", "start")

    def __init__(self, cell: Cell, start: int, end: int, dated: bool, here: bool) -> None:
        self.id = cell.id
        self.start = start
        self.end = end
        self.dated = dated  # the record has an updated_at (see record_is_newer)
        self.light = LightCell(
            {
                "type": cell.type,
                "parent": cell.parent,
                "deleted_at": cell.deleted_at,
                "dependencies": [{"type": d.type, "target": d.target} for d in cell.dependencies],
            }
        )
        self.cell = cell if here else None


class _Source:
    """A beads export's bytes, read a record at a time."""

    def __init__(self, data: bytes, name: str) -> None:
        self.data = data
        self.name = name

    def scan(
        self, progress: Progress | None, here: Container[str]
    ) -> tuple[list[_Found], dict[str, int], dict[str, int]]:
        """Every record checked and converted (raises, naming every bad line, when any
        is bad): what the plan needs of each, and the statuses and types beads had that
        hive maps (counted per original value)."""
        errors: list[str] = []
        found: list[_Found] = []
        seen: dict[str, int] = {}
        mapped_status: dict[str, int] = {}
        mapped_type: dict[str, int] = {}
        total = sum(1 for _, start, end in _line_spans(self.data) if self.data[start:end].strip())
        step = max(1, total // 100)
        done = 0
        for number, start, end in _line_spans(self.data):
            record = _record_at(self.data[start:end], self.name, number, errors)
            if record is None:
                continue
            done += 1
            try:
                cell = cell_from_record(record)
            except _LineError as exc:
                errors.append(f"{self.name}:{number}: {_whose(record)}{exc}")
                continue
            if cell.id in seen:
                errors.append(
                    f"{self.name}:{number}: id {cell.id} is already on line {seen[cell.id]}"
                )
                continue
            seen[cell.id] = number
            found.append(_Found(cell, start, end, "updated_at" in record, cell.id in here))
            _count_mapped(cell, mapped_status, mapped_type)
            if progress is not None and (done % step == 0 or done == total):
                progress("reading", done, total)
        _raise_if(errors)  # in the file's order: "name:line: problem"
        return found, mapped_status, mapped_type

    def cell(self, found: _Found) -> Cell:
        """The cell of a record (converted again, as the scan converted it)."""
        if found.cell is not None:
            return found.cell
        record = json.loads(self.data[found.start : found.end].decode("utf-8"))
        return cell_from_record(record)


def _whose(record: dict[str, Any]) -> str:
    """``bd-2: ``, the id of a record a problem is reported for (nothing when its id is
    not one: that problem names the id as given)."""
    given = record.get("id")
    if isinstance(given, str) and is_valid_id(given.strip().lower()):
        return f"{given.strip().lower()}: "
    return ""


def _ids_here(ws: Workspace) -> Container[str]:
    """The ids the hive has now (their records' cells are kept to compare with them; an
    id the hive gains before the write is converted again instead)."""
    try:
        return ws.cells(ws.snapshot()).blobs
    except HiveError:  # not initialized, ...: the write says so
        return frozenset()


def _count_mapped(cell: Cell, statuses: dict[str, int], types: dict[str, int]) -> None:
    beads = cell.metadata.get(BEADS_KEY) or {}
    if "status" in beads:
        statuses[str(beads["status"])] = statuses.get(str(beads["status"]), 0) + 1
    if "issue_type" in beads:
        kind = str(beads["issue_type"])
        types[kind] = types.get(kind, 0) + 1


def record_is_newer(record: Cell, here: Cell, dated: bool) -> bool:
    """Whether a record's version replaces the cell here under ``--update``: beads'
    own merge rule, the later ``updated_at`` wins. The times are compared as instants
    (a record's time zone does not matter; beads' nanoseconds are cut to the
    microseconds hive stores). An equal time is not later: the cell here stays (the
    same instant with other content is a hand edit or another database's issue under
    a reused id, not a newer edit). A record without ``updated_at`` (``dated`` false)
    has no edit time to compare, so it is never newer."""
    return dated and record.updated_at > here.updated_at


def _replaced_and_kept(
    differ: list[_Found], index: CellIndex, update: bool, overwrite: bool, source: _Source
) -> tuple[list[_Found], list[_Found]]:
    """Of the records whose cell here differs: those that replace it, and those kept
    out because the cell here is as new or newer (``--update`` only)."""
    if overwrite:
        return differ, []
    if not update:
        return [], []
    replaced: list[_Found] = []
    kept: list[_Found] = []
    for found in differ:
        newer = record_is_newer(source.cell(found), index.cells[found.id], found.dated)
        (replaced if newer else kept).append(found)
    return replaced, kept


def unreadable_warnings(ids: list[str]) -> list[str]:
    """The records skipped because their cell here cannot be read (``--update`` cannot
    replace a file it cannot read either)."""
    if not ids:
        return []
    return [
        f"{counted(len(ids), 'record')} skipped: the cell file here cannot be read"
        f" ({_some(ids)}); not replaced, --update neither ('hive doctor' names the file)"
    ]


def graph_warnings(index: CellIndex, new: dict[str, LightCell]) -> list[str]:
    """What the written cells' links say that a person should hear of (each is kept as
    the file has it, and ``hive doctor`` lists every one): targets and parents that are
    in neither the file nor the hive, and ordering cycles."""
    cells = new.values()

    def missing(cell_id: str) -> bool:
        return cell_id not in new and cell_id not in index.cells

    found: list[str] = []
    targets = sorted({d.target for c in cells for d in c.dependencies if missing(d.target)})
    if targets:
        found.append(
            f"{counted(len(targets), 'dependency target')} in neither the file nor the hive"
            f" ({_some(targets)}): kept; a missing blocker does not block ('hive doctor'"
            " lists them)"
        )
    parents = sorted({c.parent for c in cells if c.parent is not None and missing(c.parent)})
    if parents:
        found.append(
            f"{counted(len(parents), 'parent')} of subtasks in neither the file nor the hive"
            f" ({_some(parents)}): the subtasks are kept ('hive doctor' lists them)"
        )
    cycles = cycles_through(index, new)
    for cycle in cycles[:MAX_ERRORS_SHOWN]:
        found.append(
            "dependency cycle: " + " -> ".join(cycle) + " (kept as the file has it; 'hive dep"
            " remove' breaks it)"
        )
    if len(cycles) > MAX_ERRORS_SHOWN:
        found.append(f"and {len(cycles) - MAX_ERRORS_SHOWN} more dependency cycles")
    return found


def _some(ids: list[str]) -> str:
    more = ", ..." if len(ids) > 3 else ""
    return ", ".join(ids[:3]) + more


def _read_file(path: str) -> bytes:
    """The export's bytes (``-``: standard input, as in ``bd export | hive import beads
    -``), unpacked when gzipped, without an opening byte order mark."""
    data = _standard_input() if path == "-" else _file_bytes(path)
    name = STDIN_NAME if path == "-" else path
    data = _gunzip(data, name) if data.startswith(GZIP_MAGIC) else data
    return data.removeprefix(UTF8_BOM)  # an editor's mark of UTF-8 (Notepad), not a record


def _standard_input() -> bytes:
    data = sys.stdin.buffer.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise InvalidInput(f"{STDIN_NAME}: larger than {MAX_FILE_BYTES // 2**20} MiB")
    return data


def _file_bytes(path: str) -> bytes:
    try:
        if os.path.getsize(path) > MAX_FILE_BYTES:
            raise InvalidInput(f"{path}: larger than {MAX_FILE_BYTES // 2**20} MiB")
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        raise NotFound(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InvalidInput(f"{path}: is a directory, not a JSONL file") from None
    except OSError as exc:
        raise InvalidInput(f"{path}: cannot read it ({exc.strerror})") from None


def _gunzip(data: bytes, path: str) -> bytes:
    """A gzipped export (``issues.jsonl.gz``), unpacked up to the same size limit."""
    import zlib

    unpacker = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)  # gzip framing
    try:
        text = unpacker.decompress(data, MAX_FILE_BYTES + 1)
    except zlib.error as exc:
        raise InvalidInput(f"{path}: looks gzipped but cannot be unpacked ({exc})") from None
    if len(text) > MAX_FILE_BYTES:
        raise InvalidInput(f"{path}: larger than {MAX_FILE_BYTES // 2**20} MiB unpacked")
    if not unpacker.eof:
        raise InvalidInput(f"{path}: the gzipped file is truncated")
    return text


def export_beads(
    ws: Workspace, *, path: str | None = None, include_deleted: bool = True
) -> BeadsExportResult:
    """Every cell as one beads JSONL line (sorted by id); to ``path``, or returned."""
    index = ws.cells()
    cells = sorted(index.cells.values(), key=lambda c: c.id)
    if not include_deleted:
        cells = [c for c in cells if not c.is_deleted]
    lines = _lines(record_from_cell(c) for c in cells)
    text = "".join(lines)
    if path is None:
        return BeadsExportResult(path=None, records=len(lines), text=text)
    temp = f"{path}.hive-tmp-{os.getpid()}"
    try:
        with open(temp, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temp, path)
    except OSError as exc:
        raise InvalidInput(f"{path}: cannot write it ({exc.strerror})") from None
    return BeadsExportResult(path=path, records=len(lines))


def _lines(records: Iterable[dict[str, Any]]) -> list[str]:
    """One JSON line per record, each one line to every reader: U+2028, U+2029 (as
    beads' own export writes them) and NEL and the other C1 controls written as ``\\u``
    escapes (``str.splitlines`` and JavaScript end a line at them raw)."""
    return [dumps(r, separators=(",", ":")).translate(_SEPARATORS) + "\n" for r in records]


_SEPARATORS = {0x2028: "\\u2028", 0x2029: "\\u2029"}
