"""What ``hive swarm run`` writes about a worker that exited (hive.domain.swarm.dispatch),
called directly: the commit's name is decided on the state its transaction saw."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from hive.domain.cells import close_cells, create_cell
from hive.domain.reservations import list_reservations, release, reserve
from hive.domain.swarm.dispatch import claim_for_worker, release_worker
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
