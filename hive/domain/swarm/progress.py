"""Progress reports, epic status, and outcomes recorded outside ``swarm_complete``.

``swarm_progress`` statuses (the seed's four, plus ``open`` to hand work back):

- ``in_progress`` / ``blocked`` / ``open``: set the cell's status, append a note.
- ``completed``: the work is done but the cell stays open (``in_progress``, 100%)
  until the agent calls ``swarm_complete``, which runs the gate, closes the cell,
  releases reservations and commits the files in one commit; the result's
  ``next_step`` says so. Progress never closes a cell by itself.
- ``failed``: one commit marks the cell ``blocked`` and records a failure outcome
  (``source: swarm_progress``), so learning sees the failure and the coordinator
  can reassign or re-plan.

Every report is posted to the epic's thread, addressed to the coordinator (the
epic's assignee, else its creator) and the thread's participants. When nothing
can be posted the result's ``not_posted`` says why.
"""

from __future__ import annotations

from collections.abc import Sequence

from hive.domain.cells import get_cell, update_cell
from hive.domain.epics import epic_status
from hive.domain.limits import check_short, check_text
from hive.domain.mail import list_agents, send_message
from hive.domain.outcomes import outcome_change
from hive.domain.ownership import (
    OwnerGuard,
    check_owner,
    is_claimed,
    override_role,
    record_overrides,
)
from hive.domain.reservecore import folds_case
from hive.domain.swarm.complete import (
    acting_as,
    build_outcome,
    check_project,
    normalize_touched,
)
from hive.domain.swarm.strategies import check_strategy
from hive.domain.workspace import MixedPlan, Workspace
from hive.errors import Conflict, HiveError, InvalidInput, NotFound, NotOwner
from hive.git.repo import Change, Snapshot, format_message
from hive.models import Cell, utc_now
from hive.models.outcome import Outcome
from hive.models.swarm import ProgressResult, SwarmStatus
from hive.store.cache import CellIndex

PROGRESS_STATUSES = ("in_progress", "blocked", "open", "completed", "failed")
COMPLETE_HINT = (
    "call swarm_complete(project_key, agent_name, cell_id, summary, files_touched) to run the "
    "gate, close the cell, release your reservations and commit your files"
)


def swarm_status(ws: Workspace, *, epic_id: str, project_key: str | None = None) -> SwarmStatus:
    """Totals by state for the subtasks of an epic: every subtask is in exactly one of
    completed, in_progress, blocked (status blocked, or waiting on open dependencies)
    and open (ready to start)."""
    check_project(ws, project_key)
    status = epic_status(ws, epic_id=epic_id)
    if status.epic.type != "epic" and status.total == 0:
        raise InvalidInput(f"{status.epic.id} is not an epic and has no subtasks")
    buckets = {"completed": 0, "in_progress": 0, "blocked": 0, "open": 0}
    waiting = set(status.blocked)
    for child in status.children:
        buckets[_bucket(child, waiting)] += 1
    return SwarmStatus(
        epic_id=status.epic.id,
        title=status.epic.title,
        total=status.total,
        **buckets,
        percent=status.percent_complete,
        ready=status.ready,
        agents={c.id: c.assignee for c in status.children if c.assignee},
    )


def _bucket(cell: Cell, waiting: set[str]) -> str:
    if cell.is_closed:
        return "completed"
    if cell.status == "in_progress":
        return "in_progress"
    if cell.status == "blocked" or cell.id in waiting:
        return "blocked"
    return "open"


def swarm_progress(
    ws: Workspace,
    *,
    cell_id: str,
    status: str,
    progress_percent: int | None = None,
    message: str | None = None,
    files_touched: Sequence[str] | None = None,
    project_key: str | None = None,
    agent_name: str | None = None,
    force: bool = False,
    reason: str | None = None,
) -> ProgressResult:
    """Record progress on the cell (one commit) and post it to the epic's coordinator.

    ``agent_name``, when given, must be the acting identity. Progress on a claimed
    cell is its assignee's to report (a coordinator or person overrides with
    ``force`` and a ``reason``; the cell keeps its assignee).
    """
    check_project(ws, project_key)
    acting_as(ws, agent_name, "reporting progress")
    percent = _checked_percent(status, progress_percent)
    touched = normalize_touched(ws.root, files_touched or [])
    note = _progress_note(status, percent, message, touched)
    current = _reported_cell(ws, cell_id, force=force, reason=reason)
    cell, outcome = _record_progress(
        ws, current, status, note, message, touched, force=force, reason=reason
    )
    thread = cell.parent or cell.id
    importance = "high" if status in ("blocked", "failed") else "normal"
    message_id, recipients, not_posted = _post(ws, thread, cell, note, importance)
    return ProgressResult(
        cell=cell,
        status=status,
        percent=percent,
        message_id=message_id,
        thread_id=thread,
        recipients=recipients,
        not_posted=not_posted,
        outcome=outcome,
        next_step=COMPLETE_HINT if status == "completed" else None,
    )


