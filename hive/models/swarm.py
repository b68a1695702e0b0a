"""Results of the swarm orchestration operations."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, computed_field

from hive.models.base import HiveModel
from hive.models.cell import Cell, CellSummary
from hive.models.epic import PlannedSubtask as PlannedSubtask  # the one plan model
from hive.models.outcome import Outcome
from hive.models.reservation import Reservation


class GateRun(HiveModel):
    """One verification command run by ``swarm_complete``."""

    command: str
    exit_code: int | None  # None: timed out
    output: str = ""
    seconds: float = 0.0


class CompleteResult(HiveModel):
    cell: Cell | CellSummary  # a tool's answer: the summary (hive_query id for the rest)
    commit: str | None
    released: list[Reservation] = Field(default_factory=list)
    outcome: Outcome
    files_committed: list[str] = Field(default_factory=list)
    gate: list[GateRun] = Field(default_factory=list)
    gate_skipped: str | None = None  # why the verify commands did not run, when skipped


class SwarmStatus(HiveModel):
    epic_id: str
    title: str
    total: int
    completed: int
    in_progress: int
    blocked: int
    open: int
    percent: int
    ready: list[str] = Field(default_factory=list)
    agents: dict[str, str] = Field(default_factory=dict)  # cell id -> assignee


class ProgressResult(HiveModel):
    cell: Cell | CellSummary  # a tool's answer: the summary (its notes grow with each report)
    status: str = ""  # the reported status (completed/failed map to in_progress/blocked)
    percent: int | None = None
    message_id: int | None = None
    thread_id: str | None = None
    recipients: list[str] = Field(default_factory=list)
    not_posted: str | None = None  # why the report reached nobody
    outcome: Outcome | None = None  # the failure outcome of status "failed"
    next_step: str | None = None  # status "completed": what the agent must still do


class StrategyScore(HiveModel):
    strategy: str
    score: float
    prior: float
    evidence: float
    weight: float


class Precedent(HiveModel):
    cell_id: str
    title: str
    strategy: str | None
    success: bool
    similarity: float
    age_days: float


class StrategyChoice(HiveModel):
    strategy: str
    confidence: float
    reasoning: str

    @computed_field  # type: ignore[prop-decorator]
    @property
    def rationale(self) -> str:
        """The seed's name for ``reasoning`` (``{strategy, rationale, confidence}``)."""
        return self.reasoning

    score: StrategyScore | None = None  # the chosen strategy's own score, prior and evidence
    alternatives: list[StrategyScore]
    precedents: list[Precedent] = Field(default_factory=list)


class Decomposition(HiveModel):
    """The plan: ``{"epic": {"title", "description"}, "subtasks": [...], "strategy"}``."""

    epic: dict[str, Any]
    subtasks: list[PlannedSubtask] = Field(min_length=1)
    strategy: str | None = None


class ValidationIssue(HiveModel):
    message: str
    hint: str = ""
    path: str = ""  # where in the JSON: "subtasks[2].files"


class ValidationResult(HiveModel):
    valid: bool
    errors: list[ValidationIssue] = Field(default_factory=list)
    warnings: list[ValidationIssue] = Field(default_factory=list)
    data: Decomposition | None = None


class PlanPrompt(HiveModel):
    prompt: str
    strategy: StrategyChoice
    response_schema: dict[str, Any]
    similar_epics: list[dict[str, Any]] = Field(default_factory=list)
    anti_patterns: list[str] = Field(default_factory=list)
    cass: str = "unavailable"  # "ok", "no hits", "unavailable", "failed: ..."


class EvaluationPrompt(HiveModel):
    """The self-review checklist whose JSON answer goes to swarm_complete."""

    prompt: str


class SubtaskPrompt(HiveModel):
    cell_id: str
    epic_id: str | None
    agent_name: str | None
    prompt: str
    files: list[str] = Field(default_factory=list)


class PatternStat(HiveModel):
    strategy: str
    kind: str
    maturity: str  # candidate | established | proven | deprecated
    successes: float
    failures: float
    score: float


class StrategyInsight(HiveModel):
    strategy: str
    total: int
    successes: int
    success_rate: float
    decayed_score: float
    by_month: dict[str, dict[str, float]] = Field(default_factory=dict)


class Insights(HiveModel):
    strategies: list[StrategyInsight]
    patterns: list[PatternStat]
    anti_patterns: list[str]


class SwarmInit(HiveModel):
    project_path: str
    hive_available: bool
    swarmmail_available: bool
    cass_available: bool
    agent: str | None = None
    cells: int = 0
    outcomes: int = 0
    strategies: list[str] = Field(default_factory=list)


class ReviewFile(HiveModel):
    path: str
    status: str
    additions: int
    deletions: int


class ReviewCommit(HiveModel):
    sha: str
    subject: str
    author: str
    time: int
    cells: list[str]
    event: str | None = None
    files: list[ReviewFile]
    patch: str = ""
    # Who made it, as its message says (trailers are written, not proven): "hive" (hive
    # wrote it: a Hive-Event trailer, as create, close or swarm_complete write, acting
    # for ``agent``), "agent" (an agent's own git commit: its commit-msg hook named the
    # agent in a Hive-Committer trailer) or "git" (neither: made with git by its
    # author, say with a Hive-Cell trailer written by hand).
    made_by: Literal["hive", "agent", "git"] = "git"
    committer: str | None = None  # the Hive-Committer trailer's agent
    agent: str | None = None  # the Hive-Agent trailer: whom hive's own commit acted for


class CellReview(HiveModel):
    cell_id: str
    title: str
    status: str
    assignee: str | None
    files_owned: list[str]
    files_reserved: list[str]
    files_touched: list[str]
    scope_violations: list[str]
    outcome: Outcome | None = None
    commits: list[str] = Field(default_factory=list)  # shas carrying its Hive-Cell trailer
    files: list[ReviewFile] = Field(default_factory=list)  # the cell's diff, per file
    patch: str = ""  # one diff for the cell: its files, before its first commit -> after its last


class Review(HiveModel):
    target: str
    title: str
    is_epic: bool
    cells: list[CellReview]
    commits: list[ReviewCommit]
