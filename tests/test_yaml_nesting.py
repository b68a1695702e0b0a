"""YAML nested more than ``MAX_NESTING`` levels is refused, in milliseconds, and nothing
nested less is: brackets inside quoted or plain scalars do not count, and every other
document reads exactly as ruamel's own safe loader reads it."""

from __future__ import annotations

import functools
import json
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from hive.errors import CorruptFile
from hive.jsontext import nesting_depth
from hive.store.yamlfast import fast_loads
from hive.store.yamlio import MAX_NESTING, YamlError, dumps, load_mapping, loads, ruamel_loads
from tests.test_yamlfast import strict

DEEPLY = f"nested more than {MAX_NESTING} levels deep"
HUGE = 100_000  # a cell file nested this deep crashed every command (SIGSEGV)


@functools.cache
def _ruamel_loader() -> YAML:
    return YAML(typ="safe")


def ruamel(text: str) -> Any:
    """What ruamel's own safe loader (C-accelerated) makes of ``text`` (only given text
    that nests at most a few thousand levels)."""
    return _ruamel_loader().load(text)


def refused(text: str) -> YamlError:
    """The refusal of ``text``, checked to take milliseconds of CPU (ruamel's pure-Python
    parser took ~1.9 s on a file nested 20,000 or 100,000 levels)."""
    started = time.process_time()
    with pytest.raises(YamlError) as caught:
        ruamel_loads(text)
    assert time.process_time() - started < 0.5
    return caught.value


def flow(levels: int) -> str:
    return "[" * levels + "]" * levels


def flow_mappings(levels: int) -> str:
    return "{a: " * levels + "1" + "}" * levels


def block_sequences(levels: int) -> str:
    return "- " * levels + "x\n"


def block_keys(levels: int) -> str:
    return "? " * levels + "x\n"


def block_mappings(levels: int) -> str:
    return "".join(" " * depth + f"k{depth}:\n" for depth in range(levels - 1)) + (
        " " * (levels - 1) + "v: 1\n"
    )


