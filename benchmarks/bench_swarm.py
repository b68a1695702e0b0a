"""swarm_complete benchmark: one commit that closes a cell, releases 3 reservations and
records an outcome, at 1,000 cells.

Usage::

    python benchmarks/bench_swarm.py               # prints a table
    python benchmarks/bench_swarm.py --write-docs  # also updates docs/performance.md
    python benchmarks/bench_swarm.py --runs 1 --cells 20  # a smoke run

Builds a scratch repository (2,000 source files, 1,000 cells) with an epic whose
subtasks each own a few files. For every measured run an agent (untimed) starts
one subtask and reserves 3 patterns for it; then ``swarm_complete`` is timed,
in-process, with no verification gate configured (the gate runs the user's own
commands, so it is excluded from the target). The baseline is
``git add && git commit`` of a one-file change on the same repository.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from run import Row, build_repo, git_baseline_ms, run_single  # noqa: E402

from hive.domain.cells import start_cell  # noqa: E402
from hive.domain.epics import create_epic  # noqa: E402
from hive.domain.reservations import reserve  # noqa: E402
from hive.domain.swarm.complete import swarm_complete  # noqa: E402
from hive.domain.workspace import Workspace  # noqa: E402

RESERVATIONS = 3


def measure(base: Path, args: argparse.Namespace) -> list[Row]:
    runs, size = args.runs, args.cells
    repo = build_repo(base, size, args.source_files)
    ws = Workspace(str(repo), actor="coordinator")
    subtasks = [
        {"title": f"subtask {n}", "files": [f"src/pkg{n % 40:02d}/mod{n}*.py"]} for n in range(runs)
    ]
    cells = create_epic(
        ws, title="benchmark epic", subtasks=subtasks, metadata={"strategy": "file-based"}
    )
    baseline = git_baseline_ms(repo, runs)
    samples: list[float] = []
    for number, cell in enumerate(cells[1:]):
        worker = ws.for_actor(f"worker{number}")
        start_cell(worker, cell_id=cell.id)
        patterns = [f"src/pkg{number % 40:02d}/bench{number}_{k}/**" for k in range(RESERVATIONS)]
        reserve(worker, paths=patterns, reason="bench", cell=cell.id)
        begin = time.perf_counter()
        result = swarm_complete(
            worker, agent_name=worker.actor, cell_id=cell.id, summary="benchmark work done"
        )
        samples.append((time.perf_counter() - begin) * 1000)
        if len(result.released) != RESERVATIONS:
            raise SystemExit(f"expected {RESERVATIONS} released, got {len(result.released)}")
    complete = statistics.median(samples)
    return [
        Row(size, "baseline: git add + git commit", baseline, None, ""),
        Row(size, "swarm_complete (3 released + outcome)", complete, baseline, "<= 30 ms"),
    ]


def options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cells", type=int, default=1000, help="cells in the repository")


def main() -> None:
    run_single(__doc__ or "", measure, marker="swarm", options=options)


if __name__ == "__main__":
    main()
