"""Seed 003's swarm tools on hive's cells: ``delegate_task``, ``query_swarm_state``,
``spawn_parallel_agents`` and the synthesis of parallel results.

A delegated task is a cell assigned to the target agent, labelled ``delegated``,
with ``metadata.deadline`` (now + ``timeout`` ms), ``delegated_by``,
``task_payload`` and ``requires_auth``: reviewers see it like any other cell, and
``hive_ready`` / ``hive ready`` and ``query_swarm_state`` report it as expired
once the deadline passes unclosed.

``spawn_parallel_agents`` creates an epic with one subtask per task (one commit)
and records the synthesis strategy on the epic; ``synthesize`` combines the
subtasks' results by that strategy (rules in docs/seeds.md) and records the
combined result on the epic.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from hive.domain import blackboard, permissions
from hive.domain.cells import create_cell, get_cell
from hive.domain.deadlines import deadline_of, is_expired
from hive.domain.epics import create_epic
from hive.domain.outcomes import load_outcomes
from hive.domain.workspace import Workspace, check_actor
from hive.errors import AgentRetired, InvalidInput
from hive.git.repo import Snapshot
from hive.models import Cell
from hive.models.cell import utc_now
from hive.models.epic import SubtaskSpec
from hive.models.seeds import (
    AgentInfo,
    Delegated,
    Spawned,
    SubtaskResult,
    SwarmState,
    Synthesis,
    TaskInfo,
)
from hive.store.cache import CellIndex
from hive.store.cells import format_time
from hive.times import to_milliseconds

PRIORITIES = {"critical": 0, "high": 1, "normal": 2, "low": 3}
PRIORITY_NAMES = {0: "critical", 1: "high", 2: "normal", 3: "low", 4: "low"}
STRATEGIES = ("merge", "vote", "chain", "first-success")
SCOPES = ("all", "agents", "tasks", "blackboard", "permissions")
DELEGATED = "delegated"
DEFAULT_TIMEOUT_MS = 30_000
MAX_TIMEOUT_MS = 30 * 86_400_000
MAX_PAYLOAD_BYTES = 256_000
MAX_PARALLEL = 50
HISTORY_LIMIT = 100
_TITLE_KEYS = ("instruction", "title", "task", "description", "goal", "prompt", "query")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")


def _payload_text(payload: Any) -> str:
    if not isinstance(payload, dict):
        raise InvalidInput("taskPayload must be a JSON object", field="taskPayload")
    try:
        text = json.dumps(payload, ensure_ascii=False, indent=2, sort_keys=True)
    except (TypeError, ValueError, RecursionError) as exc:
        raise InvalidInput(f"taskPayload is not JSON: {exc}", field="taskPayload") from None
    if len(text.encode("utf-8")) > MAX_PAYLOAD_BYTES:
        raise InvalidInput(f"taskPayload is larger than {MAX_PAYLOAD_BYTES} bytes")
    return text


def task_title(payload: dict[str, Any], fallback: str) -> str:
    """A one-line title from the payload's instruction (or title, task, ...)."""
    for key in _TITLE_KEYS:
        value = payload.get(key)
        if isinstance(value, str) and value.strip():
            line = _CONTROL.sub(" ", value).strip()
            return line if len(line) <= 200 else line[:199] + "…"
    return fallback


def _description(intro: str, text: str) -> str:
    return f"{intro}\n\n```json\n{text}\n```\n"


# ------------------------------------------------------------------ delegate


def delegate_task(
    ws: Workspace,
    *,
    target_agent: str,
    task_payload: dict[str, Any],
    priority: str = "normal",
    timeout: float = DEFAULT_TIMEOUT_MS,
    requires_auth: bool = False,
    resource_type: str | None = None,
) -> Delegated:
    """Create the task as a cell assigned to ``target_agent`` with a deadline. An agent
    retired here (``query_swarm_state`` shows it unregistered) is refused; a name never
    registered (an agent type) is taken."""
    target = check_actor(target_agent)
    _refuse_retired(ws, target)
    if priority not in PRIORITIES:
        raise InvalidInput(f"priority must be one of {', '.join(PRIORITIES)}", field="priority")
    if isinstance(timeout, bool) or not 0 < timeout <= MAX_TIMEOUT_MS:
        raise InvalidInput(f"timeout must be 1-{MAX_TIMEOUT_MS} milliseconds", field="timeout")
    text = _payload_text(task_payload)
    delegator = ws.actor
    if requires_auth:
        permissions.require_grant(
            ws, agent=delegator, resource=resource_type, what=f"delegating to {target}"
        )
    deadline = to_milliseconds(utc_now() + timedelta(milliseconds=timeout))
    metadata = {
        "delegated_by": delegator,
        "deadline": format_time(deadline),
        "timeout_ms": timeout,
        "requires_auth": requires_auth,
        "task_payload": task_payload,
    }
    if resource_type:
        metadata["resource_type"] = resource_type
    cell = create_cell(
        ws,
        title=task_title(task_payload, f"Task for {target}"),
        priority=PRIORITIES[priority],
        description=_description(f"Delegated by {delegator} to {target}.", text),
        assignee=target,
        labels=[DELEGATED],
        metadata=metadata,
    )
    return Delegated(
        task_id=cell.id,
        target_agent=target,
        priority=priority,
        deadline=format_time(deadline),
        requires_auth=requires_auth,
    )


