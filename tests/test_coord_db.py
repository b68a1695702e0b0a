"""The coordination store (coord.sqlite3) across fork: a child never uses its parent's
SQLite connection (the state index's fork problem, 542afc8, checked here too)."""

from __future__ import annotations

import os
from pathlib import Path

from hive.store import coord_db


def test_a_forked_child_opens_its_own_connection(tmp_path: Path) -> None:
    state = str(tmp_path / "state")
    with coord_db.write(state) as conn:
        conn.execute("INSERT INTO todos(agent, todos, updated_at) VALUES ('parent', '[]', 1)")
    parent_conn = coord_db.connection(state)
    pid = os.fork()
    if pid == 0:  # the child: a connection of its own, which it can write through
        code = 1
        try:
            mine = coord_db.connection(state)
            if mine is not parent_conn:
                with coord_db.write(state) as conn:
                    conn.execute(
                        "INSERT INTO todos(agent, todos, updated_at) VALUES ('child', '[]', 2)"
                    )
                code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    with coord_db.read(state) as conn:  # and it still works, seeing the child's row
        agents = [row[0] for row in conn.execute("SELECT agent FROM todos ORDER BY agent")]
    assert agents == ["child", "parent"]
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