def block_then_flow(levels: int) -> str:
    """Half the levels block mappings and sequences, half flow."""
    half = levels // 2
    head = "".join("  " * depth + "- k:\n" for depth in range(half // 2))
    return head + "  " * (half // 2) + "- " + flow(levels - 2 * (half // 2) - 1) + "\n"


SHAPES = {
    "flow": flow,
    "flow-mappings": flow_mappings,
    "cell-metadata": lambda levels: f'title: t\nmetadata: {{"x": {flow(levels - 2)}}}\n',
    "json": lambda levels: (
        "".join('{"a": ' if n % 2 else "[" for n in range(levels))
        + "1"
        + "".join("}" if n % 2 else "]" for n in reversed(range(levels)))
    ),
    "block-sequences": block_sequences,
    "block-mappings": block_mappings,
    "block-then-flow": block_then_flow,
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_one_level_too_many_is_refused_and_the_limit_is_read(shape: str) -> None:
    make = SHAPES[shape]
    at_limit, over = make(MAX_NESTING), make(MAX_NESTING + 1)
    assert nesting_depth(ruamel(at_limit), 10 * MAX_NESTING) == MAX_NESTING
    assert strict(ruamel_loads(at_limit)) == strict(ruamel(at_limit))
    assert str(refused(over)) == DEEPLY


FAR_TOO_DEEP = {
    **{name: SHAPES[name] for name in SHAPES if name not in ("block-mappings", "block-then-flow")},
    "block-keys": block_keys,  # a mapping as a key is refused once read, this one never is
}


@pytest.mark.parametrize("shape", sorted(FAR_TOO_DEEP))
@pytest.mark.parametrize("levels", [20_000, HUGE])
def test_a_document_nested_far_too_deeply_is_refused_in_milliseconds(
    shape: str, levels: int
) -> None:
    error = refused(FAR_TOO_DEEP[shape](levels))
    assert str(error) == DEEPLY and error.line is not None


def test_a_cell_file_nested_too_deeply_names_its_line() -> None:
    text = f'title: t\nstatus: open\nmetadata: {{"x": {flow(HUGE)}}}\n'
    with pytest.raises(CorruptFile, match=rf"^\.hive/cells/x\.yaml:3: malformed YAML: {DEEPLY}$"):
        load_mapping(text, ".hive/cells/x.yaml")


def test_indentation_nested_too_deeply_is_refused_in_milliseconds() -> None:
    """Nesting by indentation takes ~levels²/2 bytes: 3,000 levels are 4.5 MB."""
    error = refused(block_mappings(3000))
    assert str(error) == DEEPLY and error.line == MAX_NESTING + 1


@pytest.mark.parametrize(
    "text",
    [
        # closing brackets inside quotes: counted as closing, they hid the depth, and
        # ruamel's C loader (recursive) crashed the process (SIGSEGV)
        "a: " + '["]", ' * HUGE + "]" * HUGE + "\n",
        "a: " + "[']', " * HUGE + "]" * HUGE + "\n",
        "a: " + '{"}": ' * HUGE + "1" + "}" * HUGE + "\n",
        "[" * HUGE,  # never closed
        "a:\n  - " + "[" * HUGE + "\n  - b\n",
    ],
    ids=["double-quoted-closers", "single-quoted-closers", "quoted-keys", "unclosed", "block"],
)
def test_deep_nesting_hidden_among_quoted_brackets_is_refused(text: str) -> None:
    assert str(refused(text)) == DEEPLY


def test_aliases_that_nest_a_value_too_deeply_are_refused() -> None:
    """Each level of brackets is within the limit; the alias puts one inside another."""
    inner = flow(60)
    text = f"a: &x {inner}\nb: {'[' * 50}*x{']' * 50}\n"
    assert nesting_depth(ruamel(text), 10 * MAX_NESTING) > MAX_NESTING
    assert str(refused(text)) == DEEPLY


def test_only_the_first_document_is_read() -> None:
    """ruamel reads one document and stops at the next: one nested too deeply after it
    is not read (or recursed into), the text is refused as ruamel refuses it."""
    with pytest.raises(YamlError, match="expected a single document"):
        ruamel_loads("a: 1\n---\n" + flow(HUGE) + "\n")


@pytest.mark.parametrize(
    "text",
    [
        'title: "' + "[" * HUGE + '"\n',
        "title: '" + "{" * HUGE + "'\n",
        "note: don't " + "[" * HUGE + "\n",  # a plain scalar in block context
        "note: |\n  " + "[" * HUGE + "\n",
        "# " + "[" * HUGE + "\nk: v\n",
        "k: [" + ", ".join(["'[[[[['"] * 5000) + "]\n",
        "k:\n" + "- " * 99 + "x  # " + "[" * 500 + "\n",
    ],
    ids=["double-quoted", "single-quoted", "plain", "literal", "comment", "many", "block-99"],
)
def test_brackets_in_scalars_and_comments_are_not_nesting(text: str) -> None:
    assert strict(ruamel_loads(text)) == strict(ruamel(text))


# ------------------------------------------------------------------ any document

BRACKETS = "[]{}"
quoted_texts = st.text(alphabet=BRACKETS + "a '\"\\", max_size=12)
keys = st.one_of(st.sampled_from(["k", "a b", "[x", "]", "{", "it's", "a: b"]), quoted_texts)
leaves = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), quoted_texts)


levels_kinds = st.tuples(
    st.booleans(), keys, st.lists(leaves, max_size=2), st.integers(0, 2)
)  # (a list?, its key if a mapping, the siblings, where the nested value goes)


@st.composite
def nested_values(draw: st.DrawFn) -> Any:
    """A value nested ``levels`` deep (lists and mappings), near the limit, with text
    full of brackets and quotes beside each level (a few kinds of level, in turn: a
    draw for each of a hundred levels made this test take seconds)."""
    levels = draw(st.integers(MAX_NESTING - 3, MAX_NESTING + 3))
    kinds = draw(st.lists(levels_kinds, min_size=1, max_size=4))
    value: Any = draw(leaves)
    for level in range(levels):
        is_list, key, siblings, at = kinds[level % len(kinds)]
        at = min(at, len(siblings))
        if is_list:
            value = [*siblings[:at], value, *siblings[at:]]
        else:
            named = [(f"s{i}", leaf) for i, leaf in enumerate(siblings)]
            value = dict([*named[:at], (key, value), *named[at:]])
    return value


def flow_text(value: Any, single: bool) -> str:
    """``value`` in YAML flow style: JSON, or with single-quoted strings."""
    if not single or not isinstance(value, list | dict | str):
        return json.dumps(value)
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, list):
        return "[" + ", ".join(flow_text(item, single) for item in value) + "]"
    items = (f"{flow_text(k, single)}: {flow_text(v, single)}" for k, v in value.items())
    return "{" + ", ".join(items) + "}"


def block_text(value: Any, split: int, single: bool) -> str:
    """``value`` in block style (one column of indentation a level) down to level
    ``split``, in flow style below it."""

    def lines(node: Any, indent: int, level: int) -> list[str]:
        pad = " " * indent
        heads = (
            [(f"{pad}-", item) for item in node]
            if isinstance(node, list)
            else [(f"{pad}{json.dumps(key)}:", item) for key, item in node.items()]
        )
        found: list[str] = []
        for head, item in heads:
            if isinstance(item, list | dict) and item and level + 1 < split:
                found += [head, *lines(item, indent + 1, level + 1)]
            else:
                found.append(f"{head} {flow_text(item, single)}")
        return found

    if split == 0 or not isinstance(value, list | dict) or not value:
        return flow_text(value, single) + "\n"
    return "\n".join(lines(value, 0, 0)) + "\n"


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nested_values(), st.integers(0, MAX_NESTING + 5), st.integers(0, 2))
@example(value=[[["]"]]], split=0, style=0)
def test_a_document_near_the_limit_is_refused_exactly_when_it_nests_too_deeply(
    value: Any, split: int, style: int
) -> None:
    """Flow style (JSON, or single quotes), block style (hive's emitter: two columns a
    level; or one column a level) and block style above flow."""
    if style == 2:
        value = {"k": value}
        text = dumps(value)
    else:
        text = block_text(value, split, single=style == 1)
    assert strict(ruamel(text)) == strict(value), text  # the text is what it means to be
    if nesting_depth(value, 10 * MAX_NESTING) > MAX_NESTING:
        assert str(refused(text)) == DEEPLY
    else:
        assert strict(ruamel_loads(text)) == strict(value)


