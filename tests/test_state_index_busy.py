"""The state index under contention and partial damage: a file another process holds
is waited for and never rebuilt (a rebuild would pull it from under that process), and
a file whose pages break while its schema row still reads is rebuilt, not trusted."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from hive.domain.cells import create_cell
from hive.domain.workspace import Workspace
from hive.store import index as state_index
from tests.conftest import git
from tests.inprocess import run_hive


def hive(repo: Path, *args: str) -> tuple[int, str, str]:
    result = run_hive(args, cwd=repo, env={**os.environ, "HIVE_AGENT": "alice"})
    return result.returncode, result.stdout, result.stderr


def index_path(repo: Path) -> Path:
    return repo / ".git" / "hive" / state_index.FILE_NAME


def ready_ids(repo: Path) -> list[str]:
    code, out, err = hive(repo, "ready", "--json", "--all")
    assert code == 0, err
    return [cell["id"] for cell in json.loads(out)]


def three_cells(ws: Workspace, repo: Path) -> list[str]:
    for n in range(3):
        create_cell(ws, title=f"cell {n}")
    return ready_ids(repo)


def assert_served_as_before(repo: Path, expected: list[str]) -> None:
    """Once the other process lets go: the same answer, and no rebuild."""
    code, out, err = hive(repo, "ready", "--json", "--all")
    assert code == 0 and "rebuilt" not in err, err
    assert [cell["id"] for cell in json.loads(out)] == expected


def hold_for_writing(path: Path) -> sqlite3.Connection:
    """Another process's connection in the middle of a write transaction."""
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    return holder


def test_a_busy_index_is_never_unlinked_or_rebuilt(
    ws: Workspace, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = three_cells(ws, repo)
    path = index_path(repo)
    inode = path.stat().st_ino
    holder = hold_for_writing(path)
    monkeypatch.setattr(state_index, "BUSY_TIMEOUT_MS", 200)
    other = state_index.StateIndex(str(path.parent))
    with pytest.raises(sqlite3.OperationalError):
        other.reset("asked to start over while another process writes")
    assert path.stat().st_ino == inode  # the same file, not one made anew
    schema = holder.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
    assert schema == (state_index.SCHEMA,)
    assert holder.execute("SELECT count(*) FROM states").fetchone()[0] > 0
    holder.execute("ROLLBACK")
    holder.close()
    other.close()
    monkeypatch.undo()
    assert_served_as_before(repo, expected)


def test_a_busy_index_is_a_lock_timeout_not_an_internal_error(
    ws: Workspace, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = three_cells(ws, repo)
    ws.state_index.close()
    git(repo, "commit", "-q", "--allow-empty", "-m", "a commit the index has not seen")
    holder = hold_for_writing(index_path(repo))
    monkeypatch.setattr(state_index, "BUSY_TIMEOUT_MS", 200)
    code, out, err = hive(repo, "ready", "--json")
    holder.execute("ROLLBACK")
    holder.close()
    assert code == 6, err
    assert "internal error" not in err and "Traceback" not in err
    report = json.loads(out)  # --json: the error as JSON
    assert report["code"] == "lock_timeout"
    assert "state index" in report["error"] and "busy" in report["error"]
    assert "try again" in report["error"]
    monkeypatch.undo()
    assert_served_as_before(repo, expected)


def test_an_index_broken_mid_file_is_rebuilt_though_its_schema_row_reads(
    ws: Workspace, repo: Path
) -> None:
    for n in range(40):
        create_cell(ws, title=f"cell {n} " + "x" * 200, description="d" * 400)
    expected = ready_ids(repo)
    ws.state_index.close()
    path = index_path(repo)
    db = sqlite3.connect(path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page = db.execute("PRAGMA page_size").fetchone()[0]
    meta_root = db.execute("SELECT rootpage FROM sqlite_master WHERE name = 'meta'").fetchone()[0]
    pages = db.execute("PRAGMA page_count").fetchone()[0]
    db.close()
    keep = {1, meta_root}
    with path.open("r+b") as handle:
        for number in range(2, pages + 1):
            if number not in keep:
                handle.seek((number - 1) * page)
                handle.write(b"\xa5" * page)
    check = sqlite3.connect(path)  # the schema row still reads: only the rest is broken
    assert check.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() == (
        state_index.SCHEMA,
    )
    check.close()
    code, out, err = hive(repo, "ready", "--json", "--all")
    assert code == 0, err
    assert [cell["id"] for cell in json.loads(out)] == expected
    assert "rebuilt the state index" in err
    code, out, err = hive(repo, "ready", "--json", "--all")
    assert code == 0 and err == ""
    assert [cell["id"] for cell in json.loads(out)] == expected
