"""Seed 003's tools (Network-AI) through the registry: blackboard with TTL, permission
policy and grants, delegation with deadlines, swarm state, parallel agents and
synthesis, project memory, and the QA harness."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from hive.domain.workspace import Workspace
from tests.conftest import HeldClock, assert_clean, credential, git
from tests.inprocess import run_hive
from tests.seedkit import call, cli, configure, error, hive, result, run_workers

POLICY = {
    "default": "deny",
    "ttl_seconds": 3600,
    "rules": [
        {"agent": "analyst", "resource": "DATABASE", "scopes": ["read:*"], "ttl_seconds": 2},
        {"agent": "*", "resource": "PAYMENTS", "decision": "deny", "reason": "never"},
        {"agent": "orch", "resource": "*"},
    ],
    "protected_tools": {"update_blackboard": "EMAIL"},
}


# ------------------------------------------------------------------ blackboard


def test_blackboard_entries_expire_to_null_everywhere(
    ws: Workspace, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = HeldClock(monkeypatch, ("hive.domain.blackboard",))  # the TTL is not waited
    first = result(
        repo, "A", "update_blackboard", {"key": "task:001:a", "value": {"n": 1}, "ttl": 1}
    )
    assert first["success"] is True and first["previousValue"] is None
    assert first["sourceAgent"] == "A" and first["expiresAt"].endswith("Z")
    result(repo, "B", "update_blackboard", {"key": "task:001:b", "value": [1, 2]})
    read = result(repo, "B", "read_blackboard", {"key": "task:001:a"})
    assert read["value"] == {"n": 1} and read["exists"] is True
    board = result(repo, "B", "query_swarm_state", {"scope": "blackboard"})["blackboard"]
    assert board["task:001:a"]["value"] == {"n": 1} and board["task:001:a"]["sourceAgent"] == "A"
    clock.advance(1.1)
    assert result(repo, "B", "read_blackboard", {"key": "task:001:a"})["value"] is None
    board = result(repo, "B", "query_swarm_state", {"scope": "blackboard"})["blackboard"]
    assert board["task:001:a"] is None and board["task:001:b"]["value"] == [1, 2]
    code, out = cli(repo, "blackboard", "get", "task:001:a")
    assert code == 0 and out.startswith("null") and "(expired)" in out
    code, out = cli(repo, "blackboard", "list")
    assert "task:001:a  (expired)" in out and "task:001:b" in out
    again = result(repo, "C", "update_blackboard", {"key": "task:001:a", "value": 2})
    assert again["previousValue"] is None  # the expired value is not "previous"
    only_b = result(repo, "C", "query_swarm_state", {"scope": "blackboard", "agentFilter": ["B"]})
    assert list(only_b["blackboard"]) == ["task:001:b"]


def test_blackboard_hostile_input(ws: Workspace, repo: Path) -> None:
    for args in (
        {"key": "k"},
        {"value": 1},
        {"key": "k", "value": 1, "ttl": -1},
        {"key": "k", "value": 1, "ttl": "10"},
        {"key": "k", "value": 1, "ttl": 10**12},
        {"key": "", "value": 1},
        {"key": "k", "value": "x" * 1_100_000},
        {"key": "k", "value": 1, "extra": 1},
    ):
        assert error(repo, "A", "update_blackboard", args)["code"] in (
            "invalid_arguments",
            "invalid_input",
        ), args
    assert result(repo, "A", "read_blackboard", {"key": "k"})["exists"] is False


def test_blackboard_writers_in_parallel(ws: Workspace, repo: Path) -> None:
    run_workers(
        repo,
        """
        ctx = CallContext(root=repo, agent=f"W{worker}")
        for n in range(20):
            out = call_tool(ctx, "update_blackboard", {"key": f"w{worker}:{n}", "value": n})
            assert "result" in out, out
            out = call_tool(ctx, "update_blackboard", {"key": "shared", "value": worker})
            assert "result" in out, out
        print("0")
        """,
        count=8,
    )
    board = result(repo, "A", "query_swarm_state", {"scope": "blackboard"})["blackboard"]
    assert len(board) == 8 * 20 + 1 and board["shared"]["value"] in range(8)


# ------------------------------------------------------------------ permissions


def test_permissions_are_decided_by_the_policy_and_recorded(
    ws: Workspace, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    configure(repo, permission_policy=POLICY)
    clock = HeldClock(monkeypatch)  # the grant's two seconds are not waited
    denied = result(
        repo,
        "analyst",
        "request_permission",
        {"resourceType": "PAYMENTS", "justification": "pay the invoice 42 now"},
    )
    assert denied["granted"] is False and denied["reason"] == "never"
    short = result(
        repo,
        "analyst",
        "request_permission",
        {"resourceType": "DATABASE", "justification": "need", "scope": "read:x"},
    )
    assert short["granted"] is False and "too short" in short["reason"]
    out_of_scope = result(
        repo,
        "analyst",
        "request_permission",
        {"resourceType": "DATABASE", "justification": "update revenue rows", "scope": "write:x"},
    )
    assert out_of_scope["granted"] is False and out_of_scope["reason"] == "denied by default"
    granted = result(
        repo,
        "analyst",
        "request_permission",
        {"resourceType": "DATABASE", "justification": "read invoices for Q3", "scope": "read:inv"},
    )
    assert granted["granted"] is True and granted["grantToken"] == granted["decisionId"]
    # Every decision is one committed file: who, what, why, when.
    files = sorted((repo / ".hive" / "permissions").glob("*.yaml"))
    assert len(files) == 4
    text = (repo / ".hive" / "permissions" / f"{granted['decisionId']}.yaml").read_text()
    assert "agent: analyst" in text and "read invoices for Q3" in text and "decided_at" in text
    log = git(repo, "log", "--format=%s", "-5")
    assert "hive: grant DATABASE read:inv to analyst" in log
    assert "hive: deny PAYMENTS to analyst" in log
    assert_clean(repo)
    state = result(repo, "x", "query_swarm_state", {"scope": "permissions"})
    assert [g["id"] for g in state["permissions"]] == [granted["decisionId"]]
    clock.advance(2.1)  # the rule's ttl_seconds: 2
    assert result(repo, "x", "query_swarm_state", {"scope": "permissions"})["permissions"] == []
    history = result(
        repo, "x", "query_swarm_state", {"scope": "permissions", "includeHistory": True}
    )["history"]
    assert len(history["permissions"]) == 4
    _code, out = cli(repo, "permissions", "list")
    assert out.count("analyst") == 4 and "denied" in out and "granted" in out


def test_requires_auth_without_a_live_grant_is_refused(ws: Workspace, repo: Path) -> None:
    configure(repo, permission_policy=POLICY)
    payload = {"instruction": "export the report"}
    refused = error(
        repo,
        "orch",
        "delegate_task",
        {"targetAgent": "w", "taskPayload": payload, "requiresAuth": True},
    )
    assert refused["code"] == "auth_required" and "request_permission" in refused["error"]
    tool = error(repo, "orch", "update_blackboard", {"key": "k", "value": 1})
    assert tool["code"] == "auth_required"
    assert result(
        repo,
        "orch",
        "request_permission",
        {"resourceType": "EMAIL", "justification": "mail the weekly report"},
    )["granted"]
    assert result(repo, "orch", "update_blackboard", {"key": "k", "value": 1})["success"]
    task = result(
        repo,
        "orch",
        "delegate_task",
        {"targetAgent": "w", "taskPayload": payload, "requiresAuth": True},
    )
    assert task["requiresAuth"] is True
    # Another agent's grant does not count.
    assert (
        error(repo, "w", "update_blackboard", {"key": "k", "value": 2})["code"] == "auth_required"
    )
    wrong = error(
        repo,
        "orch",
        "delegate_task",
        {
            "targetAgent": "w",
            "taskPayload": payload,
            "requiresAuth": True,
            "resourceType": "DATABASE",
        },
    )
    assert "DATABASE" in wrong["error"]


def test_permission_hostile_input_and_bad_policy(ws: Workspace, repo: Path) -> None:
    for args in (
        {"resourceType": "ROOT", "justification": "please let me in"},
        {"resourceType": "DATABASE"},
        {"resourceType": "DATABASE", "justification": ""},
        {"resourceType": "DATABASE", "justification": "x" * 5000},
        {"resourceType": "DATABASE", "justification": "fine reason", "scope": 5},
    ):
        assert error(repo, "A", "request_permission", args)["code"] == "invalid_arguments"
    configure(repo, permission_policy={"default": "maybe"})
    bad = error(
        repo,
        "A",
        "request_permission",
        {"resourceType": "DATABASE", "justification": "read the invoices"},
    )
    assert bad["code"] == "invalid_input" and "permission_policy.default" in bad["error"]
    _code, out = cli(repo, "doctor", "--json")
    assert "permission_policy.default" in out


def test_request_permission_checks_what_it_is_given_itself(ws: Workspace, repo: Path) -> None:
    """The domain's own checks, for a caller without the tool's schema (a program):
    the resource type, the justification's length, a scope a person can read; nothing
    is committed for a refused request."""
    from hive.domain.permissions import MAX_JUSTIFICATION, request_permission
    from hive.errors import InvalidInput

    head = git(repo, "rev-parse", "HEAD")
    too_long = f"justification must be 1-{MAX_JUSTIFICATION} characters"
    for given, field, message in (
        (
            {"resource_type": "ROOT", "justification": "let me in"},
            "resourceType",
            "resourceType must be one of DATABASE, PAYMENTS, EMAIL, FILE_EXPORT, got 'ROOT'",
        ),
        ({"resource_type": "EMAIL", "justification": "  "}, "justification", too_long),
        (
            {"resource_type": "EMAIL", "justification": "x" * (MAX_JUSTIFICATION + 1)},
            "justification",
            too_long,
        ),
        ({"resource_type": "EMAIL", "justification": "ok", "scope": "a\nb"}, None, "scope"),
    ):
        with pytest.raises(InvalidInput) as refused:
            request_permission(ws, **given)
        assert message in refused.value.message, given
        assert refused.value.details.get("field") == field, given
    assert git(repo, "rev-parse", "HEAD") == head


def test_terminal_escapes_are_refused_in_what_people_read(ws: Workspace, repo: Path) -> None:
    """A justification, a scope or a project-memory entry with control characters was
    committed as given and printed raw by hive permissions list / hive memory show
    (an escape sequence rewrote the reader's terminal; the scope went into the
    commit subject)."""
    configure(repo, permission_policy={"default": "grant"})
    esc = "\x1b[2J"
    for args in (
        {"resourceType": "EMAIL", "justification": f"mail the report {esc}"},
        {"resourceType": "EMAIL", "justification": "mail the weekly report", "scope": f"a{esc}"},
        {"resourceType": "EMAIL", "justification": "mail the weekly report", "scope": "a\nb"},
    ):
        refused = error(repo, "A", "request_permission", args)
        assert refused["code"] == "invalid_input", args
        assert "U+001B" in refused["error"] or "U+000A" in refused["error"], args
    for args in (
        {"section": "goals", "add": f"ship {esc}"},
        {"section": "decisions", "add": {"decision": "d", "why": [f"x{esc}"]}},
        {"section": "stack", "set": {f"db{esc}": "sqlite"}},
        {"section": "milestones", "complete": f"M1{esc}"},
    ):
        refused = error(repo, "A", "update_context", args)
        assert refused["code"] == "invalid_input" and "U+001B" in refused["error"], args
    assert not (repo / ".hive" / "context.yaml").exists()
    # text over several lines stays allowed
    granted = result(
        repo,
        "A",
        "request_permission",
        {"resourceType": "EMAIL", "justification": "mail the report\n\tto the team"},
    )
    assert granted["granted"] is True
    assert result(repo, "A", "update_context", {"section": "goals", "add": "a\nb"})["changed"]


# ------------------------------------------------------------------ delegation


def test_delegate_task_becomes_an_assigned_cell_with_a_deadline(ws: Workspace, repo: Path) -> None:
    task = result(
        repo,
        "orch",
        "delegate_task",
        {
            "targetAgent": "data_analyst",
            "priority": "critical",
            "timeout": 60_000,
            "taskPayload": {"instruction": "Analyze Q3 revenue", "context": {"q": 3}},
        },
    )
    assert task["status"] == "delegated" and task["targetAgent"] == "data_analyst"
    cell = result(repo, "x", "hive_query", {"id": task["taskId"]})
    assert cell["assignee"] == "data_analyst" and cell["priority"] == 0
    assert cell["title"] == "Analyze Q3 revenue" and "delegated" in cell["labels"]
    assert cell["metadata"]["delegated_by"] == "orch"
    assert cell["metadata"]["task_payload"]["context"] == {"q": 3}
    assert cell["metadata"]["deadline"] == task["deadline"]
    ready = result(repo, "data_analyst", "hive_ready", {"verbose": True})
    assert [c["id"] for c in ready] == [task["taskId"]] and "expired" not in ready[0]["metadata"]
    for args in (
        {"targetAgent": "x", "taskPayload": "do it"},
        {"targetAgent": "x"},
        {"targetAgent": "x", "taskPayload": {}, "priority": "urgent"},
        {"targetAgent": "x", "taskPayload": {}, "timeout": 0},
        {"targetAgent": "x", "taskPayload": {}, "timeout": "30000"},
        {"targetAgent": "bad\nname", "taskPayload": {}},
        {"targetAgent": "x", "taskPayload": {"blob": "y" * 300_000}},
    ):
        assert error(repo, "orch", "delegate_task", args)["code"] in (
            "invalid_arguments",
            "invalid_input",
        ), args


def test_fractional_lifetimes_give_times_in_milliseconds(ws: Workspace, repo: Path) -> None:
    """The seed's timeout is a number of milliseconds, fractions allowed: the deadline is
    still written as every hive time is (UTC, milliseconds, Z), not with microseconds."""
    args = {"targetAgent": "data_analyst", "taskPayload": {"instruction": "x"}, "timeout": 1500.5}
    task = result(repo, "orch", "delegate_task", args)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", task["deadline"]), task
    cell = result(repo, "x", "hive_query", {"id": task["taskId"]})
    assert cell["metadata"]["deadline"] == task["deadline"]
    # a grant's lifetime in fractions of a second (the policy's ttl_seconds) likewise
    configure(repo, permission_policy={"default": "grant", "ttl_seconds": 60.0005})
    asked = {"resourceType": "DATABASE", "justification": "read invoices for Q3"}
    granted = result(repo, "orch", "request_permission", asked)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", granted["expiresAt"])


def test_an_expired_delegation_is_reported(
    ws: Workspace, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = HeldClock(monkeypatch)  # the 1.5 s deadline is not waited
    late = result(
        repo,
        "orch",
        "delegate_task",
        {"targetAgent": "w1", "taskPayload": {"instruction": "quick"}, "timeout": 1500},
    )
    fine = result(
        repo,
        "orch",
        "delegate_task",
        {"targetAgent": "w2", "taskPayload": {"instruction": "slow"}, "timeout": 600_000},
    )
    entry = ["-C", str(repo)]  # the console script (answers first)
    before = json.loads(_ok(run_hive([*entry, "ready", "--json"])))
    assert not any(c["metadata"].get("expired") for c in before)
    clock.advance(1.6)
    after = json.loads(_ok(run_hive([*entry, "ready", "--json"])))
    flags = {c["id"]: c["metadata"].get("expired", False) for c in after}
    assert flags == {late["taskId"]: True, fine["taskId"]: False}
    verbose = result(repo, "x", "hive_ready", {"verbose": True})
    via_tool = {c["id"]: c["metadata"].get("expired") for c in verbose}
    assert via_tool[late["taskId"]] is True
    state = result(repo, "x", "query_swarm_state", {"scope": "tasks", "verbose": True})
    assert state["expiredTasks"] == [late["taskId"]]
    by_id = {t["taskId"]: t for t in state["tasks"]}
    assert by_id[late["taskId"]]["expired"] and not by_id[fine["taskId"]]["expired"]
    _code, out = cli(repo, "ready")
    assert "(expired) quick" in out
    result(repo, "w1", "hive_close", {"id": late["taskId"], "reason": "done late"})
    assert result(repo, "x", "query_swarm_state", {"scope": "tasks"})["expiredTasks"] == []


def test_the_compact_ready_list_flags_an_expired_delegation(ws: Workspace, repo: Path) -> None:
    """An agent's default ready list (summaries) did not say that a delegated task's
    deadline had passed: only the verbose records and the CLI's table did."""
    late = result(
        repo, "orch", "delegate_task", {"targetAgent": "w1", "taskPayload": {"a": 1}, "timeout": 1}
    )
    fine = result(repo, "orch", "delegate_task", {"targetAgent": "w2", "taskPayload": {"b": 2}})
    plain = result(repo, "x", "hive_create", {"title": "no deadline"})
    time.sleep(0.05)
    rows = {row["id"]: row for row in result(repo, "x", "hive_ready", {})}
    assert rows[late["taskId"]]["expired"] is True
    assert "expired" not in rows[fine["taskId"]] and "expired" not in rows[plain["id"]]
    assert set(rows[plain["id"]]) == {"id", "title", "status", "priority", "type", "assignee"}


