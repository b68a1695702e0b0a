"""A writer for the kill -9 test: a stream of hive operations, each logged before
and after (``start N op`` / ``done N op`` lines, flushed), until it is killed.

The test forks a child that calls :func:`run` (no interpreter start-up per kill);
``python kill_worker.py REPO LOG SEED REMOTE`` runs the same loop as a program.
"""

from __future__ import annotations

import os
import random
import sys

# Imported here, once, by the test process: a writer forked from it starts writing at
# once instead of importing these anew before each kill.
from hive.domain.cells import close_cell, create_cell, list_cells, update_cell
from hive.domain.reservations import release, reserve
from hive.domain.swarm.complete import swarm_complete
from hive.domain.sync import sync
from hive.domain.workspace import Workspace


def main() -> None:
    run(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4])


def run(repo: str, log_path: str, seed: int, remote: str) -> None:
    rng = random.Random(seed)
    ws = Workspace(repo, actor="killer")
    log = open(log_path, "a", buffering=1)  # noqa: SIM115 - line-buffered, lives until killed

    def note(text: str) -> None:
        log.write(text + "\n")
        log.flush()
        os.fsync(log.fileno())

    note("ready")
    step = 0
    while True:
        step += 1
        tag = f"{seed}-{step}"
        op = rng.choice(["create", "create", "update", "close", "reserve", "complete", "sync"])
        open_cells = [c for c in list_cells(ws) if not c.is_closed]
        if not open_cells and op in ("update", "close", "complete"):
            op = "create"
        note(f"start {tag} {op}")
        if op == "create":
            create_cell(ws, title=f"cell {tag}", labels=[f"t{tag}"])
        elif op == "update":
            update_cell(ws, cell_id=open_cells[0].id, append_notes=f"note {tag}")
        elif op == "close":
            close_cell(ws, cell_id=open_cells[-1].id, reason=f"closed {tag}", force=True)
        elif op == "reserve":
            reserve(ws, paths=[f"area/{tag}/**"], ttl_seconds=600)
            release(ws, paths=[f"area/{tag}/**"])
        elif op == "complete":
            target = open_cells[0]
            update_cell(ws, cell_id=target.id, status="in_progress", assignee="killer")
            work = os.path.join(repo, "work", f"{tag}.txt")
            os.makedirs(os.path.dirname(work), exist_ok=True)
            with open(work, "w") as handle:
                handle.write(f"work {tag}\n")
            reserve(ws, paths=[f"work/{tag}.txt"], ttl_seconds=600)
            swarm_complete(
                ws,
                agent_name="killer",
                cell_id=target.id,
                summary=f"done {tag}",
                files_touched=[f"work/{tag}.txt"],
                run_gate=False,
            )
        elif op == "sync":
            sync(ws, remote=remote)
        note(f"done {tag} {op}")


if __name__ == "__main__":
    main()
