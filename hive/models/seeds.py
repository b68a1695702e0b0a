"""Results (and stored records) of the seed-003 tools: blackboard, permissions,
delegation, swarm state, synthesis, project memory and the QA harness.

Seed 003 names things in camelCase (``targetAgent``, ``previousValue``); results
keep those names (fields are snake_case in Python with camelCase aliases, and tool
results are dumped by alias)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from hive.models.base import HiveModel, Time


class Camel(HiveModel):
    model_config = ConfigDict(populate_by_name=True)


# ------------------------------------------------------------------ blackboard


class BlackboardEntry(Camel):
    key: str
    value: JsonValue = None
    source_agent: str = Field(alias="sourceAgent")
    timestamp: str
    ttl: float | None = None
    expires_at: str | None = Field(default=None, alias="expiresAt")


class BlackboardWrite(Camel):
    success: bool = True
    key: str
    previous_value: JsonValue = Field(default=None, alias="previousValue")
    source_agent: str = Field(alias="sourceAgent")
    ttl: float | None = None
    expires_at: str | None = Field(default=None, alias="expiresAt")


class BlackboardRead(Camel):
    """``value`` is null for a missing or expired entry."""

    key: str
    value: JsonValue = None
    exists: bool
    expired: bool = False
    entry: BlackboardEntry | None = None


# ------------------------------------------------------------------ permissions


class PermissionDecision(Camel):
    """One decision of ``request_permission``, committed as .hive/permissions/<id>.yaml."""

    id: str
    agent: str
    resource_type: str = Field(alias="resourceType")
    scope: str | None = None
    justification: str
    granted: bool
    reason: str
    rule: str = ""  # which policy rule decided ("default" when none matched)
    decided_at: Time = Field(alias="decidedAt")
    expires_at: Time | None = Field(default=None, alias="expiresAt")

    def live(self, now: datetime) -> bool:
        return self.granted and (self.expires_at is None or self.expires_at > now)


class PermissionAnswer(Camel):
    """What ``request_permission`` returns: the decision, and the grant's id as token."""

    granted: bool
    grant_token: str | None = Field(default=None, alias="grantToken")
    resource_type: str = Field(alias="resourceType")
    scope: str | None = None
    reason: str
    expires_at: Time | None = Field(default=None, alias="expiresAt")
    decision_id: str = Field(alias="decisionId")


# ------------------------------------------------------------------ delegation


class TaskInfo(Camel):
    task_id: str = Field(alias="taskId")
    title: str
    agent_id: str | None = Field(default=None, alias="agentId")
    delegated_by: str | None = Field(default=None, alias="delegatedBy")
    status: str
    priority: str
    deadline: str | None = None
    expired: bool = False
    requires_auth: bool = Field(default=False, alias="requiresAuth")
    epic_id: str | None = Field(default=None, alias="epicId")
    closed_at: str | None = Field(default=None, alias="closedAt")


class Delegated(Camel):
    task_id: str = Field(alias="taskId")
    status: str = "delegated"
    target_agent: str = Field(alias="targetAgent")
    priority: str
    deadline: str
    requires_auth: bool = Field(alias="requiresAuth")


class AgentInfo(Camel):
    agent_id: str = Field(alias="agentId")
    status: str  # busy | available
    registered: bool
    task_description: str | None = Field(default=None, alias="taskDescription")
    tasks: list[str] = Field(default_factory=list)


class TaskSummary(Camel):
    """A task in an agent's default (compact) swarm state; ``verbose`` gives ``TaskInfo``."""

    task_id: str = Field(alias="taskId")
    title: str
    status: str
    priority: str
    agent_id: str | None = Field(default=None, alias="agentId")


class AgentSummary(Camel):
    """An agent in the compact swarm state (``verbose``: ``AgentInfo``)."""

    agent_id: str = Field(alias="agentId")
    status: str
    tasks: list[str] = Field(default_factory=list)


class BlackboardValue(Camel):
    """A blackboard entry in the compact swarm state (``verbose``: ``BlackboardEntry``)."""

    value: JsonValue = None
    source_agent: str = Field(alias="sourceAgent")


class GrantSummary(Camel):
    """A live grant in the compact swarm state (``verbose``: ``PermissionDecision``)."""

    id: str
    agent: str
    resource_type: str = Field(alias="resourceType")
    scope: str | None = None
    expires_at: Time | None = Field(default=None, alias="expiresAt")


class SwarmState(Camel):
    """The swarm's state: whole records with ``verbose``, else each in its summary."""

    timestamp: str
    agents: list[AgentInfo] | list[AgentSummary] | None = None
    tasks: list[TaskInfo] | list[TaskSummary] | None = None
    expired_tasks: list[str] | None = Field(default=None, alias="expiredTasks")
    blackboard: dict[str, BlackboardEntry | None] | dict[str, BlackboardValue | None] | None = None
    permissions: list[PermissionDecision] | list[GrantSummary] | None = None
    history: dict[str, JsonValue] | None = None
    truncated: dict[str, int] | None = Field(
        default=None, description="the whole count of each list that limit cut"
    )

    def summary(self) -> SwarmState:
        """The compact state an agent gets by default (each record in its summary)."""
        board = self.blackboard
        return self.model_copy(
            update={
                "agents": _each(self.agents, AgentSummary),
                "tasks": _each(self.tasks, TaskSummary),
                "permissions": _each(self.permissions, GrantSummary),
                "blackboard": None
                if board is None
                else {key: e and _summary(BlackboardValue, e) for key, e in board.items()},
            }
        )


