"""Deadlocks through the epic/subtask relation, and what doctor finds in hand-edited files."""

from __future__ import annotations

from pathlib import Path

import pytest

from hive.domain.cells import add_dependency, create_cell, ready
from hive.domain.doctor import diagnose
from hive.domain.epics import create_epic
from hive.domain.workspace import Workspace
from hive.errors import DependencyCycle
from hive.store.layout import cell_path
from tests.conftest import git


def _add_blocks_by_hand(repo: Path, cell_id: str, target: str) -> None:
    """Give ``cell_id`` a blocks dependency on ``target`` by editing and committing its file."""
    path = repo / cell_path(cell_id)
    text = path.read_text().replace(
        "priority: 2\n", f"priority: 2\ndependencies:\n  - type: blocks\n    target: {target}\n"
    )
    path.write_text(text)
    git(repo, "commit", "-q", "-am", "hand edit")


def test_a_subtask_cannot_wait_for_its_own_epic(ws: Workspace, repo: Path) -> None:
    epic, kid = create_epic(ws, title="E", subtasks=["kid"])
    head = git(repo, "rev-parse", "HEAD")
    with pytest.raises(DependencyCycle, match=rf"{kid.id} -> {epic.id} -> {kid.id}.*epic waits"):
        add_dependency(ws, cell_id=kid.id, target=epic.id)
    with pytest.raises(DependencyCycle, match="cycle"):
        create_cell(ws, title="kid2", parent=epic.id, deps=[f"blocks:{epic.id}"])
    assert git(repo, "rev-parse", "HEAD") == head


def test_a_deadlock_through_a_sibling_chain_is_refused(ws: Workspace) -> None:
    epic, first = create_epic(ws, title="E", subtasks=["first"])
    outside = create_cell(ws, title="after the epic", deps=[epic.id])
    with pytest.raises(DependencyCycle, match="cycle"):
        add_dependency(ws, cell_id=first.id, target=outside.id)
    with pytest.raises(DependencyCycle, match="cycle"):
        create_cell(ws, title="second", parent=epic.id, deps=[outside.id])


def test_an_epic_waiting_for_its_subtask_is_refused(ws: Workspace) -> None:
    epic, kid = create_epic(ws, title="E", subtasks=["kid"])
    with pytest.raises(DependencyCycle, match="cycle"):
        add_dependency(ws, cell_id=epic.id, target=kid.id)


def test_legitimate_orderings_are_still_allowed(ws: Workspace) -> None:
    epic, first, second = create_epic(ws, title="E", subtasks=["a", "b"])
    before = create_cell(ws, title="before the epic")
    add_dependency(ws, cell_id=second.id, target=first.id)
    add_dependency(ws, cell_id=epic.id, target=before.id)
    add_dependency(ws, cell_id=first.id, target=epic.id, dep_type="parent-child")
    task = create_cell(ws, title="plain parent")
    create_cell(ws, title="child of a task", parent=task.id, deps=[f"blocks:{task.id}"])
    third = create_cell(ws, title="c", parent=epic.id, deps=[f"blocks:{first.id}"])
    assert third.parent == epic.id


def test_doctor_finds_cycles_in_hand_edited_files(ws: Workspace, repo: Path) -> None:
    a = create_cell(ws, title="A")
    b = create_cell(ws, title="B", deps=[a.id])
    _add_blocks_by_hand(repo, a.id, b.id)
    epic, kid = create_epic(ws, title="E", subtasks=["kid"])
    _add_blocks_by_hand(repo, kid.id, epic.id)
    cycles = sorted(p.message for p in diagnose(ws).problems if p.kind == "cycle")
    assert len(cycles) == 2
    assert any(a.id in m and b.id in m for m in cycles)
    assert any(kid.id in m and epic.id in m for m in cycles)
    assert ready(ws) == []


def test_doctor_finds_misplaced_and_stray_files(ws: Workspace, repo: Path) -> None:
    cell = create_cell(ws, title="moved")
    right = cell_path(cell.id)
    wrong_dir = "z" if right.split("/")[2] != "z" else "y"
    wrong = f".hive/cells/{wrong_dir}/{cell.id}.yaml"
    (repo / wrong).parent.mkdir(parents=True, exist_ok=True)
    git(repo, "mv", right, wrong)
    (repo / ".hive/cells/notes.txt").write_text("not a cell\n")
    git(repo, "add", ".hive/cells/notes.txt")
    git(repo, "commit", "-q", "-m", "move by hand")
    problems = {p.kind: p for p in diagnose(ws).problems}
    assert set(problems) == {"misplaced", "stray-file"}
    assert problems["misplaced"].message == f"{wrong}: should be at {right}"
    assert problems["stray-file"].path == ".hive/cells/notes.txt"
