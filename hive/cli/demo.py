"""``hive demo``: a small swarm in a scratch repository, end to end."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

from hive.cli import output
from hive.domain.cells import close_cell, list_cells, ready, start_cell
from hive.domain.epics import create_epic, epic_status
from hive.domain.history import cell_log
from hive.domain.setup import init_hive
from hive.domain.workspace import Workspace
from hive.errors import InvalidInput
from hive.git.repo import init_repository
from hive.models.epic import SubtaskSpec

AGENTS = ("BlueLake", "RedStone", "GreenField")


def run_demo(directory: str | None = None) -> None:
    """Make a scratch repo, plan an epic, let three agents work, print the result."""
    root = _scratch_dir(directory)
    out = output.console()
    output.heading("hive demo")
    out.print(f"scratch repository: {output.escape(root)}")
    init_repository(root)
    coordinator = Workspace(root, actor="coordinator")
    init_hive(coordinator, prefix="demo")

    cells = create_epic(
        coordinator,
        title="Add user authentication",
        description="Sign-up, login and sessions for the web app.",
        priority=1,
        subtasks=[
            SubtaskSpec(title="Design the user schema", files=["src/models/user.py"], priority=0),
            SubtaskSpec(
                title="Password hashing service", files=["src/auth/hashing.py"], dependencies=[0]
            ),
            SubtaskSpec(
                title="Login and session endpoints", files=["src/api/auth/**"], dependencies=[0, 1]
            ),
            SubtaskSpec(title="Document the auth flow", files=["docs/auth.md"]),
        ],
    )
    epic = cells[0]
    out.print(f"coordinator created epic {epic.id} with {len(cells) - 1} subtasks in one commit")

    for agent in AGENTS:
        worker = Workspace(root, actor=agent)
        claimed = ready(worker, claim=True)
        if not claimed:
            out.print(f"{agent}: nothing ready")
            continue
        cell = claimed[0]
        out.print(f"{agent} claimed {cell.id}  {cell.title}")
        try:
            start_cell(Workspace(root, actor="intruder"), cell_id=cell.id)
        except Exception as exc:  # demonstrate the atomic claim
            out.print(f"  [dim]intruder tried to claim it too: {output.escape(str(exc))}[/dim]")
        close_cell(worker, cell_id=cell.id, reason=f"done by {agent}")
        out.print(f"{agent} closed {cell.id}")

    status = epic_status(coordinator, epic_id=epic.id)
    out.print(f"epic {epic.id}: {status.closed}/{status.total} subtasks closed (epic stays open)")
    output.heading("hive list")
    output.cell_table(list_cells(coordinator, status="all"))
    output.heading("git log --oneline")
    _print_git_log(root, coordinator)
    out.print(f"\nexplore it: cd {output.escape(root)} && hive list && git log --stat")


def _scratch_dir(directory: str | None) -> str:
    """A new temporary directory, or ``directory`` if it is new or empty."""
    if directory is None:
        return tempfile.mkdtemp(prefix="hive-demo-")
    root = os.path.abspath(directory)
    if os.path.exists(root) and (not os.path.isdir(root) or os.listdir(root)):
        raise InvalidInput(f"--dir {directory}: not an empty directory; give a new or empty one")
    try:
        os.makedirs(root, exist_ok=True)
    except OSError as exc:
        raise InvalidInput(f"--dir {directory}: cannot create it ({exc.strerror})") from None
    return root


def _print_git_log(root: str, ws: Workspace) -> None:
    if shutil.which("git"):
        result = subprocess.run(
            ["git", "-C", root, "log", "--oneline"], capture_output=True, text=True, check=False
        )
        if result.returncode == 0:
            output.console().print(output.escape(result.stdout.rstrip()))
            return
    for entry in cell_log(ws):
        output.console().print(f"{entry.commit[:7]} {output.escape(entry.subject)}")