def test_a_retired_agent_is_not_offered_as_available(ws: Workspace, repo: Path) -> None:
    """query_swarm_state listed an identity retired here as an available agent (a
    coordinator delegated to nobody); with open work it stays, as unregistered. Work
    delegated to it is refused, naming what to do, until it is registered again."""
    from hive.domain.identity import register_agent, retire_agent

    for name in ("gone", "kept"):
        register_agent(ws, name=name)
    retire_agent(ws.for_actor("gone"), name="gone")
    names = {a["agentId"] for a in result(repo, "x", "query_swarm_state", {})["agents"]}
    assert "kept" in names and "gone" not in names
    # work handed to it was taken while it showed unregistered: nobody would do it
    head = git(repo, "rev-parse", "HEAD")
    refused = error(repo, "orch", "delegate_task", {"targetAgent": "gone", "taskPayload": {"a": 1}})
    assert refused["code"] == "agent_retired" and refused["agent"] == "gone", refused
    assert refused["retired_at"] and "was retired (by gone at " in refused["error"]
    assert "hive agent register gone" in refused["error"] and "agent type" in refused["error"]
    assert git(repo, "rev-parse", "HEAD") == head  # nothing written
    code, _ = cli(repo, "delegate", "gone", '{"instruction": "x"}', actor="orch")
    assert code == 4  # a conflict, as docs/architecture.md's table says
    # a type never registered is still taken (seed 003: data_analyst, risk_assessor, ...)
    result(repo, "orch", "delegate_task", {"targetAgent": "risk_assessor", "taskPayload": {}})
    # with open work (assigned by hand) it stays listed, as unregistered
    result(repo, "orch", "hive_create", {"title": "left to gone", "assignee": "gone"})
    state = result(repo, "x", "query_swarm_state", {"scope": "agents", "verbose": True})
    gone = next(a for a in state["agents"] if a["agentId"] == "gone")
    assert gone["registered"] is False and gone["tasks"]
    register_agent(ws, name="gone")  # registered afresh: an agent again, work is taken
    result(repo, "orch", "delegate_task", {"targetAgent": "gone", "taskPayload": {"a": 1}})
    state = result(repo, "x", "query_swarm_state", {"scope": "agents", "verbose": True})
    assert next(a for a in state["agents"] if a["agentId"] == "gone")["registered"] is True