def _retired_here(ws: Workspace) -> dict[str, dict[str, Any]]:
    """name -> the latest retirement of each identity retired in this clone and not
    registered again: no agent to hand work to."""
    from hive.store import credentials

    store = credentials.load(ws.git.paths.hive_state_dir)
    return {
        str(entry.get("name")): entry
        for entry in store["retired"]
        if entry.get("name") not in store["agents"]
    }


def _refuse_retired(ws: Workspace, target: str) -> None:
    """Refuse ``target`` when its identity was retired here (naming by whom and when)."""
    from hive.domain.maillog import how_to_register

    entry = _retired_here(ws).get(target)
    if entry is None:
        return
    when = str(entry.get("retired_at") or "")
    by = str(entry.get("retired_by") or "")
    parts = ([f"by {by}"] if by else []) + ([f"at {when}"] if when else [])
    said = f" ({' '.join(parts)})" if parts else ""
    raise AgentRetired(
        f"agent {target!r} was retired{said}: nobody would take the task. To delegate to"
        f" it, {how_to_register(target)}; or delegate to its agent type or to another agent"
        " (query_swarm_state lists the registered ones)",
        agent=target,
        retired_at=when or None,
    )


# ------------------------------------------------------------------ state


def task_info(cell: Cell, now: Any = None) -> TaskInfo:
    deadline = deadline_of(cell)
    return TaskInfo(
        task_id=cell.id,
        title=cell.title,
        agent_id=cell.assignee,
        delegated_by=cell.metadata.get("delegated_by"),
        status=cell.status,
        priority=PRIORITY_NAMES.get(cell.priority, "normal"),
        deadline=format_time(deadline) if deadline else None,
        expired=is_expired(cell, now),
        requires_auth=bool(cell.metadata.get("requires_auth")),
        epic_id=cell.parent,
        closed_at=format_time(cell.closed_at) if cell.closed_at else None,
    )


def _is_task(cell: Cell) -> bool:
    return (
        cell.type != "epic"
        and not cell.is_deleted
        and (cell.assignee is not None or DELEGATED in cell.labels)
    )


def _involves(cell: Cell, agents: Sequence[str] | None) -> bool:
    return not agents or cell.assignee in agents or cell.metadata.get("delegated_by") in agents


def query_swarm_state(
    ws: Workspace,
    *,
    scope: str = "all",
    agent_filter: Sequence[str] | None = None,
    include_history: bool = False,
    limit: int | None = None,
) -> SwarmState:
    """Agents, open tasks (expired ones flagged), the blackboard (expired entries are
    null) and live permission grants; ``agentFilter`` narrows each to those agents.
    ``limit``: at most that many of each list (the first by priority, name or key);
    ``truncated`` gives the whole count of each list that was cut."""
    if scope not in SCOPES:
        raise InvalidInput(f"scope must be one of {', '.join(SCOPES)}", field="scope")
    agents = list(agent_filter or [])
    wants = {scope} if scope != "all" else set(SCOPES)
    now = utc_now()
    index = ws.cells()
    tasks = [c for c in index.cells.values() if _is_task(c) and _involves(c, agents)]
    tasks.sort(key=lambda c: (c.priority, c.created_at, c.id))
    open_tasks = [task_info(c, now) for c in tasks if not c.is_closed]
    state = SwarmState(timestamp=format_time(now))
    if "tasks" in wants:
        state.tasks = open_tasks
        state.expired_tasks = [t.task_id for t in open_tasks if t.expired]
    if "agents" in wants:
        state.agents = _agents(ws, tasks, agents)
    if "blackboard" in wants:
        state.blackboard = blackboard.snapshot(ws, agents=agents or None)
    if "permissions" in wants:
        grants = permissions.live_grants(ws)
        state.permissions = [g for g in grants if not agents or g.agent in agents]
    if include_history:
        state.history = _history(ws, tasks, agents, now)
    return _cut(state, limit)