def _checked_percent(status: str, progress_percent: int | None) -> int | None:
    """The percent to report once ``status`` is checked: 0-100; 100 for ``completed``
    when none is given."""
    if status not in PROGRESS_STATUSES:
        raise InvalidInput(f"invalid status {status!r}: use {', '.join(PROGRESS_STATUSES)}")
    if progress_percent is not None and not 0 <= progress_percent <= 100:
        raise InvalidInput("progress_percent must be between 0 and 100")
    if status == "completed" and progress_percent is None:
        return 100
    return progress_percent


def _reported_cell(ws: Workspace, cell_id: str, *, force: bool, reason: str | None) -> Cell:
    """The cell to report on, refused when it takes no report or is someone else's."""
    current = get_cell(ws.cells(), cell_id)
    _check_reporter(current)
    check_owner(
        ws,
        owner=current.assignee,
        action="report progress on",
        target=current.id,
        force=force,
        reason=reason,
    )
    return current


def _record_progress(
    ws: Workspace,
    current: Cell,
    status: str,
    note: str,
    message: str | None,
    touched: list[str],
    *,
    force: bool,
    reason: str | None,
) -> tuple[Cell, Outcome | None]:
    """The report's one commit: a failure blocks the cell and records its outcome;
    any other status is set on the cell (``completed`` keeps it in progress) with the
    note, the reporter its assignee unless it is someone else's."""
    if status == "failed":
        return _record_failure(ws, current.id, note, message, touched, force, reason)
    cell_status = "in_progress" if status == "completed" else status
    owned = current.assignee in (None, ws.actor)
    cell = update_cell(
        ws,
        cell_id=current.id,
        status=cell_status,
        assignee=ws.actor if owned else None,
        append_notes=note,
        force=force,
        reason=reason,
    )
    return cell, None


def _check_reporter(cell: Cell) -> None:
    if cell.is_closed:
        raise Conflict(f"{cell.id} is closed", id=cell.id)
    if cell.type == "epic":
        raise InvalidInput(f"{cell.id} is an epic; report progress on its subtasks")


def _record_failure(
    ws: Workspace,
    cell_id: str,
    note: str,
    message: str | None,
    touched: list[str],
    force: bool = False,
    reason: str | None = None,
) -> tuple[Cell, Outcome]:
    """One commit: the cell becomes blocked (assigned to the agent) and a failure outcome."""
    guards: list[OwnerGuard] = []

    def plan(snap: Snapshot, index: CellIndex) -> MixedPlan:
        current = get_cell(index, cell_id)
        _check_reporter(current)
        guard = OwnerGuard(ws, snap, force=force, reason=reason)
        guards[:] = [guard]
        guard.check(owner=current.assignee, action="report progress on", target=current.id)
        now = utc_now()
        notes = (current.notes.rstrip("\n") + "\n" if current.notes else "") + note
        assignee = current.assignee or ws.actor
        blocked = current.model_copy(
            update={"status": "blocked", "assignee": assignee, "notes": notes, "updated_at": now}
        )
        outcome = build_outcome(
            index,
            blocked,
            ws.actor,
            touched,
            [],
            now,
            summary=(message or "failed").strip(),
            evaluation=None,
            error_count=0,
            retry_count=0,
            success=False,
            fold_case=folds_case(ws.git.paths),
        ).model_copy(update={"source": "swarm_progress"})
        return MixedPlan(
            cells=[blocked],
            subject_id=blocked.id,
            title=blocked.title,
            result=(blocked, outcome),
            files=[outcome_change(outcome)],
            trailers=guard.trailers(),
        )

    written = ws.write_mixed(plan, event="progress")
    if guards and guards[0].overrides:
        record_overrides(ws, guards[0].overrides, written.commit)
    cell, outcome = written.result
    return cell, outcome


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


def coordinators(ws: Workspace, cell: Cell) -> list[str]:
    """Who coordinates ``cell``'s work: its epic's assignee, else the epic's creator."""
    if not cell.parent:
        return [cell.created_by] if cell.created_by else []
    epic = ws.cells().cells.get(cell.parent)
    if epic is None:
        return []
    return [name for name in (epic.assignee, epic.created_by) if name][:1]