def test_query_swarm_state_scopes_and_filters(ws: Workspace, repo: Path) -> None:
    result(repo, "w1", "swarmmail_init", {"agent_name": "w1", "task_description": "analysis"})
    one = result(repo, "orch", "delegate_task", {"targetAgent": "w1", "taskPayload": {"a": 1}})
    result(repo, "orch", "delegate_task", {"targetAgent": "w2", "taskPayload": {"b": 2}})
    result(repo, "w1", "hive_start", {"id": one["taskId"]})
    full = result(repo, "x", "query_swarm_state", {"verbose": True})
    assert {"timestamp", "agents", "tasks", "blackboard", "permissions"} <= set(full)
    agents = {a["agentId"]: a for a in full["agents"]}
    assert agents["w1"]["status"] == "busy" and agents["w1"]["registered"] is True
    assert agents["w1"]["taskDescription"] == "analysis"
    assert agents["w2"]["status"] == "available" and agents["w2"]["registered"] is False
    only = result(repo, "x", "query_swarm_state", {"scope": "tasks", "agentFilter": ["w2"]})
    assert [t["agentId"] for t in only["tasks"]] == ["w2"] and only.get("agents") is None
    result(repo, "w1", "hive_close", {"id": one["taskId"], "reason": "ok"})
    history = result(repo, "x", "query_swarm_state", {"scope": "tasks", "includeHistory": True})
    assert [t["taskId"] for t in history["history"]["tasks"]] == [one["taskId"]]
    assert error(repo, "x", "query_swarm_state", {"scope": "everything"})["code"] == (
        "invalid_arguments"
    )
    assert error(repo, "x", "query_swarm_state", {"agentFilter": "w1"})["code"] == (
        "invalid_arguments"
    )
    _code, out = cli(repo, "swarm", "state", "--scope", "agents")
    assert "agent w1: available" in out


