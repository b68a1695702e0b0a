"""Prompts for worker agents: the subtask brief, spawning, and self-evaluation."""

from __future__ import annotations

from collections.abc import Sequence

from hive.domain.cells import get_cell
from hive.domain.memory import load_context, one_line
from hive.domain.outcomes import load_outcomes
from hive.domain.swarm.complete import epic_strategy
from hive.domain.swarm.learning import anti_patterns
from hive.domain.workspace import Workspace
from hive.errors import Conflict, InvalidInput
from hive.models import Cell
from hive.models.swarm import SubtaskPrompt
from hive.store.cache import CellIndex

WORKER_PROTOCOL = """\
## How to work
1. Register: swarmmail_init(project_path="{root}", agent_name="{agent}").
2. Reserve before editing: swarmmail_reserve(paths={files}, reason="{cell_id}", cell="{cell_id}").
   A conflict means another agent holds those files: message them or pick other work.
3. Claim the cell: hive_start(id="{cell_id}").
4. Work test-first (TDD), no exceptions:
   - RED: write a failing test first (if it passes, the test is wrong); for a bug,
     a test that reproduces it;
   - GREEN: the minimum code that makes it pass (hardcode if needed);
   - REFACTOR: clean up while the tests stay green.
   Keep to your files; ask on the thread (thread_id="{thread}") before touching
   anything else. Commit code yourself only with the cell's trailer
   (git commit --trailer "Hive-Cell: {cell_id}") so `hive review` shows it with the cell.
5. Report progress: swarm_progress(cell_id="{cell_id}", status="in_progress",
   progress_percent=..., message=...). Read your inbox between steps (swarmmail_inbox).
6. Finish with swarm_complete(project_key="{root}", agent_name="{agent}",
   cell_id="{cell_id}", summary="what changed and why", files_touched=[...]).
   It runs the verification gate, closes the cell, releases your reservations,
   records the outcome and commits your files, all in one commit. If the gate
   fails nothing changes: fix the problem and call it again.
"""


def swarm_subtask_prompt(
    ws: Workspace,
    *,
    cell_id: str,
    agent_name: str | None = None,
    context: str | None = None,
    epic_id: str | None = None,
    subtask_title: str | None = None,
    subtask_description: str | None = None,
    files: Sequence[str] | None = None,
    shared_context: str | None = None,
) -> SubtaskPrompt:
    """The brief a worker agent needs for one subtask.

    The cell is the source of truth; the seed's arguments refine it: ``epic_id``
    must be the cell's epic, ``subtask_title`` / ``subtask_description`` / ``files``
    replace the stored ones in the brief when given, and ``shared_context`` is
    shown with ``context``.
    """
    index = ws.cells()
    cell = get_cell(index, cell_id)
    if cell.type == "epic":
        raise InvalidInput(f"{cell.id} is an epic; brief its subtasks instead")
    epic = _epic_of(index, cell, epic_id)
    siblings = [index.cells[c] for c in index.children_of(epic.id)] if epic else []
    brief = cell.model_copy(
        update={
            "title": (subtask_title or "").strip() or cell.title,
            "description": subtask_description
            if subtask_description is not None
            else cell.description,
            "files_owned": list(files) if files else list(cell.files_owned),
        }
    )
    notes = "\n\n".join(part.strip() for part in (shared_context, context) if part)
    lessons = anti_patterns(load_outcomes(ws))
    prompt = _render(ws, brief, epic, siblings, agent_name, notes or None, lessons)
    return SubtaskPrompt(
        cell_id=cell.id,
        epic_id=epic.id if epic else None,
        agent_name=agent_name,
        prompt=prompt,
        files=list(brief.files_owned),
    )


def _epic_of(index: CellIndex, cell: Cell, epic_id: str | None) -> Cell | None:
    """The cell's epic; a given ``epic_id`` must name it."""
    epic = index.cells.get(cell.parent) if cell.parent else None
    if not epic_id:
        return epic
    named = get_cell(index, epic_id)
    if epic is not None and named.id != epic.id:
        raise InvalidInput(
            f"{cell.id} belongs to epic {epic.id}, not {named.id}", id=cell.id, epic_id=epic.id
        )
    return named if epic is None else epic


