"""Seed 003's tools (Network-AI): delegation, swarm state, parallel agents and their
synthesis, permissions, the blackboard, project memory and the QA harness.

Parameter names are the seed's (camelCase). Registered by ``hive.tools.catalog``."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from hive.ops.spec import NoParams as NoArgs
from hive.tools.catalog import Args
from hive.tools.registry import CallContext, Tool

Name = Annotated[str, Field(min_length=1, max_length=64)]
Resource = Literal["DATABASE", "PAYMENTS", "EMAIL", "FILE_EXPORT"]


class DelegateArgs(Args):
    targetAgent: Name
    taskPayload: dict[str, Any]
    priority: Literal["low", "normal", "high", "critical"] = "normal"
    timeout: float = Field(default=30_000, gt=0, le=30 * 86_400_000, description="ms")
    requiresAuth: bool = False
    resourceType: Resource | None = None


def _delegate(ctx: CallContext, a: DelegateArgs) -> Any:
    from hive.domain.delegation import delegate_task

    return delegate_task(
        ctx.workspace(),
        target_agent=a.targetAgent,
        task_payload=a.taskPayload,
        priority=a.priority,
        timeout=a.timeout,
        requires_auth=a.requiresAuth,
        resource_type=a.resourceType,
    )


class StateArgs(Args):
    scope: Literal["all", "agents", "tasks", "blackboard", "permissions"] = "all"
    agentFilter: list[Name] | None = Field(default=None, max_length=200)
    includeHistory: bool = False


def _state(ctx: CallContext, a: StateArgs) -> Any:
    from hive.domain.delegation import query_swarm_state

    return query_swarm_state(
        ctx.workspace(),
        scope=a.scope,
        agent_filter=a.agentFilter,
        include_history=a.includeHistory,
    )


class ParallelTask(Args):
    agentType: Name
    taskPayload: dict[str, Any]


Strategy = Literal["merge", "vote", "chain", "first-success"]


class SpawnArgs(Args):
    tasks: list[ParallelTask] = Field(min_length=1, max_length=50)
    synthesisStrategy: Strategy = "merge"


def _spawn(ctx: CallContext, a: SpawnArgs) -> Any:
    from hive.domain.delegation import spawn_parallel_agents

    return spawn_parallel_agents(
        ctx.workspace(),
        tasks=[t.model_dump() for t in a.tasks],
        synthesis_strategy=a.synthesisStrategy,
    )


class SynthesizeArgs(Args):
    epic_id: str = Field(min_length=1, max_length=200)
    strategy: Strategy | None = None


def _synthesize(ctx: CallContext, a: SynthesizeArgs) -> Any:
    from hive.domain.delegation import synthesize

    return synthesize(ctx.workspace(), epic_id=a.epic_id, strategy=a.strategy)


class PermissionArgs(Args):
    resourceType: Resource
    justification: str = Field(min_length=1, max_length=2000)
    scope: str | None = Field(default=None, max_length=200)


def _permission(ctx: CallContext, a: PermissionArgs) -> Any:
    from hive.domain.permissions import request_permission

    return request_permission(
        ctx.workspace(),
        resource_type=a.resourceType,
        justification=a.justification,
        scope=a.scope,
    )


class BlackboardArgs(Args):
    key: str = Field(min_length=1, max_length=256)
    value: Any
    ttl: float | None = Field(default=None, gt=0, description="seconds")


def _update_blackboard(ctx: CallContext, a: BlackboardArgs) -> Any:
    from hive.domain.blackboard import update_blackboard

    return update_blackboard(ctx.workspace(), key=a.key, value=a.value, ttl=a.ttl)


class KeyArgs(Args):
    key: str = Field(min_length=1, max_length=256)


def _read_blackboard(ctx: CallContext, a: KeyArgs) -> Any:
    from hive.domain.blackboard import read_blackboard

    return read_blackboard(ctx.workspace(), key=a.key)


def _inject(ctx: CallContext, a: NoArgs) -> Any:
    from hive.domain.memory import inject_context

    return inject_context(ctx.workspace())


class UpdateContextArgs(Args):
    section: Literal["decisions", "milestones", "stack", "goals", "banned", "project"]
    add: Any = None
    set_: dict[str, Any] | None = Field(default=None, alias="set")
    complete: str | None = Field(default=None, max_length=500)


def _update_context(ctx: CallContext, a: UpdateContextArgs) -> Any:
    from hive.domain.memory import update_context

    return update_context(
        ctx.workspace(), section=a.section, add=a.add, set=a.set_, complete=a.complete
    )


class Scenario(Args):
    id: str = Field(min_length=1, max_length=200)
    key: str = Field(min_length=1, max_length=256)
    value: Any
    sourceAgent: Name
    minScore: float | None = Field(default=None, ge=0, le=1)


class QaArgs(Args):
    scenarios: list[Scenario] = Field(min_length=1, max_length=1000)
    qualityThreshold: float = Field(default=0.7, ge=0, le=1)


def _qa(ctx: CallContext, a: QaArgs) -> Any:
    from hive.domain.qa import run_qa_harness

    return run_qa_harness(
        ctx.workspace(),
        scenarios=[s.model_dump() for s in a.scenarios],
        quality_threshold=a.qualityThreshold,
    )


TOOLS = [
    Tool(
        "delegate_task",
        "Delegate a task: a cell for targetAgent with a deadline.",
        DelegateArgs,
        _delegate,
    ),
    Tool(
        "query_swarm_state",
        "Agents, tasks (expired flagged), blackboard, grants.",
        StateArgs,
        _state,
    ),
    Tool(
        "spawn_parallel_agents",
        "An epic with one subtask per task; synthesis recorded.",
        SpawnArgs,
        _spawn,
    ),
    Tool(
        "swarm_synthesize",
        "Combine an epic's subtask results by its strategy.",
        SynthesizeArgs,
        _synthesize,
    ),
    Tool(
        "request_permission",
        "Ask for a protected resource; decided by policy, recorded.",
        PermissionArgs,
        _permission,
    ),
    Tool(
        "update_blackboard",
        "Write a blackboard entry (ttl seconds).",
        BlackboardArgs,
        _update_blackboard,
    ),
    Tool("read_blackboard", "Read a blackboard entry (expired: null).", KeyArgs, _read_blackboard),
    Tool("inject_context", "Project memory as a markdown block.", NoArgs, _inject),
    Tool(
        "update_context",
        "Add to / set / complete in project memory (committed).",
        UpdateContextArgs,
        _update_context,
    ),
    Tool(
        "run_qa_harness", "Score entries, flag contradictions, compare with last run.", QaArgs, _qa
    ),
]