@pytest.mark.parametrize("leaf", [1, [], {}, [1], {"v": 1}])
@pytest.mark.parametrize("depth", [MAX_NESTING - 1, MAX_NESTING, MAX_NESTING + 1])
def test_hive_own_form_is_refused_exactly_when_it_nests_too_deeply(depth: int, leaf: Any) -> None:
    """A cell file in hive's own form is read by the fast reader, any other form by
    ruamel's loader: both refuse it past MAX_NESTING levels (the fast reader read a
    file nested 150 levels, which a hand edit made a corrupt cell)."""
    document: Any = leaf
    while nesting_depth(document, 10 * MAX_NESTING) < depth - 1:
        document = [document] if isinstance(document, dict) else {"k": document}
    document = {"k": document}
    assert nesting_depth(document, 10 * MAX_NESTING) == depth
    text = dumps(document)
    assert strict(ruamel(text)) == strict(document)
    if nesting_depth(document, 10 * MAX_NESTING) > MAX_NESTING:
        assert fast_loads(text) is None
        with pytest.raises(YamlError, match=DEEPLY):
            loads(text)
    else:
        assert strict(fast_loads(text)) == strict(document)
        assert strict(loads(text)) == strict(document)


SINGLE = "[]{}a'\"\\# \n~1"
SEVERAL = (", ", ": ", "- ", "? ", "'['", '"]"', "\n  ", "&x ", "*x", "!!str ", "don't [")
fragments = st.sampled_from([*SINGLE, *SEVERAL, "|\n  [", "---\n"])


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(fragments, max_size=40), st.integers(0, 3))
@example(["[", '"]"', ", "], 3)
@example(["don't [", "\n"], 3)
def test_any_text_reads_as_ruamel_reads_it_or_is_refused_as_nested_too_deeply(
    parts: list[str], times: int
) -> None:
    """The text repeated (brackets in quotes and scalars beside real ones), then
    compared with ruamel's own loader, which reads it safely at these depths."""
    text = "".join(parts) * (times * 40 + 1)
    try:
        data = ruamel_loads(text)
    except YamlError as exc:
        if str(exc) == DEEPLY:
            assert _too_deep(text), text
        else:
            with pytest.raises(Exception):  # noqa: B017 - ruamel's refusal, any kind
                ruamel(text)
        return
    assert strict(data) == strict(ruamel(text)), text


def _too_deep(text: str) -> bool:
    """Whether ruamel, reading ``text``, makes data nested too deeply or opens
    collections too deeply in its first document (before any error)."""
    try:
        return nesting_depth(ruamel(text), 10 * MAX_NESTING) > MAX_NESTING
    except Exception:
        return _opened_depth(text) > MAX_NESTING


def _opened_depth(text: str) -> int:
    depth = deepest = 0
    try:
        for event in _ruamel_loader().parse(text):
            kind = type(event).__name__
            if kind in ("SequenceStartEvent", "MappingStartEvent"):
                depth += 1
                deepest = max(deepest, depth)
            elif kind in ("SequenceEndEvent", "MappingEndEvent"):
                depth -= 1
            elif kind == "DocumentEndEvent":
                break
    except Exception:
        pass
    return deepest