def test_query_swarm_state_is_a_page_of_each_list(ws: Workspace, repo: Path) -> None:
    """At most ``limit`` of each list (default 500: an agent pays for every byte);
    ``truncated`` gives the whole count of each list that was cut; ``limit: null``: all."""
    from hive.domain.blackboard import update_blackboard
    from hive.domain.delegation import delegate_task

    boss = Workspace(str(repo), actor="orch")
    for number in range(5):
        delegate_task(boss, target_agent=f"w{number % 3}", task_payload={"n": number})
    writer = Workspace(str(repo), actor="w0")
    for number in range(501):
        update_blackboard(writer, key=f"k{number:03}", value=number)
    state = result(repo, "x", "query_swarm_state", {})
    assert len(state["blackboard"]) == 500 and state["truncated"] == {"blackboard": 501}
    assert len(state["tasks"]) == 5 and len(state["agents"]) == 3
    small = result(repo, "x", "query_swarm_state", {"limit": 2})
    assert small["truncated"] == {"agents": 3, "tasks": 5, "blackboard": 501}
    assert [a["agentId"] for a in small["agents"]] == ["w0", "w1"]
    assert list(small["blackboard"]) == ["k000", "k001"]
    whole = result(repo, "x", "query_swarm_state", {"limit": None})
    assert len(whole["blackboard"]) == 501 and whole["truncated"] is None
    assert error(repo, "x", "query_swarm_state", {"limit": 0})["code"] == "invalid_arguments"
    code, out = cli(repo, "swarm", "state", "--scope", "tasks", "--limit", "2")
    assert code == 0 and "(tasks: the first 2 of 5; --limit all for every one)" in out
    assert out.count("\ntask ") + out.startswith("task ") == 2, out
    code, out = cli(repo, "swarm", "state", "--scope", "tasks", "--limit", "all")
    assert code == 0 and out.count("\ntask ") + out.startswith("task ") == 5, out
    assert "first" not in out
    code, out = cli(repo, "swarm", "state", "--scope", "permissions")
    assert code == 0 and "nothing in scope permissions" in out


# ------------------------------------------------------------------ parallel agents


def spawn(repo: Path, strategy: str, count: int) -> tuple[str, list[str]]:
    spawned = result(
        repo,
        "orch",
        "spawn_parallel_agents",
        {
            "synthesisStrategy": strategy,
            "tasks": [
                {"agentType": f"type{n}", "taskPayload": {"instruction": f"part {n}"}}
                for n in range(count)
            ],
        },
    )
    assert spawned["synthesisStrategy"] == strategy
    return spawned["epicId"], [t["taskId"] for t in spawned["tasks"]]


def finish(repo: Path, cell_id: str, value: Any, success: bool = True) -> None:
    text = value if isinstance(value, str) else json.dumps(value)
    result(repo, "w", "hive_close", {"id": cell_id, "reason": "done", "force": True})
    result(
        repo, "w", "swarm_record_outcome", {"cell_id": cell_id, "success": success, "summary": text}
    )


def test_spawn_parallel_agents_makes_an_epic_with_one_subtask_per_task(
    ws: Workspace, repo: Path
) -> None:
    epic_id, subtasks = spawn(repo, "chain", 3)
    epic = result(repo, "x", "hive_query", {"id": epic_id})
    assert epic["type"] == "epic" and epic["metadata"]["synthesis_strategy"] == "chain"
    cells = [result(repo, "x", "hive_query", {"id": s}) for s in subtasks]
    assert [c["parent"] for c in cells] == [epic_id] * 3
    assert [c["title"] for c in cells] == ["part 0", "part 1", "part 2"]
    assert cells[1]["dependencies"] == [{"type": "blocks", "target": subtasks[0]}]
    assert cells[0]["metadata"]["agent_type"] == "type0"
    assert [c["id"] for c in result(repo, "x", "hive_ready", {})] == [subtasks[0]]
    for args in (
        {"tasks": []},
        {"tasks": [{"agentType": "a"}]},
        {"tasks": [{"agentType": "a", "taskPayload": {}}], "synthesisStrategy": "sum"},
    ):
        assert error(repo, "orch", "spawn_parallel_agents", args)["code"] == "invalid_arguments"


