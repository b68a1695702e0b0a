"""The state index's WAL stays bounded across fresh processes, which end without
closing their connection (``hive/cli/entry.py``'s ``_exit``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from hive.store import index as state_index

WRITER = """
import os, sys
from hive.store.index import StateIndex
index = StateIndex(sys.argv[1])
with index.transaction() as db:
    db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('filler', ?)",
               (os.urandom(int(sys.argv[2])).hex(),))
os._exit(0)
"""


def test_the_wal_is_emptied_once_large_though_no_process_closes_the_file(tmp_path: Path) -> None:
    """Each process that opens the file alone recovers its WAL (reads all of it) and
    appends to it: without a restart the WAL grew by every write, forever."""
    folder = tmp_path / "hive"
    wal = folder / (state_index.FILE_NAME + "-wal")
    half = state_index.WAL_RESTART_BYTES // 2  # hex: a row of the whole threshold
    sizes = []
    for _ in range(3):
        subprocess.run([sys.executable, "-c", WRITER, str(folder), str(half)], check=True)
        sizes.append(wal.stat().st_size if wal.exists() else 0)
    assert max(sizes) < state_index.WAL_RESTART_BYTES, sizes
    index = state_index.StateIndex(str(folder))
    assert index.db.execute("SELECT length(value) FROM meta WHERE key = 'filler'").fetchone() == (
        2 * half,
    )
    index.close()
