"""``hive swarm run``: what the runner reports while it works and when it stops."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from hive.models.base import HiveModel, Time
from hive.models.cell import utc_now

Isolation = Literal["reservation", "worktree"]
ISOLATIONS: tuple[str, ...] = ("reservation", "worktree")
# taken: reassigned (or put back) by someone else while its worker ran: left as it is
# unsettled: its worker ran, but what became of the subtask could not be written
WorkerResult = Literal["completed", "blocked", "requeued", "deleted", "taken", "unsettled"]

EventKind = Literal[
    "run_started",  # settings; subtasks lists every subtask of the epic
    "resumed",  # a subtask left running by an earlier run was put back (or merged)
    "worker_started",  # a worker process for a subtask
    "skipped",  # a ready subtask could not be claimed, or was deleted or taken meanwhile
    "worker_exited",  # its exit code (None: killed) and how long it ran
    "completed",  # the subtask was closed by swarm_complete (and merged, with worktrees)
    "blocked",  # the subtask is blocked: reason, log, outcome recorded
    "requeued",  # interrupted: the subtask is open again for the next run
    "cell",  # a subtask changed (status, assignee) as seen in the repository
    "reservations",  # the epic's active reservations changed
    "message",  # a new message on the epic's thread
    "interrupted",  # stop requested (Ctrl-C): workers are being stopped
    "epic_closed",  # every subtask closed: the epic was closed (reason, commit)
    "epic_open",  # every subtask closed, but closing the epic was refused (reason)
    "worktree_removed",  # a worktree no subtask resumes, holding nothing of its own
    "worktree_kept",  # a worktree no subtask resumes, holding work found nowhere else
    "run_finished",  # the totals; the last event
]


class SubtaskState(HiveModel):
    """One subtask as the runner sees it."""

    id: str
    title: str
    status: str
    assignee: str | None = None
    blockers: list[str] = Field(default_factory=list)  # open "blocks" targets


class SwarmEvent(HiveModel):
    """One thing that happened during a run (``--json`` prints one per line)."""

    event: EventKind
    at: Time = Field(default_factory=utc_now)
    epic_id: str | None = None
    cell_id: str | None = None
    agent: str | None = None
    title: str | None = None
    status: str | None = None
    pid: int | None = None
    exit_code: int | None = None
    seconds: float | None = None
    log: str | None = None
    prompt_file: str | None = None
    worktree: str | None = None
    branch: str | None = None
    commit: str | None = None
    reason: str | None = None
    files: list[str] | None = None
    subtasks: list[SubtaskState] | None = None
    reservations: list[dict[str, Any]] | None = None
    message: dict[str, Any] | None = None
    settings: dict[str, Any] | None = None
    totals: dict[str, int] | None = None
    # run_finished: what the summary lines say of the subtasks not closed
    blocked: dict[str, str] | None = None  # subtask -> reason
    waiting: dict[str, list[str]] | None = None  # remaining -> open blockers
    blocker_status: dict[str, str] | None = None  # each of those -> its status
    skipped: dict[str, str] | None = None  # remaining, not started -> why
    epic_status: str | None = None  # the epic's status at the end


class WorkerRun(HiveModel):
    """One worker process and what became of its subtask."""

    cell_id: str
    agent: str
    result: WorkerResult
    exit_code: int | None = None
    seconds: float = 0.0
    log: str
    reason: str | None = None
    worktree: str | None = None
    branch: str | None = None
    # shared working tree: files its completion committed outside its subtask's scope
    outside_scope: list[str] = Field(default_factory=list)


class KeptWorktree(HiveModel):
    """A worktree of the epic's run directory that no subtask resumes (its subtask
    closed or deleted, or an earlier attempt's), kept for the work only it holds."""

    worktree: str
    branch: str | None = None
    cell_id: str | None = None
    why: str  # whose worktree it is: "of closed subtask hv-..."
    files: list[str] = Field(default_factory=list)  # what only it holds
    command: str  # what removes it and its branch, for a person to run


class SwarmRunResult(HiveModel):
    """How a run ended. ``remaining`` subtasks are neither closed nor blocked (waiting
    for blocked work, or not started because the run was interrupted)."""

    epic_id: str
    title: str
    isolation: Isolation
    workers: int
    interrupted: bool = False
    completed: list[str] = Field(default_factory=list)  # closed subtasks of the epic
    blocked: dict[str, str] = Field(default_factory=dict)  # subtask -> reason
    remaining: list[str] = Field(default_factory=list)
    waiting: dict[str, list[str]] = Field(default_factory=dict)  # remaining -> open blockers
    blocker_status: dict[str, str] = Field(default_factory=dict)  # each of those -> its status
    skipped: dict[str, str] = Field(default_factory=dict)  # remaining, not started -> why
    runs: list[WorkerRun] = Field(default_factory=list)
    epic_status: str | None = None  # the epic's status at the end, once every subtask closed
    epic_note: str | None = None  # why it was closed (the reason) or left open
    kept_worktrees: list[KeptWorktree] = Field(default_factory=list)  # none resumes them
    # shared working tree: files the run's workers changed and left uncommitted
    left_uncommitted: list[str] = Field(default_factory=list)
    # git hooks hive installs that this repository lacks, and what that means for the run
    hooks_missing: list[str] = Field(default_factory=list)
    hooks_note: str | None = None

    @property
    def finished(self) -> bool:
        return not self.interrupted and not self.blocked and not self.remaining
