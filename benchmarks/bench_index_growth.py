"""How the state index grows over many writes: file size, rows per table, ready's CPU.

Usage (CPU times of fresh processes; the numbers only mean much on a quiet machine)::

    python benchmarks/bench_index_growth.py                      # 1,000 and 10,000 cells
    python benchmarks/bench_index_growth.py --sizes 1000 --writes 400 --every 100

Each size is the repository ``bench_process.py`` builds (reset to its built commit,
its index deleted). Then ``--writes`` writes are made in this process, as the MCP
server makes them (creates, a third of them with a ``blocks`` dependency on an
earlier one, and priority updates and closes of cells ready before the first write,
in turn: each of those a row more in a list derived from the first), each followed by a fresh
``hive ready --json`` (the first after the write: no list of the new state stored),
whose user+system CPU is read from ``getrusage``. Every ``--every`` writes a row gives
the index's size (file and WAL), the rows of each table, and the mean and largest
CPU of the readies since the last row.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sqlite3
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_process import (  # noqa: E402
    DEFAULT_REPOS,
    environment,
    git,
    prepare_repo,
)
from run import SOURCE_FILES, SOURCE_FILES_HELP  # noqa: E402

from hive.domain.cells import close_cell, create_cell, update_cell  # noqa: E402
from hive.domain.workspace import Workspace  # noqa: E402

TABLES = (
    "blobs",
    "dirs",
    "dependents",
    "states",
    "commits",
    "ready",
    "ready_done",
    "ready_delta",
    "path_rules",
    "mail_state",
)


def ready_cpu(repo: Path, *options: str) -> tuple[float, str]:
    """User+system CPU seconds of one fresh ``hive ready --json`` (``python -m hive``
    of this tree, whichever hive the venv installed), and what it printed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [sys.executable, "-m", "hive", "ready", "--json", *options],
        cwd=repo,
        env={**environment(), "PYTHONPATH": str(ROOT)},  # this tree's hive
        capture_output=True,
        text=True,
        check=True,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return cpu, done.stdout


def index_facts(index: Path) -> dict[str, int]:
    """Bytes of the file and its WAL, and the rows of each table."""
    facts = {
        "file": index.stat().st_size,
        "wal": Path(f"{index}-wal").stat().st_size if Path(f"{index}-wal").exists() else 0,
    }
    db = sqlite3.connect(f"file:{index}?mode=ro", uri=True)
    try:
        for table in TABLES:
            facts[table] = db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    finally:
        db.close()
    return facts


def run(size: int, writes: int, every: int, base: Path, source_files: int) -> None:
    repo, _ = prepare_repo(base, size, source_files=source_files)
    git_dir = Path(git(repo, "rev-parse", "--absolute-git-dir"))
    index = git_dir / "hive" / "index.sqlite3"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{index}{suffix}").unlink(missing_ok=True)
    _, printed = ready_cpu(repo, "--all")  # the cold build
    waiting = [cell["id"] for cell in json.loads(printed)]  # the built ready cells
    ws = Workspace(str(repo), actor="growth")
    created: list[str] = []
    cpu: list[float] = []
    print(
        "| cells | writes | file MB | WAL MB | "
        + " | ".join(TABLES)
        + " | ready CPU ms (mean) | ready CPU ms (max) |"
    )
    print("|---" * (len(TABLES) + 6) + "|")
    for number in range(1, writes + 1):
        kind = number % 3
        if kind == 1 or not waiting:
            deps = [f"blocks:{created[-1]}"] if created and number % 9 == 1 else []
            created.append(create_cell(ws, title=f"growth {number}", deps=deps).id)
        elif kind == 2:  # a cell ready before any write: the derived lists grow
            update_cell(ws, cell_id=waiting[number % len(waiting)], priority=number % 5)
        else:
            close_cell(ws, cell_id=waiting.pop(0), force=True, reason="growth")
        cpu.append(ready_cpu(repo)[0])
        if number % every == 0:
            facts = index_facts(index)
            cells = " | ".join(str(facts[table]) for table in TABLES)
            print(
                f"| {size:,} | {number:,} | {facts['file'] / 1e6:.1f} | {facts['wal'] / 1e6:.1f}"
                f" | {cells} | {statistics.mean(cpu) * 1000:.1f} | {max(cpu) * 1000:.1f} |",
                flush=True,
            )
            cpu = []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000])
    parser.add_argument("--writes", type=int, default=2000)
    parser.add_argument("--every", type=int, default=200)
    parser.add_argument("--repos", type=Path, default=DEFAULT_REPOS)
    parser.add_argument("--source-files", type=int, default=SOURCE_FILES, help=SOURCE_FILES_HELP)
    args = parser.parse_args()
    os.environ.pop("HIVE_AGENT_TOKEN", None)
    for size in args.sizes:
        run(size, args.writes, args.every, args.repos, args.source_files)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
