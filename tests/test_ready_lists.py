"""Ready lists derived from an earlier state's (hive/domain/ready_lists.py) are exactly
the lists computed from every cell, whatever the writes in between."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hive.domain.cells import (
    add_dependency,
    close_cell,
    create_cell,
    delete_cell,
    remove_dependency,
    reopen_cell,
    update_cell,
)
from hive.domain.readiness import ready_ids
from hive.domain.ready_lists import derive_ready_list, store_ready_list
from hive.domain.workspace import Workspace
from hive.errors import HiveError
from hive.store import index as state_index
from hive.store.cells import decode_cell, encode_cell
from hive.store.index import nodes_of
from hive.store.layout import cell_path
from tests.conftest import copy_repo, git

COPIES = itertools.count()


def whole_list(index: state_index.StateIndex, key: str) -> tuple[list[tuple[str, str]], int]:
    """The ready list of ``key`` computed from every cell: (id, blob) in order."""
    entries = index.stored_entries(key)
    assert entries is not None
    blob_of: dict[str, str] = {}
    nodes, unreadable = nodes_of(entries, blob_of)
    ranked = ready_ids(nodes, unreadable)
    return [(cell_id, blob_of[cell_id]) for cell_id in ranked], len(ranked)


def stored_list(index: state_index.StateIndex, key: str) -> tuple[list[tuple[str, str]], int]:
    found = index.ready(key)
    assert found is not None
    rows, total = found
    return [(row.id, row.blob) for row in rows], total


def check(ws: Workspace) -> bool:
    """Store HEAD's ready list as ``hive ready`` does and compare it, and each page of
    it, with the whole computation; whether the whole computation was spared (the list
    derived, or stored already: a state seen before)."""
    key = ws.reader.head_key()
    assert key is not None
    index = ws.state_index
    derived = index.ready(key) is not None or derive_ready_list(index, key)
    if not derived:
        assert store_ready_list(index, key)
    expected, total = whole_list(index, key)
    assert stored_list(index, key) == (expected, total)
    for limit in (1, 3):
        page = index.ready(key, limit)
        assert page is not None
        assert [(row.id, row.blob) for row in page[0]] == expected[:limit]
        assert page[1] == total
    return derived


def head_ready(ws: Workspace) -> list[str]:
    key = ws.reader.head_key()
    assert key is not None
    return [cell_id for cell_id, _ in stored_list(ws.state_index, key)[0]]


def commit_file(repo: Path, path: str, data: bytes | None, message: str) -> None:
    """A plain git commit writing (or, ``None``, removing) one file."""
    target = repo / path
    if data is None:
        target.unlink()
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    git(repo, "add", "-A", ".hive")
    git(repo, "commit", "-q", "--allow-empty", "-m", message)


def set_parent(repo: Path, cell_id: str, parent: str | None) -> None:
    """Change a cell's parent by editing its file (no command does that)."""
    path = cell_path(cell_id)
    cell = decode_cell((repo / path).read_bytes(), path)
    commit_file(repo, path, encode_cell(cell.model_copy(update={"parent": parent})), "reparent")


