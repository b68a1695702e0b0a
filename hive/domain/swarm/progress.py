"""Progress reports, epic status, and outcomes recorded outside ``swarm_complete``."""

from __future__ import annotations

from collections.abc import Sequence

from hive.domain.cells import get_cell, update_cell
from hive.domain.epics import epic_status
from hive.domain.mail import send_message
from hive.domain.outcomes import outcome_change
from hive.domain.swarm.complete import build_outcome, check_project, normalize_touched
from hive.domain.workspace import Workspace
from hive.errors import Conflict, HiveError, InvalidInput, NotFound, PermissionDenied
from hive.git.repo import Change, Snapshot, format_message
from hive.models import utc_now
from hive.models.outcome import Outcome
from hive.models.swarm import ProgressResult, SwarmStatus

PROGRESS_STATUSES = ("in_progress", "blocked", "open")


def swarm_status(ws: Workspace, *, epic_id: str, project_key: str | None = None) -> SwarmStatus:
    """Totals by state for the subtasks of an epic."""
    check_project(ws, project_key)
    status = epic_status(ws, epic_id=epic_id)
    if status.epic.type != "epic" and status.total == 0:
        raise InvalidInput(f"{status.epic.id} is not an epic and has no subtasks")
    counts = status.by_status
    return SwarmStatus(
        epic_id=status.epic.id,
        title=status.epic.title,
        total=status.total,
        completed=counts.get("closed", 0),
        in_progress=counts.get("in_progress", 0),
        blocked=counts.get("blocked", 0) + len(status.blocked),
        open=counts.get("open", 0) + counts.get("deferred", 0),
        percent=status.percent_complete,
        ready=status.ready,
        agents={c.id: c.assignee for c in status.children if c.assignee},
    )


def swarm_progress(
    ws: Workspace,
    *,
    agent_name: str,
    cell_id: str,
    status: str,
    progress_percent: int | None = None,
    message: str | None = None,
    files_touched: Sequence[str] | None = None,
    project_key: str | None = None,
) -> ProgressResult:
    """Update the cell's status (one commit) and post the report to the epic thread."""
    check_project(ws, project_key)
    agent_ws = ws.for_actor(agent_name)
    if status not in PROGRESS_STATUSES:
        raise InvalidInput(f"invalid status {status!r}: use {', '.join(PROGRESS_STATUSES)}")
    if progress_percent is not None and not 0 <= progress_percent <= 100:
        raise InvalidInput("progress_percent must be between 0 and 100")
    touched = normalize_touched(ws.root, files_touched or [])
    note = _progress_note(status, progress_percent, message, touched)
    current = get_cell(agent_ws.cells(), cell_id)
    if current.assignee and current.assignee != agent_ws.actor:
        raise PermissionDenied(
            f"{current.id} is assigned to {current.assignee}, not {agent_ws.actor}",
            id=current.id,
        )
    if current.is_closed:
        raise Conflict(f"{current.id} is closed", id=current.id)
    cell = update_cell(
        agent_ws, cell_id=current.id, status=status, assignee=agent_ws.actor, append_notes=note
    )
    thread = cell.parent or cell.id
    message_id = _post(agent_ws, thread, cell.id, note)
    return ProgressResult(
        cell=cell, percent=progress_percent, message_id=message_id, thread_id=thread
    )


def _progress_note(
    status: str, percent: int | None, message: str | None, touched: list[str]
) -> str:
    parts = [f"[{utc_now():%Y-%m-%d %H:%M}Z] {status}"]
    if percent is not None:
        parts.append(f"{percent}%")
    if message:
        parts.append(message.strip())
    if touched:
        parts.append("files: " + ", ".join(touched))
    return " - ".join(parts)


def _post(ws: Workspace, thread: str, cell_id: str, note: str) -> int | None:
    """Post to the thread's participants; quietly skipped when nobody else is there."""
    try:
        sent = send_message(ws, to=[], subject=f"progress {cell_id}", body=note, thread_id=thread)
    except (NotFound, InvalidInput):
        return None  # the agent is not registered for mail, or nobody is listening yet
    except HiveError:
        return None
    return sent.message_id


def swarm_record_outcome(
    ws: Workspace,
    *,
    cell_id: str,
    success: bool,
    agent_name: str | None = None,
    duration_ms: int | None = None,
    error_count: int = 0,
    retry_count: int = 0,
    files_touched: Sequence[str] | None = None,
    strategy: str | None = None,
    summary: str = "",
) -> Outcome:
    """Store an outcome for work finished outside swarm_complete (one commit)."""
    agent_ws = ws.for_actor(agent_name) if agent_name else ws
    if duration_ms is not None and duration_ms < 0:
        raise InvalidInput("duration_ms must be >= 0")
    if error_count < 0 or retry_count < 0:
        raise InvalidInput("error_count and retry_count must be >= 0")
    touched = normalize_touched(ws.root, files_touched or [])

    def plan(snap: Snapshot) -> tuple[list[Change], str, Outcome]:
        index = agent_ws.cells(snap)
        try:
            cell = get_cell(index, cell_id, allow_deleted=True)
        except NotFound:
            raise NotFound(f"no cell {cell_id!r}: outcomes describe existing cells") from None
        outcome = build_outcome(
            index, cell, agent_ws.actor, touched, [], utc_now(),
            summary=summary, evaluation=None, error_count=error_count,
            retry_count=retry_count, success=success,
            duration_seconds=None if duration_ms is None else duration_ms / 1000,
            strategy=strategy,
        )  # fmt: skip
        outcome = outcome.model_copy(update={"source": "record_outcome"})
        message = format_message(
            f"hive: outcome {cell.id} {'success' if success else 'failure'}",
            [("Hive-Cell", cell.id), ("Hive-Agent", agent_ws.actor), ("Hive-Event", "outcome")],
        )
        return [outcome_change(outcome)], message, outcome

    recorded: Outcome = agent_ws.write_files(plan).result
    return recorded
