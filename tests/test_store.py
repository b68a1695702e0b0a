"""The store layer: deterministic YAML, ids, layout."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hive.errors import CorruptFile
from hive.models import Cell
from hive.store.cells import decode_cell, encode_cell
from hive.store.ids import is_valid_id, new_child_id, new_root_id, parent_from_id
from hive.store.layout import cell_id_from_path, cell_path
from hive.store.yamlio import dumps, loads

text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=40
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**40), max_value=2**40),
    st.floats(allow_nan=False, allow_infinity=True),
    text,
    st.sampled_from(
        ["yes", "No", "null", "~", "007", "1e5", "2026-01-02", "a: b", "- x", "#c", ""]
    ),
)
documents = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.text(min_size=1, max_size=8), inner, max_size=4),
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(min_size=1, max_size=10), documents, min_size=1, max_size=6))
def test_yaml_round_trips_any_document(document: dict[str, Any]) -> None:
    assert loads(dumps(document)) == document


@settings(max_examples=200, deadline=None)
@given(text, text)
def test_multiline_text_round_trips(first: str, second: str) -> None:
    value = f"{first}\n{second}"
    for variant in (value, value + "\n", value + "\n\n", "\n" + value):
        assert loads(dumps({"description": variant})) == {"description": variant}


def test_dump_is_deterministic_and_readable() -> None:
    document = {"title": "Fix login", "description": "line one\nline two\n", "labels": ["a", "yes"]}
    assert dumps(document) == dumps(dict(document))
    assert dumps(document) == (
        'title: Fix login\ndescription: |\n  line one\n  line two\nlabels:\n  - a\n  - "yes"\n'
    )


def _cell(**extra: Any) -> Cell:
    now = datetime(2026, 11, 22, 12, 0, 0, 123000, tzinfo=UTC)
    return Cell.model_validate(
        {"id": "hv-abc123", "title": "t", "created_at": now, "updated_at": now, **extra}
    )


def test_cell_encoding_round_trips_and_omits_empty_fields() -> None:
    cell = _cell(priority=0, description="multi\nline", metadata={"k": [1, "two"]})
    encoded = encode_cell(cell)
    assert decode_cell(encoded, "p") == cell
    text_form = encoded.decode()
    assert "priority: 0" in text_form
    assert "assignee" not in text_form and "labels" not in text_form
    assert 'created_at: "2026-11-22T12:00:00.123Z"' in text_form


def test_decode_errors_name_path_and_line() -> None:
    with pytest.raises(CorruptFile, match=r"x\.yaml:2: malformed YAML"):
        decode_cell(b"id: a\ntitle: [oops\n", "x.yaml")
    with pytest.raises(CorruptFile, match="invalid field 'priority'"):
        decode_cell(encode_cell(_cell()).replace(b"priority: 2", b"priority: 9"), "x.yaml")
    with pytest.raises(CorruptFile, match="expected a mapping"):
        decode_cell(b"- a\n- b\n", "x.yaml")


def test_ids_are_random_show_their_parent_and_avoid_known_ids() -> None:
    taken: set[str] = set()
    roots = {new_root_id("hv", 6, taken.__contains__) for _ in range(200)}
    assert len(roots) == 200
    root = next(iter(roots))
    child = new_child_id(root, 3, taken.__contains__)
    assert child.startswith(root + ".") and parent_from_id(child) == root
    blocked = {f"hv-{c}" for c in "x"}
    assert new_root_id("hv", 6, blocked.__contains__) not in blocked


def test_layout_shards_children_with_their_parent() -> None:
    assert cell_path("hv-ab12cd") == ".hive/cells/a/hv-ab12cd.yaml"
    assert cell_path("hv-ab12cd.x1") == ".hive/cells/a/hv-ab12cd.x1.yaml"
    assert cell_id_from_path(".hive/cells/a/hv-ab12cd.x1.yaml") == "hv-ab12cd.x1"
    assert cell_id_from_path(".hive/config.yaml") is None


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (b"priority: 2", b"priority: 9", r"x\.yaml:5: invalid field 'priority': .*less than"),
        (b"status: open", b"status: done", r"x\.yaml:4: invalid field 'status'"),
        (b"type: task", b"type: task\nbogus: 1", r"x\.yaml:4: invalid field 'bogus'"),
        (b"title: t", b"title: ''", r"x\.yaml:2: invalid field 'title'"),
        (b"id: hv-abc123\n", b"", r"x\.yaml:1: invalid field 'id': Field required"),
        (
            b"priority: 2",
            b"priority: 2\ndependencies:\n  - type: blocks\n    target: hv-x\n  - type: nope\n"
            b"    target: hv-y",
            r"x\.yaml:9: invalid field 'dependencies\.1\.type'",
        ),
        (
            b"status: open",
            b"status: open\nstatus: closed",
            r"x\.yaml:5: 'status' is set twice \(first on line 4\): keep one",
        ),
    ],
)
def test_invalid_fields_are_reported_with_the_line_of_their_key(
    old: bytes, new: bytes, expected: str
) -> None:
    text = encode_cell(_cell(id="hv-abc123", title="t"))
    assert old in text
    with pytest.raises(CorruptFile, match=expected) as raised:
        decode_cell(text.replace(old, new, 1), "x.yaml")
    assert raised.value.details["line"] == int(expected.split(":")[1])


def test_an_empty_or_undecodable_file_names_a_line() -> None:
    with pytest.raises(CorruptFile, match=r"^x\.yaml:1: expected a mapping"):
        decode_cell(b"", "x.yaml")
    with pytest.raises(CorruptFile, match=r"^x\.yaml:2: not valid UTF-8"):
        decode_cell(b"id: a\ntitle: \xff\n", "x.yaml")


# The id grammar as a regular expression (what ``is_valid_id`` decides without ``re``).
ID_RE = re.compile(r"^[a-z0-9_]+(?:-[a-z0-9_]+)+(\.[a-z0-9_]+)*$")


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet="ab9_-.\nZé \t", max_size=14))
def test_id_validity_is_the_regular_expressions(text: str) -> None:
    assert is_valid_id(text) == bool(ID_RE.match(text))


@pytest.mark.parametrize(
    "text",
    [
        "hv-abc",
        "hv-abc.x1.y2",
        "bd-wisp-0385z",
        "hv-abc\n",
        "hv-abc\n\n",
        "hv",
        "-a",
        "a-",
        "a--b",
        "a-b.",
        "a-b..c",
        "A-b",
        "",
        "hv-ab c",
        "hv-é",
    ],
)
def test_id_validity_at_the_edges(text: str) -> None:
    assert is_valid_id(text) == bool(ID_RE.match(text))