def test_synthesis_strategies(ws: Workspace, repo: Path) -> None:
    epic, (a, b, c) = spawn(repo, "merge", 3)
    finish(repo, a, {"x": 1, "y": 1})
    partial = result(repo, "orch", "swarm_synthesize", {"epic_id": epic})
    assert partial["complete"] is False and partial["recorded"] is False
    finish(repo, b, {"y": 2})
    finish(repo, c, {"z": 3})
    merged = result(repo, "orch", "swarm_synthesize", {"epic_id": epic})
    assert merged["complete"] and merged["result"] == {"x": 1, "y": 2, "z": 3}
    assert merged["details"]["conflicts"] == ["y"] and merged["recorded"] is True
    stored = result(repo, "x", "hive_query", {"id": epic})["metadata"]["synthesis"]
    assert stored["result"] == merged["result"] and stored["strategy"] == "merge"

    epic, (a, b, c) = spawn(repo, "vote", 3)
    finish(repo, a, "blue")
    finish(repo, b, "red")
    finish(repo, c, "red")
    voted = result(repo, "orch", "swarm_synthesize", {"epic_id": epic})
    assert voted["result"] == "red" and voted["details"]["majority"] is True

    epic, (a, b) = spawn(repo, "chain", 2)
    finish(repo, a, {"step": 1})
    assert result(repo, "orch", "swarm_synthesize", {"epic_id": epic})["complete"] is False
    finish(repo, b, {"step": 2})
    assert result(repo, "orch", "swarm_synthesize", {"epic_id": epic})["result"] == {"step": 2}

    epic, (a, b, c) = spawn(repo, "first-success", 3)
    finish(repo, b, "failed attempt", success=False)
    assert result(repo, "orch", "swarm_synthesize", {"epic_id": epic})["complete"] is False
    finish(repo, c, {"answer": 42})
    first = result(repo, "orch", "swarm_synthesize", {"epic_id": epic})
    assert first["complete"] and first["result"] == {"answer": 42}
    assert first["details"]["winner"] == c
    states = {s["taskId"]: s["state"] for s in first["subtasks"]}
    assert states == {a: "pending", b: "failed", c: "succeeded"}
    # Another strategy can be asked for; the CLI shows the same.
    code, out = cli(repo, "epic", "synthesize", epic, "--strategy", "merge")
    assert code == 0 and "merge: incomplete" in out
    assert error(repo, "orch", "swarm_synthesize", {"epic_id": "hv-nothere"})["code"] == (
        "not_found"
    )


# ------------------------------------------------------------------ project memory


def _remembered(repo: Path, changes: tuple[dict[str, Any], ...]) -> str:
    """Apply each update_context change as agent A (each must change something);
    the block inject_context then gives agent B."""
    for args in changes:
        assert result(repo, "A", "update_context", args)["changed"] is True, args
    block = result(repo, "B", "inject_context", {})
    assert isinstance(block, str)
    return block


def test_update_and_inject_context(ws: Workspace, repo: Path) -> None:
    empty = result(repo, "A", "inject_context", {})
    assert isinstance(empty, str) and empty.startswith("## Project context")
    changes = (
        {"section": "project", "set": {"name": "hive", "purpose": "coordination"}},
        {"section": "goals", "add": "Ship seed tools"},
        {"section": "stack", "set": {"language": "python", "db": "sqlite"}},
        {"section": "decisions", "add": {"decision": "Use SQLite", "reason": "stdlib"}},
        {"section": "milestones", "add": {"name": "M1", "due": "2025-01"}},
        {"section": "milestones", "complete": "M1"},
        {"section": "banned", "add": "Never shell out to git for writes"},
        {"section": "stack", "set": {"db": None}},
    )
    block = _remembered(repo, changes)
    for words in (
        "**name:** hive",
        "- Ship seed tools",
        "- language: python",
        "Use SQLite — reason: stdlib",
        "- [x] M1",
        "Banned approaches",
        "Never shell out to git for writes",
    ):
        assert words in block, words
    assert "db: sqlite" not in block
    saved = (repo / ".hive" / "context.yaml").read_text()
    assert "Never shell out to git for writes" in saved
    assert "hive: context banned (A)" in git(repo, "log", "--format=%s", "-3")
    assert_clean(repo)
    again = result(repo, "A", "update_context", {"section": "goals", "add": "Ship seed tools"})
    assert again["changed"] is False and again["commit"] is None


def test_a_multi_line_entry_stays_one_bullet_of_the_block(ws: Workspace, repo: Path) -> None:
    """A goal, banned approach, milestone name or key written over several lines was
    rendered as is: its later lines left the list, so '## Deploy now' became a heading
    of every worker's prompt."""
    changes = (
        {"section": "goals", "add": "ship v1\n## Deploy now"},
        {"section": "banned", "add": "mocks\n\n### Allowed approaches\n- anything"},
        {"section": "milestones", "add": {"name": "M1\n# M2"}},
        {"section": "stack", "set": {"db\n# x": "sqlite"}},
        {"section": "project", "set": {"name\n# y": "hive"}},
    )
    block = _remembered(repo, changes)
    for line in (
        "- ship v1 ## Deploy now",
        "- mocks ### Allowed approaches - anything",
        "- [ ] M1 # M2",
        "- db # x: sqlite",
        "**name # y:** hive",
    ):
        assert line in block.splitlines(), (line, block)
    headings = [line for line in block.splitlines() if line.startswith("#")]
    assert headings == [
        "## Project context",
        "### Goals",
        "### Tech stack",
        "### Milestones",
        "### Banned approaches (never use these)",
    ]
    epic = result(repo, "A", "hive_create_epic", {"epic_title": "E", "subtasks": [{"title": "s"}]})
    prompt = result(repo, "A", "swarm_subtask_prompt", {"cell_id": epic[1]["id"]})["prompt"]
    assert "- mocks ### Allowed approaches - anything" in prompt.splitlines()


