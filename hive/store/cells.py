"""Cells as YAML documents: deterministic key order, empty fields left out
(the order and rules live in ``hive/store/celldoc.py``, shared with the lean path)."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError
from pydantic_core import to_json

from hive.errors import CorruptFile
from hive.jsontext import inert_bytes
from hive.models import Cell, HiveConfig
from hive.models.cell import first_error
from hive.store.celldoc import ALWAYS_WRITTEN, FIELD_ORDER, document_of, format_time
from hive.store.index import ParsedCell, ParseProblem
from hive.store.yamlio import dumps, line_of, load_mapping

__all__ = ["ALWAYS_WRITTEN", "FIELD_ORDER", "format_time"]


def cell_document(cell: Cell) -> dict[str, Any]:
    """The ordered mapping written to disk for ``cell``."""
    return document_of(cell.model_dump(mode="python"))


def encode_cell(cell: Cell) -> bytes:
    return dumps(cell_document(cell)).encode("utf-8")


def utf8_text(data: bytes, path: str) -> str:
    """The file ``path`` holding ``data`` as text; bytes that are not UTF-8 are a
    CorruptFile naming the file and the line."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise CorruptFile(
            f"{path}:{line}: not valid UTF-8 ({exc.reason})", path=path, line=line
        ) from None


def decode_cell(data: bytes, path: str) -> Cell:
    """Parse and validate one cell file; errors name the path (and line when known)."""
    text = utf8_text(data, path)
    mapping = load_mapping(text, path)
    try:
        return Cell.model_validate(mapping)
    except ValidationError as exc:
        raise _invalid(exc, text, path) from None


def parsed_cell(cell: Cell) -> ParsedCell:
    """What the state index keeps of ``cell``."""
    return ParsedCell(
        id=cell.id,
        status=cell.status,
        type=cell.type,
        priority=cell.priority,
        parent=cell.parent,
        assignee=cell.assignee,
        title=cell.title,
        labels=list(cell.labels),
        created=cell.created_at.timestamp(),
        deleted=cell.deleted_at is not None,
        dependencies=[(dep.type, dep.target) for dep in cell.dependencies],
        json=inert_bytes(to_json(cell, indent=2)),  # as --json prints it: celldoc.json_of
    )


def parse_for_index(data: bytes, path: str) -> ParsedCell | ParseProblem:
    """:func:`decode_cell` for the state index: a problem is a value, not an error."""
    try:
        return parsed_cell(decode_cell(data, path))
    except CorruptFile as exc:
        line = exc.details.get("line")
        return ParseProblem(
            message=exc.message, path=path, line=line if isinstance(line, int) else None
        )


def _invalid(exc: ValidationError, text: str, path: str) -> CorruptFile:
    """``path:line: invalid field 'x': why``, the line being that of the offending key."""
    line = line_of(text, exc.errors()[0]["loc"])
    where, why = first_error(exc)
    extra = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    message = f"{path}:{line}: invalid field {where or 'document'!r}: {why}{extra}"
    return CorruptFile(message, path=path, line=line)


def encode_config(config: HiveConfig) -> bytes:
    document = config.model_dump(mode="python")
    return dumps(document).encode("utf-8")


def decode_config(data: bytes, path: str) -> HiveConfig:
    """Parse and validate the config file (a line not UTF-8, where it was read with
    replacement characters, included); errors name the path and line."""
    text = utf8_text(data, path)
    mapping = load_mapping(text, path)
    try:
        return HiveConfig.model_validate(mapping)
    except ValidationError as exc:
        raise _invalid(exc, text, path) from None
