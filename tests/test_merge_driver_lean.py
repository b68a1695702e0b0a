"""git's merge driver without the models (``hive/domain/mergecore.py``,
``hive/git/pathhistory.py``): the same bytes as the full path, and a driver process that
imports neither pydantic nor dulwich for a cell in hive's own form."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hive.domain.annotate import add_comment
from hive.domain.cells import create_cell, show_cell, update_cell
from hive.domain.memory import (
    CONTEXT_PATH,
    ProjectContext,
    encode_context,
    load_context,
    update_context,
)
from hive.domain.merge import merge_file
from hive.domain.mergecore import CONFIG_PATH, merge_plain, merge_plain_records
from hive.domain.mergefiles import reservation_json
from hive.domain.reservations import decode_file, encode_file, reserve
from hive.domain.reservecore import plain_file, read_sequence, reservation_path
from hive.domain.setup import DRIVER_KEY, init_hive
from hive.domain.workspace import Workspace
from hive.git.pathhistory import (
    TABLES_DIR,
    LooseHistory,
    Unreadable,
    changed_blobs_by_git,
    versions_table,
)
from hive.git.refs import discover
from hive.git.repo import GitRepo
from hive.git.syncref import RepoHistory
from hive.models import Cell
from hive.models.reservation import Override, Reservation, ReservationFile
from hive.store.cells import encode_cell
from hive.store.layout import cell_path
from hive.store.yamlio import dumps
from tests.conftest import assert_clean, git

PATH = cell_path("hv-abc123")
T0 = datetime(2026, 1, 1, tzinfo=UTC)
# Modules a driver process must not load for a cell in hive's own form: each costs every
# file both sides changed (pydantic and the models ~100 ms, dulwich ~25 ms).
HEAVY = ("pydantic", "pydantic_core", "dulwich", "hive.models", "hive.domain.merge", "typer")
HEAVY += ("rich", "ruamel", "typing", "hive.git.repo", "hive.store.index")

# ------------------------------------------------------------------ the same bytes

small_text = st.sampled_from(["", "one", "two", "one\ntwo", "x: y", "naïve — ü"])
times = st.integers(0, 4).map(lambda n: T0 + timedelta(minutes=n))


# Built once: a strategy built per draw is validated again per draw (most of the
# drawing's time).
_titles = st.sampled_from(["Base", "Ours", "Theirs"])
_statuses = st.sampled_from(["open", "in_progress", "closed"])
_types = st.sampled_from(["task", "bug"])
_priorities = st.integers(0, 4)
_labels = st.lists(st.sampled_from(["a", "b", "c"]), unique=True)
_files = st.lists(st.sampled_from(["src/a.py", "docs/**"]), unique=True)
_dependencies = st.lists(
    st.tuples(st.sampled_from(["blocks", "related"]), st.sampled_from(["hv-1"])),
    unique=True,
)
_assignees = st.sampled_from([None, "alice", "bob"])
_parents = st.sampled_from([None, "hv-abc"])
_seconds = st.integers(0, 3)
_started = st.none() | times
_deleted = st.none() | times | st.just(T0 - timedelta(days=60))
_metadata = st.dictionaries(st.sampled_from(["k", "m"]), st.sampled_from([1, "v"]))
_comments = st.lists(
    st.tuples(
        st.integers(1, 4),
        st.sampled_from(["", "bob"]),
        st.sampled_from([timedelta(0), timedelta(microseconds=1500)]),
    ),
    unique_by=lambda item: item[0],
    max_size=3,
)


@st.composite
def plain_cells(draw: st.DrawFn) -> Cell:
    """Cells as hive writes them, drawn from small pools so sides often agree, differ
    or match the base field by field."""
    created = draw(times)
    status = draw(_statuses)
    return Cell(
        id="hv-abc123",
        title=draw(_titles),
        description=draw(small_text),
        design=draw(small_text),
        notes=draw(small_text),
        status=status,
        type=draw(_types),
        priority=draw(_priorities),
        labels=draw(_labels),
        files_owned=draw(_files),
        dependencies=[{"type": kind, "target": target} for kind, target in draw(_dependencies)],
        assignee=draw(_assignees),
        parent=draw(_parents),
        created_at=created,
        updated_at=created + timedelta(seconds=draw(_seconds)),
        started_at=draw(_started),
        closed_at=created if status == "closed" else None,
        close_reason="done" if status == "closed" and draw(st.booleans()) else None,
        deleted_at=draw(_deleted),
        metadata=draw(_metadata),
        comments=[
            {"id": f"c{number}", "author": author, "text": "said", "created_at": T0 + later}
            for number, author, later in draw(_comments)
        ],
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.none() | plain_cells(), plain_cells(), plain_cells())
def test_the_plain_path_writes_the_full_paths_bytes(
    base: Cell | None, ours: Cell, theirs: Cell
) -> None:
    sides = [None if base is None else encode_cell(base), encode_cell(ours), encode_cell(theirs)]
    plain = merge_plain(PATH, *sides, None)
    full = merge_file(PATH, *sides)
    assert plain is not None  # every cell drawn here is in hive's own form
    assert full.clean
    assert plain == (full.content, [record.field for record in full.conflicts])
    # hive sync's merge: the records too, as the full sync reports them (--json)
    records = [record.model_dump(mode="json") for record in full.conflicts]
    assert merge_plain_records(PATH, *sides) == (full.content, records)


@pytest.mark.parametrize(
    "change",
    [
        {"conflicts": [{"field": "title", "kept": "a", "other": "b"}]},
        {"metadata": {"ratio": 0.5}},
    ],
)
def test_what_the_plain_reader_leaves_to_the_model_goes_to_the_full_path(
    change: dict[str, Any],
) -> None:
    base = Cell(id="hv-abc123", title="Base", created_at=T0, updated_at=T0)
    ours = base.model_copy(update={"title": "Ours", "updated_at": T0 + timedelta(seconds=1)})
    theirs = Cell.model_validate({**base.model_dump(), "labels": ["x"], **change})
    sides = (encode_cell(base), encode_cell(ours), encode_cell(theirs))
    assert merge_plain(PATH, *sides, None) is None
    assert merge_plain(PATH, *sides[:2], encode_cell(ours), None) == (sides[1], [])
    assert merge_file(PATH, *sides).clean


def test_files_not_in_hives_form_and_broken_cells_go_to_the_full_path() -> None:
    good = encode_cell(Cell(id="hv-abc123", title="A", created_at=T0, updated_at=T0))
    reservations = ".hive/reservations/alice.yaml"
    assert merge_plain(reservations, b"a: 1\n", b"a: 2\n", b"a: 3\n", None) is None
    assert merge_plain(PATH, None, good, b"title: [unclosed\n", None) is None
    assert merge_plain(PATH, None, b"\xff\xfe\n", good, None) is None
    assert merge_plain(PATH, None, None, good, None) == (good, [])  # one side only


# ------------------------------------------------------------------ reservation files

RESERVATIONS = ".hive/reservations/alice.yaml"
PATTERNS = ("src/a.py", "src/**", "docs/*.md")
HOURS = st.integers(-2, 2).map(lambda n: T0 + timedelta(hours=n))  # some long expired
overrides = st.builds(
    Override,
    reservation_id=st.integers(1, 3),
    holder=st.sampled_from(["bob", "carol"]),
    pattern=st.sampled_from(PATTERNS),
)


_ids = st.integers(1, 4)
_patterns = st.sampled_from(PATTERNS)
_reasons = st.sampled_from([None, "work", "naïve — ü", 'a "quoted"\nline'])
_cells = st.sampled_from([None, "hv-abc123"])
_terms = st.sampled_from([timedelta(0), timedelta(minutes=90)])
_overrides = st.lists(overrides, max_size=2)
_yielded = st.none() | overrides
_renumbered = st.sampled_from([None, 1, 7])


@st.composite
def reservations(draw: st.DrawFn) -> Reservation:
    """A reservation of alice's from small pools: two clones' grants often share an id,
    a pattern and a grant time (one grant changed on both sides) or clash by id alone."""
    created = draw(HOURS)
    return Reservation(
        id=draw(_ids),
        agent="alice",
        path_pattern=draw(_patterns),
        exclusive=draw(st.booleans()),
        reason=draw(_reasons),
        cell=draw(_cells),
        created_at=created,
        expires_at=created + draw(_terms),
        forced=draw(st.booleans()),
        overrides=draw(_overrides),
        yielded_to=draw(_yielded),
        renumbered_from=draw(_renumbered),
    )


_base_entries = st.lists(reservations(), max_size=3)
_added_entries = st.lists(reservations(), max_size=2)
_other_reason = st.fixed_dictionaries({"reason": st.sampled_from(["other", "work"])})


@st.composite
def reservation_sides(draw: st.DrawFn) -> tuple[bytes | None, bytes, bytes]:
    """(base, ours, theirs) files, each with distinct ids and grants: each side keeps
    some of the base's entries (one it dropped: released or pruned as expired), changes
    some, adds its own (often with an id the other side gave too)."""

    def distinct(entries: list[Reservation]) -> list[Reservation]:
        ids: set[int] = set()
        grants: set[tuple[str, datetime]] = set()
        found = []
        for item in entries:
            if item.id not in ids and (item.path_pattern, item.created_at) not in grants:
                ids.add(item.id)
                grants.add((item.path_pattern, item.created_at))
                found.append(item)
        return found

    base = distinct(draw(_base_entries))

    def changed(item: Reservation) -> Reservation:
        """Renewed, yielded (a contest), renumbered (a merge) or with another reason."""
        later = {"expires_at": item.expires_at + timedelta(hours=1)}
        change: dict[str, Any] = draw(
            st.sampled_from(
                [{}, later, {"yielded_to": draw(overrides)}, {"id": 9, "renumbered_from": item.id}]
            )
            | _other_reason
        )
        return item.model_copy(update=change)

    def side() -> bytes:
        kept = [changed(item) for item in base if draw(st.booleans())]
        entries = distinct(kept + draw(_added_entries))
        return encode_file(ReservationFile(agent="alice", reservations=entries))

    ours, theirs = side(), side()
    encoded = encode_file(ReservationFile(agent="alice", reservations=base))
    return (draw(st.sampled_from([None, b"", encoded])), ours, theirs)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reservation_sides())
def test_the_plain_path_merges_reservation_files_to_the_full_paths_bytes(
    sides: tuple[bytes | None, bytes, bytes],
) -> None:
    base, ours, theirs = sides
    for one, other in ((ours, theirs), (theirs, ours)):  # each side as ours
        plain = merge_plain(RESERVATIONS, base, one, other, None)
        full = merge_file(RESERVATIONS, base, one, other)
        assert plain is not None  # every file drawn here is in hive's own form
        assert full.clean and full.conflicts == []
        assert plain == (full.content, [])
        merged = decode_file(plain[0], RESERVATIONS).reservations
        assert len({item.id for item in merged}) == len(merged)  # clashing ids renumbered


@pytest.mark.parametrize("micro", [0, 123_000, 123_456])
def test_the_plain_reservation_json_that_breaks_ties_is_the_models(micro: int) -> None:
    """``mergefiles.reservation_json`` stands for ``Reservation.model_dump_json()`` on the
    plain path, times included (as ``hive.times.format_time`` gives them)."""
    created = T0.replace(microsecond=micro)
    item = Reservation(
        id=1,
        agent="alice",
        path_pattern="src/**",
        reason="r",
        created_at=created,
        expires_at=created + timedelta(hours=1),
        overrides=[Override(reservation_id=2, holder="bob", pattern="src/a.py")],
    )
    found = plain_file(encode_file(ReservationFile(agent="alice", reservations=[item])))
    assert found is not None
    assert reservation_json(found.reservations[0]) == item.model_dump_json()


def test_reservation_ids_both_clones_gave_are_renumbered_alike_on_both_paths() -> None:
    def grant(number: int, pattern: str, minute: int) -> Reservation:
        created = T0 + timedelta(minutes=minute)
        return Reservation(
            id=number,
            agent="alice",
            path_pattern=pattern,
            created_at=created,
            expires_at=created + timedelta(hours=1),
        )

    def file(*entries: Reservation) -> bytes:
        return encode_file(ReservationFile(agent="alice", reservations=list(entries)))

    base = file(grant(1, "old/**", 0))
    ours = file(grant(2, "src/a.py", 1))  # base's #1 released (or pruned, expired) here
    theirs = file(grant(1, "old/**", 0), grant(2, "src/b.py", 2))
    plain = merge_plain(RESERVATIONS, base, ours, theirs, None)
    assert plain is not None and plain == (merge_file(RESERVATIONS, base, ours, theirs).content, [])
    merged = decode_file(plain[0], RESERVATIONS).reservations
    assert [(r.id, r.path_pattern, r.renumbered_from) for r in merged] == [
        (2, "src/a.py", None),
        (3, "src/b.py", 2),
    ]


def test_reservation_files_the_plain_reader_leaves_or_the_merge_refuses_go_to_the_full_path() -> (
    None
):
    good = encode_file(
        ReservationFile(
            agent="alice",
            reservations=[
                Reservation(
                    id=1,
                    agent="alice",
                    path_pattern="src/**",
                    created_at=T0,
                    expires_at=T0 + timedelta(hours=1),
                )
            ],
        )
    )
    other = good.replace(b"src/**", b"docs/**")
    bob = good.replace(b"agent: alice\n", b"agent: bob\n", 1)
    offset = good.replace(
        b'created_at: "2026-01-01T00:00:00.000Z"', b"created_at: 2026-01-01 01:00+01:00"
    )
    assert offset != good
    for base, ours, theirs in [
        (good, other, b"agent: [unclosed\n"),  # a side that does not parse
        (good, b"\xff\xfe\n", other),
        (good, other, bob),  # another agent's file
        (b"# a comment\n" + good, other, other.replace(b"docs", b"lib")),  # a base not plain
        (good, other, offset),  # a time not as hive writes it: the model reads it
    ]:
        assert merge_plain(RESERVATIONS, base, ours, theirs, None) is None
    refused = merge_file(RESERVATIONS, good, other, b"agent: [unclosed\n")
    assert not refused.clean and refused.content == other and "malformed YAML" in refused.message
    assert not merge_file(RESERVATIONS, good, other, bob).clean
    assert merge_file(RESERVATIONS, good, other, offset).clean


# ------------------------------------------------------------------ the context and config

context_texts = st.sampled_from(["one", "two", "naïve — ü", "x: y"])
context_values = st.sampled_from([1, "v", 3.5, True, None, ["a"], {"k": "v"}])


_recorded = st.sampled_from(["2026-01-01T00:00:00Z", "2026-01-02"])
_projects = st.dictionaries(st.sampled_from(["name", "repo"]), context_values)
_goals = st.lists(context_texts, unique=True, max_size=3)
_stacks = st.dictionaries(st.sampled_from(["db", "python"]), context_values)
_entries = st.integers(0, 2)
_banned = st.lists(context_texts, unique=True, max_size=2)


@st.composite
def contexts(draw: st.DrawFn) -> bytes:
    def entry(key: str) -> dict[str, Any]:
        item = {key: draw(context_texts)}
        if draw(st.booleans()):
            item["recorded_at"] = draw(_recorded)
        if key == "name" and draw(st.booleans()):
            item["status"] = "completed"
        return item

    return encode_context(
        ProjectContext(
            project=draw(_projects),
            goals=draw(_goals),
            stack=draw(_stacks),
            decisions=[entry("decision") for _ in range(draw(_entries))],
            milestones=[entry("name") for _ in range(draw(_entries))],
            banned=draw(_banned),
        )
    )


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.none() | contexts(), contexts(), contexts())
def test_the_plain_path_merges_the_context_to_the_full_paths_bytes(
    base: bytes | None, ours: bytes, theirs: bytes
) -> None:
    plain = merge_plain(CONTEXT_PATH, base, ours, theirs, None)
    full = merge_file(CONTEXT_PATH, base, ours, theirs)
    assert plain is not None and full.clean
    assert plain == (full.content, [])


settings_values = st.sampled_from([1, 2, "a", 30.0, True, None, [], ["lead"]])
config_mappings = st.recursive(
    st.dictionaries(st.sampled_from(["prefix", "id_length", "coordinators"]), settings_values),
    lambda inner: st.dictionaries(st.sampled_from(["tools", "limits", "prefix"]), inner),
    max_leaves=6,
).filter(bool)  # (an empty config is not one hive writes)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.none() | config_mappings, config_mappings, config_mappings)
def test_the_plain_path_merges_the_config_to_the_full_paths_bytes(
    base: dict[str, Any] | None, ours: dict[str, Any], theirs: dict[str, Any]
) -> None:
    sides = [None if base is None else dumps(base).encode(), dumps(ours).encode()]
    sides.append(dumps(theirs).encode())
    plain = merge_plain(CONFIG_PATH, *sides, None)
    full = merge_file(CONFIG_PATH, *sides)
    assert plain is not None and full.clean
    assert plain == (full.content, [record.field for record in full.conflicts])
    records = [record.model_dump(mode="json") for record in full.conflicts]
    assert merge_plain_records(CONFIG_PATH, *sides) == (full.content, records)


def test_context_and_config_files_the_plain_reader_leaves_go_to_the_full_path() -> None:
    context = encode_context(ProjectContext(goals=["one"]))
    other = encode_context(ProjectContext(goals=["two"]))
    for broken in [
        b"goals: [unclosed\n",  # one side does not parse: the other is kept
        b"goals: not a list\n",
        b"extra: 1\n",  # a section the model refuses
    ]:
        assert merge_plain(CONTEXT_PATH, context, other, broken, None) is None
        assert merge_file(CONTEXT_PATH, context, other, broken).content == other
    infinite = b"stack:\n  ratio: .inf\n"  # the model reads it, and writes inf as null
    assert merge_plain(CONTEXT_PATH, context, other, infinite, None) is None
    assert b"  ratio: null\n" in merge_file(CONTEXT_PATH, context, other, infinite).content
    conflicted = b"# hive merge conflict: both clones changed x\nx: 1\n"
    assert merge_plain(CONFIG_PATH, b"x: 0\n", b"x: 2\n", conflicted, None) is None
    assert merge_plain(CONFIG_PATH, b"x: 0\n", b"x: 2\n", b"x: [\n", None) is None
    merged = merge_plain(CONFIG_PATH, b"x: 0\n", b"x: 2\n", b"x: 1\n", None)
    assert merged == (merge_file(CONFIG_PATH, b"x: 0\n", b"x: 2\n", b"x: 1\n").content, ["x"])
    # a conflict record JSON would not keep as it is (the model's record says null)
    full = merge_file(CONFIG_PATH, b"x: 0\n", b"x: .inf\n", b"x: 1\n")
    assert full.conflicts[0].model_dump(mode="json")["kept"] is None
    assert merge_plain_records(CONFIG_PATH, b"x: 0\n", b"x: .inf\n", b"x: 1\n") is None
    assert merged[0].startswith(b"# hive merge conflict: both clones changed x: kept 2,")


# ------------------------------------------------------------------ the histories


def test_loose_history_answers_as_the_repository_does(ws: Workspace, repo: Path) -> None:
    first = create_cell(ws, title="One")
    update_cell(ws, cell_id=first.id, add_labels=["x"])
    git(repo, "gc", "-q")  # some objects packed, later ones loose
    update_cell(ws, cell_id=first.id, add_labels=["y"])
    path = cell_path(first.id)
    paths = discover(str(repo))
    loose, full = LooseHistory(paths), RepoHistory(GitRepo(paths))
    head = loose.head_commit()
    assert head is not None and head == full.head_commit()
    for where in (path, ".hive", ".hive/cells", "missing/file", f"{path}/below", ""):
        assert loose.blob_at(head, where) == full.blob_at(head, where), where
    versions = loose.versions(head, path, limit=2000)
    assert len(versions) == 3 and versions == full.versions(head, path, limit=2000)
    assert all(loose.read_blob(sha) == full.read_blob(sha) for sha in versions)


# ------------------------------------------------------------------ a driver process


def _recording_driver(repo: Path, tmp_path: Path) -> Path:
    """Make git run the driver through a wrapper that records the modules it loaded."""
    script = tmp_path / "driver.py"
    script.write_text(
        "import atexit, json, os, runpy, sys\n"
        "out = os.environ['HIVE_TEST_MODULES']\n"
        "atexit.register(lambda: open(out, 'a').write(json.dumps(sorted(sys.modules)) + '\\n'))\n"
        "sys.argv = ['merge_driver', *sys.argv[1:]]\n"
        "runpy.run_module('hive.cli.merge_driver', run_name='__main__')\n"
    )
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} %O %A %B %P"
    git(repo, "config", DRIVER_KEY, command)
    return tmp_path / "modules.jsonl"


def _merge(repo: Path, branch: str, record: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HIVE_TEST_MODULES": str(record)}
    env.pop("PYTHONPROFILEIMPORTTIME", None)
    return subprocess.run(
        ["git", "-C", str(repo), "merge", "--no-edit", branch],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )


def test_a_driver_process_merging_cells_imports_no_models(
    ws: Workspace, repo: Path, tmp_path: Path
) -> None:
    record = _recording_driver(repo, tmp_path)
    one = create_cell(ws, title="One", labels=["keep"])
    two = create_cell(ws, title="Two")
    git(repo, "branch", "other")
    update_cell(ws, cell_id=one.id, add_labels=["main"], title="One from main")
    update_cell(ws, cell_id=two.id, priority=0)
    git(repo, "checkout", "-q", "other")
    update_cell(ws, cell_id=one.id, add_labels=["other"], title="One from other")
    update_cell(ws, cell_id=two.id, description="from other")
    git(repo, "checkout", "-q", "main")
    result = _merge(repo, "other", record)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "both sides changed title" in result.stderr  # a conflict record, reported
    runs = [json.loads(line) for line in record.read_text().splitlines()]
    assert len(runs) == 2  # one process per cell both sides changed
    for modules in runs:
        assert "hive.domain.mergecore" in modules
        loaded = [name for name in modules if name.split(".")[0] in HEAVY or name in HEAVY]
        assert loaded == []
    fresh = Workspace(str(repo))
    merged = show_cell(fresh, cell_id=one.id)
    assert merged.labels == ["keep", "main", "other"]
    assert merged.title == "One from other"
    assert [(c.field, c.other) for c in merged.conflicts] == [("title", "One from main")]
    second = show_cell(fresh, cell_id=two.id)
    assert (second.priority, second.description) == (0, "from other")
    assert_clean(repo)


def test_comments_of_both_sides_are_merged_without_the_models(
    ws: Workspace, repo: Path, tmp_path: Path
) -> None:
    record = _recording_driver(repo, tmp_path)
    target = create_cell(ws, title="Talked about")
    git(repo, "branch", "other")
    add_comment(ws, cell_id=target.id, text="from main")
    git(repo, "checkout", "-q", "other")
    add_comment(ws, cell_id=target.id, text="from other")
    git(repo, "checkout", "-q", "main")
    result = _merge(repo, "other", record)
    assert result.returncode == 0, result.stdout + result.stderr
    (modules,) = [json.loads(line) for line in record.read_text().splitlines()]
    assert "hive.domain.mergecore" in modules and "hive.domain.merge" not in modules
    merged = show_cell(Workspace(str(repo)), cell_id=target.id)
    assert sorted(c.text for c in merged.comments) == ["from main", "from other"]
    assert_clean(repo)


def test_a_git_pull_of_reservation_files_and_the_context_merges_them_without_the_models(
    ws: Workspace, repo: Path, tmp_path: Path
) -> None:
    """Two clones: alice reserves in both (both give #2 offline) and both record a
    decision. A real ``git pull`` runs the driver on her file and on the context: no
    models, the clashing id renumbered, the clone's id sequence raised, the bytes the
    full path gives for the same three versions."""
    reserve(ws, paths=["base/**"])  # #1, in both clones' history
    update_context(ws, section="decisions", add="base")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    git(clone, "config", "user.name", "Clone User")
    git(clone, "config", "user.email", "clone@example.com")
    init_hive(Workspace(str(clone)))  # the merge driver is configured per clone
    record = _recording_driver(clone, tmp_path)
    reserve(ws, paths=["src/a.py"])
    update_context(ws, section="decisions", add="from the first clone")
    there = Workspace(str(clone), actor="alice")
    reserve(there, paths=["src/b.py"])  # #2 as well: this clone never saw the other #2
    update_context(there, section="goals", add="from the second clone")
    reserve(Workspace(str(clone), actor="bob"), paths=["docs/**"])  # one side only
    git(clone, "fetch", "-q", "origin")
    result = _merge(clone, "origin/main", record)
    assert result.returncode == 0, result.stdout + result.stderr
    assert len(git(clone, "log", "-1", "--format=%P").split()) == 2  # a merge commit
    runs = [json.loads(line) for line in record.read_text().splitlines()]
    assert len(runs) == 2  # alice's file and the context: both sides changed them
    for modules in runs:
        assert "hive.domain.mergefiles" in modules
        assert [name for name in modules if name.split(".")[0] in HEAVY or name in HEAVY] == []
    path = reservation_path("alice")
    merged = git(clone, "show", f"HEAD:{path}").encode()
    held = decode_file(merged, path).reservations
    assert [(r.id, r.path_pattern, r.renumbered_from) for r in held] == [
        (1, "base/**", None),
        (2, "src/a.py", None),
        (3, "src/b.py", 2),
    ]
    base = git(clone, "merge-base", "HEAD^1", "HEAD^2").strip()
    for name in (path, CONTEXT_PATH):
        sides = [
            git(clone, "show", f"{commit}:{name}").encode() for commit in (base, "HEAD^1", "HEAD^2")
        ]
        assert git(clone, "show", f"HEAD:{name}").encode() == merge_file(name, *sides).content
    context = load_context(Workspace(str(clone)))
    assert [d["decision"] for d in context.decisions] == ["base", "from the first clone"]
    assert context.goals == ["from the second clone"]
    assert git(clone, "show", f"HEAD:{reservation_path('bob')}").count("docs/**") == 1
    assert read_sequence(discover(str(clone)).hive_state_dir) == 3  # #3 never given again
    assert reserve(there, paths=["src/c.py"]).granted[0].id == 4
    assert_clean(clone)


# ------------------------------------------------------------------ the versions table


def _branchy_history(repo: Path) -> None:
    """Files under .hive changed on branches, merged (some by hand, one merge changing a
    file itself), so that git log -m shows merges against each parent."""
    cells = repo / ".hive" / "cells" / "a"
    cells.mkdir(parents=True, exist_ok=True)
    for number in (1, 2, 3):
        (cells / f"c{number}.yaml").write_text("v0\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "start")
    for round_ in (1, 2, 3):
        git(repo, "checkout", "-q", "-b", f"b{round_}")
        (cells / "c1.yaml").write_text(f"b{round_}\n")
        (cells / f"c{round_ % 3 + 1}.yaml").write_text(f"x{round_}\n")
        git(repo, "commit", "-q", "-a", "-m", f"b{round_}")
        git(repo, "checkout", "-q", "main")
        (cells / "c2.yaml").write_text(f"m{round_}\n")
        git(repo, "commit", "-q", "-a", "-m", f"m{round_}")
        git(repo, "merge", "-q", "--no-ff", "--no-commit", f"b{round_}", check=False)
        (cells / "c1.yaml").write_text(f"b{round_}\n")  # the branch's version
        (cells / "c2.yaml").write_text(f"merged {round_}\n")  # a version of the merge's own
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", f"merge b{round_}")


def test_the_versions_table_holds_what_each_files_log_says(repo: Path) -> None:
    _branchy_history(repo)
    files = sorted(
        set(git(repo, "log", "--all", "--format=", "--name-only", "--", ".hive").split())
    )
    assert len(files) == 3
    for tip in ("main", "b2"):
        commit = git(repo, "rev-parse", tip).strip()
        for limit in (1, 2, 3, 2000):
            table = versions_table(str(repo), commit, limit=limit)
            assert table is not None
            for path in files:
                alone = changed_blobs_by_git(str(repo), commit, path, limit=limit)
                assert table.get(path, []) == alone, (tip, limit, path)


def test_the_second_asker_builds_the_table_and_later_ones_read_it(
    ws: Workspace, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    one = create_cell(ws, title="One")
    update_cell(ws, cell_id=one.id, add_labels=["x"])
    path = cell_path(one.id)
    paths = discover(str(repo))
    head = LooseHistory(paths).head_commit()
    assert head is not None
    expected = changed_blobs_by_git(str(repo), head, path, limit=2000)
    stored = Path(paths.hive_state_dir, TABLES_DIR, f"{head}-2000")
    assert LooseHistory(paths).versions(head, path, limit=2000) == expected  # by its own log
    assert stored.read_bytes() == b""  # the next asker builds it
    assert LooseHistory(paths).versions(head, path, limit=2000) == expected
    assert stored.stat().st_size > 0
    monkeypatch.setenv("PATH", "")  # no git: only the table can answer
    assert LooseHistory(paths).versions(head, path, limit=2000) == expected
    with pytest.raises(Unreadable):
        LooseHistory(paths, tables=False).versions(head, path, limit=2000)


def test_no_table_where_history_can_change_under_a_commit(repo: Path, tmp_path: Path) -> None:
    git(repo, "commit", "-q", "--allow-empty", "-m", "second")
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{repo}", str(shallow))
    assert not LooseHistory(discover(str(shallow))).tables
    assert LooseHistory(discover(str(repo))).tables
    git(repo, "replace", "--graft", "HEAD")
    assert not LooseHistory(discover(str(repo))).tables
