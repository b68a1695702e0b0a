"""The state index drops the states (and tree listings) of old writes: its `dirs`
table stays bounded, and a dropped state is indexed again when asked, never answered
from partial rows."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from hive.domain.cells import close_cell, create_cell, list_cells, update_cell
from hive.domain.mail import inbox, send_message
from hive.domain.workspace import Workspace
from hive.store import index as state_index
from tests.conftest import git
from tests.inprocess import run_hive
from tests.test_mail import agent


def counts(ws: Workspace) -> tuple[int, int]:
    """(states stored, trees listed)."""
    db = ws.state_index.db
    (states,) = db.execute("SELECT count(*) FROM states").fetchone()
    (trees,) = db.execute("SELECT count(DISTINCT tree) FROM dirs").fetchone()
    return int(states), int(trees)


def listed_trees(ws: Workspace) -> set[str]:
    """Every tree the stored states reach (what `dirs` must hold, and all it should)."""
    index = ws.state_index
    keys = [row[0] for row in index.db.execute("SELECT key FROM states")]
    return {tree for key in keys for tree in index._trees_of_state(key)}


@pytest.fixture
def few(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(state_index, "STATES_KEPT", 3)
    monkeypatch.setattr(state_index, "PRUNE_SLACK", 2)


def test_old_states_and_their_listings_are_dropped(ws: Workspace, repo: Path, few: None) -> None:
    made = []
    first = ""
    for n in range(12):
        made.append(create_cell(ws, title=f"cell {n}").id)
        first = first or git(repo, "rev-parse", "HEAD:.hive/cells").strip()
        if n % 3 == 2:
            close_cell(ws, cell_id=made[-1])
        states, trees = counts(ws)
        assert states <= 3 + 2
        stored = {row[0] for row in ws.state_index.db.execute("SELECT DISTINCT tree FROM dirs")}
        assert stored == listed_trees(ws)  # no listing of a dropped state is left
        assert trees == len(stored)
        expected = sorted(cell.id for cell in list_cells(Workspace(str(repo), actor="bob")))
        listed = json.loads(run_hive(["list", "--json", "--all"], cwd=repo).stdout)
        assert sorted(cell["id"] for cell in listed) == expected
    assert not ws.state_index.has_state(first)


def test_a_dropped_state_is_indexed_again_when_asked(ws: Workspace, repo: Path, few: None) -> None:
    early = create_cell(ws, title="early").id
    old_commit = git(repo, "rev-parse", "HEAD").strip()
    old_key = git(repo, "rev-parse", "HEAD:.hive/cells").strip()
    for n in range(8):
        create_cell(ws, title=f"later {n}")
    assert not ws.state_index.has_state(old_key)
    git(repo, "checkout", "-q", "--detach", old_commit)
    for command in (("list", "--json", "--all"), ("ready", "--json", "--all")):
        shown = json.loads(run_hive(list(command), cwd=repo).stdout)
        assert [cell["id"] for cell in shown] == [early]
    assert ws.state_index.has_state(old_key)
    entries = ws.state_index.stored_entries(old_key)
    assert entries is not None
    assert sorted(entry.id for entry in entries if entry.id) == [early]


def test_a_pruning_restarts_a_state_indexed_meanwhile(ws: Workspace, few: None) -> None:
    """A process indexing a state outside one transaction may lean on a listing that a
    pruning drops meanwhile: the pruning writes a new token, so its store is refused
    (and the state indexed again), as after a rebuild."""
    index = ws.state_index
    before = index._generation()
    for n in range(6):
        create_cell(ws, title=f"cell {n}")
    assert index._generation() != before
    assert not index._store_state("f" * 40, [], before)
    assert not index.has_state("f" * 40)


def rows(ws: Workspace, table: str, where: str = "1") -> int:
    (count,) = ws.state_index.db.execute(f"SELECT count(*) FROM {table} WHERE {where}").fetchone()
    return int(count)


def test_commits_path_rules_and_mail_stay_bounded(ws: Workspace, repo: Path, few: None) -> None:
    """Rows no kept state needs are dropped: commits without a cells tree (every code
    commit of a hive with no cell yet was kept), the commits of dropped states, the
    path rules of old config versions; the mail state is one row however much mail."""
    for n in range(6):  # no cell yet: each commit read is one without a cells tree
        git(repo, "commit", "-q", "--allow-empty", "-m", f"code {n}")
        assert run_hive(["list"], cwd=repo).returncode == 0
        assert rows(ws, "commits", "cells IS NULL") == 1
    alice, bob = agent(repo, "alice"), agent(repo, "bob")
    for n in range(20):
        create_cell(ws, title=f"cell {n}")
        send_message(alice, to=["bob"], subject=f"n{n}", body="x")
        assert inbox(bob, limit=1)[0].subject == f"n{n}"
        ws.state_index.store_path_rules(f"{n:040x}", b"{}")
        assert rows(ws, "commits") <= rows(ws, "states") + 3 + 2  # at most one per write
        assert rows(ws, "commits", "cells IS NULL") <= 1
        assert rows(ws, "mail_state") == 1
        assert rows(ws, "path_rules") <= state_index.PATH_RULES_KEPT
    assert rows(ws, "commits", "cells IS NULL") == 0  # pruned with the unkept ones
    assert ws.state_index.path_rules(f"{19:040x}") == b"{}"  # the newest kept
    assert ws.state_index.path_rules(f"{0:040x}") is None


def test_the_file_shrinks_after_a_pruning_frees_many_pages(
    ws: Workspace, few: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new index gives free pages back (``auto_vacuum=INCREMENTAL`` and
    ``incremental_vacuum`` after a pruning that leaves many): versions of a cell with
    a long description fill the file, and once the sweep drops those no kept state
    holds, the file is smaller than it was (before, it kept its size for ever)."""
    monkeypatch.setattr(state_index, "SWEEP_MIN", 4)
    monkeypatch.setattr(state_index, "RECLAIM_MIN_PAGES", 16)
    index = ws.state_index
    made_so = index.db.execute("PRAGMA auto_vacuum").fetchone() == (2,)  # incremental
    cell = create_cell(ws, title="long").id
    sizes = []
    for n in range(24):
        update_cell(ws, cell_id=cell, description=f"{n} " + "words " * 3_000)
        index.db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        sizes.append(Path(index.path).stat().st_size)
    peak = sizes.index(max(sizes))
    assert min(sizes[peak:]) < sizes[peak] * 3 // 4, sizes  # given back, not kept free
    assert max(sizes[12:]) <= sizes[peak], sizes  # and bounded: freed pages are reused
    assert made_so
    assert rows(ws, "blobs") < 24


def test_an_older_file_is_made_to_give_pages_back_when_rebuilt(ws: Workspace, repo: Path) -> None:
    """A file made before ``auto_vacuum=INCREMENTAL`` is converted when it is rebuilt
    (here: made for another schema): from then on it gives free pages back too."""
    for n in range(3):
        create_cell(ws, title=f"cell {n}")
    path = Path(ws.state_index.path)
    ws.state_index.close()
    old = sqlite3.connect(path, isolation_level=None)
    old.execute("PRAGMA auto_vacuum=NONE")
    old.execute("VACUUM")  # as a file made before
    old.execute("UPDATE meta SET value = 'hive-index-0-other' WHERE key = 'schema'")
    old.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert old.execute("PRAGMA auto_vacuum").fetchone() == (0,)
    old.close()
    listed = run_hive(["list", "--json", "-n", "1"], cwd=repo)
    assert "rebuilt the state index" in listed.stderr and listed.returncode == 0
    rebuilt = sqlite3.connect(path)
    assert rebuilt.execute("PRAGMA auto_vacuum").fetchone() == (2,)
    rebuilt.close()
