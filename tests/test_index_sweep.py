"""The state index drops the parsed cells, ``dependents`` rows and commits of states it
no longer keeps (``StateIndex._sweep_blobs``, in the pruning pass): every table stays
bounded, and every read answers what a rebuilt index answers."""

from __future__ import annotations

import itertools
import json
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from hive.domain.cells import add_dependency, close_cell, create_cell, update_cell
from hive.domain.workspace import Workspace
from hive.store import index as state_index
from tests.conftest import copy_repo, git
from tests.inprocess import run_hive
from tests.test_ready_lists import STEPS, apply, check

COPIES = itertools.count()
INDEX_FILES = ("", "-wal", "-shm")


@pytest.fixture
def tiny(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Two states kept, dropped once one more is stored, every dropped cell swept."""
    with monkeypatch.context() as patched:
        patched.setattr(state_index, "STATES_KEPT", 2)
        patched.setattr(state_index, "PRUNE_SLACK", 1)
        patched.setattr(state_index, "SWEEP_MIN", 0)
        yield


def index_path(repo: Path) -> Path:
    common = git(repo, "rev-parse", "--path-format=absolute", "--git-common-dir").strip()
    return Path(common, "hive", "index.sqlite3")


def reads(ids: list[str]) -> list[list[str]]:
    """The command lines compared: the lean reads, the full path's, and the hook."""
    shown = [["show", cell_id, "--json"] for cell_id in ids[:3]]
    return [
        ["ready", "--json"],
        ["ready"],
        ["list", "--json", "--all"],
        ["list", "--status", "open"],
        ["blocked", "--json"],
        ["stats", "--json"],
        *shown,
        *(
            [["show", ids[0]], ["dep", "tree", ids[0], "--direction", "up", "--json"]]
            if ids
            else []
        ),
        ["hooks", "run", "pre-commit"],
    ]


def answers(repo: Path, ids: list[str], *, staged: bool) -> list[tuple[str, int, str, str]]:
    """What each read prints and exits with; with ``staged``, the hook's also with a
    cell file edited and staged (the full check, against HEAD's cells), then broken."""
    found = [answer(repo, argv) for argv in reads(ids)]
    files = sorted((repo / ".hive" / "cells").glob("*/*.yaml"))
    if files and staged:
        text = files[0].read_text()
        for edited in (text.replace("title: ", "title: edited ", 1), "title: [unclosed\n"):
            files[0].write_text(edited)
            git(repo, "add", str(files[0]))
            found.append(answer(repo, ["hooks", "run", "pre-commit"]))
        git(repo, "reset", "-q")
        files[0].write_text(text)
    return found


def answer(repo: Path, argv: list[str]) -> tuple[str, int, str, str]:
    done = run_hive(argv, cwd=repo, env={**os.environ, "HIVE_AGENT": ""})
    return " ".join(argv), done.returncode, done.stdout, done.stderr


def same_as_rebuilt(ws: Workspace, repo: Path, ids: list[str], *, staged: bool = True) -> None:
    """Every read from the pruned index equals the same read from an index built anew
    (the pruned file moved aside meanwhile, then put back to go on pruning)."""
    ws.state_index.close()
    path = index_path(repo)
    pruned = answers(repo, ids, staged=staged)
    for suffix in INDEX_FILES:
        if Path(f"{path}{suffix}").exists():
            os.replace(f"{path}{suffix}", f"{path}{suffix}.kept")
    try:
        fresh = answers(repo, ids, staged=staged)
    finally:
        for suffix in INDEX_FILES:
            Path(f"{path}{suffix}").unlink(missing_ok=True)
            if Path(f"{path}{suffix}.kept").exists():
                os.replace(f"{path}{suffix}.kept", f"{path}{suffix}")
    for got, expected in zip(pruned, fresh, strict=True):
        assert got == expected
    assert_consistent(ws.state_index.db)


def assert_consistent(db: sqlite3.Connection) -> None:
    """No kept listing or stored ready list names a dropped parsed cell; no dependents
    row, and no commit, outlives what it is about."""
    for query in (
        "SELECT count(*) FROM dirs WHERE is_tree = 0 AND name LIKE '%.yaml'"
        " AND sha NOT IN (SELECT blob FROM blobs)",
        "SELECT count(*) FROM ready WHERE blob NOT IN (SELECT blob FROM blobs)",
        "SELECT count(*) FROM ready_delta WHERE ready = 1 AND blob NOT IN (SELECT blob FROM blobs)",
        "SELECT count(*) FROM dependents WHERE blob NOT IN (SELECT blob FROM blobs)",
        "SELECT count(*) FROM commits WHERE cells NOT IN (SELECT key FROM states)",
    ):
        assert db.execute(query).fetchone() == (0,), query


@settings(
    max_examples=4,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(steps=STEPS)
def test_every_read_of_a_pruned_index_is_a_rebuilt_ones(
    steps: list[tuple[str, int, int, int]], hive_template: Path, tmp_path: Path, tiny: None
) -> None:
    """Random writes (as tests/test_ready_lists.py makes them), each followed by a ready
    list derived or stored, with two states kept: the reads of every fourth state and
    of the last, and of the first state (dropped long since) checked out again, equal
    those of a rebuilt index."""
    repo = copy_repo(hive_template, tmp_path / f"repo{next(COPIES)}")
    ws = Workspace(str(repo), actor="alice")
    cells = [create_cell(ws, title=f"seed {n}", priority=n % 3).id for n in range(4)]
    add_dependency(ws, cell_id=cells[1], target=cells[0])
    first = git(repo, "rev-parse", "HEAD").strip()
    check(ws)
    for number, step in enumerate(steps, 1):
        apply(ws, repo, cells, step)
        check(ws)
        if number % 4 == 0 or number == len(steps):
            same_as_rebuilt(ws, repo, cells, staged=number == len(steps))
    git(repo, "checkout", "-q", "--detach", first)
    same_as_rebuilt(ws, repo, cells)
    ws.state_index.close()


def rows(db: sqlite3.Connection, table: str) -> int:
    return int(db.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


def test_the_tables_stay_bounded_over_many_writes(ws: Workspace, tiny: None) -> None:
    """Each write leaves a cell version behind (and with a dependency, its dependents
    row) and a commit: with everything dropped swept, none of them piles up."""
    blocker = create_cell(ws, title="blocker").id
    waiting = [
        create_cell(ws, title=f"waiting {n}", deps=[f"blocks:{blocker}"]).id for n in range(3)
    ]
    db = ws.state_index.db
    sizes = []
    for n in range(24):
        update_cell(ws, cell_id=waiting[n % 3], priority=n % 4)
        sizes.append((rows(db, "blobs"), rows(db, "dependents"), rows(db, "commits")))
    close_cell(ws, cell_id=waiting[0], force=True)
    # 4 cells, so 4 versions a state; the few states kept and the cells parsed since the
    # last pruning (spared) hold a handful more
    assert max(blobs for blobs, _, _ in sizes[8:]) <= 4 + 6
    assert max(edges for _, edges, _ in sizes[8:]) <= 3 + 6
    assert max(commits for _, _, commits in sizes) <= 3
    assert_consistent(db)


def test_a_sweep_waits_for_enough_new_cells(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    """Below SWEEP_MIN cells parsed since the last sweep (or half as many as it kept),
    the pruning passes leave the parsed cells alone: a sweep reads every row."""
    monkeypatch.setattr(state_index, "STATES_KEPT", 2)
    monkeypatch.setattr(state_index, "PRUNE_SLACK", 1)
    monkeypatch.setattr(state_index, "SWEEP_MIN", 10)
    cell = create_cell(ws, title="cell").id
    db = ws.state_index.db
    counts = []
    for n in range(16):
        update_cell(ws, cell_id=cell, priority=n % 4)
        counts.append(rows(db, "blobs"))
    dropped = [before - after for before, after in itertools.pairwise(counts) if after < before]
    assert dropped and all(gone > 5 for gone in dropped)  # a few sweeps of many, not each pass
    assert_consistent(db)


def test_an_index_of_the_previous_version_is_swept_in_place(ws: Workspace, tiny: None) -> None:
    """A file of this schema made before sweeping (no sweep marks in ``meta``, every
    cell version ever parsed) opens without a rebuild, and its pruning passes drop
    what no kept state holds."""
    cell = create_cell(ws, title="cell").id
    db = ws.state_index.db
    with ws.state_index.transaction():
        db.execute("DELETE FROM meta WHERE key IN ('swept', 'parsed')")
        generation = ws.state_index._generation()
    old = [f"{n:040x}" for n in range(50)]
    ws.state_index.add_parsed(
        (sha, state_index.ParseProblem("left from long ago", ".hive/cells/x.yaml", 1))
        for sha in old
    )
    for n in range(6):
        update_cell(ws, cell_id=cell, priority=n % 4)
    assert not ws.state_index.notices  # not rebuilt
    assert ws.state_index._generation() != generation  # pruned meanwhile
    left = db.execute(
        f"SELECT count(*) FROM blobs WHERE blob IN ({','.join('?' for _ in old)})", old
    ).fetchone()
    assert left == (0,)
    assert json.loads(run_hive(["show", cell, "--json"], cwd=Path(ws.root)).stdout)["id"] == cell


def test_a_stored_ready_list_keeps_its_cells_past_its_state(ws: Workspace, tiny: None) -> None:
    """A ready list outlives its state (a few are kept, and lists are derived from
    them): the sweep keeps the parsed cells it names, so it still reads whole, not as
    a damaged file that must be rebuilt."""
    cells = [create_cell(ws, title=f"cell {n}").id for n in range(3)]
    check(ws)
    key = ws.reader.head_key()
    assert key is not None
    for n in range(12):
        update_cell(ws, cell_id=cells[n % 3], priority=n % 4)
    index = ws.state_index
    assert not index.has_state(key)
    listed = index.ready(key)
    assert listed is not None and sorted(row.id for row in listed[0]) == sorted(cells)
    assert not index.notices