def test_apply_update_changes_each_section_its_own_way() -> None:
    """apply_update on its own: each section's change, the copy (``current`` is left as
    it was), and each refusal with its message and field."""
    from hive.domain.memory import ProjectContext, apply_update
    from hive.errors import InvalidInput, NotFound

    current = ProjectContext(goals=["ship"], stack={"db": "sqlite", "web": "x"})
    same = apply_update(current, "goals", " ship ", None, None, "A")
    assert same.goals == ["ship"] and same is not current  # not added twice
    banned = apply_update(current, "banned", "eval", None, None, "A")
    assert banned.banned == ["eval"] and current.banned == []
    decided = apply_update(current, "decisions", "use git", None, None, "A")
    [decision] = decided.decisions
    assert (decision["decision"], decision["by"]) == ("use git", "A")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", decision["recorded_at"])
    planned = apply_update(current, "milestones", {"name": "M1", "due": "May"}, None, None, "B")
    [milestone] = planned.milestones
    assert (milestone["status"], milestone["name"], milestone["due"], milestone["by"]) == (
        "pending",
        "M1",
        "May",
        "B",
    )
    done = apply_update(planned, "milestones", None, None, "M1", "B")
    assert done.milestones[0]["status"] == "completed" and "completed_at" in done.milestones[0]
    assert planned.milestones[0]["status"] == "pending"
    stack = apply_update(current, "stack", None, {"db": None, "cache": "redis"}, None, "A")
    assert stack.stack == {"web": "x", "cache": "redis"}
    assert current.stack == {"db": "sqlite", "web": "x"}
    for args, wanted, field in (
        (("nope", "x", None, None), "section must be one of decisions, milestones", "section"),
        (("goals", "x", {"a": 1}, None), "needs exactly one of add, set or complete", None),
        (("goals", None, None, None), "needs exactly one of add, set or complete", None),
        (("goals", "a\x1b[2J", None, None), "control character", None),
        (("milestones", None, {"a": 1}, None), "milestones take add or complete, not set", None),
        (("goals", None, {"a": 1}, None), "goals takes add, not set", None),
        (("stack", "x", None, None), "stack takes set, not add", None),
        (("milestones", {"due": "May"}, None, None), "a milestone needs a name", "add"),
        (("stack", None, {}, None), "set for stack must be a non-empty object", "set"),
        (("project", None, "x", None), "set for project must be a non-empty object", "set"),
    ):
        with pytest.raises(InvalidInput) as refused:
            apply_update(current, *args, "A")
        assert wanted in refused.value.message, args
        if field is not None:
            assert refused.value.details.get("field") == field, args
    with pytest.raises(NotFound, match="no milestone named 'M2'"):
        apply_update(planned, "milestones", None, None, "M2", "B")


def test_update_context_refuses_what_a_section_does_not_take(ws: Workspace, repo: Path) -> None:
    for args, code in (
        ({"section": "goals", "set": {"a": 1}}, "invalid_input"),
        ({"section": "stack", "add": "python"}, "invalid_input"),
        ({"section": "goals"}, "invalid_input"),
        ({"section": "goals", "add": "a", "complete": "b"}, "invalid_input"),
        ({"section": "goals", "add": {"not": "text"}}, "invalid_input"),
        ({"section": "milestones", "complete": "nope"}, "not_found"),
        ({"section": "milestones", "add": {"due": "x"}}, "invalid_input"),
        ({"section": "secrets", "add": "x"}, "invalid_arguments"),
        ({"section": "stack", "set": "x"}, "invalid_arguments"),
        ({"section": "decisions", "add": {"d": "x" * 30_000}}, "invalid_input"),
    ):
        assert error(repo, "A", "update_context", args)["code"] == code, args
    assert not (repo / ".hive" / "context.yaml").exists()


def test_banned_approaches_appear_in_worker_prompts(ws: Workspace, repo: Path) -> None:
    result(repo, "A", "update_context", {"section": "banned", "add": "No global mutable state"})
    epic = result(
        repo,
        "A",
        "hive_create_epic",
        {"epic_title": "E", "subtasks": [{"title": "one", "files": ["a.py"]}]},
    )
    sub = epic[1]["id"] if isinstance(epic, list) else epic["subtasks"][0]["id"]
    prompt = result(repo, "A", "swarm_subtask_prompt", {"cell_id": sub})["prompt"]
    assert "Banned approaches" in prompt and "No global mutable state" in prompt
    assert "REFACTOR" in prompt and "RED" in prompt and "GREEN" in prompt


def test_concurrent_context_updates_lose_nothing(ws: Workspace, repo: Path) -> None:
    run_workers(
        repo,
        """
        ctx = CallContext(root=repo, agent=f"W{worker}")
        for n in range(3):
            out = call_tool(ctx, "update_context", {"section": "goals", "add": f"g{worker}.{n}"})
            assert "result" in out, out
        print("0")
        """,
        count=8,
    )
    goals = result(repo, "A", "inject_context", {})
    assert all(f"- g{w}.{n}" in goals for w in range(8) for n in range(3))
    assert_clean(repo)


# ------------------------------------------------------------------ QA harness


def test_qa_harness_scores_flags_and_compares(ws: Workspace, repo: Path) -> None:
    scenarios = [
        {
            "id": "good",
            "key": "task:1:a",
            "value": {"summary": "revenue up 4%", "confidence": 0.9},
            "sourceAgent": "analyst",
        },
        {"id": "empty", "key": "task:1:b", "value": "", "sourceAgent": "analyst"},
        {"id": "todo", "key": "task:1:c", "value": "TODO fill in", "sourceAgent": "writer"},
        {
            "id": "weak",
            "key": "task:1:d",
            "value": {"summary": "maybe", "confidence": 0.2},
            "sourceAgent": "risk",
        },
        {
            "id": "lenient",
            "key": "task:1:e",
            "value": {"summary": "x", "confidence": 0.2},
            "sourceAgent": "risk",
            "minScore": 0.5,
        },
        {"id": "one", "key": "price", "value": 10, "sourceAgent": "A"},
        {"id": "two", "key": "price", "value": 12, "sourceAgent": "B"},
        {
            "id": "failed",
            "key": "task:1:f",
            "value": {"ok": False, "error": "timeout"},
            "sourceAgent": "A",
        },
    ]
    run = result(repo, "qa", "run_qa_harness", {"scenarios": scenarios})
    by_id = {r["id"]: r for r in run["results"]}
    assert by_id["good"]["score"] == 1.0 and by_id["good"]["passed"]
    assert by_id["empty"]["score"] == 0 and not by_id["empty"]["passed"]
    assert by_id["todo"]["score"] == 0.6 and "placeholder text" in by_id["todo"]["issues"]
    assert by_id["weak"]["score"] == 0.7 and by_id["weak"]["passed"]  # 1 - 0.3 = 0.7
    assert by_id["lenient"]["threshold"] == 0.5 and by_id["lenient"]["passed"]
    assert not by_id["one"]["passed"] and by_id["one"]["contradiction"]
    assert run["contradictions"] == [
        {"key": "price", "agents": ["A", "B"], "values": {"A": 10, "B": 12}}
    ]
    assert by_id["failed"]["score"] == 0.5
    assert run["passed"] == 3 and run["total"] == 8 and run["passRate"] == 0.375
    assert run["qualityThreshold"] == 0.7 and run["regression"] == {"previousRunId": None}

    scenarios[0]["value"] = "TBD"
    scenarios[2]["value"] = "written in full now"
    second = result(repo, "qa", "run_qa_harness", {"scenarios": scenarios[:3]})
    regression = second["regression"]
    assert regression["previousRunId"] == run["runId"]
    assert regression["regressed"] == ["good"] and regression["improved"] == ["todo"]
    assert set(regression["missing"]) == {"weak", "lenient", "one", "two", "failed"}
    assert regression["passRateDelta"] == round(second["passRate"] - 0.375, 4)
    _code, out = cli(repo, "qa", "history")
    assert "run 2" in out and "run 1" in out


