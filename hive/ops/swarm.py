"""Swarm orchestration operations described once: what a repository offers a swarm,
an epic's status, the evaluation checklist, outcomes, insights and review."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from hive.domain.limits import MAX_ID
from hive.errors import (
    AmbiguousId,
    Conflict,
    GateFailed,
    InvalidInput,
    NotFound,
    NotOwner,
    NotYourIdentity,
)
from hive.models.cell import Cell, CellSummary
from hive.models.identity import AuditEntry
from hive.models.outcome import Outcome
from hive.models.results import LogEntry
from hive.models.swarm import (
    CompleteResult,
    EvaluationPrompt,
    Insights,
    ProgressResult,
    Review,
    SwarmInit,
    SwarmStatus,
)
from hive.ops.spec import OVERRIDE, Command, NoParams, Operation, Params, cli_help_only, declare

if TYPE_CHECKING:
    from hive.domain.workspace import Workspace

StrategyName = Literal["file-based", "feature-based", "risk-based", "research-based"]


def _strategy(value: Any) -> Any:
    """A person's strategy, checked with the domain's message (an agent's is checked by
    the schema)."""
    from hive.domain.swarm.strategies import check_strategy

    return check_strategy(str(value))


PathList: Any = Field(
    default_factory=list,
    max_length=1000,
    description="files you touched",
    json_schema_extra=cli_help_only,
)
ProjectKey: Any = Field(
    default=None, description="must be this repository", json_schema_extra=cli_help_only
)
AgentName: Any = Field(
    default=None, description="must be you, if given", json_schema_extra=cli_help_only
)
LOOKUP = (NotFound, AmbiguousId)
FILES_SHORT = ("--file", "-f")
# on the command line a relative path is read from the current directory (cli/present.py)
TOUCHED = {"files_touched": "files you touched, relative to the current directory as in git"}
AGENT_SHORT = ("--agent",)


def _touched(a: Any) -> list[str]:
    return list(a.files_touched)


class SwarmInitParams(Params):
    project_path: str | None = ProjectKey


def _swarm_init(ws: Workspace, a: SwarmInitParams) -> SwarmInit:
    from hive.domain.swarm.decompose import swarm_init

    return swarm_init(ws, project_path=a.project_path)


class StatusParams(Params):
    epic_id: str = Field(min_length=1, max_length=MAX_ID)
    project_key: str | None = ProjectKey


def _status(ws: Workspace, a: StatusParams) -> SwarmStatus:
    from hive.domain.swarm.progress import swarm_status

    return swarm_status(ws, epic_id=a.epic_id, project_key=a.project_key)


class EvaluationParams(Params):
    cell_id: str = Field(min_length=1, max_length=MAX_ID)
    subtask_title: str | None = Field(default=None, max_length=500)
    files_touched: list[str] = PathList


def _evaluation(ws: Workspace, a: EvaluationParams) -> EvaluationPrompt:
    from hive.domain.swarm.prompts import swarm_evaluation_prompt

    text = swarm_evaluation_prompt(
        ws, cell_id=a.cell_id, files_touched=a.files_touched, subtask_title=a.subtask_title
    )
    return EvaluationPrompt(prompt=text)


class ProgressParams(Params):
    project_key: str | None = ProjectKey
    agent_name: str | None = AgentName
    cell_id: str = Field(min_length=1, max_length=MAX_ID)
    status: Literal["in_progress", "blocked", "completed", "failed", "open"] = Field(
        description="completed: still call swarm_complete; failed: blocks the cell"
    )
    message: str | None = Field(default=None, max_length=5000)
    progress_percent: int | None = Field(default=None, ge=0, le=100)
    files_touched: list[str] = PathList
    force: bool = Field(default=False, description=OVERRIDE)
    reason: str | None = Field(default=None, max_length=5000)


def _summarized(cell: Cell | CellSummary) -> CellSummary:
    """The cell as a report or a completion answers it: its summary. The whole cell
    (notes holding every report, the description, comments) made each answer longer
    than the last, ~15 kB after ten reports; ``hive_query`` with its id gives it."""
    return cell if isinstance(cell, CellSummary) else CellSummary.of(cell)


def _progress(ws: Workspace, a: ProgressParams) -> ProgressResult:
    from hive.domain.swarm.progress import swarm_progress

    reported = swarm_progress(
        ws,
        agent_name=a.agent_name,
        cell_id=a.cell_id,
        status=a.status,
        progress_percent=a.progress_percent,
        message=a.message,
        files_touched=a.files_touched,
        project_key=a.project_key,
        force=a.force,
        reason=a.reason,
    )
    return reported.model_copy(update={"cell": _summarized(reported.cell)})


class CompleteParams(Params):
    project_key: str | None = ProjectKey
    agent_name: str | None = AgentName
    cell_id: str = Field(min_length=1, max_length=MAX_ID)
    summary: str = Field(
        min_length=1,
        max_length=20_000,
        description="what was done",
        json_schema_extra=cli_help_only,
    )
    files_touched: list[str] = PathList
    evaluation: str | dict[str, Any] | None = Field(
        default=None, description='text, or {"passed": bool, "notes": ...}'
    )
    error_count: int = Field(default=0, ge=0)
    retry_count: int = Field(default=0, ge=0)
    gate: bool = Field(default=True, description="false: skip the verify commands (recorded)")
    force: bool = Field(default=False, description=OVERRIDE)
    reason: str | None = Field(default=None, max_length=5000)


def _complete(ws: Workspace, a: CompleteParams) -> CompleteResult:
    from hive.domain.swarm.complete import swarm_complete

    completed = swarm_complete(
        ws,
        agent_name=a.agent_name,
        cell_id=a.cell_id,
        summary=a.summary,
        project_key=a.project_key,
        files_touched=a.files_touched,
        evaluation=a.evaluation,
        error_count=a.error_count,
        retry_count=a.retry_count,
        run_gate=a.gate,
        force=a.force,
        reason=a.reason,
    )
    return completed.model_copy(update={"cell": _summarized(completed.cell)})


class OutcomeParams(Params):
    cell_id: str = Field(min_length=1, max_length=MAX_ID)
    success: bool
    agent_name: str | None = AgentName
    duration_ms: float | None = Field(
        default=None,
        ge=0,
        allow_inf_nan=False,
        description="ms; a fraction is kept",
        json_schema_extra=cli_help_only,
    )
    error_count: int = Field(default=0, ge=0)
    retry_count: int = Field(default=0, ge=0)
    files_touched: list[str] = PathList
    strategy: StrategyName | None = None
    criteria: list[str] = Field(default_factory=list, max_length=100)
    summary: str = Field(default="", max_length=20_000)


def _outcome(ws: Workspace, a: OutcomeParams) -> Outcome:
    from hive.domain.swarm.progress import swarm_record_outcome

    return swarm_record_outcome(
        ws,
        cell_id=a.cell_id,
        success=a.success,
        agent_name=a.agent_name,
        duration_ms=a.duration_ms,
        error_count=a.error_count,
        retry_count=a.retry_count,
        files_touched=a.files_touched,
        strategy=a.strategy,
        criteria=a.criteria,
        summary=a.summary,
    )


def _insights(ws: Workspace, a: NoParams) -> Insights:
    from hive.domain.swarm.learning import insights

    return insights(ws)


class LogParams(Params):
    id: str | None = Field(
        default=None,
        max_length=MAX_ID,
        description="one cell's history",
        json_schema_extra=cli_help_only,
    )
    limit: int | None = Field(default=20, ge=1, le=100_000, description="null: all")
    overrides: bool = Field(
        default=False, description="only overrides and commits by unregistered identities"
    )


def _log(ws: Workspace, a: LogParams) -> list[LogEntry] | list[AuditEntry]:
    from hive.domain.history import audit_log, cell_log

    if a.overrides:
        return audit_log(ws, limit=a.limit)
    return cell_log(ws, cell_id=a.id, limit=a.limit)


class ReviewParams(Params):
    id: str = Field(
        min_length=1, max_length=MAX_ID, description="cell or epic", json_schema_extra=cli_help_only
    )
    patch: bool = Field(default=False, description="include diffs", json_schema_extra=cli_help_only)


def _review(ws: Workspace, a: ReviewParams) -> Review:
    from hive.domain.swarm.review import review

    return review(ws, target=a.id, with_patch=a.patch)


CELL_ARG = ("cell_id",)

declare(
    Operation(
        name="swarm_init",
        summary="What this repo offers a swarm.",
        params=SwarmInitParams,
        result=SwarmInit,
        run=_swarm_init,
        writes=False,
        errors=(InvalidInput,),
        commands=(Command(("swarm", "init")),),
        help="What this repository offers a swarm (hive, mail, cass, outcomes).",
    ),
    Operation(
        name="swarm_status",
        summary="Subtask totals by state for an epic.",
        params=StatusParams,
        result=SwarmStatus,
        run=_status,
        writes=False,
        errors=(*LOOKUP, InvalidInput),
        commands=(Command(("swarm", "status"), arguments=("epic_id",)),),
        help="Subtask totals by state for an epic (the states add up to the total).",
    ),
    Operation(
        name="swarm_evaluation_prompt",
        summary="Self-review checklist before completing.",
        params=EvaluationParams,
        result=EvaluationPrompt,
        run=_evaluation,
        writes=False,
        errors=LOOKUP,
        commands=(
            Command(
                ("swarm", "evaluation-prompt"),
                arguments=CELL_ARG,
                short={"files_touched": FILES_SHORT},
                helps=TOUCHED,
            ),
        ),
        help="A self-review checklist to answer before swarm complete.",
    ),
    Operation(
        name="swarm_progress",
        summary="Report progress; posts to the epic thread.",
        params=ProgressParams,
        result=ProgressResult,
        run=_progress,
        writes=True,
        access="owner",
        errors=(*LOOKUP, InvalidInput, NotOwner, NotYourIdentity),
        paths=_touched,
        commands=(
            Command(
                ("swarm", "progress"),
                arguments=CELL_ARG,
                short={
                    "progress_percent": ("--percent",),
                    "message": ("-m",),
                    "files_touched": FILES_SHORT,
                    "agent_name": AGENT_SHORT,
                },
                helps=TOUCHED,
            ),
        ),
        help="Report progress on a subtask (updates it and posts to the epic's coordinator).",
    ),
    Operation(
        name="swarm_complete",
        summary="Close cell, release reservations, record outcome, commit files: one commit.",
        params=CompleteParams,
        result=CompleteResult,
        run=_complete,
        writes=True,
        access="owner",
        errors=(*LOOKUP, InvalidInput, NotOwner, NotYourIdentity, Conflict, GateFailed),
        paths=_touched,
        commands=(
            Command(
                ("swarm", "complete"),
                arguments=CELL_ARG,
                short={
                    "summary": ("-s",),
                    "files_touched": FILES_SHORT,
                    "error_count": ("--errors",),
                    "retry_count": ("--retries",),
                    "agent_name": AGENT_SHORT,
                },
                helps=TOUCHED,
            ),
        ),
        help="Close a subtask, release your reservations, record the outcome: one commit.",
    ),
    Operation(
        name="swarm_record_outcome",
        summary="Record how work done elsewhere went.",
        params=OutcomeParams,
        parsers={"strategy": _strategy},
        result=Outcome,
        run=_outcome,
        writes=True,
        access="agent",
        errors=(*LOOKUP, InvalidInput, NotYourIdentity),
        commands=(
            Command(
                ("swarm", "record-outcome"),
                arguments=CELL_ARG,
                short={
                    "success": ("--failure",),
                    "error_count": ("--errors",),
                    "retry_count": ("--retries",),
                    "files_touched": FILES_SHORT,
                    "agent_name": AGENT_SHORT,
                    "summary": ("-s",),
                },
                helps=TOUCHED,
            ),
        ),
        help="Record how work finished outside swarm complete went (one commit).",
    ),
    Operation(
        name="swarm_insights",
        summary="Strategy success rates, maturity and anti-patterns.",
        params=NoParams,
        result=Insights,
        run=_insights,
        writes=False,
        commands=(Command(("swarm", "insights")),),
        help="Per-strategy success over time, pattern maturity, anti-patterns.",
    ),
    Operation(
        name="hive_log",
        summary="hive commits, newest first (one cell's with id).",
        params=LogParams,
        result=list[LogEntry] | list[AuditEntry],
        run=_log,
        writes=False,
        errors=LOOKUP,
        commands=(
            Command(
                ("log",), arguments=("id",), short={"limit": ("-n",)}, defaults={"limit": None}
            ),
        ),
        help="hive commits (for one cell if ID is given), newest first.",
    ),
    Operation(
        name="hive_review",
        summary="Commits, files and outcome of a cell or epic.",
        params=ReviewParams,
        result=Review,
        run=_review,
        writes=False,
        errors=LOOKUP,
        commands=(
            Command(
                ("review",),
                arguments=("id",),
                short={"patch": ("--stat",)},
                defaults={"patch": True},
            ),
        ),
        help="An agent's work as diffs: every commit carrying the cell's Hive-Cell trailer"
        " (hive's and the agent's own code commits), one diff per cell and per commit, files"
        " touched vs owned vs reserved, and the outcome. Each commit says who made it: hive"
        " (and for whom), an agent with git (its Hive-Committer trailer) or its author with"
        " git.",
    ),
)