def _post(
    ws: Workspace, thread: str, cell: Cell, note: str, importance: str
) -> tuple[int | None, list[str], str | None]:
    """Post to the coordinator and the thread; (message id, recipients, why not posted)."""
    try:
        registered = {agent.name for agent in list_agents(ws)}
    except HiveError as exc:
        return None, [], f"mail is unavailable: {exc.message}"
    if ws.actor not in registered:
        return None, [], f"{ws.actor} is not registered for mail; call swarmmail_init first"
    leads = coordinators(ws, cell)
    to = [n for n in leads if n in registered and n != ws.actor]
    missing = ", ".join(n for n in leads if n not in registered) or "none known"
    try:
        sent = send_message(
            ws,
            to=to,
            subject=f"progress {cell.id}",
            body=note,
            thread_id=thread,
            importance=importance,
        )
    except InvalidInput:  # no recipient: the send's own advice (give 'to') is not for us
        return (
            None,
            [],
            (
                f"nobody to tell: nobody else works on thread {thread}"
                f" (coordinator not registered: {missing})"
            ),
        )
    except NotFound as exc:
        return None, [], f"nobody to tell: {exc.message} (coordinator not registered: {missing})"
    except HiveError as exc:
        return None, [], f"mail failed: {exc.message}"
    others = [n for n in sent.recipients if n != ws.actor]
    if not others:  # only on the thread for the record: nobody else will read it
        why = f"nobody else is on thread {thread}; coordinator not registered: {missing}"
        return sent.message_id, [], why
    return sent.message_id, others, None


def swarm_record_outcome(
    ws: Workspace,
    *,
    cell_id: str,
    success: bool,
    agent_name: str | None = None,
    duration_ms: float | None = None,
    error_count: int = 0,
    retry_count: int = 0,
    files_touched: Sequence[str] | None = None,
    strategy: str | None = None,
    criteria: Sequence[str] | None = None,
    summary: str = "",
) -> Outcome:
    """Store an outcome for work finished outside swarm_complete (one commit).
    ``agent_name``, when given, must be the acting identity."""
    if agent_name is not None:
        acting_as(ws, agent_name, "recording an outcome")
    _check_outcome_numbers(duration_ms, error_count, retry_count)
    if strategy is not None:
        check_strategy(strategy)
    checked_criteria = _check_criteria(criteria)
    if summary:
        check_text(summary, "summary")
    touched = normalize_touched(ws.root, files_touched or [])

    def plan(snap: Snapshot) -> tuple[list[Change], str, Outcome]:
        index = ws.cells(snap)
        cell = _outcome_cell(index, cell_id)
        _refuse_another_s_claim(ws, snap, cell)
        outcome = build_outcome(
            index,
            cell,
            ws.actor,
            touched,
            [],
            utc_now(),
            summary=summary,
            evaluation=None,
            error_count=error_count,
            retry_count=retry_count,
            success=success,
            duration_seconds=None if duration_ms is None else duration_ms / 1000,
            strategy=strategy,
            fold_case=folds_case(ws.git.paths),
        )
        outcome = outcome.model_copy(
            update={"source": "record_outcome", "criteria": checked_criteria}
        )
        return [outcome_change(outcome)], _outcome_message(ws, cell, success), outcome

    recorded: Outcome = ws.write_files(plan).result
    return recorded


def _refuse_another_s_claim(ws: Workspace, snap: Snapshot, cell: Cell) -> None:
    """A claimed cell's outcome is its assignee's to record, as its progress is (a
    coordinator or a person may record one too): another agent's failure recorded on it
    would count against that work in learning."""
    owner = cell.assignee
    if is_claimed(cell) and owner != ws.actor and override_role(ws, snap) is None:
        raise NotOwner(
            f"{cell.id} is claimed by {owner}; only {owner} records its outcome (or a"
            " coordinator or a person): ask them on the thread (swarmmail_send)",
            owner=owner,
            target=cell.id,
        )


def _check_outcome_numbers(duration_ms: float | None, error_count: int, retry_count: int) -> None:
    """A recorded duration and counts are never negative."""
    if duration_ms is not None and duration_ms < 0:
        raise InvalidInput("duration_ms must be >= 0")
    if error_count < 0 or retry_count < 0:
        raise InvalidInput("error_count and retry_count must be >= 0")


def _outcome_cell(index: CellIndex, cell_id: str) -> Cell:
    """The cell an outcome describes (a deleted one too)."""
    try:
        return get_cell(index, cell_id, allow_deleted=True)
    except NotFound:
        raise NotFound(f"no cell {cell_id!r}: outcomes describe existing cells") from None


def _outcome_message(ws: Workspace, cell: Cell, success: bool) -> str:
    """The commit message of a recorded outcome."""
    return format_message(
        f"hive: outcome {cell.id} {'success' if success else 'failure'}",
        [("Hive-Cell", cell.id), *ws.trailers("outcome")],
    )


def _check_criteria(criteria: Sequence[str] | None) -> list[str] | None:
    if not criteria:
        return None
    if len(criteria) > 100:
        raise InvalidInput(f"too many criteria ({len(criteria)} > 100)")
    cleaned = [str(item).strip() for item in criteria]
    if any(not item or len(item) > 500 for item in cleaned):
        raise InvalidInput("each criterion must be 1-500 characters")
    return [check_short(item, "a criterion", 500) for item in cleaned]