def apply(ws: Workspace, repo: Path, cells: list[str], step: tuple[str, int, int, int]) -> None:
    """One write of the property test (one the domain refuses changes nothing)."""
    action, first, second, number = step
    one = cells[first % len(cells)] if cells else None
    other = cells[second % len(cells)] if cells else None
    try:
        if action == "create" or one is None or other is None:
            parent = one if number % 3 == 0 else None
            kind = "epic" if number % 4 == 0 else "task"
            priority = number % 3
            made = create_cell(ws, title=f"c{number}", type=kind, priority=priority, parent=parent)
            cells.append(made.id)
        elif action == "close":
            close_cell(ws, cell_id=one, force=True)
        elif action == "reopen":
            reopen_cell(ws, cell_id=one)
        elif action == "status":
            status = ("deferred", "blocked", "in_progress", "open")[number % 4]
            update_cell(ws, cell_id=one, status=status, force=True)
        elif action == "priority":
            update_cell(ws, cell_id=one, priority=number % 4)
        elif action == "block":
            add_dependency(ws, cell_id=one, target=other)
        elif action == "unblock":
            remove_dependency(ws, cell_id=one, target=other)
        elif action == "delete":
            delete_cell(ws, cell_id=one, force=True)
        elif action == "parent":
            set_parent(repo, one, None if one == other else other)
        elif action == "break":
            commit_file(repo, cell_path(one), b"title: [unclosed\n", "a broken cell file")
        elif action == "remove":
            commit_file(repo, cell_path(one), None, "a cell file removed")
            cells.remove(one)
    except HiveError:
        pass


ACTIONS = st.sampled_from(
    [
        "create",
        "create",
        "close",
        "reopen",
        "status",
        "priority",
        "block",
        "block",
        "unblock",
        "delete",
        "parent",
        "break",
        "remove",
    ]
)
STEPS = st.lists(
    st.tuples(ACTIONS, st.integers(0, 30), st.integers(0, 30), st.integers(0, 11)),
    min_size=1,
    max_size=10,
)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(steps=STEPS)
def test_a_derived_ready_list_is_the_whole_computation(
    steps: list[tuple[str, int, int, int]], hive_template: Path, tmp_path: Path
) -> None:
    """After every write (creates, closes, reopens, deferrals, blocks and unblocks,
    deletes, parent changes, unreadable and removed files), the list derived from the
    previous state's equals the one computed from every cell, page by page."""
    repo = copy_repo(hive_template, tmp_path / f"repo{next(COPIES)}")
    ws = Workspace(str(repo), actor="alice")
    cells = [create_cell(ws, title=f"seed {n}", priority=n % 3).id for n in range(4)]
    check(ws)
    for step in steps:
        apply(ws, repo, cells, step)
        check(ws)
    ws.state_index.close()


def derived_from_previous(ws: Workspace) -> None:
    """The list of HEAD's state is right, and not computed from every cell."""
    assert check(ws)


def test_a_create_close_and_reopen_are_derived(ws: Workspace) -> None:
    first = create_cell(ws, title="first", priority=1).id
    assert not check(ws)  # nothing to derive from
    second = create_cell(ws, title="second", priority=0).id
    derived_from_previous(ws)
    close_cell(ws, cell_id=second)
    derived_from_previous(ws)
    reopen_cell(ws, cell_id=second)
    derived_from_previous(ws)
    update_cell(ws, cell_id=first, priority=3)
    derived_from_previous(ws)


def test_closing_a_blocker_readies_what_waits_on_it(ws: Workspace) -> None:
    blocker = create_cell(ws, title="blocker").id
    waiting = create_cell(ws, title="waiting", deps=[f"blocks:{blocker}"]).id
    check(ws)
    assert waiting not in head_ready(ws)
    close_cell(ws, cell_id=blocker)
    derived_from_previous(ws)
    assert head_ready(ws) == [waiting]


def test_an_epic_is_ready_only_without_open_children(ws: Workspace) -> None:
    epic = create_cell(ws, title="epic", type="epic").id
    check(ws)
    child = create_cell(ws, title="child", parent=epic).id
    derived_from_previous(ws)
    close_cell(ws, cell_id=child)
    derived_from_previous(ws)
    assert epic in head_ready(ws)


def test_a_deferred_or_blocked_ancestor_holds_back_its_descendants(ws: Workspace) -> None:
    top = create_cell(ws, title="top").id
    middle = create_cell(ws, title="middle", parent=top).id
    create_cell(ws, title="leaf", parent=middle)
    check(ws)
    update_cell(ws, cell_id=top, status="deferred")
    derived_from_previous(ws)
    update_cell(ws, cell_id=top, status="open")
    derived_from_previous(ws)
    blocker = create_cell(ws, title="blocker").id
    derived_from_previous(ws)
    add_dependency(ws, cell_id=top, target=blocker)
    derived_from_previous(ws)
    delete_cell(ws, cell_id=blocker, force=True)
    derived_from_previous(ws)