def _cut(state: SwarmState, limit: int | None) -> SwarmState:
    """``state`` with each list at most ``limit`` long (``truncated``: the whole counts)."""
    if limit is None:
        return state
    totals: dict[str, int] = {}
    for name in ("agents", "tasks", "expired_tasks", "permissions"):
        items = getattr(state, name)
        if items is not None and len(items) > limit:
            totals[name] = len(items)
            setattr(state, name, items[:limit])
    board = state.blackboard
    if board is not None and len(board) > limit:
        totals["blackboard"] = len(board)
        for key in list(board)[limit:]:
            del board[key]
    if totals:
        state.truncated = {
            SwarmState.model_fields[name].alias or name: n for name, n in totals.items()
        }
    return state


def _agents(ws: Workspace, tasks: list[Cell], wanted: list[str]) -> list[AgentInfo]:
    from hive.domain.mail import list_agents

    retired = _retired_here(ws)
    registered = {a.name: a for a in list_agents(ws) if a.name not in retired}
    names = set(registered) | {c.assignee for c in tasks if c.assignee and not c.is_closed}
    found = []
    for name in sorted(n for n in names if not wanted or n in wanted):
        mine = [c for c in tasks if c.assignee == name and not c.is_closed]
        busy = any(c.status == "in_progress" for c in mine)
        agent = registered.get(name)
        found.append(
            AgentInfo(
                agent_id=name,
                status="busy" if busy else "available",
                registered=agent is not None,
                task_description=agent.task_description if agent else None,
                tasks=[c.id for c in mine],
            )
        )
    return found


def _history(ws: Workspace, tasks: list[Cell], agents: list[str], now: Any) -> dict[str, Any]:
    closed = sorted((c for c in tasks if c.is_closed), key=lambda c: c.closed_at or now)
    decisions = [d for d in permissions.list_decisions(ws) if not agents or d.agent in agents]
    return {
        "tasks": [
            task_info(c, now).model_dump(mode="json", by_alias=True)
            for c in closed[-HISTORY_LIMIT:]
        ],
        "permissions": [
            d.model_dump(mode="json", by_alias=True) for d in decisions[-HISTORY_LIMIT:]
        ],
    }


# ------------------------------------------------------------------ spawn


def spawn_parallel_agents(
    ws: Workspace, *, tasks: Sequence[dict[str, Any]], synthesis_strategy: str = "merge"
) -> Spawned:
    """An epic with one subtask per task (``chain``: each waits for the previous),
    the synthesis strategy recorded on the epic; one commit."""
    if synthesis_strategy not in STRATEGIES:
        raise InvalidInput(
            f"synthesisStrategy must be one of {', '.join(STRATEGIES)}", field="synthesisStrategy"
        )
    if not 1 <= len(tasks) <= MAX_PARALLEL:
        raise InvalidInput(f"give 1-{MAX_PARALLEL} tasks", field="tasks")
    specs = []
    for number, task in enumerate(tasks):
        agent_type = check_actor(str(task.get("agentType", "")))
        payload = task.get("taskPayload")
        text = _payload_text(payload)
        assert isinstance(payload, dict)
        specs.append(
            SubtaskSpec(
                title=task_title(payload, f"{agent_type} task {number + 1}"),
                # no article to guess: "a analyst", "an user" (agentType is any name)
                description=_description(f"For an agent of type {agent_type}.", text),
                dependencies=[number - 1] if synthesis_strategy == "chain" and number else [],
                labels=[f"agent-type:{agent_type}"],
                metadata={"agent_type": agent_type, "task_payload": payload},
            )
        )
    names = ", ".join(spec.title for spec in specs)
    title = f"Parallel ({synthesis_strategy}): {names}"
    cells = create_epic(
        ws,
        title=title if len(title) <= 200 else title[:199] + "…",
        subtasks=specs,
        description=f"Spawned by {ws.actor}; results are combined by {synthesis_strategy}.",
        metadata={"synthesis_strategy": synthesis_strategy, "spawned_by": ws.actor},
    )
    epic, *children = cells
    return Spawned(
        epic_id=epic.id,
        synthesis_strategy=synthesis_strategy,
        tasks=[task_info(c) for c in children],
    )


# ------------------------------------------------------------------ synthesis


