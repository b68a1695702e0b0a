"""The lean paths keep their own copies of the operations' defaults and limits (they
may not import the parameter models: that is the start-up they save). A copy that
drifts from its operation makes the lean path answer differently from the full one
(a page of another size, a value one refuses and the other takes, a logged call
that names a default as if given), so each copy is checked against its source."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic.fields import FieldInfo

from hive.cli import lean, lean_coord, lean_write
from hive.domain import limits, reservecore
from hive.ops import cells, coord


def _field(model: Any, name: str) -> FieldInfo:
    field: FieldInfo = model.model_fields[name]
    return field


def _bound(field: FieldInfo, kind: str) -> Any:
    """A field's ``le`` or ``max_length`` as its schema declares it."""
    for item in field.metadata:
        if hasattr(item, kind):
            return getattr(item, kind)
    raise AssertionError(f"the field declares no {kind}")


def test_the_pages_of_ready_and_list_are_the_tools_pages() -> None:
    assert _field(cells.ReadyParams, "limit").default == lean.READY_LIMIT
    assert _field(cells.QueryParams, "limit").default == lean.QUERY_LIMIT
    assert _bound(_field(cells.ReadyParams, "limit"), "le") == lean.MAX_LIMIT
    assert _bound(_field(cells.QueryParams, "limit"), "le") == lean.MAX_LIMIT


def test_reserve_defaults_and_bounds_are_the_tools() -> None:
    ttl = _field(coord.ReserveParams, "ttl_seconds")
    assert ttl.default == lean_coord.RESERVE_TTL
    assert _bound(ttl, "le") == reservecore.MAX_TTL
    assert _bound(_field(coord.ReserveParams, "reason"), "max_length") == lean_coord.MAX_REASON
    assert _bound(_field(coord.ReserveParams, "paths"), "max_length") == lean_coord.MAX_PATTERNS
    assert _bound(_field(coord.ReleaseParams, "paths"), "max_length") == lean_coord.MAX_PATTERNS


def test_the_inbox_page_is_the_tools() -> None:
    assert _field(coord.InboxParams, "limit").default == lean_coord.INBOX_PAGE
    assert lean_coord.INBOX_PAGE == coord.MAX_INBOX


def test_reasons_and_titles_have_the_tools_limits() -> None:
    assert _bound(_field(cells.CloseParams, "reason"), "max_length") == lean_write.MAX_REASON
    assert _bound(_field(cells.UpdateParams, "reason"), "max_length") == lean_write.MAX_REASON
    assert _bound(_field(cells.CreateParams, "title"), "max_length") == limits.MAX_TITLE


def test_a_title_past_the_limit_is_left_to_the_full_path() -> None:
    """``checked_title`` defers exactly past ``MAX_TITLE`` (the full path words it)."""
    longest = "t" * limits.MAX_TITLE
    assert lean_write.checked_title(longest) == longest
    with pytest.raises(lean_write.Defer):
        lean_write.checked_title(longest + "t")
