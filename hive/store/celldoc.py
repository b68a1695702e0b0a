"""Cell documents without the models: the standard library only.

A fresh ``hive create``/``update``/``close`` process (``hive/cli/lean_write.py``)
reads, changes and writes cells as plain dicts, so it imports neither pydantic
nor the models. A *plain cell* here is a dict with every field of the ``Cell``
model, in the model's order, holding exactly what ``Cell.model_dump()`` holds
(times as UTC datetimes, dependencies as ``{"type", "target"}`` dicts).
:func:`plain_cell` accepts only the documents for which that is certain, and
declines (None) everything else (comments, merge conflicts, floats in
metadata, anything the model would coerce or refuse), so the caller can leave
those to the full path. ``tests/test_lean_write.py`` checks every function
here against the model's own encoding, byte for byte.
"""

from __future__ import annotations

import sys

from hive.jsontext import dumps_scalar, inert_bytes
from hive.store.yamlio import dumps
from hive.times import datetime  # the C class: without the datetime package's Python half
from hive.times import exact_time as exact_time
from hive.times import format_time as format_time
from hive.times import utc_now as utc_now

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from typing import Any

    from hive.store.index import ParsedCell

CELL_TYPES = ("bug", "feature", "task", "epic", "chore")
STATUSES = ("open", "in_progress", "blocked", "deferred", "closed")
DEPENDENCY_TYPES = ("blocks", "parent-child", "related", "discovered-from")

# the Cell model's fields in its order (to_json, model_dump) and their defaults
MODEL_FIELDS: tuple[str, ...] = (
    "id",
    "title",
    "description",
    "type",
    "status",
    "priority",
    "labels",
    "assignee",
    "parent",
    "dependencies",
    "files_owned",
    "design",
    "acceptance_criteria",
    "notes",
    "comments",
    "created_at",
    "created_by",
    "updated_at",
    "started_at",
    "closed_at",
    "close_reason",
    "deleted_at",
    "metadata",
    "conflicts",
)
REQUIRED = ("id", "title", "created_at", "updated_at")
_TEXTS = ("description", "design", "acceptance_criteria", "notes", "created_by")
_OPTIONAL_TEXTS = ("assignee", "parent", "close_reason")
_TIMES = ("created_at", "updated_at", "started_at", "closed_at", "deleted_at")
_LISTS = ("labels", "files_owned")
_EMPTY_ONLY = ("comments", "conflicts")

# the on-disk document: this key order, empty fields left out (store/cells.py)
FIELD_ORDER: tuple[str, ...] = (
    "id",
    "title",
    "type",
    "status",
    "priority",
    "parent",
    "assignee",
    "labels",
    "dependencies",
    "files_owned",
    "description",
    "design",
    "acceptance_criteria",
    "notes",
    "comments",
    "created_at",
    "created_by",
    "updated_at",
    "started_at",
    "closed_at",
    "close_reason",
    "deleted_at",
    "metadata",
    "conflicts",
)
ALWAYS_WRITTEN = frozenset(
    {"id", "title", "type", "status", "priority", "created_at", "updated_at"}
)


def plain(value: Any) -> Any:
    """``value`` as written to YAML: datetimes formatted, containers copied."""
    if isinstance(value, datetime):
        return format_time(value)
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain(item) for item in value]
    return value


def document_of(raw: dict[str, Any]) -> dict[str, Any]:
    """The ordered mapping written to disk for a dumped cell."""
    document: dict[str, Any] = {}
    for name in FIELD_ORDER:
        value = raw[name]
        if name not in ALWAYS_WRITTEN and value in (None, "", [], {}):
            continue
        document[name] = plain(value)
    return document


def encode(cell: dict[str, Any]) -> bytes:
    """The cell file's bytes (what ``encode_cell`` writes for the same cell)."""
    return dumps(document_of(cell)).encode("utf-8")


# ------------------------------------------------------------------ reading