def test_an_unreadable_blocker_counts_as_open(ws: Workspace, repo: Path) -> None:
    blocker = create_cell(ws, title="blocker").id
    create_cell(ws, title="waiting", deps=[f"blocks:{blocker}"])
    close_cell(ws, cell_id=blocker)
    check(ws)
    commit_file(repo, cell_path(blocker), b"title: [unclosed\n", "broken")
    derived_from_previous(ws)
    commit_file(repo, cell_path(blocker), None, "gone")
    derived_from_previous(ws)


def test_a_reparented_cell_follows_its_new_parent(ws: Workspace, repo: Path) -> None:
    held = create_cell(ws, title="held").id
    update_cell(ws, cell_id=held, status="blocked")
    free = create_cell(ws, title="free").id
    check(ws)
    set_parent(repo, free, held)
    derived_from_previous(ws)
    set_parent(repo, free, None)
    derived_from_previous(ws)


def test_a_copy_outside_its_shard_is_computed_whole(ws: Workspace, repo: Path) -> None:
    """Which of two files is the cell follows the order of the whole listing: with a
    copy outside its cell's own place, the list is never derived."""
    cell = create_cell(ws, title="cell").id
    check(ws)
    commit_file(repo, f".hive/cells/{cell}.yaml", (repo / cell_path(cell)).read_bytes(), "copy")
    assert not check(ws)
    create_cell(ws, title="another")
    assert not check(ws)


def test_many_changes_are_computed_whole(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    from hive.domain import ready_lists

    create_cell(ws, title="one")
    check(ws)
    monkeypatch.setattr(ready_lists, "MOST_CHANGED", 1)
    for n in range(2):
        create_cell(ws, title=f"more {n}")
    assert not check(ws)


def test_lists_kept_stay_bounded_and_whole(ws: Workspace) -> None:
    """Derived lists are a few rows each; past DERIVED_LISTS_KEPT the oldest go, and a
    whole list dropped takes the lists derived from it along."""
    for n in range(state_index.DERIVED_LISTS_KEPT + 3):
        create_cell(ws, title=f"cell {n}")
        check(ws)
    db = ws.state_index.db
    whole, derived = db.execute(
        "SELECT sum(base IS NULL), sum(base IS NOT NULL) FROM ready_done"
    ).fetchone()
    assert whole == 1 and derived == state_index.DERIVED_LISTS_KEPT
    orphans = db.execute(
        "SELECT count(*) FROM ready_delta WHERE key NOT IN (SELECT key FROM ready_done)"
    ).fetchone()
    assert orphans == (0,)


def test_a_long_delta_is_stored_whole_not_computed_whole(
    ws: Workspace, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past REBASE_DELTA rows a derived list is stored whole, merged from its base and
    its delta (re-based), and the next lists derive from it: no write of every kind
    makes the first ready compute the list from every cell."""
    from hive.domain import ready_lists

    monkeypatch.setattr(ready_lists, "REBASE_DELTA", 2)
    cells = [create_cell(ws, title=f"seed {n}", priority=n % 3).id for n in range(6)]
    assert not check(ws)  # nothing to derive from
    kinds = ["create", "close", "reopen", "status", "priority", "block", "unblock", "delete"]
    for number, action in enumerate([*kinds, "parent", "break", "remove", *kinds]):
        apply(ws, repo, cells, (action, number, number + 2, number))
        assert check(ws)
    whole = ws.state_index.db.execute(
        "SELECT count(*) FROM ready_done WHERE base IS NULL"
    ).fetchone()[0]
    assert whole > 1  # re-based along the way