def test_qa_harness_hostile_input(ws: Workspace, repo: Path) -> None:
    for args in (
        {},
        {"scenarios": []},
        {"scenarios": [{"id": "a", "key": "k", "value": 1}]},
        {"scenarios": [{"id": "a", "key": "k", "value": 1, "sourceAgent": "A", "minScore": 2}]},
        {
            "scenarios": [{"id": "a", "key": "k", "value": 1, "sourceAgent": "A"}],
            "qualityThreshold": "high",
        },
        {"scenarios": "all"},
    ):
        assert error(repo, "A", "run_qa_harness", args)["code"] == "invalid_arguments", args
    twice = [{"id": "a", "key": "k", "value": 1, "sourceAgent": "A"}] * 2
    assert error(repo, "A", "run_qa_harness", {"scenarios": twice})["code"] == "invalid_input"
    for number in (float("nan"), float("inf")):  # Python's JSON reader takes them: not JSON
        scenario = {"id": "a", "key": "k", "value": {"score": number}, "sourceAgent": "A"}
        refused = error(repo, "A", "run_qa_harness", {"scenarios": [scenario]})
        assert refused["code"] == "invalid_input" and "NaN or Infinity" in refused["error"]
    huge = call(
        repo,
        "A",
        "run_qa_harness",
        {"scenarios": [{"id": "a", "key": "k", "value": "x" * 150_000, "sourceAgent": "A"}]},
    )
    assert huge["result"]["results"][0]["issues"] == ["very large (over 100 KB)"]


def test_committed_records_from_parallel_agents_are_all_kept(ws: Workspace, repo: Path) -> None:
    configure(repo, permission_policy={"default": "grant"})
    run_workers(
        repo,
        """
        ctx = CallContext(root=repo, agent=f"W{worker}")
        out = call_tool(ctx, "request_permission",
                        {"resourceType": "DATABASE", "justification": f"worker {worker} reads"})
        assert out["result"]["granted"], out
        for n in range(2):
            out = call_tool(ctx, "delegate_task", {"targetAgent": "helper", "requiresAuth": True,
                            "taskPayload": {"instruction": f"job {worker}.{n}"}})
            assert "result" in out, out
        print("0")
        """,
        count=8,
    )
    assert len(list((repo / ".hive" / "permissions").glob("*.yaml"))) == 8
    tasks = result(repo, "x", "query_swarm_state", {"scope": "tasks"})["tasks"]
    assert sorted(t["title"] for t in tasks) == sorted(
        f"job {w}.{n}" for w in range(8) for n in range(2)
    )
    assert_clean(repo)


def _ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stderr
    return done.stdout


# ------------------------------------------------------------------ the commands a person uses


def test_blackboard_commands(ws: Workspace, repo: Path) -> None:
    assert hive(repo, "blackboard", "set", "a:1", '{"n": 1}', "--ttl", "60").returncode == 0
    assert hive(repo, "blackboard", "set", "b:1", "plain words").returncode == 0
    listed = hive(repo, "blackboard", "list", "a:")
    assert "a:1  alice until " in listed.stdout and "b:1" not in listed.stdout
    removed = json.loads(hive(repo, "blackboard", "rm", "a:1", "--json").stdout)
    assert removed["value"] == {"n": 1} and removed["entry"]["sourceAgent"] == "alice"
    assert result(repo, "x", "read_blackboard", {"key": "a:1"})["exists"] is False
    assert result(repo, "x", "read_blackboard", {"key": "b:1"})["value"] == "plain words"
    assert "(not set)" in hive(repo, "blackboard", "get", "a:1").stdout
    assert _ok(hive(repo, "blackboard", "rm", "b:1")) == "removed b:1\n"
    again = _ok(hive(repo, "blackboard", "rm", "b:1"))  # said 'removed b:1'
    assert again == "b:1 was not set: nothing removed\n"
    bad = hive(repo, "blackboard", "set", "k", "1", "--ttl", "-1", "--json")
    assert bad.returncode == 2 and json.loads(bad.stdout)["field"] == "ttl"


def test_memory_commands_are_update_context(ws: Workspace, repo: Path) -> None:
    assert hive(repo, "memory", "add", "goals", "Ship it").stdout == "goals updated\n"
    assert hive(repo, "memory", "add", "goals", "Ship it").stdout == "goals unchanged\n"
    assert hive(repo, "memory", "set", "stack", "lang=python", "n=2", "gone=").returncode == 0
    assert hive(repo, "memory", "add", "milestones", '{"name": "M1", "due": "May"}').returncode == 0
    assert hive(repo, "memory", "complete", "M1").stdout == "milestones updated\n"
    block = hive(repo, "memory", "show").stdout
    assert "- Ship it" in block and "- lang: python" in block and "- n: 2" in block
    assert "- [x] M1 (May)" in block
    assert block.rstrip() == result(repo, "x", "inject_context", {}).rstrip()
    bad = hive(repo, "memory", "set", "stack", "no-equals", "--json")
    assert bad.returncode == 2 and json.loads(bad.stdout)["field"] == "set"
    missing = hive(repo, "memory", "complete", "M9")
    assert missing.returncode == 3 and "no milestone named 'M9'" in missing.stderr
    wrong = hive(repo, "memory", "add", "secrets", "x")
    assert wrong.returncode == 2 and "SECTION" in wrong.stderr
    assert git(repo, "log", "--format=%s", "-1").strip() == "hive: context milestones (alice)"
    assert_clean(repo)