def subtask_results(ws: Workspace, index: CellIndex, epic: Cell) -> list[SubtaskResult]:
    """Each subtask's state (succeeded, failed, pending) and result, in creation order.

    A subtask's result is the summary of its latest outcome record (``swarm_complete``),
    parsed as JSON when it is JSON, else its close reason. A closed subtask whose
    outcome says it failed, or a blocked one with a failure outcome, failed."""
    children = sorted(
        (index.cells[c] for c in index.children_of(epic.id)), key=lambda c: (c.created_at, c.id)
    )
    latest = {o.cell_id: o for o in load_outcomes(ws)}
    found = []
    for child in children:
        if child.is_deleted:
            continue
        outcome = latest.get(child.id)
        failed = outcome is not None and not outcome.success
        if child.is_closed and not failed:
            state = "succeeded"
        elif failed and (child.is_closed or child.status == "blocked"):
            state = "failed"
        else:
            state = "pending"
        text = outcome.summary if outcome and outcome.summary else (child.close_reason or "")
        found.append(
            SubtaskResult(
                task_id=child.id,
                agent_type=child.metadata.get("agent_type"),
                state=state,
                result=_parsed(text) if state != "pending" else None,
            )
        )
    return found


def _parsed(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def combine(strategy: str, results: list[SubtaskResult]) -> tuple[bool, Any, dict[str, Any]]:
    """(complete, combined result, details) by the documented rules."""
    done = [r for r in results if r.state == "succeeded"]
    settled = all(r.state != "pending" for r in results)
    if strategy == "first-success":
        return (
            bool(done),
            done[0].result if done else None,
            {"winner": done[0].task_id if done else None},
        )
    if strategy == "chain":
        broken = next((r.task_id for r in results if r.state == "failed"), None)
        final = results[-1] if results else None
        ok = final is not None and final.state == "succeeded"
        return (
            ok or broken is not None,
            final.result if ok and final else None,
            {"broken_at": broken},
        )
    if strategy == "vote":
        tally: dict[str, list[str]] = {}
        for r in done:
            tally.setdefault(_canonical(r.result), []).append(r.task_id)
        if not tally:
            return settled, None, {"votes": {}}
        winner = max(tally.values(), key=len)  # ties: the earliest subtask's answer
        value = next(r.result for r in done if r.task_id == winner[0])
        return (
            settled,
            value,
            {
                "votes": {ids[0]: len(ids) for ids in tally.values()},
                "majority": len(winner) * 2 > len(done),
            },
        )
    merged, conflicts = _merge([r.result for r in done])
    return settled, merged, {"conflicts": conflicts}


def _merge(values: list[Any]) -> tuple[Any, list[str]]:
    """Objects merge key by key (a later subtask wins, the key is listed as a
    conflict); anything else gives the list of results."""
    if not values or not all(isinstance(v, dict) for v in values):
        return values, []
    merged: dict[str, Any] = {}
    conflicts: list[str] = []
    for value in values:
        for key, item in value.items():
            if key in merged and _canonical(merged[key]) != _canonical(item):
                conflicts.append(key)
            merged[key] = item
    return merged, sorted(set(conflicts))


def synthesize(
    ws: Workspace, *, epic_id: str, strategy: str | None = None, record: bool = True
) -> Synthesis:
    """Combine an epic's subtask results; when complete (and ``record``), store the
    combined result on the epic (``metadata.synthesis``, one commit)."""
    index = ws.cells()
    epic = get_cell(index, epic_id)
    chosen = strategy or epic.metadata.get("synthesis_strategy") or "merge"
    if chosen not in STRATEGIES:
        raise InvalidInput(f"strategy must be one of {', '.join(STRATEGIES)}", field="strategy")
    results = subtask_results(ws, index, epic)
    if not results:
        raise InvalidInput(f"{epic.id} has no subtasks to synthesize")
    complete, value, details = combine(chosen, results)
    found = Synthesis(
        epic_id=epic.id,
        strategy=chosen,
        complete=complete,
        result=value,
        details=details,
        subtasks=results,
    )
    if complete and record:
        found.recorded = _record(ws, epic.id, found)
    return found


def _record(ws: Workspace, epic_id: str, found: Synthesis) -> bool:
    entry = {
        "strategy": found.strategy,
        "result": found.result,
        "details": found.details,
        "sources": [r.task_id for r in found.subtasks if r.state == "succeeded"],
    }

    def plan(snap: Snapshot, index: CellIndex) -> tuple[list[Cell], str, str, Any]:
        epic = index.cells[epic_id]
        if (
            _canonical(epic.metadata.get("synthesis", {}).get("result")) == _canonical(found.result)
            and epic.metadata.get("synthesis", {}).get("strategy") == found.strategy
        ):
            return [], "", "", False
        stamped = {**entry, "at": format_time(utc_now()), "by": ws.actor}
        updated = epic.model_copy(
            update={"metadata": {**epic.metadata, "synthesis": stamped}, "updated_at": utc_now()}
        )
        return [updated], epic.id, epic.title, True

    recorded: bool = ws.write(plan, event="synthesize").result
    return recorded
