"""8 processes writing cells, notes, claims, reservations, mail and completions at
once against one repository: no lost update, no duplicate claim, no double-granted
exclusive reservation, every message delivered."""

from __future__ import annotations

import json
import os
import runpy
from pathlib import Path

from hive.domain.cells import create_cell, list_cells, show_cell, update_cell
from hive.domain.identity import mail_init
from hive.domain.mail import inbox
from hive.domain.reservations import list_reservations
from hive.domain.workspace import Workspace
from tests.conftest import GIT_ENV, assert_clean, git
from tests.inprocess import fork_call

WORKER = Path(__file__).with_name("concurrent_worker.py")
WRITERS = 8
ROUNDS = 4  # as in the worker


def test_eight_concurrent_writers(ws: Workspace, repo: Path, tmp_path: Path) -> None:
    shared = create_cell(ws, title="shared notes")
    update_cell(ws, cell_id=shared.id, status="deferred")  # nobody claims it
    mail_init(ws.for_actor("sink"), agent_name="sink")
    go = tmp_path / "go"
    env = {**os.environ, **GIT_ENV, "HIVE_LOCK_TIMEOUT": "120"}
    procs = [  # forked: real processes at once, without an interpreter's start-up each
        fork_call(
            lambda: runpy.run_path(str(WORKER), run_name="__main__"),
            argv=[str(repo), f"agent{n}", shared.id, str(go)],
            env=env,
            cwd=str(Path(__file__).parents[2]),
        )
        for n in range(WRITERS)
    ]
    go.write_text("go")
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))

    fresh = Workspace(str(repo), actor="checker")
    cells = {c.id: c for c in list_cells(fresh, status="all")}
    created = [cid for r in results for cid in r["created"]]
    assert len(created) == len(set(created)) == WRITERS * ROUNDS
    assert set(created) <= set(cells)  # no lost create
    notes = show_cell(fresh, cell_id=shared.id).notes.splitlines()
    assert sorted(notes) == sorted(
        f"agent{n} note {k}" for n in range(WRITERS) for k in range(ROUNDS)
    )
    claimed = [cid for r in results for cid in r["claimed"]]
    assert claimed and len(claimed) == len(set(claimed))  # no cell claimed twice
    for result in results:
        for cell_id in result["completed"]:
            done = cells[cell_id]
            assert done.is_closed and done.assignee == result["agent"]
    assert sum(r["granted"] for r in results) == 1  # exactly one exclusive grant
    holders = [r.agent for r in list_reservations(fresh) if r.path_pattern == "shared/**"]
    assert holders == [next(r["agent"] for r in results if r["granted"])]
    sink = [m.subject for m in inbox(fresh.for_actor("sink"), limit=5)]
    assert len(sink) == 5  # the inbox shows 5 at most; every message is in the log:
    from hive.domain.mail import _state

    sent = {m["subject"] for m in _state(fresh).messages.values() if m["to"] == ["sink"]}
    assert sent == {f"agent{n} {k}" for n in range(WRITERS) for k in range(ROUNDS)}
    committed = set(git(repo, "ls-tree", "-r", "--name-only", "HEAD", "done").split())
    assert committed == {f"done/{cid}.txt" for r in results for cid in r["completed"]}
    assert_clean(repo)
