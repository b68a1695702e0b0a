"""The canonical-form YAML reader: it agrees with ruamel or declines, never differs."""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
import time
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from hive.domain import actors
from hive.errors import CorruptFile
from hive.git import configfile
from hive.jsontext import encode_basestring
from hive.models import DEPENDENCY_TYPES, Cell
from hive.store import yamlfast, yamlio
from hive.store.cells import decode_cell, encode_cell
from hive.store.yamlfast import fast_loads
from hive.store.yamlio import YamlError, dumps, loads, ruamel_loads
from hive.text import first_control, without_control

TRICKY = [
    "yes",
    "No",
    "ON",
    "y",
    "n",
    "null",
    "Null",
    "~",
    "true",
    "False",
    "nan",
    ".nan",
    "inf",
    "-.inf",
    "007",
    "0",
    "-0",
    "1e3",
    "1_000",
    "0x1f",
    "0o17",
    "+1",
    "1.",
    ".5",
    "1:30",
    "2026-01-02",
    "2026-01-02T03:04:05Z",
    "- x",
    "-",
    "--- x",
    "...",
    ": ",
    "a: b",
    "a:b",
    "#",
    "a #b",
    "a#b",
    "&a",
    "*a",
    "!tag",
    "%x",
    "@x",
    "`x",
    "'q'",
    '"q"',
    "it's",
    "a\tb",
    "\t",
    " lead",
    "trail ",
    "[x]",
    "{x}",
    "x, y",
    "?",
    "? x",
    "|",
    ">",
    "a | b",
    "\\",
    "\\n",
    "_",
    "/",
    "/a/b",
    "a/b (c)",
    "\x85",
    "\u2028",
    "\ufeff",
    "\ufffe",
    "\x7f",
    "\r",
    "\x00",
    "\uffff",
    "é",
    "日本",
    "\U0001f600",
    "\U0010ffff",
    "",
]
# HIVE_FUZZ_SCALE=20 runs twenty times as many examples (done before landing changes here).
SCALE = int(os.environ.get("HIVE_FUZZ_SCALE", "1"))
characters = st.characters(blacklist_categories=("Cs",))
words = st.one_of(st.text(characters, max_size=30), st.sampled_from(TRICKY))
lines_of_text = st.lists(
    st.one_of(words, st.sampled_from(["", " ", "  indented", "trailing  ", "- item", "a: b"])),
    min_size=1,
    max_size=6,
)
multiline = st.builds(
    lambda lines, before, after: "\n" * before + "\n".join(lines) + "\n" * after,
    lines_of_text,
    st.integers(0, 2),
    st.integers(0, 3),
)
long_text = st.builds(lambda word, times: word * times, words, st.integers(50, 400))
texts = st.one_of(words, multiline, long_text)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False),
    texts,
)
documents = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(words, inner, max_size=4)),
    max_leaves=16,
)
top_level = st.dictionaries(words, documents, min_size=1, max_size=6)


