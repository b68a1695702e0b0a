"""What ``hive swarm run`` writes about a worker that exited (hive.domain.swarm.dispatch),
called directly: the commit's name is decided on the state its transaction saw."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from hive.domain.cells import close_cells, create_cell
from hive.domain.reservations import list_reservations, release, reserve
from hive.domain.swarm.dispatch import block_subtask, claim_for_worker, release_worker
from hive.domain.workspace import MixedPlan, Workspace
from hive.git.repo import Snapshot, WriteResult
from hive.store.cache import CellIndex
from tests.conftest import git

WORKER = "w1"


class Meanwhile(Workspace):
    """A workspace whose next mixed write is preceded by ``meanwhile`` (what another
    process does just before the transaction starts)."""

    meanwhile: Callable[[], object] | None = None

    def write_mixed(
        self, plan: Callable[[Snapshot, CellIndex], MixedPlan], *, event: str
    ) -> WriteResult:
        if self.meanwhile is not None:
            self.meanwhile()
            self.meanwhile = None
        return super().write_mixed(plan, event=event)


def _closed_subtask(ws: Workspace, repo: Path) -> str:
    """A subtask the worker ran and closed with ``hive close`` (no ``swarm_complete``)."""
    cell = create_cell(ws, title="Part").id
    claim_for_worker(ws, cell_id=cell, agent=WORKER, log="w1.log")
    close_cells(Workspace(str(repo), actor=WORKER), cell_ids=[cell], reason="done")
    return cell


def _last_commit(repo: Path) -> tuple[str, str]:
    """The subject and ``Hive-Event`` of HEAD, read with git."""
    subject = git(repo, "log", "-1", "--format=%s").strip()
    event = git(repo, "log", "-1", "--format=%(trailers:key=Hive-Event,valueonly)").strip()
    return subject, event


@pytest.mark.parametrize("held_before", [True, False])
def test_the_commit_is_named_by_what_its_transaction_released(
    ws: Workspace, repo: Path, held_before: bool
) -> None:
    # The worker holds a file (or not) when release_worker is called; just before its
    # transaction, the worker releases it (or reserves one). The commit says what it did
    # on the state it saw: ``settle`` when there was nothing left to release, ``release``
    # when there was; it was named from an earlier read of the reservations.
    runner = Meanwhile(str(repo), actor="alice")
    cell = _closed_subtask(runner, repo)
    worker = Workspace(str(repo), actor=WORKER)
    if held_before:
        reserve(worker, paths=["src/a.py"], cell=cell)
        runner.meanwhile = lambda: release(worker)
    else:
        runner.meanwhile = lambda: reserve(worker, paths=["src/a.py"], cell=cell)
    released = release_worker(runner, cell_id=cell, agent=WORKER)
    subject, event = _last_commit(repo)
    expected = "settle" if held_before else "release"
    assert event == expected and subject.startswith(f"hive: {expected} {cell} ")
    assert [r.path_pattern for r in released] == ([] if held_before else ["src/a.py"])
    assert list_reservations(ws) == []


def test_a_worker_holding_files_is_released_and_a_closed_subtask_settled(
    ws: Workspace, repo: Path
) -> None:
    cell = _closed_subtask(ws, repo)
    reserve(Workspace(str(repo), actor=WORKER), paths=["src/b.py"], cell=cell)
    release_worker(ws, cell_id=cell, agent=WORKER)
    assert _last_commit(repo) == (f"hive: release {cell} Part", "release")
    trailer = git(repo, "log", "-1", "--format=%(trailers:key=Hive-Worker,valueonly)").strip()
    assert trailer == WORKER
    head = git(repo, "rev-parse", "HEAD")
    assert release_worker(ws, cell_id=cell, agent=WORKER) == []  # nothing left: no commit
    assert git(repo, "rev-parse", "HEAD") == head


def test_a_failed_worker_s_subtask_is_blocked_released_and_its_outcome_recorded(
    ws: Workspace, repo: Path
) -> None:
    """block_subtask: the cell blocked with the reason and the log (notes and run
    info), the worker's reservation released and a failed ``swarm_run`` outcome, in
    one commit naming the worker; without ``record_outcome`` no outcome is written."""
    from hive.domain.cells import show_cell
    from hive.domain.outcomes import load_outcomes

    cell = create_cell(ws, title="Part").id
    claim_for_worker(ws, cell_id=cell, agent=WORKER, log="w1.log")
    reserve(Workspace(str(repo), actor=WORKER), paths=["src/a.py"], cell=cell)
    settled = block_subtask(
        ws,
        cell_id=cell,
        agent=WORKER,
        reason="exited with code 1",
        log="/logs/w1.log",
        files_touched=["src/a.py"],
        duration_seconds=12.5,
    )
    assert settled.changed and [r.path_pattern for r in settled.released] == ["src/a.py"]
    blocked = show_cell(ws, cell_id=cell)
    assert blocked.status == "blocked" and settled.cell.status == "blocked"
    assert blocked.notes.endswith("blocked: exited with code 1 (log: /logs/w1.log)")
    run = blocked.metadata["swarm_run"]
    assert (run["state"], run["reason"], run["log"]) == (
        "blocked",
        "exited with code 1",
        "/logs/w1.log",
    )
    [outcome] = load_outcomes(ws)
    assert settled.outcome_id == outcome.id
    assert (outcome.cell_id, outcome.agent, outcome.source) == (cell, WORKER, "swarm_run")
    assert (outcome.success, outcome.error_count, outcome.retry_count) == (False, 1, 0)
    assert (outcome.summary, outcome.duration_seconds) == ("exited with code 1", 12.5)
    assert outcome.files_touched == ["src/a.py"]
    assert _last_commit(repo) == (f"hive: block {cell} Part", "block")
    trailer = git(repo, "log", "-1", "--format=%(trailers:key=Hive-Worker,valueonly)").strip()
    assert trailer == WORKER
    changed = git(repo, "show", "--name-only", "--format=", "HEAD").split()
    assert sorted(path.split("/")[1] for path in changed) == ["cells", "outcomes", "reservations"]
    assert list_reservations(ws) == []

    other = create_cell(ws, title="Other").id
    claim_for_worker(ws, cell_id=other, agent=WORKER, log="w1.log")
    quiet = block_subtask(ws, cell_id=other, agent=WORKER, reason="why", record_outcome=False)
    assert quiet.outcome_id is None and len(load_outcomes(ws)) == 1
    assert show_cell(ws, cell_id=other).notes.endswith("blocked: why")
    quiet_paths = git(repo, "show", "--name-only", "--format=", "HEAD").split()
    assert [path.split("/")[1] for path in quiet_paths] == ["cells"]
    head = git(repo, "rev-parse", "HEAD")
    again = block_subtask(ws, cell_id=other, agent="w2", reason="not theirs")
    assert not again.changed and git(repo, "rev-parse", "HEAD") == head  # no commit