def plain_cell(mapping: object) -> dict[str, Any] | None:
    """The plain cell a parsed cell file holds, when it is certainly what the model
    would make of it; None to leave the file to the model."""
    if not isinstance(mapping, dict) or not _MODEL_FIELD_SET.issuperset(mapping):
        return None
    if not _REQUIRED_SET.issubset(mapping):
        return None
    cell: dict[str, Any] = {}
    for name in MODEL_FIELDS:
        if name in mapping:
            value = _CHECKS[name](mapping[name])
            if value is _DECLINE:
                return None
        else:
            value = default(name)
        cell[name] = value
    return cell


_DECLINE = object()
_MODEL_FIELD_SET = frozenset(MODEL_FIELDS)
_REQUIRED_SET = frozenset(REQUIRED)
_FRESH_LISTS = frozenset((*_LISTS, *_EMPTY_ONLY, "dependencies"))
_DEFAULTS: dict[str, Any] = {
    "type": "task",
    "status": "open",
    "priority": 2,
    **dict.fromkeys(_TEXTS, ""),
}


def default(name: str) -> Any:
    if name in _FRESH_LISTS:
        return []
    if name == "metadata":
        return {}
    return _DEFAULTS.get(name)


def _field(name: str, value: Any) -> Any:
    """The model's value for one field, or _DECLINE."""
    return _CHECKS.get(name, _empty_only)(value)


def _id(value: Any) -> Any:
    return value if isinstance(value, str) and value else _DECLINE


def _text(value: Any) -> Any:
    return value if isinstance(value, str) else _DECLINE


def _optional_text(value: Any) -> Any:
    return value if value is None or isinstance(value, str) else _DECLINE


def _type(value: Any) -> Any:
    return value if value in CELL_TYPES and isinstance(value, str) else _DECLINE


def _status(value: Any) -> Any:
    return value if value in STATUSES and isinstance(value, str) else _DECLINE


def _priority(value: Any) -> Any:
    ok = type(value) is int and 0 <= value <= 4
    return value if ok else _DECLINE


def _strings(value: Any) -> Any:
    ok = isinstance(value, list) and all(isinstance(item, str) for item in value)
    return list(value) if ok else _DECLINE


def _metadata(value: Any) -> Any:
    return value if isinstance(value, dict) and _json_plain(value) else _DECLINE


def _empty_only(value: Any) -> Any:
    return value if value == [] else _DECLINE  # comments, conflicts: the model's job


def _required_time(value: Any) -> Any:
    return _time(value, optional=False)


def _optional_time(value: Any) -> Any:
    return _time(value, optional=True)


def _title(value: Any) -> Any:
    if not isinstance(value, str) or len(value) > 500:
        return _DECLINE
    stripped = value.strip()
    if not stripped or "\n" in stripped:
        return _DECLINE
    return stripped


def _time(value: Any, *, optional: bool) -> Any:
    if value is None:
        return None if optional else _DECLINE
    parsed = exact_time(value)
    return _DECLINE if parsed is None else parsed


def _dependencies(value: Any) -> Any:
    if not isinstance(value, list):
        return _DECLINE
    found = []
    for item in value:
        if not isinstance(item, dict) or set(item) != {"type", "target"}:
            return _DECLINE
        kind, target = item["type"], item["target"]
        if not isinstance(kind, str) or kind not in DEPENDENCY_TYPES:
            return _DECLINE
        if not isinstance(target, str) or not target:
            return _DECLINE
        found.append({"type": kind, "target": target})
    return found


def _json_plain(value: Any) -> bool:
    """Only strings, ints, booleans, None, lists and string-keyed dicts (no floats:
    their JSON spelling differs between serializers)."""
    if value is None or isinstance(value, str | bool):
        return True
    if isinstance(value, int):
        return -(2**63) <= value < 2**63
    if isinstance(value, list):
        return all(_json_plain(item) for item in value)
    if isinstance(value, dict):
        return all(isinstance(key, str) and _json_plain(item) for key, item in value.items())
    return False