def strict(value: Any) -> Any:
    """``value`` with every type made visible (``1 == 1.0 == True`` in Python)."""
    if isinstance(value, dict):
        return ("dict", [(strict(k), strict(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [strict(item) for item in value])
    return (type(value).__name__, repr(value))


def assert_declines_or_agrees(text: str) -> None:
    fast = fast_loads(text)
    if fast is None:
        return
    assert strict(fast) == strict(ruamel_loads(text)), text


@settings(max_examples=300 * SCALE, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(top_level)
@example({"description": "line one\n  indented\n\n", "k": [[], {}, [["x"]], {"a": {"b": 1}}]})
@example({"\ufffe": "\uffff", "k": "a\ufffeb\nc\n"})
@example({"x": 1e16, "y": -0.0, "z": 1e-05, "w": float("inf"), "v": -(2**70)})
def test_canonical_documents_are_read_fast_and_as_ruamel_reads_them(doc: dict[str, Any]) -> None:
    text = dumps(doc)
    expected = ruamel_loads(text)
    fast = fast_loads(text)
    assert fast is not None, text
    assert strict(fast) == strict(expected) == strict(doc)


def test_a_long_unclosed_quote_is_declined_in_linear_time() -> None:
    line = '"\\n' + "a" * 100_000 + '" x"'
    started = time.process_time()  # CPU: the work, not the wait for a core
    assert fast_loads(f"k: {line}\n{line}: v\n") is None
    assert time.process_time() - started < 1


def test_nan_is_read_as_nan() -> None:
    assert math.isnan(fast_loads("x: .nan\n")["x"])  # type: ignore[index]


times = st.datetimes(
    min_value=datetime(1970, 1, 1), max_value=datetime(2200, 1, 1), timezones=st.just(UTC)
).map(lambda t: t.replace(microsecond=t.microsecond // 1000 * 1000))
# ``hv-[a-z0-9]{6}(\.[a-z0-9]{3}){0,2}``, built from texts (from_regex costs twice as much)
ID_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789"
ids = st.builds(
    lambda head, tails: "hv-" + head + "".join("." + tail for tail in tails),
    st.text(ID_CHARS, min_size=6, max_size=6),
    st.lists(st.text(ID_CHARS, min_size=3, max_size=3), max_size=2),
)
titles = st.one_of(words, st.text(characters, min_size=1, max_size=600)).filter(
    lambda t: t.strip() and "\n" not in t.strip() and len(t) <= 500
)
dependencies = st.lists(
    st.fixed_dictionaries({"type": st.sampled_from(DEPENDENCY_TYPES), "target": ids}), max_size=3
)
optional_time = st.one_of(st.none(), times)
# The encoder leaves out empty fields, so an optional text is None or not empty.
optional_text = st.one_of(st.none(), texts.filter(bool))
cells = st.builds(
    lambda fields: Cell.model_validate(fields),
    st.fixed_dictionaries(
        {
            "id": ids,
            "title": titles,
            "created_at": times,
            "updated_at": times,
        },
        optional={
            "type": st.sampled_from(["bug", "feature", "task", "epic", "chore"]),
            "status": st.sampled_from(["open", "in_progress", "blocked", "deferred", "closed"]),
            "priority": st.integers(0, 4),
            "parent": st.one_of(st.none(), ids),
            "assignee": optional_text,
            "labels": st.lists(words, max_size=4),
            "dependencies": dependencies,
            "files_owned": st.lists(words, max_size=3),
            "description": texts,
            "notes": texts,
            "created_by": words,
            "started_at": optional_time,
            "closed_at": optional_time,
            "close_reason": optional_text,
            "deleted_at": optional_time,
            "metadata": st.dictionaries(words, documents, max_size=4),
        },
    ),
)


@settings(max_examples=200 * SCALE, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cells)
def test_any_cell_round_trips_through_the_fast_path(cell: Cell) -> None:
    data = encode_cell(cell)
    text = data.decode("utf-8")
    old = Cell.model_validate(ruamel_loads(text))
    assert fast_loads(text) is not None
    decoded = decode_cell(data, "x.yaml")
    assert decoded == cell == old
    assert decoded.model_fields_set == old.model_fields_set


yaml_fragments = st.sampled_from(
    [
        "a",
        "b",
        "key",
        "k.x",
        "_",
        "null",
        "yes",
        "1",
        "-1",
        "1.5",
        "1e+3",
        "007",
        ".inf",
        "[]",
        "{}",
        "[a]",
        "{a: 1}",
        "|",
        "|-",
        "|+",
        "|2",
        ">",
        '"',
        '"a"',
        '"a\\nb"',
        '"\\/"',
        '"\\ud800"',
        '"\\x41"',
        "'a'",
        "#",
        " #c",
        "&x",
        "*x",
        "!!str",
        "- ",
        "-",
        ": ",
        ":",
        "? ",
        "\t",
        " ",
        "  ",
        "---",
        "...",
        "%YAML 1.1",
        "\\",
        "é",
    ]
)
yaml_lines = st.lists(
    st.builds(
        lambda indent, parts: " " * indent + "".join(parts),
        st.integers(0, 6),
        st.lists(yaml_fragments, max_size=5),
    ),
    min_size=1,
    max_size=8,
)


@settings(max_examples=400 * SCALE, deadline=None)
@given(yaml_lines)
def test_yamlish_texts_are_declined_or_read_as_ruamel_reads_them(lines: list[str]) -> None:
    assert_declines_or_agrees("\n".join(lines) + "\n")


edit_counts = st.integers(1, 3)
cuts = st.integers(0, 3)
inserts = st.one_of(st.just(""), yaml_fragments, st.sampled_from(["\n", "\n  "]))


@st.composite
def edited_canonical_texts(draw: st.DrawFn) -> str:
    """A canonical document's text with one to three cuts and insertions at drawn places
    (one example argument: a test's ``data.draw`` costs more than a draw here)."""
    text = dumps(draw(top_level))
    for _ in range(draw(edit_counts)):
        at = draw(st.integers(0, len(text)))
        cut = draw(cuts)
        insert = draw(inserts)
        text = text[:at] + insert + text[at + cut :]
    return text


@settings(max_examples=400 * SCALE, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edited_canonical_texts())
def test_edited_canonical_texts_are_declined_or_read_as_ruamel_reads_them(text: str) -> None:
    assert_declines_or_agrees(text)


HANDWRITTEN = [
    "id: a  # a comment\n",
    "# leading comment\nid: a\n",
    "id: a\n\ntitle: b\n",
    "labels: [a, b]\n",
    "metadata: {k: 1}\n",
    "base: &b x\nother: *b\n",
    "id: 'single'\n",
    "labels:\n- a\n- b\n",
    "metadata:\n    deep: 1\n",
    "description: |2\n    indented\n",
    "description: |\n    more indented\n",
    "description: >\n  folded\n  text\n",
    "id: a\nid: b\n",
    "title: two\n  lines\n",
    'title: "two\n  lines"\n',
    "---\nid: a\n",
    "id: a\n...\n",
    "id: a",
    "id: a\r\n",
    "id:\ta\n",
    "\ufeffid: a\n",
    "yes: 1\n",
    "id: !!str 1\n",
    "created_at: 2026-01-02T03:04:05Z\n",
    "n: 0o17\n",
    "n: 1_000\n",
]


@pytest.mark.parametrize("text", HANDWRITTEN)
def test_handwritten_yaml_falls_back_to_ruamel_with_the_same_answer(text: str) -> None:
    assert fast_loads(text) is None
    try:
        expected: Any = ruamel_loads(text)
    except YamlError as exc:
        with pytest.raises(YamlError) as raised:
            loads(text)
        assert (str(raised.value), raised.value.line) == (str(exc), exc.line)
        return
    assert strict(loads(text)) == strict(expected)


def test_an_edited_cell_still_decodes_as_before() -> None:
    now = datetime(2026, 11, 22, 12, 0, 0, 123000, tzinfo=UTC)
    cell = Cell(id="hv-abc123", title="t", labels=["a", "b"], created_at=now, updated_at=now)
    text = encode_cell(cell).decode()
    edited = "# edited by hand\n" + text.replace("labels:\n  - a\n  - b\n", "labels: [a, b]  # x\n")
    assert fast_loads(edited) is None
    assert decode_cell(edited.encode(), "x.yaml") == cell
    with pytest.raises(CorruptFile, match=r"^x\.yaml:11: 'id' is set twice \(first on line 1\)"):
        decode_cell((text + "id: hv-x\n").encode(), "x.yaml")


def test_reading_a_cell_does_not_import_ruamel() -> None:
    code = (
        "import sys\n"
        "from datetime import UTC, datetime\n"
        "from hive.models import Cell\n"
        "from hive.store.cells import decode_cell, encode_cell\n"
        "now = datetime(2026, 1, 1, tzinfo=UTC)\n"
        "cell = Cell(id='hv-a1', title='t', description='a\\nb\\n',\n"
        "            created_at=now, updated_at=now)\n"
        "assert decode_cell(encode_cell(cell), 'p') == cell\n"
        "print(sorted(m for m in sys.modules if m.startswith('ruamel')))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


# ------------------------------------------------------------------ without re
# The reader, the emitter, the text rules, agent names and the git config reader decide
# with string methods what these regular expressions decide (they were the code): a
# fresh process does not import ``re``. Each is compared with its expression here.

PLAIN = re.compile(r"^[A-Za-z_/][A-Za-z0-9_./@+-]*(?: [A-Za-z0-9_./@+(),'-]+)*$")
KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")
ENTRY = re.compile(r'(?:([A-Za-z_][A-Za-z0-9_.-]*+)|("(?:[^"\\]|\\.)*+")):(?: (.+))?')
QUOTED = re.compile(r'"(?:[^"\\]++|\\["\\bfnrt]|\\u(?![dD][89a-fA-F])[0-9a-fA-F]{4})*+"')
INT = re.compile(r"0|-?[1-9][0-9]*")
FLOAT = re.compile(r"-?[0-9]+(?:\.[0-9]+(?:e[-+][0-9]+)?|e[-+][0-9]+)")
BLANK_LINE = re.compile(r"^ +$", re.MULTILINE)
UNUSUAL_ASCII = re.compile("[^\n\x20-\x7e]")
UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]")
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
# What a terminal is not given: CONTROL, and bidirectional and invisible format characters.
UNSHOWN = re.compile(
    "[\x00-\x1f\x7f-\x9f\u2028\u2029\u00ad\u061c\u180e\u200b\u200e\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0001\U000e0020-\U000e007f]"
)


def _shown(found: re.Match[str]) -> str:
    """A control character as '?', an invisible one as its code point ('<U+202E>')."""
    char = found.group()
    return "?" if CONTROL.match(char) else f"<U+{ord(char):04X}>"


ACTOR = re.compile(r"^[\w.@+-][\w .@+-]{0,63}$")
SECTION = re.compile(r"\[([A-Za-z0-9-]+)(\s+\"[^\"\\]*\")?\]")
CONFIG_KEY = re.compile(r"([A-Za-z][A-Za-z0-9-]*)\s*(=(.*))?")

SYNTAX = st.text(alphabet="aZ_/09.@+-(),' :\"\\ubdD8fnrte\n\t\x7f\x85é\u2028#[]=", max_size=16)


@settings(max_examples=3000, deadline=None)
@given(SYNTAX, st.integers(min_value=0, max_value=3))
def test_the_readers_tests_are_their_regular_expressions(text: str, start: int) -> None:
    assert yamlfast.is_plain(text) == bool(PLAIN.fullmatch(text))
    assert yamlfast.is_key(text) == bool(KEY.fullmatch(text))
    found = ENTRY.fullmatch(text, start) if "\n" not in text else None
    if "\n" not in text:  # a line
        ours = yamlfast._entry(text, start)
        expected = None
        if found is not None:
            end = found.end(2 if found.group(1) is None else 1)
            expected = (*found.groups(), end)
        assert ours == expected
    assert yamlfast._json_escapes_only(text) == bool(QUOTED.fullmatch(f'"{text}"'))
    assert yamlfast._is_int(text) == bool(INT.fullmatch(text))
    assert yamlfast._is_float(text) == bool(FLOAT.fullmatch(text))
    if text.isascii():
        assert yamlfast._has_unusual_char(text) == bool(UNUSUAL_ASCII.search(text))
    lines = text + "\n"
    assert yamlfast._has_blank_line(lines) == bool(BLANK_LINE.search(lines))


@settings(max_examples=2000, deadline=None)
@given(SYNTAX)
def test_the_emitters_quoting_is_its_regular_expressions(text: str) -> None:
    encoded = encode_basestring(text)
    expected = UNPRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", encoded)
    assert yamlio._quoted(text) == expected
    assert yamlio._has_unprintable(text) == bool(UNPRINTABLE.search(text))


@settings(max_examples=2000, deadline=None)
@given(
    st.text(
        alphabet="aZ9_.@+- \t\n\x00\x1b\x7f\x85é²\u2028\u00a0İ"
        "\u202e\u2066\u200b\u200c\u200d\u200e\U0001d173\U000e0041",
        max_size=70,
    )
)
def test_text_rules_and_agent_names_are_their_regular_expressions(text: str) -> None:
    first = CONTROL.search(text)
    assert first_control(text) == (first.group() if first else None)
    allowed = frozenset("\t\n\r")
    kept = next((m.group() for m in CONTROL.finditer(text) if m.group() not in allowed), None)
    assert first_control(text, allowed) == kept
    assert without_control(text) == UNSHOWN.sub(_shown, text)
    stripped = text.strip()
    assert actors._actor_name_ok(stripped) == bool(ACTOR.match(stripped))
    expected_slug = re.sub(r"[^a-z0-9.+-]+", ".", text.lower()).strip(".") or "agent"
    assert actors.slug(text) == expected_slug


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet='aZ1-_ \t"\\[]=x\u00a0.#', max_size=14))
def test_the_git_config_reader_is_its_regular_expressions(text: str) -> None:
    line = "[" + text
    found = SECTION.fullmatch(line)
    try:
        section: str | None = configfile._section(line, "config")
    except configfile.Unsure:
        section = None
    if found is None or found.group(1).lower() in ("include", "includeif"):
        assert section is None
    else:
        assert section == ("" if found.group(2) else found.group(1).lower())
    key = text.strip()
    if key and key[0] not in "#;[":
        matched = CONFIG_KEY.fullmatch(key)
        expected = None if matched is None else (matched.group(1), matched.group(3))
        assert configfile._key_line(key) == expected
