"""One of the 8 writers of the concurrency test: cells, notes on a shared cell,
claims, an exclusive reservation, mail and completions, as fast as it can.

Usage: python concurrent_worker.py REPO AGENT SHARED_CELL GO_FILE
Prints one JSON summary line.
"""

from __future__ import annotations

import json
import os
import sys
import time

ROUNDS = 4


def main() -> None:
    repo, agent, shared, go = sys.argv[1:5]
    from hive.domain.cells import create_cell, ready, update_cell
    from hive.domain.identity import mail_init
    from hive.domain.mail import send_message
    from hive.domain.reservations import reserve
    from hive.domain.swarm.complete import swarm_complete
    from hive.domain.workspace import Workspace
    from hive.errors import ReservationConflict

    ws = Workspace(repo, actor=agent)
    mail_init(ws, agent_name=agent)
    while not os.path.exists(go):
        time.sleep(0.005)
    created, claimed, completed = [], [], []
    for number in range(ROUNDS):
        created.append(create_cell(ws, title=f"{agent} task {number}").id)
        update_cell(ws, cell_id=shared, append_notes=f"{agent} note {number}")
        send_message(ws, to=["sink"], subject=f"{agent} {number}", body="")
        got = ready(ws, claim=True)
        if got:
            claimed.append(got[0].id)
    for cell_id in claimed:
        path = os.path.join(repo, "done", f"{cell_id}.txt")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as handle:
            handle.write(f"{agent}\n")
        reserve(ws, paths=[f"done/{cell_id}.txt"], ttl_seconds=600)
        swarm_complete(
            ws,
            agent_name=agent,
            cell_id=cell_id,
            summary="done",
            files_touched=[f"done/{cell_id}.txt"],
            run_gate=False,
        )
        completed.append(cell_id)
    try:  # after the completions, which release everything the agent held
        reserve(ws, paths=["shared/**"], ttl_seconds=600)
        granted = True
    except ReservationConflict:
        granted = False
    summary = {
        "agent": agent,
        "created": created,
        "claimed": claimed,
        "completed": completed,
        "granted": granted,
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