def test_delegation_commands(ws: Workspace, repo: Path) -> None:
    done = hive(repo, "delegate", "w1", '{"instruction": "count rows"}', "--timeout", "60000")
    assert done.returncode == 0 and done.stdout.startswith("delegated hv-")
    assert "task " in hive(repo, "swarm", "state", "--agent", "w1").stdout
    refused = hive(repo, "delegate", "w1", "not an object")
    assert refused.returncode == 2 and "TASK_PAYLOAD" in refused.stderr
    spawned = json.loads(
        hive(repo, "epic", "spawn", "a=first", "b=second", "--strategy", "chain", "--json").stdout
    )
    assert spawned["synthesisStrategy"] == "chain" and len(spawned["tasks"]) == 2
    assert [t["title"] for t in spawned["tasks"]] == ["first", "second"]
    assert hive(repo, "epic", "spawn", "no type").returncode == 2
    synthesized = hive(repo, "epic", "synthesize", spawned["epicId"])
    assert synthesized.returncode == 0 and "chain: incomplete" in synthesized.stdout


def test_permission_and_qa_commands(ws: Workspace, repo: Path) -> None:
    configure(repo, permission_policy=POLICY)
    denied = hive(repo, "permissions", "request", "PAYMENTS", "pay the invoice 42 now")
    assert denied.returncode == 5 and "PAYMENTS: denied (never)" in denied.stdout
    listed = json.loads(hive(repo, "permissions", "list", "--json").stdout)
    assert [d["resourceType"] for d in listed] == ["PAYMENTS"]
    assert hive(repo, "permissions", "list", "--live").stdout == "no permission decisions\n"
    granted = hive(repo, "permissions", "request", "EMAIL", "mail the weekly report", actor="orch")
    # the expiry as every other command shows a time (it was Python's 2026-...:10.751000+00:00)
    assert granted.returncode == 0, granted
    assert re.fullmatch(
        r"EMAIL: granted until \d{4}-\d\d-\d\d \d\d:\d\dZ \(granted by rule 2\)\n", granted.stdout
    ), granted.stdout
    scenarios = [{"id": "a", "key": "k", "value": "TODO later", "sourceAgent": "A"}]
    failed = hive(repo, "qa", "run", "-", stdin=json.dumps({"scenarios": scenarios}))
    assert failed.returncode == 1 and "FAIL a k (A) 0.60" in failed.stdout
    scenarios[0]["value"] = "written in full"
    passed = hive(repo, "qa", "run", "-", "--threshold", "0.5", stdin=json.dumps(scenarios))
    assert passed.returncode == 0 and "pass rate 100% (1/1)" in passed.stdout
    runs = json.loads(hive(repo, "qa", "history", "-n", "1", "--json").stdout)
    assert [(r["runId"], r["passRate"]) for r in runs] == [(2, 1.0)]
    bad = hive(repo, "qa", "run", "-", stdin='{"scenarios": 3}')
    assert bad.returncode == 2 and "expected a list of scenarios" in bad.stderr
    missing = hive(repo, "qa", "run", "-", stdin='[{"id": "a", "value": 1, "sourceAgent": "A"}]')
    assert missing.returncode == 2 and "0.key: Field required" in missing.stderr  # which field


def test_a_task_needing_auth_starts_only_under_a_live_grant(
    ws: Workspace, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """seed 003: requiresAuth = "requires AuthGuardian permission grant before
    execution": the delegator's grant covers the start while it is live; once it has
    expired the task is refused to a worker holding none, even with force."""
    configure(repo, permission_policy=POLICY)
    clock = HeldClock(monkeypatch)  # the grant's two seconds are not waited
    grant = {"resourceType": "DATABASE", "justification": "read the invoices", "scope": "read:x"}
    assert result(repo, "analyst", "request_permission", grant)["granted"]
    asked = {"taskPayload": {"instruction": "sum the invoices"}, "requiresAuth": True}
    tasks = [
        result(
            repo,
            "analyst",
            "delegate_task",
            {**asked, "targetAgent": "w", "resourceType": "DATABASE"},
        )["taskId"]
        for _ in range(3)
    ]
    assert result(repo, "w", "hive_start", {"id": tasks[0]})["status"] == "in_progress"
    clock.advance(2.1)  # the analyst's DATABASE grant has expired
    head = git(repo, "rev-parse", "HEAD")
    refused = error(repo, "w", "hive_start", {"id": tasks[1], "force": True})
    assert refused["code"] == "auth_required"
    assert f"starting {tasks[1]}" in refused["error"] and "DATABASE" in refused["error"]
    assert git(repo, "rev-parse", "HEAD") == head  # nothing committed
    # the orchestrator's grant of everything is neither the worker's nor the delegator's
    assert result(repo, "orch", "request_permission", grant)["granted"]
    assert error(repo, "w", "hive_start", {"id": tasks[1]})["code"] == "auth_required"
    # nor does a start by an update of the status, through the tool or either CLI path
    head = git(repo, "rev-parse", "HEAD")
    started = {"id": tasks[1], "status": "in_progress"}
    assert error(repo, "w", "hive_update", started)["code"] == "auth_required"
    env = {**os.environ, "HIVE_AGENT": "w", "HIVE_AGENT_TOKEN": credential(repo, "w")}
    for module in ("hive", "hive.cli.main"):  # the lean path hands it to the full CLI
        argv = ["-C", str(repo), "update", tasks[1], "-s", "in_progress"]
        done = run_hive(argv, env=env, module=module)
        assert done.returncode == 5 and "requires auth" in done.stderr, (module, done.stderr)
    assert git(repo, "rev-parse", "HEAD") == head  # nothing committed
    # a claim of the next ready cell passes over the tasks the worker may not start
    claimed = result(repo, "w", "hive_ready", {"claim": True})
    assert tasks[1] not in json.dumps(claimed) and tasks[2] not in json.dumps(claimed)
    assert_clean(repo)
