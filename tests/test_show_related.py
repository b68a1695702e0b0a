"""``hive show``'s subtasks and the cells a cell blocks, from the state index: found by
index lookups (the ``dirs_parent`` index; the ``dependents`` table, then each file's
name in each tree), never by reading every cell row, and right after every kind of
change (create with dependencies, dep add and remove, a parent changed by hand,
delete, close, a sync from another clone, an index built from scratch): compared
with the answers computed from the decoded cells themselves."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from hive.cli import entry
from hive.domain.stats import show_cells
from hive.domain.workspace import Workspace
from hive.store import index as state_index
from hive.store.layout import cell_path
from tests.conftest import git, make_repo
from tests.inprocess import run_hive


def hive(root: Path, *args: str) -> str:
    """``hive -C root ARGS`` as the console script runs it (lean path, else full CLI)."""
    done = run_hive(["-C", str(root), *args])
    assert done.returncode == 0, done.output
    return done.stdout


def create(root: Path, title: str, *options: str) -> str:
    cell_id: str = json.loads(hive(root, "create", title, "--json", *options))["id"]
    return cell_id


def from_the_cells(root: Path) -> dict[str, tuple[list[str], list[str], set[str]]]:
    """For each cell of HEAD: its live subtasks and the live cells it blocks (oldest
    first, as ``hive show`` lists them), and every cell with a ``blocks`` dependency
    on it (deleted ones too, as the index's rows hold them), from the decoded cells."""
    index = Workspace(str(root)).cells()
    cells = [index.cells[cell_id] for cell_id in index.nodes]
    live = sorted((c for c in cells if not c.is_deleted), key=lambda c: (c.created_at, c.id))
    return {
        cell.id: (
            [c.id for c in live if c.parent == cell.id],
            [c.id for c in live if cell.id in c.blockers()],
            {c.id for c in cells if cell.id in c.blockers()},
        )
        for cell in cells
    }


def lean_show(root: Path, cell_id: str, capsys: pytest.CaptureFixture[str]) -> dict[str, list[str]]:
    capsys.readouterr()
    code = entry.dispatch(entry.parse(["-C", str(root), "show", cell_id, "--json"]))
    assert code == 0, "answered by the lean path"
    shown = json.loads(capsys.readouterr().out)
    return {key: [ref["id"] for ref in shown[key]] for key in ("subtasks", "blocks")}


def full_show(ws: Workspace, cell_id: str) -> dict[str, list[str]]:
    """What the full path's ``hive show`` / ``hive_query`` says (``show_cells``)."""
    (shown,) = show_cells(ws, cell_ids=[cell_id])
    return {"subtasks": [r.id for r in shown.subtasks], "blocks": [r.id for r in shown.blocks]}


def assert_right(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The lean show, ``files_of`` and the ``dependents`` rows of HEAD's state agree with
    the cells, by index lookups and by the scan that replaces them past PROBE_LIMIT."""
    expected = from_the_cells(root)
    ws = Workspace(str(root))
    key = ws.cells().key
    state = ws.state_index
    for cell_id, (subtasks, blocks, waiting) in expected.items():
        assert lean_show(root, cell_id, capsys) == {"subtasks": subtasks, "blocks": blocks}
        assert full_show(ws, cell_id) == {"subtasks": subtasks, "blocks": blocks}
        found = state.files_of(key, blocking=cell_id)
        assert found is not None and {entry.id for entry in found} == waiting, cell_id
        with pytest.MonkeyPatch.context() as patch:  # the scan a cell very many wait on gets
            patch.setattr(state_index, "PROBE_LIMIT", 0)
            scanned = state.files_of(key, blocking=cell_id)
        assert scanned is not None and sorted(e.path for e in scanned) == sorted(
            e.path for e in found
        )
    for file in state.entries(key):  # each file's rows: the targets it blocks on
        rows = state.db.execute("SELECT target, id FROM dependents WHERE blob = ?", [file.blob])
        assert sorted(rows) == sorted({(target, file.id) for target in file.blockers})


def test_the_lookups_read_no_other_cell_row(tmp_path: Path) -> None:
    """Every statement ``files_of`` runs for a cell's subtasks and the cells it blocks
    is a lookup by key or index: the plan reads no range of a tree's rows (the scan of
    every cell row's ``blockers`` column it replaces read each tree's whole range)."""
    root = make_repo(tmp_path / "repo")
    hive(root, "init", "--prefix", "hv")
    target = create(root, "target")
    create(root, "waits", "--dep", f"blocks:{target}", "--parent", target)
    ws = Workspace(str(root))
    key = ws.cells().key
    db = ws.state_index.db
    statements: list[str] = []
    db.set_trace_callback(statements.append)
    try:
        parents = ws.state_index.files_of(key, parents=[target])
        blocking = ws.state_index.files_of(key, blocking=target)
    finally:
        db.set_trace_callback(None)
    assert parents and blocking and parents[0].id == blocking[0].id
    plans = [
        [row[3] for row in db.execute(f"EXPLAIN QUERY PLAN {sql}")]
        for sql in statements
        if sql.lstrip().upper().startswith("SELECT") and "dirs" in sql
    ]
    steps = [step for plan in plans for step in plan]
    assert "SEARCH e USING PRIMARY KEY (target=?)" in steps
    assert "SEARCH d USING PRIMARY KEY (tree=? AND name=?)" in steps
    assert any("USING INDEX dirs_parent (parent=? AND tree=?)" in step for step in steps)
    reads = [step for step in steps if "dirs" in step or step.startswith(("SCAN", "SEARCH d "))]
    assert reads and all(
        "(tree=? AND name=?)" in step or "dirs_parent" in step or "dirs_subtrees" in step
        for step in reads
    ), steps


def test_subtasks_and_blocked_cells_stay_right_through_every_change(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    root = make_repo(tmp_path / "main")
    git(root, "remote", "add", "origin", str(bare))
    hive(root, "init", "--prefix", "hv")
    first, second = create(root, "first"), create(root, "second")
    epic, other_epic = create(root, "epic", "-t", "epic"), create(root, "other", "-t", "epic")
    child = create(root, "child", "--parent", epic, "--dep", f"blocks:{first}")
    both = create(root, "both", "--dep", f"blocks:{first}", "--dep", f"blocks:{second}")
    assert_right(root, capsys)  # created with dependencies
    hive(root, "dep", "add", second, first)
    hive(root, "dep", "remove", both, second)
    assert_right(root, capsys)
    # the former blocker no longer lists it, however the state index holds the version
    # that depended on it (its rows are that blob's, and answer only states holding it)
    assert both not in lean_show(root, second, capsys)["blocks"]
    assert both not in full_show(Workspace(str(root)), second)["blocks"]
    path = root / cell_path(child)  # moved to another epic by hand, a plain git commit
    path.write_text(path.read_text().replace(f"parent: {epic}", f"parent: {other_epic}"))
    git(root, "commit", "-qam", "reparent by hand")
    assert_right(root, capsys)
    hive(root, "delete", both)
    hive(root, "close", first, "--reason", "done")
    assert_right(root, capsys)
    assert both not in lean_show(root, first, capsys)["blocks"]  # deleted: blocks nothing
    assert both not in full_show(Workspace(str(root)), first)["blocks"]
    hive(root, "sync")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(bare), str(clone))
    for name, value in (("user.name", "Clone User"), ("user.email", "clone@example.com")):
        git(clone, "config", name, value)
    hive(clone, "init", "--prefix", "hv")
    hive(clone, "sync")
    late = create(clone, "late", "--dep", f"blocks:{second}", "--parent", other_epic)
    hive(clone, "dep", "add", child, late)
    hive(clone, "sync")
    hive(root, "sync")  # the other clone's cells and dependency merged in
    assert {late} <= set(from_the_cells(root)) and late in from_the_cells(root)[second][1]
    assert_right(root, capsys)
    grown = _dependents(root)
    for found in (root / ".git" / "hive").glob("index.sqlite3*"):
        found.unlink()
    assert_right(root, capsys)  # built from scratch
    assert _dependents(root) <= grown  # the rows built by the writes (and older versions')


def _dependents(root: Path) -> set[tuple[str, str, str]]:
    db = sqlite3.connect(root / ".git" / "hive" / "index.sqlite3")
    try:
        return set(db.execute("SELECT target, blob, id FROM dependents"))
    finally:
        db.close()
