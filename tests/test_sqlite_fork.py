"""SQLite files across fork: a forked child's writes are never lost.

A child that opens its own connection to a file its parent still has open (an
inherited, unused connection) shares SQLite's in-process lock records with it and so
never takes the file's real locks. When the parent then closes its connection and a
third process opens and closes the file, that process believes itself the last user:
it checkpoints and deletes the WAL, and the child's later writes go to a deleted file.
hive closes the forking thread's connections before a fork, so the child starts
clean. Both of hive's SQLite files are checked: the state index and coord.sqlite3."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from hive.store import coord_db
from hive.store import index as state_index


def _open_and_close(path: Path) -> None:
    """A third process that uses the file briefly (as any hive command does)."""
    code = f"import sqlite3; c = sqlite3.connect({str(path)!r}); c.execute('SELECT 1'); c.close()"
    subprocess.run([sys.executable, "-c", code], check=True)


def _fork_writer(first: Callable[[], None], second: Callable[[], None]) -> tuple[int, int, int]:
    """Fork a child that calls ``first``, waits for the parent's go, then ``second``;
    returns (pid, the pipe end the parent reads 'first done' from, the go end)."""
    done_r, done_w = os.pipe()
    go_r, go_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            first()
            os.write(done_w, b"1")
            os.read(go_r, 1)
            second()
            code = 0
        finally:
            os._exit(code)
    return pid, done_r, go_w


def _finish(pid: int, done_r: int, go_w: int, between: Callable[[], None]) -> None:
    assert os.read(done_r, 1) == b"1"
    between()
    os.write(go_w, b"1")
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def _child_index_writes_survive(state: str, parent_leaves: Callable[[], None]) -> None:
    """A forked child writes commit b, then (after ``parent_leaves``) commit c to the
    index in ``state`` through one StateIndex, as a Workspace would: the file then
    holds a, b and c, and is sound."""
    child: list[state_index.StateIndex] = []

    def write(commit: str) -> Callable[[], None]:
        def run() -> None:
            if not child:
                child.append(state_index.StateIndex(state))
            child[0].remember_commit(commit, None, "e" * 40)  # a cells tree: each row kept

        return run

    pid, done_r, go_w = _fork_writer(write("b" * 40), write("c" * 40))
    _finish(pid, done_r, go_w, parent_leaves)
    fresh = sqlite3.connect(os.path.join(state, state_index.FILE_NAME))
    commits = sorted(row[0][0] for row in fresh.execute("SELECT commit_id FROM commits"))
    assert commits == ["a", "b", "c"]
    assert fresh.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    fresh.close()


def test_a_forked_childs_state_index_writes_survive_its_parent_closing(tmp_path: Path) -> None:
    state = str(tmp_path / "state")
    index = state_index.StateIndex(state)
    index.remember_commit("a" * 40, None, "e" * 40)  # the parent has the file open

    def parent_leaves() -> None:
        index.close()
        _open_and_close(Path(index.path))

    _child_index_writes_survive(state, parent_leaves)


def test_a_connection_that_outlived_its_index_is_closed_before_a_fork_too(tmp_path: Path) -> None:
    """The parent's connection outlives its StateIndex (kept alive by a reference, as a
    reference cycle keeps one until the cyclic collector runs): it is closed before the
    fork all the same, so the child's writes survive (the suite's 4-writer test lost
    them, then read "database disk image is malformed", about one run in ten)."""
    state = str(tmp_path / "state")
    index = state_index.StateIndex(state)
    index.remember_commit("a" * 40, None, "e" * 40)
    kept = [index.db]  # the connection, without the index
    path = Path(index.path)
    del index

    def parent_leaves() -> None:
        kept[0].close()  # later, as the cyclic collector would (closing twice is harmless)
        _open_and_close(path)

    _child_index_writes_survive(state, parent_leaves)


def test_a_forked_childs_coordination_writes_survive_its_parent_closing(tmp_path: Path) -> None:
    state = str(tmp_path / "state")

    def add(agent: str) -> Callable[[], None]:
        def run() -> None:
            with coord_db.write(state) as conn:
                conn.execute(
                    "INSERT INTO todos(agent, todos, updated_at) VALUES (?, '[]', 1)", (agent,)
                )

        return run

    add("parent")()  # the parent has the file open
    parent_conn = coord_db.connection(state)
    pid, done_r, go_w = _fork_writer(add("child-1"), add("child-2"))

    def parent_leaves() -> None:
        parent_conn.close()
        _open_and_close(Path(coord_db.db_path(state)))

    _finish(pid, done_r, go_w, parent_leaves)
    fresh = sqlite3.connect(coord_db.db_path(state))
    agents = sorted(row[0] for row in fresh.execute("SELECT agent FROM todos"))
    assert agents == ["child-1", "child-2", "parent"]
    fresh.close()


_FIRST_OPENS = """
import os, sys, tempfile
from hive.store import coord_db, index as state_index

def coord(folder):
    with coord_db.write(folder) as conn:
        conn.execute("SELECT 1")

def index(folder):
    with state_index.StateIndex(folder).transaction():
        pass

failed = []
for opener in (coord, index):
    for _ in range(int(sys.argv[1])):
        folder = tempfile.mkdtemp(dir=sys.argv[2])
        children = []
        for _ in range(8):
            pid = os.fork()
            if pid == 0:
                try:
                    opener(folder)
                except Exception as exc:
                    os.write(2, f"{opener.__name__}: {type(exc).__name__}: {exc}\\n".encode())
                    os._exit(1)
                os._exit(0)
            children.append(pid)
        failed += [pid for pid in children if os.waitpid(pid, 0)[1]]
print(len(failed))
"""


def test_processes_opening_a_new_file_at_once_all_succeed(tmp_path: Path) -> None:
    """SQLite answers "database is locked" at once, without its busy timeout, to one of
    several processes switching a new file to WAL at the same moment: each waits its
    turn (8 processes x 40 new files, for each store; a small process forks them)."""
    done = subprocess.run(
        [sys.executable, "-c", _FIRST_OPENS, "40", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "0\n", "")