# each field's check (``_field``): the model's value, or _DECLINE
_CHECKS: dict[str, Any] = {
    "id": _id,
    "title": _title,
    **dict.fromkeys(_TEXTS, _text),
    **dict.fromkeys(_OPTIONAL_TEXTS, _optional_text),
    **{name: _required_time if name in REQUIRED else _optional_time for name in _TIMES},
    "type": _type,
    "status": _status,
    "priority": _priority,
    **dict.fromkeys(_LISTS, _strings),
    "dependencies": _dependencies,
    "metadata": _metadata,
    **dict.fromkeys(_EMPTY_ONLY, _empty_only),
}


# ------------------------------------------------------------------ JSON and the index


def json_of(cell: dict[str, Any]) -> bytes:
    """The bytes ``pydantic_core.to_json(Cell, indent=2)`` gives for this cell (made
    inert: ``jsontext.inert``, as every JSON answer is, here for the lean paths): by
    pydantic_core itself when a bulk build has loaded it (several times faster per
    cell), else ``json.dumps(..., indent=2)`` spelled out (with an indent, the
    standard library encodes in Python, slower than its C scalar encoder), which
    spares one write the import."""
    core = sys.modules.get("pydantic_core")
    if core is not None:
        encoded: bytes = core.to_json(_json_value(cell), indent=2)
        return inert_bytes(encoded)
    return printed_by_python(cell)


def printed_by_python(cell: Any) -> bytes:
    """``json_of`` without pydantic_core: the same bytes, encoded here (a cell, or
    any JSON value)."""
    parts: list[str] = []
    _pretty(_json_value(cell), "", parts)
    return inert_bytes("".join(parts).encode("utf-8"))


_scalar = dumps_scalar  # json.JSONEncoder(ensure_ascii=False).encode


def _pretty(value: Any, indent: str, out: list[str]) -> None:
    if isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        inner = indent + "  "
        out.append("{\n")
        for number, (key, item) in enumerate(value.items()):
            out.append((",\n" if number else "") + inner + _scalar(key) + ": ")
            _pretty(item, inner, out)
        out.append("\n" + indent + "}")
    elif isinstance(value, list):
        if not value:
            out.append("[]")
            return
        inner = indent + "  "
        out.append("[\n")
        for number, item in enumerate(value):
            out.append((",\n" if number else "") + inner)
            _pretty(item, inner, out)
        out.append("\n" + indent + "]")
    else:
        out.append(_scalar(value))


# values given to the JSON encoder as they are (a plain cell's ~20 of 24 fields): no
# call for each of them (~10 us of each cell a cold build indexes)
_AS_THEY_ARE = frozenset({str, int, bool, float, type(None)})


def _json_value(value: Any) -> Any:
    if isinstance(value, datetime):
        return format_time(value)
    if isinstance(value, dict):
        return {
            key: item if type(item) in _AS_THEY_ARE else _json_value(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [item if type(item) in _AS_THEY_ARE else _json_value(item) for item in value]
    return value


def parsed(cell: dict[str, Any], written: dict[str, Any] | None = None) -> ParsedCell:
    """What the state index keeps of a plain cell (``store/cells.py:parsed_cell``).
    ``written``: the mapping :func:`plain_cell` made ``cell`` of, whose times it found
    spelled exactly as :func:`format_time` spells them: given to the JSON as they are
    (two to five ``format_time`` calls less a cell of a cold build)."""
    from hive.store.index import ParsedCell

    shown = cell
    if written is not None:
        shown = {**cell, **{name: written[name] for name in _TIMES if name in written}}

    return ParsedCell(
        id=cell["id"],
        status=cell["status"],
        type=cell["type"],
        priority=cell["priority"],
        parent=cell["parent"],
        assignee=cell["assignee"],
        title=cell["title"],
        labels=list(cell["labels"]),
        created=cell["created_at"].timestamp(),
        deleted=cell["deleted_at"] is not None,
        dependencies=[(dep["type"], dep["target"]) for dep in cell["dependencies"]],
        json=json_of(shown),
    )
