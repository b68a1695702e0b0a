"""Property tests (hypothesis): YAML encoding, ids, glob intersection, the merge
rules and the tool envelope hold for generated input, not just for examples."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from hive.domain.globs import glob_matches, intersection_witness, patterns_intersect
from hive.domain.merge import merge_cells, merge_file
from hive.domain.setup import init_hive
from hive.domain.workspace import Workspace
from hive.errors import InvalidInput
from hive.models import Cell, Comment, Dependency
from hive.store.cells import decode_cell, encode_cell
from hive.store.ids import (
    is_valid_id,
    new_child_id,
    new_root_id,
    parent_from_id,
    root_of,
)
from hive.store.layout import cell_id_from_path, cell_path
from hive.store.yamlio import dumps, loads
from tests.conftest import make_repo

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
T0 = datetime(2026, 1, 1, tzinfo=UTC)

text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
one_line = st.text(
    st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1, max_size=30
).filter(lambda s: s.strip() != "" and s.strip() == s)
keys = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**60), max_value=2**60),
    st.floats(allow_nan=False),
    text,
)
documents = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4),
    max_leaves=20,
)


# ------------------------------------------------------------------ YAML encoding


@FAST
@given(st.dictionaries(keys, documents, max_size=6))
def test_yaml_encoding_round_trips(document: dict[str, Any]) -> None:
    encoded = dumps(document)
    assert (loads(encoded) or {}) == document
    assert dumps(document) == encoded  # deterministic


times = st.integers(min_value=0, max_value=10**6).map(lambda m: T0 + timedelta(seconds=m))
labels = st.lists(st.sampled_from(["a", "b", "c", "d", "ui", "db"]), max_size=4, unique=True)
deps = st.lists(
    st.builds(
        Dependency,
        type=st.sampled_from(["blocks", "related", "parent-child", "discovered-from"]),
        target=st.sampled_from(["hv-aaaaaa", "hv-bbbbbb", "hv-cccccc"]),
    ),
    max_size=3,
    unique_by=lambda d: (d.type, d.target),
)
comments = st.lists(
    st.builds(
        Comment,
        id=st.sampled_from(["c-1", "c-2", "c-3", "c-4"]),
        author=st.sampled_from(["alice", "bob"]),
        text=text,
        created_at=times,
    ),
    max_size=3,
    unique_by=lambda c: c.id,
)


# Built once: a strategy built per example is validated again per example.
statuses = st.sampled_from(["open", "in_progress", "blocked", "deferred", "closed"])
priorities = st.integers(0, 4)
assignees = st.none() | st.sampled_from(["alice", "bob"])
optional_times = st.none() | times
metadata = st.dictionaries(st.sampled_from(["k", "j"]), st.integers(0, 3), max_size=2)
later = st.integers(0, 10**5)


@st.composite
def cells(draw: st.DrawFn) -> Cell:
    created = draw(times)
    status = draw(statuses)
    return Cell(
        id="hv-abc123",
        title=draw(one_line),
        description=draw(text),
        notes=draw(text),
        status=status,
        priority=draw(priorities),
        labels=draw(labels),
        dependencies=draw(deps),
        comments=draw(comments),
        assignee=draw(assignees),
        created_at=created,
        updated_at=created + timedelta(seconds=draw(later)),
        closed_at=created if status == "closed" else None,
        deleted_at=draw(optional_times),
        metadata=draw(metadata),
    )


@FAST
@given(cells())
def test_cell_encoding_round_trips(cell: Cell) -> None:
    assert decode_cell(encode_cell(cell), cell_path(cell.id)) == cell


# ------------------------------------------------------------------ ids


@FAST
@given(st.sampled_from(["hv", "bd", "x_1"]), st.integers(4, 10), st.integers(2, 6))
def test_ids_are_valid_show_their_parent_and_never_repeat(
    prefix: str, length: int, child_length: int
) -> None:
    taken: set[str] = set()
    root = new_root_id(prefix, length, taken.__contains__)
    taken.add(root)
    child = new_child_id(root, child_length, taken.__contains__)
    for cell_id in (root, child):
        assert is_valid_id(cell_id)
        assert cell_id_from_path(cell_path(cell_id)) == cell_id
        assert root_of(cell_id) == root
    assert parent_from_id(child) == root and parent_from_id(root) is None
    assert cell_path(child).rsplit("/", 2)[1] == cell_path(root).rsplit("/", 2)[1]


# ------------------------------------------------------------------ glob intersection

segment = st.sampled_from(["a", "b", "*", "a*", "*.py", "[ab]", "?", "x.py", "**", "{a,b}"])
patterns = st.lists(segment, min_size=1, max_size=4).map("/".join)


@FAST
@given(patterns, patterns)
def test_glob_intersection_is_symmetric_with_a_checkable_witness(a: str, b: str) -> None:
    try:
        forward = patterns_intersect(a, b)
    except InvalidInput:
        return
    assert patterns_intersect(b, a) == forward
    witness = intersection_witness(a, b)
    assert (witness is not None) == forward
    if witness is not None:
        assert glob_matches(a, witness) and glob_matches(b, witness)


# ------------------------------------------------------------------ merge rules


@FAST
@given(st.none() | cells(), cells(), cells())
def test_merge_is_commutative_and_always_valid(base: Cell | None, ours: Cell, theirs: Cell) -> None:
    path = cell_path("hv-abc123")
    one, _ = merge_cells(base, ours, theirs)
    two, _ = merge_cells(base, theirs, ours)
    assert encode_cell(one) == encode_cell(two)
    assert decode_cell(encode_cell(one), path) == one  # a valid file hive reads
    assert one.updated_at == max(ours.updated_at, theirs.updated_at)
    if ours.is_closed or theirs.is_closed:
        assert one.is_closed or (base is not None and base.is_closed)
    assert {c.id for c in one.comments} >= (
        {c.id for c in ours.comments} ^ {c.id for c in theirs.comments}
    ) - ({c.id for c in base.comments} if base else set())


@FAST
@given(cells(), cells())
def test_merge_with_an_unchanged_side_takes_the_other(base: Cell, changed: Cell) -> None:
    path = cell_path("hv-abc123")
    base_bytes, changed_bytes = encode_cell(base), encode_cell(changed)
    assert merge_file(path, base_bytes, base_bytes, changed_bytes).content == changed_bytes
    assert merge_file(path, base_bytes, changed_bytes, base_bytes).content == changed_bytes
    assert merge_file(path, base_bytes, changed_bytes, changed_bytes).content == changed_bytes


@FAST
@given(st.binary(max_size=200), st.binary(max_size=200), cells())
def test_merge_of_garbage_never_crashes_and_keeps_a_valid_side(
    left: bytes, right: bytes, good: Cell
) -> None:
    path = cell_path("hv-abc123")
    outcome = merge_file(path, left, right, encode_cell(good))
    if outcome.clean:
        decode_cell(outcome.content, path)
    assume(True)


def contexts() -> st.SearchStrategy[bytes]:
    from hive.domain.memory import ProjectContext, encode_context

    entries = st.sampled_from(["a", "b", "c", "d"])
    decisions = st.builds(
        lambda d, day: {"decision": d, "recorded_at": f"2026-01-0{day}T00:00:00Z"},
        entries,
        st.integers(1, 4),
    )
    milestones = st.builds(
        lambda n, done: {"name": n, "status": "completed" if done else "pending"},
        entries,
        st.booleans(),
    )
    mapping = st.dictionaries(entries, st.integers(0, 3) | entries, max_size=3)
    return st.builds(
        lambda goals, banned, ds, ms, stack, project: encode_context(
            ProjectContext(
                goals=list(dict.fromkeys(goals)),
                banned=list(dict.fromkeys(banned)),
                decisions=ds,
                milestones=list({m["name"]: m for m in ms}.values()),
                stack=stack,
                project=project,
            )
        ),
        st.lists(entries, max_size=3),
        st.lists(entries, max_size=3),
        st.lists(decisions, max_size=3),
        st.lists(milestones, max_size=3),
        mapping,
        mapping,
    )


@FAST
@given(st.none() | contexts(), contexts(), contexts())
def test_context_merge_is_commutative_valid_and_loses_no_addition(
    base: bytes | None, ours: bytes, theirs: bytes
) -> None:
    from hive.domain.memory import CONTEXT_PATH, decode_context

    one = merge_file(CONTEXT_PATH, base, ours, theirs)
    two = merge_file(CONTEXT_PATH, base, theirs, ours)
    assert one.clean and one.content == two.content
    merged = decode_context(one.content)  # a valid file hive reads
    original = decode_context(base) if base is not None else None
    for side in (decode_context(ours), decode_context(theirs)):
        for goal in side.goals:  # an entry one side added is kept
            assert goal in merged.goals or (original is not None and goal in original.goals)
        done = {m["name"] for m in side.milestones if m["status"] == "completed"}
        done_before = {
            m["name"]
            for m in (original.milestones if original else [])
            if m["status"] == "completed"
        }
        for name in done - done_before:  # completed here (since the common ancestor)
            kept = [m for m in merged.milestones if m["name"] == name]
            assert all(m["status"] == "completed" for m in kept)
    assert len(merged.goals) == len(set(merged.goals))  # none twice


# ------------------------------------------------------------------ the tool envelope

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=12,
)
tool_names = st.sampled_from(
    [
        "hive_ready",
        "hive_query",
        "hive_create",
        "hive_update",
        "hive_close",
        "nope",
        "swarmmail_inbox",
        "swarmmail_reserve",
        "hive_show",
    ]
)


@pytest.fixture(scope="module")
def envelope_repo(tmp_path_factory: pytest.TempPathFactory) -> str:
    repo = make_repo(tmp_path_factory.mktemp("envelope") / "repo")
    init_hive(Workspace(str(repo), actor="fuzz"))
    return str(repo)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(tool_names, json_values), min_size=1, max_size=3),
    st.sampled_from(["plain", "fenced", "garbage"]),
)
def test_the_envelope_answers_anything_with_results_or_structured_errors(
    envelope_repo: str, calls: list[tuple[str, Any]], wrapping: str
) -> None:
    from hive.tools.envelope import run_envelope
    from hive.tools.registry import CallContext

    body = json.dumps({"tool_calls": [{"name": n, "args": a} for n, a in calls]})
    text = {"plain": body, "fenced": f"```json\n{body}\n```", "garbage": body[: len(body) // 2]}
    transcript = run_envelope(CallContext(root=envelope_repo, agent="fuzz"), text[wrapping])
    json.dumps(transcript)  # always serialisable
    if "error" in transcript:
        assert transcript["code"] and transcript["results"] == []
        return
    assert len(transcript["results"]) == len(calls)
    for result in transcript["results"]:
        assert ("error" in result) == ("code" in result)
        assert "Traceback" not in json.dumps(result)