_Summary = TypeVar("_Summary", bound=BaseModel)


def _summary(kind: type[_Summary], record: BaseModel) -> _Summary:
    """``record``'s fields that ``kind`` has (a whole record or a summary already)."""
    return kind.model_validate(record, from_attributes=True)


def _each(items: list[Any] | None, kind: type[BaseModel]) -> list[Any] | None:
    return None if items is None else [_summary(kind, item) for item in items]


class Spawned(Camel):
    epic_id: str = Field(alias="epicId")
    synthesis_strategy: str = Field(alias="synthesisStrategy")
    tasks: list[TaskInfo]


class SubtaskResult(Camel):
    task_id: str = Field(alias="taskId")
    agent_type: str | None = Field(default=None, alias="agentType")
    state: str  # succeeded | failed | pending
    result: JsonValue = None


class Synthesis(Camel):
    epic_id: str = Field(alias="epicId")
    strategy: str
    complete: bool
    result: JsonValue = None
    details: dict[str, JsonValue] = Field(default_factory=dict)
    subtasks: list[SubtaskResult]
    recorded: bool = False


# ------------------------------------------------------------------ project memory


class ContextUpdate(HiveModel):
    """What ``update_context`` did: the section's value after it, and the commit."""

    section: str
    value: JsonValue
    changed: bool
    commit: str | None = None


# ------------------------------------------------------------------ QA


class QaScenarioResult(Camel):
    id: str
    key: str
    source_agent: str = Field(alias="sourceAgent")
    score: float
    threshold: float
    passed: bool
    issues: list[str] = Field(default_factory=list)
    contradiction: bool = False


class QaRun(Camel):
    total: int
    passed: int
    failed: int
    pass_rate: float = Field(alias="passRate")
    quality_threshold: float = Field(alias="qualityThreshold")
    results: list[QaScenarioResult]
    contradictions: list[dict[str, JsonValue]]
    regression: dict[str, JsonValue]
    run_id: int = Field(alias="runId")


class QaHistoryEntry(Camel):
    """One past run of the QA harness (``qa_history``)."""

    run_id: int = Field(alias="runId")
    ran_at: str = Field(alias="ranAt")
    agent: str
    pass_rate: float = Field(alias="passRate")
    scenarios: int


# ------------------------------------------------------------------ seed 004: debate tools
# (the seed's answers: ``{"status": "success", "result": {...}}``)


class FileText(HiveModel):
    content: str


class FileReadAnswer(HiveModel):
    status: Literal["success"] = "success"
    result: FileText


class DirEntry(HiveModel):
    path: str  # absolute
    type: Literal["file", "directory"]


class DirEntries(HiveModel):
    entries: list[DirEntry]


class DirListing(HiveModel):
    status: Literal["success"] = "success"
    result: DirEntries


class Contribution(Camel):
    round_number: int = Field(alias="roundNumber")
    agent_id: str = Field(alias="agentId")
    agent_role: str = Field(alias="agentRole")  # coordinator | worker
    type: str
    content_snippet: str = Field(alias="contentSnippet")
    cell_id: str | None = Field(default=None, alias="cellId")  # the cell it is on
    message_id: int | None = Field(default=None, alias="messageId")  # a message's id

    @model_serializer(mode="wrap")
    def _where(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """No ``cellId`` for a message on no cell, no ``messageId`` but a message's."""
        shown: dict[str, Any] = handler(self)
        for key in ("cellId", "cell_id", "messageId", "message_id"):
            if key in shown and shown[key] is None:
                del shown[key]
        return shown


class Matches(HiveModel):
    matches: list[Contribution]
    total: int = 0  # matches in all (``matches`` holds the first ``limit``)


class ContextSearchAnswer(HiveModel):
    status: Literal["success"] = "success"
    result: Matches


# ------------------------------------------------------------------ seed 002: scratchpad, todos


class ScratchpadWritten(HiveModel):
    path: str  # scratchpad://...
    file_path: str
    title: str
    size: int
    message: str


class ScratchpadEntry(HiveModel):
    file_path: str  # its address is scratchpad://file_path
    title: str
    size: int
    agent: str
    created_at: float
    updated_at: float


class ScratchpadListing(HiveModel):
    entries: list[ScratchpadEntry]  # a page: the first ``limit``, by path
    count: int  # of every entry matched
    total_size: int


class ScratchpadCleared(HiveModel):
    removed: int


class TodoItem(Camel):
    """One todo, as the agent wrote it (fields it left out stay out)."""

    content: str
    status: Literal["pending", "in_progress", "completed"]
    active_form: str | None = Field(default=None, alias="activeForm")
    id: str | None = None
    priority: str | None = None

    @model_serializer(mode="wrap")
    def _given(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        dumped: dict[str, Any] = handler(self)
        return {key: value for key, value in dumped.items() if value is not None}


class TodoList(HiveModel):
    """One agent's todo list with its counts by status."""

    agent: str
    todos: list[TodoItem]
    pending: int
    in_progress: int
    completed: int
