"""Seed 003's coordination (Network-AI), described once: delegation, swarm state,
parallel agents and their synthesis, permission grants, the blackboard, project
memory and the QA harness. The agent tools and the ``hive delegate``, ``hive swarm
state``, ``hive epic synthesize``, ``hive permissions``, ``hive blackboard``, ``hive
memory`` and ``hive qa`` commands are generated from these descriptions.

Parameter names are the seed's (camelCase, the tools' contract): fields are
snake_case in Python with the seed's name as alias, so a tool takes ``targetAgent``
and the command line ``--target-agent``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field, JsonValue

from hive.errors import AgentRetired, CorruptFile, InvalidInput, NotFound, PermissionDenied
from hive.models.seeds import (
    BlackboardEntry,
    BlackboardRead,
    BlackboardWrite,
    ContextUpdate,
    Delegated,
    PermissionAnswer,
    PermissionDecision,
    QaHistoryEntry,
    QaRun,
    Spawned,
    SwarmState,
    Synthesis,
)
from hive.ops.context import json_or_text
from hive.ops.spec import CLI_ONLY, Command, NoParams, Operation, Params, cli_help_only, declare

if TYPE_CHECKING:
    from hive.domain.workspace import Workspace

Name = Annotated[str, Field(min_length=1, max_length=64)]
Key = Annotated[str, Field(min_length=1, max_length=256)]
Resource = Literal["DATABASE", "PAYMENTS", "EMAIL", "FILE_EXPORT"]
Strategy = Literal["merge", "vote", "chain", "first-success"]
Payload = dict[str, JsonValue]
PAYLOAD = "instructions and data (a JSON object)"


# ------------------------------------------------------------------ delegation


class DelegateParams(Params):
    target_agent: Name = Field(
        alias="targetAgent", description="the agent to do it", json_schema_extra=cli_help_only
    )
    task_payload: Payload = Field(alias="taskPayload", description=PAYLOAD)
    priority: Literal["low", "normal", "high", "critical"] = "normal"
    timeout: float = Field(default=30_000, gt=0, le=30 * 86_400_000, description="ms")
    requires_auth: bool = Field(default=False, alias="requiresAuth", description="needs a grant")
    resource_type: Resource | None = Field(default=None, alias="resourceType")


def _delegate(ws: Workspace, a: DelegateParams) -> Delegated:
    from hive.domain.delegation import delegate_task

    return delegate_task(
        ws,
        target_agent=a.target_agent,
        task_payload=a.task_payload,
        priority=a.priority,
        timeout=a.timeout,
        requires_auth=a.requires_auth,
        resource_type=a.resource_type,
    )


STATE_LIMIT = 500  # of each list: bounded (a task summary is ~150 bytes), whole in a usual swarm


class StateParams(Params):
    scope: Literal["all", "agents", "tasks", "blackboard", "permissions"] = "all"
    agent_filter: list[Name] | None = Field(
        default=None,
        alias="agentFilter",
        max_length=200,
        description="only these agents",
        json_schema_extra=cli_help_only,
    )
    include_history: bool = Field(default=False, alias="includeHistory")
    verbose: bool = Field(default=False, description="whole records")
    limit: int | None = Field(
        default=STATE_LIMIT,
        ge=1,
        le=100_000,
        description="per list (null: all)",
    )


def _state(ws: Workspace, a: StateParams) -> SwarmState:
    from hive.domain.delegation import query_swarm_state

    state = query_swarm_state(
        ws,
        scope=a.scope,
        agent_filter=a.agent_filter,
        include_history=a.include_history,
        limit=a.limit,
    )
    return state if a.verbose else state.summary()


class ParallelTask(Params):
    agent_type: Name = Field(alias="agentType")
    task_payload: Payload = Field(alias="taskPayload")


def parallel_task(text: str) -> Any:
    """``TYPE=INSTRUCTION`` or a JSON object, as typed on the command line."""
    found = json_or_text(text)
    if isinstance(found, dict):
        return found
    agent_type, sep, instruction = str(text).partition("=")
    if not sep or not agent_type.strip():
        raise InvalidInput(f"expected TYPE=INSTRUCTION or a JSON object, got {text!r}")
    return {"agentType": agent_type.strip(), "taskPayload": {"instruction": instruction}}


class SpawnParams(Params):
    tasks: list[ParallelTask] = Field(
        min_length=1, max_length=50, description="one per subtask", json_schema_extra=cli_help_only
    )
    synthesis_strategy: Strategy = Field(default="merge", alias="synthesisStrategy")


def _spawn(ws: Workspace, a: SpawnParams) -> Spawned:
    from hive.domain.delegation import spawn_parallel_agents

    return spawn_parallel_agents(
        ws,
        tasks=[t.model_dump(by_alias=True) for t in a.tasks],
        synthesis_strategy=a.synthesis_strategy,
    )


class SynthesizeParams(Params):
    epic_id: str = Field(min_length=1, max_length=200)
    strategy: Strategy | None = Field(default=None, description="default: the epic's")


def _synthesize(ws: Workspace, a: SynthesizeParams) -> Synthesis:
    from hive.domain.delegation import synthesize

    return synthesize(ws, epic_id=a.epic_id, strategy=a.strategy)


# ------------------------------------------------------------------ permissions


class PermissionParams(Params):
    resource_type: Resource = Field(alias="resourceType")
    justification: str = Field(
        min_length=1,
        max_length=2000,
        description="why, specifically",
        json_schema_extra=cli_help_only,
    )
    scope: str | None = Field(default=None, max_length=200, description="e.g. read:invoices")


def _permission(ws: Workspace, a: PermissionParams) -> PermissionAnswer:
    from hive.domain.permissions import request_permission

    return request_permission(
        ws, resource_type=a.resource_type, justification=a.justification, scope=a.scope
    )


class DecisionsParams(Params):
    live: bool = Field(default=False, description="only grants in force")
    agent: Name | None = None


def _decisions(ws: Workspace, a: DecisionsParams) -> list[PermissionDecision]:
    from hive.domain.permissions import list_decisions, live_grants

    found = live_grants(ws, agent=a.agent) if a.live else list_decisions(ws)
    return [d for d in found if a.agent in (None, d.agent)]


# ------------------------------------------------------------------ blackboard


class BlackboardParams(Params):
    key: Key
    value: JsonValue = Field(description="any JSON")
    ttl: float | None = Field(
        default=None, gt=0, description="seconds", json_schema_extra=cli_help_only
    )


def _update_blackboard(ws: Workspace, a: BlackboardParams) -> BlackboardWrite:
    from hive.domain.blackboard import update_blackboard

    return update_blackboard(ws, key=a.key, value=a.value, ttl=a.ttl)


class KeyParams(Params):
    key: Key


def _read_blackboard(ws: Workspace, a: KeyParams) -> BlackboardRead:
    from hive.domain.blackboard import read_blackboard

    return read_blackboard(ws, key=a.key)


def _delete_blackboard(ws: Workspace, a: KeyParams) -> BlackboardRead:
    from hive.domain.blackboard import delete_entry

    return delete_entry(ws, key=a.key)


class ListBlackboardParams(Params):
    prefix: str | None = Field(default=None, max_length=256)


def _list_blackboard(ws: Workspace, a: ListBlackboardParams) -> dict[str, BlackboardEntry | None]:
    from hive.domain.blackboard import snapshot

    return snapshot(ws, prefix=a.prefix)


# ------------------------------------------------------------------ project memory


def _inject(ws: Workspace, a: NoParams) -> str:
    from hive.domain.memory import inject_context

    return inject_context(ws)


class UpdateContextParams(Params):
    section: Literal["decisions", "milestones", "stack", "goals", "banned", "project"]
    add: JsonValue = Field(default=None, description="object (decisions, milestones) or text")
    set: dict[str, JsonValue] | None = Field(
        default=None, description="pairs to merge (stack, project)"
    )
    complete: str | None = Field(default=None, max_length=500, description="a milestone")


def key_values(pairs: Any) -> Any:
    """``KEY=VALUE`` words as typed on the command line (an empty VALUE removes KEY;
    a VALUE that is JSON is stored as JSON)."""
    if not isinstance(pairs, list):
        return json_or_text(pairs)
    values: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = str(pair).partition("=")
        if not sep or not key:
            raise InvalidInput(f"expected KEY=VALUE, got {pair!r}", field="set")
        values[key] = json_or_text(value) if value else None
    return values


def _update_context(ws: Workspace, a: UpdateContextParams) -> ContextUpdate:
    from hive.domain.memory import update_context

    return update_context(ws, section=a.section, add=a.add, set=a.set, complete=a.complete)


# ------------------------------------------------------------------ QA


class Scenario(Params):
    id: str = Field(min_length=1, max_length=200)
    key: Key
    value: JsonValue
    source_agent: Name = Field(alias="sourceAgent")
    min_score: float | None = Field(default=None, ge=0, le=1, alias="minScore")


class QaParams(Params):
    scenarios: list[Scenario] = Field(min_length=1, max_length=1000)
    quality_threshold: float = Field(default=0.7, ge=0, le=1, alias="qualityThreshold")


def _qa(ws: Workspace, a: QaParams) -> QaRun:
    from hive.domain.qa import run_qa_harness

    return run_qa_harness(
        ws,
        scenarios=[s.model_dump(by_alias=True) for s in a.scenarios],
        quality_threshold=a.quality_threshold,
    )


class HistoryParams(Params):
    limit: int = Field(default=20, ge=1, le=1000)


def _qa_history(ws: Workspace, a: HistoryParams) -> list[QaHistoryEntry]:
    from hive.domain.qa import qa_history

    return qa_history(ws, limit=a.limit)


# ------------------------------------------------------------------ the operations

BAD = (InvalidInput,)
MEMORY = (InvalidInput, NotFound, CorruptFile)

declare(
    Operation(
        name="delegate_task",
        summary="Delegate a task: a cell for targetAgent with a deadline.",
        params=DelegateParams,
        result=Delegated,
        run=_delegate,
        writes=True,
        access="agent",
        # auth_required: requiresAuth without a grant; agent_retired: a retired targetAgent
        errors=(InvalidInput, PermissionDenied, AgentRetired),
        parsers={"task_payload": json_or_text},
        commands=(Command(("delegate",), arguments=("target_agent", "task_payload")),),
        help="Delegate a task to an agent: a cell assigned to it with a deadline"
        ' (TASK_PAYLOAD: a JSON object, e.g. {"instruction": "..."}).',
    ),
    Operation(
        name="query_swarm_state",
        summary="Agents, tasks (expired flagged), blackboard, grants.",
        params=StateParams,
        result=SwarmState,
        run=_state,
        writes=False,
        errors=BAD,
        commands=(
            Command(
                ("swarm", "state"),
                short={"agent_filter": ("--agent",), "include_history": ("--history",)},
                defaults={"verbose": True},
            ),
        ),
        help="The swarm's agents, tasks (expired ones flagged), blackboard and grants.",
    ),
    Operation(
        name="spawn_parallel_agents",
        summary="An epic with one subtask per task; synthesis recorded.",
        params=SpawnParams,
        result=Spawned,
        run=_spawn,
        writes=True,
        access="agent",
        errors=BAD,
        parsers={"tasks": lambda given: [parallel_task(t) for t in given]},
        commands=(
            Command(
                ("epic", "spawn"),
                arguments=("tasks",),
                short={"synthesis_strategy": ("--strategy",)},
            ),
        ),
        help="An epic with one subtask per TASK (TYPE=INSTRUCTION, or a JSON object"
        " {agentType, taskPayload}), the synthesis strategy recorded on it (chain: each"
        " waits for the one before).",
    ),
    Operation(
        name="swarm_synthesize",
        summary="Combine an epic's subtask results by its strategy.",
        params=SynthesizeParams,
        result=Synthesis,
        run=_synthesize,
        writes=True,
        errors=(InvalidInput, NotFound),
        commands=(Command(("epic", "synthesize"), arguments=("epic_id",)),),
        help="Combine the subtasks' results by the epic's synthesis strategy and record it.",
    ),
    Operation(
        name="request_permission",
        summary="Ask for a protected resource; decided by policy, recorded.",
        params=PermissionParams,
        result=PermissionAnswer,
        run=_permission,
        writes=True,
        access="agent",
        errors=(InvalidInput, CorruptFile),
        commands=(
            Command(("permissions", "request"), arguments=("resource_type", "justification")),
        ),
        help="Ask the policy for a grant (the decision is committed); exit 5 when denied.",
    ),
    Operation(
        name="list_permissions",
        surfaces=CLI_ONLY,
        summary="Permission decisions (who, what, why, when), oldest first.",
        params=DecisionsParams,
        result=list[PermissionDecision],
        run=_decisions,
        writes=False,
        errors=(CorruptFile,),
        commands=(Command(("permissions", "list")),),
    ),
    Operation(
        name="update_blackboard",
        summary="Write a blackboard entry (ttl seconds).",
        params=BlackboardParams,
        result=BlackboardWrite,
        run=_update_blackboard,
        writes=True,
        errors=BAD,
        parsers={"value": json_or_text},
        commands=(Command(("blackboard", "set"), arguments=("key", "value")),),
        help="Write an entry (VALUE: JSON; plain text is stored as a string).",
    ),
    Operation(
        name="read_blackboard",
        summary="Read a blackboard entry (expired: null).",
        params=KeyParams,
        result=BlackboardRead,
        run=_read_blackboard,
        writes=False,
        errors=BAD,
        commands=(Command(("blackboard", "get"), arguments=("key",)),),
        help="Read an entry (null when missing or expired).",
    ),
    Operation(
        name="list_blackboard",
        surfaces=CLI_ONLY,
        summary="Blackboard entries by key (expired: null).",
        params=ListBlackboardParams,
        result=dict[str, BlackboardEntry | None],
        run=_list_blackboard,
        writes=False,
        commands=(Command(("blackboard", "list"), arguments=("prefix",)),),
        help="Every entry (under PREFIX); expired ones show as null.",
    ),
    Operation(
        name="delete_blackboard",
        surfaces=CLI_ONLY,
        summary="Remove a blackboard entry; returns what it held.",
        params=KeyParams,
        result=BlackboardRead,
        run=_delete_blackboard,
        writes=True,
        errors=BAD,
        commands=(Command(("blackboard", "rm"), arguments=("key",)),),
        help="Remove an entry (one not set, or expired: nothing to remove, exit 0).",
    ),
    Operation(
        name="inject_context",
        summary="Project memory as a markdown block.",
        params=NoParams,
        result=str,
        run=_inject,
        writes=False,
        errors=(CorruptFile,),
        commands=(Command(("memory", "show")),),
        help="The project context as the markdown block agents get (inject_context).",
    ),
    Operation(
        name="update_context",
        summary="Add to / set / complete in project memory (committed).",
        params=UpdateContextParams,
        result=ContextUpdate,
        run=_update_context,
        writes=True,
        errors=MEMORY,
        parsers={"add": json_or_text, "set": key_values},
        commands=(
            Command(
                ("memory", "add"),
                arguments=("section", "add"),
                hidden=frozenset({"set", "complete"}),
                required=frozenset({"add"}),
                help="Append a decision, milestone, goal or banned approach (one commit):"
                " ADD is text, or a JSON object.",
            ),
            Command(
                ("memory", "set"),
                arguments=("section", "set"),
                hidden=frozenset({"add", "complete"}),
                required=frozenset({"set"}),
                repeat=frozenset({"set"}),
                help="Merge KEY=VALUE pairs into the stack or project section (an empty"
                " VALUE removes KEY).",
            ),
            Command(
                ("memory", "complete"),
                arguments=("complete",),
                fixed={"section": "milestones"},
                hidden=frozenset({"add", "set"}),
                required=frozenset({"complete"}),
                help="Mark a milestone completed.",
            ),
        ),
    ),
    Operation(
        name="run_qa_harness",
        summary="Score entries, flag contradictions, compare with last run.",
        params=QaParams,
        result=QaRun,
        run=_qa,
        writes=True,
        errors=BAD,
        commands=(
            Command(
                ("qa", "run"),
                arguments=("scenarios",),
                short={"quality_threshold": ("--threshold",)},
                help="Score the scenarios [{id, key, value, sourceAgent, minScore}] of a JSON"
                " file ('-': stdin; a list, or {\"scenarios\": [...]}); exit 1 if any fail.",
            ),
        ),
    ),
    Operation(
        name="qa_history",
        surfaces=CLI_ONLY,
        summary="Past QA harness runs, newest first.",
        params=HistoryParams,
        result=list[QaHistoryEntry],
        run=_qa_history,
        writes=False,
        commands=(Command(("qa", "history"), short={"limit": ("-n",)}),),
    ),
)