def swarm_spawn_subtask(
    ws: Workspace,
    *,
    cell_id: str,
    agent_name: str | None = None,
    context: str | None = None,
    epic_id: str | None = None,
    subtask_title: str | None = None,
    subtask_description: str | None = None,
    files: Sequence[str] | None = None,
    shared_context: str | None = None,
) -> SubtaskPrompt:
    """Prepare a worker for ``cell_id``: refuses closed or already-claimed work."""
    cell = get_cell(ws.cells(), cell_id)
    if cell.is_closed:
        raise Conflict(f"{cell.id} is closed; nothing to spawn", id=cell.id)
    if cell.assignee and agent_name and cell.assignee != agent_name:
        raise Conflict(f"{cell.id} is already assigned to {cell.assignee}", id=cell.id)
    return swarm_subtask_prompt(
        ws,
        cell_id=cell.id,
        agent_name=agent_name,
        context=context,
        epic_id=epic_id,
        subtask_title=subtask_title,
        subtask_description=subtask_description,
        files=files,
        shared_context=shared_context,
    )


def swarm_evaluation_prompt(
    ws: Workspace,
    *,
    cell_id: str,
    files_touched: Sequence[str] | None = None,
    subtask_title: str | None = None,
) -> str:
    """A self-review checklist whose JSON answer goes to swarm_complete(evaluation=...)."""
    cell = get_cell(ws.cells(), cell_id)
    title = (subtask_title or "").strip() or cell.title
    files = ", ".join(files_touched or []) or "(none listed)"
    owned = ", ".join(cell.files_owned) or "(none declared)"
    return (
        f"Evaluate your work on {cell.id} '{title}' before completing it.\n"
        f"Files you touched: {files}\nFiles the subtask owns: {owned}\n\n"
        "Check each point and answer honestly:\n"
        "- Does the change do what the subtask describes, and nothing else?\n"
        "- Do the tests for it exist, fail without the change and pass with it?\n"
        "- Did you stay inside the owned files (or ask on the thread first)?\n"
        "- Are there errors, warnings or TODOs you are leaving behind?\n\n"
        'Answer with JSON only: {"passed": true|false, "criteria": {"scope": true, '
        '"tests": true, "behaviour": true}, "notes": "..."}\n'
        "Pass it as swarm_complete(evaluation=...); passed=false changes nothing."
    )


def _render(
    ws: Workspace,
    cell: Cell,
    epic: Cell | None,
    siblings: list[Cell],
    agent_name: str | None,
    context: str | None,
    lessons: list[str],
) -> str:
    files = cell.files_owned or []
    lines = [f"# Subtask {cell.id}: {cell.title}"]
    if epic is not None:
        strategy = epic_strategy(epic) or "unspecified"
        lines.append(f"Part of epic {epic.id} '{epic.title}' (strategy {strategy}).")
    if cell.description:
        lines += ["", "## What to do", cell.description.strip()]
    lines += _files_section(files)
    blockers = [d.target for d in cell.dependencies if d.type == "blocks"]
    lines += _bullets("Waits for", blockers)
    others = [_sibling_line(s) for s in siblings if s.id != cell.id]
    lines += _bullets("Other subtasks (do not edit their files)", others)
    if context:
        lines += ["", "## Context", context.strip()]
    lines += _bullets("Lessons from past work here (avoid these)", lessons)
    banned = [one_line(item) for item in load_context(ws).banned]
    lines += _bullets("Banned approaches (project memory: never use these)", banned)
    protocol = WORKER_PROTOCOL.format(
        root=ws.root,
        agent=agent_name or "<your agent name>",
        files=files,
        cell_id=cell.id,
        thread=epic.id if epic else cell.id,
    )
    return "\n".join([*lines, "", protocol])


def _bullets(heading: str, items: list[str]) -> list[str]:
    """A section of the brief listing ``items``; nothing when there are none."""
    return ["", f"## {heading}", *(f"- {item}" for item in items)] if items else []


def _files_section(files: list[str]) -> list[str]:
    if files:
        return _bullets("Files you own", files)
    return [
        "",
        "## Files",
        "No files were declared: reserve exactly what you will edit before editing it.",
    ]


def _sibling_line(sibling: Cell) -> str:
    """Another subtask of the epic: its status, title, files and who holds it."""
    files = f" — files {', '.join(sibling.files_owned)}" if sibling.files_owned else ""
    holder = f" — {sibling.assignee}" if sibling.assignee else ""
    return f"{sibling.id} [{sibling.status}] {sibling.title}{files}{holder}"
