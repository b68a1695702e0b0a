"""One description per operation: the CLI and the agent tools are generated from it,
take the same parameters and give the same result; the layers import downward only;
the exit-code table in docs/ is the code's."""

from __future__ import annotations

import ast
import asyncio
import functools
import importlib
import json
import pkgutil
import re
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, Field
from typer.testing import CliRunner

import hive
from hive.domain.workspace import Workspace
from hive.errors import HiveError
from hive.models.base import HiveModel
from hive.ops.catalog import operation, operations
from hive.ops.spec import Command, Operation, Params
from tests.conftest import agent_env, credential, git, set_coordinators
from tests.hivefork import mcp_server

ROOT = Path(__file__).resolve().parent.parent
HIVE = ROOT / "hive"


def _cli(repo: Path, *args: str, actor: str = "alice") -> Any:
    """The command's ``--json`` output."""
    from hive.cli.main import app

    result = CliRunner().invoke(
        app, ["-C", str(repo), "--actor", actor, *args, "--json"], env=agent_env(repo, actor)
    )
    assert result.exit_code == 0, (args, result.output)
    return json.loads(result.stdout)


# ------------------------------------------------------------------ the registry


def test_every_operation_is_reachable_from_each_surface_it_names() -> None:
    """A tool for every operation on the tool surface (and none for the others), a
    command for every one on the CLI surface, offering all of its parameters."""
    import typer

    from hive.cli.build import offered
    from hive.cli.main import app
    from hive.ops.spec import AGENT_ONLY, CLI_ONLY, EVERYWHERE
    from hive.tools.registry import get_tool

    click_app = typer.main.get_command(app)
    for op in operations():
        assert op.surfaces in (EVERYWHERE, CLI_ONLY, AGENT_ONLY), op.name
        tool = get_tool(op.name)
        if op.is_tool:
            assert tool is not None and tool.args is op.params, op.name
            assert tool.operation is op and tool.description == op.summary
        else:
            assert tool is None, f"{op.name} is CLI only but is a tool"
        assert bool(op.commands) == ("cli" in op.surfaces), op.name
        covered: set[str] = set()
        for command in op.commands:
            node: Any = click_app
            for word in command.path:
                node = node.commands[word]  # the command exists at that path
            cli_params = {p.name for p in node.params} - {"json_output", "help"}
            assert set(offered(op, command)) <= cli_params, command.name
            covered |= set(offered(op, command)) | set(command.fixed)
        assert not op.commands or covered == set(op.params.model_fields), (op.name, covered)
    assert any(op.surfaces == CLI_ONLY for op in operations())


def test_results_are_typed_models_not_any() -> None:
    for op in operations():
        assert op.result is not Any and op.result is not None, op.name
        assert "Any" not in repr(op.result), op.name


PLAN: dict[str, Any] = {
    "epic": {"title": "Plan", "description": "both ways"},
    "subtasks": [{"title": "one", "files": ["src/a.py"]}, {"title": "two", "files": ["src/b.py"]}],
}

QA: dict[str, Any] = {
    "scenarios": [
        {"id": "a", "key": "k", "value": {"summary": "up 4%"}, "sourceAgent": "A"},
        {"id": "b", "key": "j", "value": "TODO", "sourceAgent": "B", "minScore": 0.2},
    ]
}
TODOS = [{"content": "test", "status": "completed"}, {"content": "code", "status": "pending"}]

# the same call on both surfaces; ``$ID`` is the cell made first, ``$PLAN`` a file with
# PLAN, ``$QA`` a file with QA
SCENARIO: list[tuple[str, list[str], dict[str, Any]]] = [
    (
        "hive_create",
        ["create", "Both ways", "-p", "1", "--files", "src/**", "-l", "x"],
        {"title": "Both ways", "priority": 1, "files": ["src/**"], "labels": ["x"]},
    ),
    ("hive_query", ["show", "$ID"], {"id": "$ID"}),
    ("hive_query", ["list", "--status", "open"], {"status": "open", "verbose": True}),
    ("hive_query", ["list", "--no-verbose", "-n", "20"], {}),
    ("hive_ready", ["ready", "--limit", "5"], {"limit": 5, "verbose": True}),
    ("hive_ready", ["ready", "--no-verbose", "-n", "10"], {}),
    (
        "hive_update",
        ["update", "$ID", "--assignee", "alice", "--files", "lib/*.py"],
        {"id": "$ID", "assignee": "alice", "files": ["lib/*.py"]},
    ),
    ("hive_comment", ["comment", "$ID", "looks good"], {"id": "$ID", "text": "looks good"}),
    ("hive_dep", ["dep", "tree", "$ID"], {"id": "$ID", "action": "tree"}),
    ("hive_close", ["close", "$ID", "--reason", "done"], {"id": "$ID", "reason": "done"}),
    ("hive_reopen", ["reopen", "$ID"], {"id": "$ID"}),
    (
        "swarmmail_reserve",
        ["reserve", "src/a.py", "--ttl", "600"],
        {"paths": ["src/a.py"], "ttl_seconds": 600},
    ),
    ("swarmmail_reservations", ["reservations"], {}),
    ("swarmmail_release", ["release", "--all"], {"all": True}),
    (
        "swarmmail_send",
        ["mail", "send", "alice", "-s", "hello", "-b", "body"],
        {"to": ["alice"], "subject": "hello", "body": "body"},
    ),
    ("swarmmail_inbox", ["mail", "inbox"], {}),
    ("hive_log", ["log", "$ID", "-n", "3"], {"id": "$ID", "limit": 3}),
    (
        "swarm_select_strategy",
        ["swarm", "select-strategy", "refactor the parser"],
        {"task": "refactor the parser"},
    ),
    ("swarm_insights", ["swarm", "insights"], {}),
    ("hive_review", ["review", "$ID", "--stat"], {"id": "$ID"}),
    ("swarm_evaluation_prompt", ["swarm", "evaluation-prompt", "$ID"], {"cell_id": "$ID"}),
    ("swarm_subtask_prompt", ["swarm", "subtask-prompt", "$ID"], {"cell_id": "$ID"}),
    (
        "swarm_plan_prompt",
        ["swarm", "plan-prompt", "add a cache", "--no-cass"],
        {"task": "add a cache", "query_cass": False},
    ),
    (
        "swarm_decompose",
        ["swarm", "decompose", "add a cache", "--no-query-cass"],
        {"task": "add a cache", "query_cass": False},
    ),
    ("hive_start", ["start", "$ID"], {"id": "$ID"}),
    (
        "swarm_progress",
        ["swarm", "progress", "$ID", "--status", "in_progress", "--percent", "50"],
        {"cell_id": "$ID", "status": "in_progress", "progress_percent": 50},
    ),
    (
        "swarm_complete",
        ["swarm", "complete", "$ID", "-s", "done", "--no-gate", "--errors", "1"],
        {"cell_id": "$ID", "summary": "done", "gate": False, "error_count": 1},
    ),
    ("hive_delete", ["delete", "$ID", "--reason", "done"], {"id": "$ID", "reason": "done"}),
    ("swarmmail_init", ["mail", "init", "--task", "both"], {"task_description": "both"}),
    (
        "swarm_validate_decomposition",
        ["swarm", "validate-decomposition", "$PLAN"],
        {"response": json.dumps(PLAN)},
    ),
    (
        "hive_create_epic",
        ["epic", "create", "Both epics", "-s", "one", "-s", json.dumps(PLAN["subtasks"][1])],
        {"epic_title": "Both epics", "subtasks": [{"title": "one"}, PLAN["subtasks"][1]]},
    ),
    ("ctx_put", ["ctx", "put", "phase", "3"], {"key": "phase", "value": 3}),
    ("ctx_put", ["ctx", "put", "note", "plain words"], {"key": "note", "value": "plain words"}),
    ("ctx_get", ["ctx", "get", "phase"], {"key": "phase"}),
    ("ctx_keys", ["ctx", "keys"], {}),
    (
        "ctx_wait",
        ["ctx", "wait", "phase", "--at-least", "2", "--timeout", "0"],
        {"key": "phase", "at_least": 2, "timeout_sec": 0},
    ),
    (
        "coord_enqueue",
        ["queue", "add", "review", '{"cell": 1}'],
        {"kind": "review", "payload": {"cell": 1}},
    ),
    ("coord_status", ["queue", "status"], {}),
    (
        "update_blackboard",
        ["blackboard", "set", "task:1", '{"n": 1}'],
        {"key": "task:1", "value": {"n": 1}},
    ),
    (
        "update_blackboard",
        ["blackboard", "set", "note", "words"],
        {"key": "note", "value": "words"},
    ),
    ("read_blackboard", ["blackboard", "get", "task:1"], {"key": "task:1"}),
    (
        "delegate_task",
        ["delegate", "w1", '{"instruction": "count"}', "--priority", "high"],
        {"targetAgent": "w1", "taskPayload": {"instruction": "count"}, "priority": "high"},
    ),
    (
        "query_swarm_state",
        ["swarm", "state", "--scope", "tasks", "--agent", "w1", "--history"],
        {"scope": "tasks", "agentFilter": ["w1"], "includeHistory": True, "verbose": True},
    ),
    (
        "query_swarm_state",
        ["swarm", "state", "--no-verbose", "--scope", "tasks"],
        {"scope": "tasks"},
    ),
    (
        "spawn_parallel_agents",
        ["epic", "spawn", "a=one", '{"agentType": "b", "taskPayload": {"n": 2}}'],
        {
            "tasks": [
                {"agentType": "a", "taskPayload": {"instruction": "one"}},
                {"agentType": "b", "taskPayload": {"n": 2}},
            ]
        },
    ),
    ("update_context", ["memory", "add", "goals", "Ship"], {"section": "goals", "add": "Ship"}),
    (
        "update_context",
        ["memory", "set", "stack", "db=sqlite", "n=2"],
        {"section": "stack", "set": {"db": "sqlite", "n": 2}},
    ),
    (
        "update_context",
        ["memory", "add", "milestones", "M1"],
        {"section": "milestones", "add": "M1"},
    ),
    (
        "update_context",
        ["memory", "complete", "M1"],
        {"section": "milestones", "complete": "M1"},
    ),
    ("inject_context", ["memory", "show"], {}),
    ("run_qa_harness", ["qa", "run", "$QA", "--threshold", "0.5"], {**QA, "qualityThreshold": 0.5}),
    (
        "scratchpad_write",
        ["scratchpad", "write", "notes/a", "hello", "--title", "T"],
        {"file_path": "notes/a", "content": "hello", "title": "T"},
    ),
    ("scratchpad_read", ["scratchpad", "read", "notes/a"], {"file_path": "notes/a"}),
    ("scratchpad_list", ["scratchpad", "list", "notes/"], {"prefix": "notes/"}),
    ("todo_write", ["todo", "set", json.dumps(TODOS)], {"todos": TODOS}),
    ("todo_read", ["todo", "show"], {}),
    (
        "context_search",
        ["search", "both WAYS"],
        {"term": "both WAYS", "verbose": True, "limit": 50},
    ),
    ("context_search", ["search", "both", "--no-verbose", "-n", "10"], {"term": "both"}),
]

STAMP = re.compile(r"\[\d{4}-\d\d-\d\d \d\d:\d\dZ\]")  # progress notes carry the minute
# commit ids differ with the cells' random ids (also a message opening with an abbreviated one)
SHA = re.compile(r"\b[0-9a-f]{40}\b|(?<=\")[0-9a-f]{10}(?= )")
SHARD = re.compile(r"cells/[^/]+/(?=\$ID)")  # the shard directory follows the random id
VOLATILE = re.compile(  # times (also the seeds' camelCase ``ranAt``), commits, sessions
    r"(.*_at|.*At|at|commit|sha|ts|time|session|timestamp|message_id|duration.*|waited_sec"
    r"|deadline)$"
)
OUTCOME_ID = re.compile(r"~[0-9a-z]{8}\b")  # an outcome's id: its cell's and a random part
CELL_ID = re.compile(r"\bhv-[0-9a-z]{4,}(?:\.[0-9a-z]+)*\b")


def _stable(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: _stable(v)
            for k, v in value.items()
            if not VOLATILE.match(k)
            and not (k == "id" and (str(v).startswith(("c-", "q-")) or "subject" in value))
        }
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


def _same_names(value: Any, cell_id: str, repo: Path) -> str:
    """``value`` as JSON, its cell id, cell shard, commit ids, note times and repository
    path made generic."""
    text = json.dumps(value).replace(cell_id, "$ID").replace(str(repo), "$REPO")
    numbered: dict[str, str] = {}  # the other cells' ids, in the order they appear
    text = CELL_ID.sub(lambda m: numbered.setdefault(m[0], f"$CELL{len(numbered)}"), text)
    text = OUTCOME_ID.sub("~$OUTCOME", text)
    return STAMP.sub("[$TIME]", SHA.sub("$SHA", SHARD.sub("cells/_/", text)))


def _fill(value: Any, cell_id: str) -> Any:
    if isinstance(value, str):
        return value.replace("$ID", cell_id)
    if isinstance(value, list):
        return [_fill(v, cell_id) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, cell_id) for k, v in value.items()}
    return value


def _mcp_results(repo: Path, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """Run ``calls`` in order through a real ``hive mcp`` over stdio."""
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    params = mcp_server(["-C", str(repo), "mcp"], env=agent_env(repo, "alice"))

    async def run() -> list[Any]:
        found: list[Any] = []
        cell_id = ""
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            for name, args in calls:
                answer = await session.call_tool(name, _fill(args, cell_id))
                assert not answer.is_error, (name, answer.content)
                text = answer.content[0].text  # type: ignore[union-attr]
                # a text result (markdown, a file's content) is sent as the text itself
                value = text if operation(name).result is str else json.loads(text)
                cell_id = cell_id or value["id"]
                found.append(value)
        return found

    return asyncio.run(run())


def _as_answered(name: str, cli_value: Any, args: dict[str, Any], before: Any) -> Any:
    """The CLI's result as the tool answers it: a write whose whole cell grows with its
    history answers an agent in brief (the operation's ``answer``), the CLI the cell
    (an update's answer names the fields changed since ``before``, the cell as made)."""
    from hive.domain.cells import changed_fields
    from hive.models import Cell
    from hive.models.cell import ChangedCell
    from hive.tools.registry import jsonable

    op = operation(name)
    if op.answer is None:
        return cli_value
    result: Any = (
        [Cell.model_validate(v) for v in cli_value]
        if isinstance(cli_value, list)
        else Cell.model_validate(cli_value)
    )
    if name == "hive_update":
        result = ChangedCell.of(result, changed_fields(Cell.model_validate(before), result))
    answered = op.answer(result, op.params.model_validate(args, strict=False))
    return [jsonable(v) for v in answered] if isinstance(answered, list) else jsonable(answered)


def test_cli_and_mcp_take_the_same_parameters_and_give_the_same_result(
    tmp_path: Path,
) -> None:
    from hive.domain.setup import init_hive
    from tests.conftest import make_repo

    repos = [make_repo(tmp_path / name) for name in ("by-cli", "by-mcp")]
    for repo in repos:
        init_hive(Workspace(str(repo), actor="alice"), prefix="hv")
        git(repo, "config", "hive.test", "1")
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(PLAN))
    qa = tmp_path / "qa.json"
    qa.write_text(json.dumps(QA))
    by_cli: list[Any] = []
    cell_id = ""
    for _, argv, _ in SCENARIO:
        argv = [a.replace("$PLAN", str(plan)).replace("$QA", str(qa)) for a in argv]
        value = _cli(repos[0], *_fill(argv, cell_id))
        cell_id = cell_id or value["id"]
        by_cli.append(value)
    by_mcp = _mcp_results(repos[1], [(name, args) for name, _, args in SCENARIO])
    assert {name for name, _, _ in SCENARIO} >= {"hive_create", "hive_update", "hive_query"}
    for (name, _, args), cli_value, mcp_value in zip(SCENARIO, by_cli, by_mcp, strict=True):
        cli_value = _as_answered(name, cli_value, _fill(args, by_cli[0]["id"]), by_cli[0])
        cli_ids = _same_names(cli_value, by_cli[0]["id"], repos[0])
        mcp_ids = _same_names(mcp_value, by_mcp[0]["id"], repos[1])
        assert _stable(json.loads(cli_ids)) == _stable(json.loads(mcp_ids)), name
    updated = by_cli[6]
    assert updated["assignee"] == "alice" and updated["files_owned"] == ["lib/*.py"]


# times as the files write them (milliseconds), one that has finer digits (imported
# data) with its microseconds; pydantic's JSON gave ``...48Z`` and ``...48.755000Z``
SECOND, MICROS = "2026-11-27T09:12:48.000Z", "2026-11-27T09:12:48.755123Z"
MILLIS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


def test_one_function_writes_every_time() -> None:
    """The files and the models' JSON write a time with ``hive.times.format_time``:
    UTC (a zone is converted), milliseconds unless finer digits are there, ``Z``."""
    from datetime import UTC, datetime, timedelta, timezone

    from hive.models.mail import MessageHeader
    from hive.store.celldoc import format_time as written
    from hive.times import format_time

    assert written is format_time
    zoned = datetime(2026, 11, 27, 11, 12, 48, 755000, tzinfo=timezone(timedelta(hours=2)))
    assert format_time(zoned) == "2026-11-27T09:12:48.755Z"
    assert format_time(zoned.replace(microsecond=0, tzinfo=UTC)) == "2026-11-27T11:12:48.000Z"
    header = MessageHeader(id=1, sender="a", to=["b"], subject="s", sent_at=zoned)
    assert json.loads(header.model_dump_json())["sent_at"] == "2026-11-27T09:12:48.755Z"
    assert header.model_dump()["sent_at"] == zoned  # a datetime in Python, as before


def test_json_results_give_times_as_the_files_do(ws: Workspace, repo: Path) -> None:
    """``--json`` (the lean answer and the full CLI), the tool envelope and MCP give a
    cell's times exactly as its YAML file has them, and a new reservation's time in
    the form its file has (UTC, milliseconds, ``Z``)."""
    from hive.domain.cells import create_cell
    from hive.store.layout import cell_path
    from tests.inprocess import run_hive

    cell_id = create_cell(ws, title="timed").id
    path = repo / cell_path(cell_id)
    text = re.sub(r"created_at: .*", f'created_at: "{SECOND}"', path.read_text())
    path.write_text(re.sub(r"updated_at: .*", f'updated_at: "{MICROS}"', text))
    git(repo, "commit", "-qam", "times set by hand")
    env = agent_env(repo, "alice")
    times = {"created_at": SECOND, "updated_at": MICROS}
    for module in ("hive", "hive.cli.main"):
        shown = run_hive(["-C", str(repo), "--json", "show", cell_id], env=env, module=module)
        assert shown.returncode == 0, shown
        assert {key: json.loads(shown.stdout)[key] for key in times} == times, module
    calls = [
        {"name": "hive_query", "args": {"id": cell_id}},
        {"name": "swarmmail_reserve", "args": {"paths": ["src/a.py"]}},
    ]
    envelope = json.dumps({"tool_calls": calls})
    ran = run_hive(["-C", str(repo), "tools", "run"], env=env, input=envelope)
    assert ran.returncode == 0, ran
    queried, reserved = (call["result"] for call in json.loads(ran.stdout)["results"])
    assert {key: queried[key] for key in times} == times
    (granted,) = reserved["granted"]
    assert MILLIS.fullmatch(granted["created_at"]) and MILLIS.fullmatch(granted["expires_at"])
    held = git(repo, "show", "HEAD:.hive/reservations/alice.yaml")
    assert f'created_at: "{granted["created_at"]}"' in held, held
    (by_mcp,) = _mcp_results(repo, [("hive_query", {"id": cell_id})])
    assert {key: by_mcp[key] for key in times} == times


# operations for people only (``CLI_ONLY``): the command gives what the operation gives
CLI_SCENARIO: list[tuple[str, list[str], dict[str, Any]]] = [
    ("hive_init", ["init"], {}),
    ("hive_doctor", ["doctor"], {}),
    ("agent_whoami", ["agent", "whoami"], {}),
    ("agent_register", ["agent", "register", "bob", "--task", "t"], {"name": "bob", "task": "t"}),
    ("agent_list", ["agent", "list"], {}),
    ("agent_retire", ["agent", "retire", "bob", "--reason", "r"], {"name": "bob", "reason": "r"}),
    ("hive_epic_status", ["epic", "status", "$ID"], {"id": "$ID"}),
    ("ctx_phase", ["ctx", "phase", "2"], {"number": 2}),
    ("ctx_list", ["ctx", "list"], {}),
    ("ctx_delete", ["ctx", "rm", "phase"], {"key": "phase"}),
    (
        "coord_list",
        ["queue", "list", "--status", "queued", "-n", "5"],
        {"status": "queued", "limit": 5},
    ),
    ("proposals_list", ["proposals", "list", "--status", "pending"], {"status": "pending"}),
    ("events", ["events", "-n", "3"], {"limit": 3}),
    ("hooks_install", ["hooks", "install"], {}),
    ("hooks_uninstall", ["hooks", "uninstall"], {}),
    ("beads_export", ["export", "beads"], {}),
    ("list_blackboard", ["blackboard", "list", "task:"], {"prefix": "task:"}),
    ("delete_blackboard", ["blackboard", "rm", "task:1"], {"key": "task:1"}),
    ("list_permissions", ["permissions", "list", "--live"], {"live": True}),
    ("qa_history", ["qa", "history", "-n", "5"], {"limit": 5}),
    ("todo_lists", ["todo", "list", "--agent", "alice"], {"agent": "alice"}),
    ("scratchpad_clear", ["scratchpad", "clear", "notes/"], {"prefix": "notes/"}),
]


# the object store's counts, a fresh credential, the export's times
OWN = {"hive_doctor": "objects", "agent_register": "token", "beads_export": "text"}


def test_people_s_operations_give_on_the_cli_what_they_give_in_process(tmp_path: Path) -> None:
    from hive.cli.build import ShellCaller
    from hive.domain.epics import create_epic
    from hive.domain.setup import init_hive
    from hive.ops.spec import CLI_ONLY
    from tests.conftest import make_repo

    repos = [make_repo(tmp_path / name) for name in ("by-cli", "in-process")]
    epics, children = [], []
    for repo in repos:
        ws = Workspace(str(repo), actor="alice")
        init_hive(ws, prefix="hv")
        made = create_epic(ws, title="Epic", subtasks=[{"title": "one"}])
        epics.append(made[0].id)
        children.append(made[1].id)
        set_coordinators(repo, ["alice"])  # retiring another's identity
        _seed_state(ws)
    credential(repos[1], "alice")  # registered, as the command line's alice is (agent_env)
    assert {op.name for op in operations() if op.surfaces == CLI_ONLY} >= {
        name for name, _, _ in CLI_SCENARIO
    }
    for name, argv, args in CLI_SCENARIO:
        by_cli = _cli(repos[0], *_fill(argv, epics[0]))
        op = operation(name)
        caller = ShellCaller(Workspace(str(repos[1]), actor="alice"), wanted="alice")
        value = op.call(caller, op.params.model_validate(_fill(args, epics[1])))
        in_process = json.loads(json.dumps(_dumped(value)))
        own = OWN.get(name)  # a value that is each repository's own
        if own is not None:
            assert by_cli.pop(own) and in_process.pop(own), name
        cli_ids = _same_names(_child(by_cli, children[0]), epics[0], repos[0])
        direct_ids = _same_names(_child(in_process, children[1]), epics[1], repos[1])
        assert _stable(json.loads(cli_ids)) == _stable(json.loads(direct_ids)), name


def _seed_state(ws: Workspace) -> None:
    """Something for the people's blackboard, QA, todo and scratchpad commands."""
    from hive.domain.blackboard import update_blackboard
    from hive.domain.qa import run_qa_harness
    from hive.domain.scratchpad import scratchpad_write, todo_write

    update_blackboard(ws, key="task:1", value={"n": 1})
    update_blackboard(ws, key="other", value="x", ttl=600)
    run_qa_harness(ws, scenarios=QA["scenarios"])
    todo_write(ws, todos=TODOS)
    scratchpad_write(ws, file_path="notes/a", content="a")


def _child(value: Any, child_id: str) -> Any:
    return json.loads(json.dumps(value).replace(child_id, "$CHILD"))


def _dumped(value: Any) -> Any:
    """``value`` as the surfaces print it (models by alias: the seeds' camelCase)."""
    from pydantic_core import to_jsonable_python

    return to_jsonable_python(value, by_alias=True)


def test_cli_sets_files_owned_and_the_tool_sets_an_assignee(ws: Workspace, repo: Path) -> None:
    from hive.tools.registry import CallContext, call_tool

    created = _cli(repo, "create", "Own files", "--files", "src/a.py", "--files", "docs/**")
    assert created["files_owned"] == ["src/a.py", "docs/**"]
    changed = _cli(repo, "update", created["id"], "--files", "lib/**")
    assert changed["files_owned"] == ["lib/**"]
    ctx = CallContext(root=str(repo), agent="alice")
    outcome = call_tool(ctx, "hive_update", {"id": created["id"], "assignee": "bob"})
    assert outcome["result"]["assignee"] == "bob"
    made = call_tool(ctx, "hive_create", {"title": "assigned", "assignee": "carol"})
    assert made["result"]["assignee"] == "carol"


# ------------------------------------------------------------------ layers


@functools.cache
def _imports(path: Path) -> frozenset[str]:
    """What ``path`` imports, at the top or in a function; not what it imports only
    for the type checker (``if TYPE_CHECKING:``). Parsed once per test process."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            node.body = []
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return frozenset(found)


def _package(path: Path) -> str:
    return path.relative_to(HIVE).parts[0].removesuffix(".py")


# leaf modules (standard library only), importable from every layer
LEAVES = {
    *("errors", "text", "joiners", "record", "jsontext", "digests", "waits", "times"),
    "eventargs",
}
# a package may import only these hive packages (besides itself)
ALLOWED: dict[str, set[str]] = {
    **{leaf: set() for leaf in LEAVES},
    "text": {"joiners"},  # where a name may hold a joiner (its Unicode tables)
    "eventargs": {"digests", "jsontext"},  # an event line's digest and JSON, without json
    "models": LEAVES,
    "store": LEAVES | {"models"},
    "git": LEAVES | {"models", "store"},
    "domain": LEAVES | {"models", "store", "git"},
    "ops": LEAVES | {"models", "store", "git", "domain"},
    "tools": LEAVES | {"models", "store", "git", "domain", "ops"},
    "serve": LEAVES | {"models", "store", "git", "domain", "ops"},
    "agents": LEAVES | {"models", "store", "git", "domain", "ops", "tools"},
    "cli": LEAVES | {"models", "store", "git", "domain", "ops", "tools", "serve"},
    "__main__": {"cli"},  # python -m hive
    "__init__": set(),  # hive/__init__.py: the version
}


def test_layers_import_only_downward() -> None:
    wrong: list[str] = []
    for path in sorted(HIVE.rglob("*.py")):
        package = _package(path)
        allowed = ALLOWED.get(package)
        if allowed is None:
            wrong.append(f"{path.relative_to(ROOT)}: a package the layer table does not know")
            continue
        for name in _imports(path):
            parts = name.split(".")
            if parts[0] != "hive" or len(parts) < 2 or parts[1] in ("__version__",):
                continue
            target = parts[1]
            if target != package and target not in allowed:
                wrong.append(f"{path.relative_to(ROOT)} imports {name}")
    assert not wrong, "\n".join(wrong)


def _module_of(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_graph() -> dict[str, set[str]]:
    """hive's modules and the hive modules each imports (the deepest module a
    name resolves to: ``from hive.domain import mail`` is ``hive.domain.mail``)."""
    modules = {_module_of(path): path for path in HIVE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        targets: set[str] = set()
        for name in _imports(path):
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name and name != module:
                targets.add(name)
        graph[module] = targets
    return graph


def _circles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components with more than one module (Tarjan's
    algorithm, iterative)."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    for start in sorted(graph):
        if start in order:
            continue
        work = [(start, iter(sorted(graph[start])))]
        order[start] = low[start] = len(order)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in order:
                    order[target] = low[target] = len(order)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                elif target in on_stack:
                    low[node] = min(low[node], order[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == order[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(component)
    return found


def test_the_circle_finder_finds_circles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}}
    assert _circles(graph) == [{"a", "b", "c"}]


def test_no_import_circles_between_modules() -> None:
    """No two modules import each other, directly or round a longer path, at the top or
    in a function: the tree reads downward."""
    circles = [sorted(circle) for circle in _circles(_import_graph())]
    assert not circles, circles


def test_no_surface_imports_the_cli_and_no_private_apis() -> None:
    offenders = []
    for path in sorted(HIVE.rglob("*.py")):
        imported = _imports(path)
        if _package(path) not in ("cli", "__main__") and any(
            name.startswith("hive.cli") for name in imported
        ):
            offenders.append(f"{path}: imports hive.cli")
        for name in imported:  # another library's private modules (``typer._click``)
            parts = name.split(".")
            if parts[0] != "hive" and any(p.startswith("_") for p in parts[1:]):
                offenders.append(f"{path}: imports the private {name}")
    assert not offenders, offenders


# ------------------------------------------------------------------ exit codes


def _all_errors() -> set[type[HiveError]]:
    for module in pkgutil.walk_packages(hive.__path__, "hive."):
        if module.name.startswith(("hive.serve", "hive.agents", "hive.__main__")):
            continue
        importlib.import_module(module.name)
    found: set[type[HiveError]] = set()
    stack: list[type[HiveError]] = [HiveError]
    while stack:
        cls = stack.pop()
        found.add(cls)
        stack.extend(cls.__subclasses__())
    return found


def test_the_exit_code_table_is_the_code() -> None:
    text = (ROOT / "docs" / "cli.md").read_text()
    documented = {int(code) for code in re.findall(r"^\| (\d+) \| ", text, re.M)}
    returned = {cls.exit_code for cls in _all_errors()} | {0, 2, 70, 130}
    assert documented == returned, (sorted(documented), sorted(returned))


def test_the_refusal_of_an_unknown_identity_is_in_the_table_and_the_quickstart() -> None:
    """``user.useConfigOnly`` with no identity git accepts: hive's refusal exits with the
    code whose row of docs/cli.md's table names it, and the quickstart says that code."""
    from hive.git.ident import unknown_identity

    code = unknown_identity("fatal: no email was given").exit_code
    table = (ROOT / "docs" / "cli.md").read_text()
    row = re.search(rf"^\| {code} \| (.*) \|$", table, re.M)
    assert row is not None and "user.useConfigOnly" in row.group(1), row
    quickstart = " ".join((ROOT / "docs" / "quickstart.md").read_text().split())
    assert f"`user.useConfigOnly` set it refuses with exit {code}," in quickstart


@pytest.mark.parametrize("op", operations(), ids=lambda op: op.name)
def test_every_operation_says_what_it_raises_and_writes(op: Operation) -> None:
    assert op.summary.endswith(".") and len(op.summary) <= 80
    assert all(issubclass(error, HiveError) for error in op.errors)
    assert isinstance(op.writes, bool)
    for name, info in op.params.model_fields.items():
        assert re.fullmatch(r"[a-z_]+", name), name
        assert info.annotation is not Any, (op.name, name)


# ------------------------------------------------------------------ every command


def _leaves(command: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    children = getattr(command, "commands", None)
    if not children:
        return [(path, command)]
    found: list[tuple[tuple[str, ...], Any]] = []
    for name, child in children.items():
        found += _leaves(child, (*path, name))
    return found


# servers and commands whose output is JSON already (they take --json before or after
# the command like every command: the entry point takes it out)
JSON_BY_NATURE = {("mcp",), ("serve",), ("tools", "schema"), ("tools", "docs"), ("tools", "run")}


def test_the_commands_json_by_nature_take_json_too(repo: Path) -> None:
    """What the entry point does with --json after them (the options take it out)."""
    from tests.inprocess import run_hive

    docs = run_hive(["-C", str(repo), "tools", "docs", "--json"])
    assert docs.returncode == 0 and json.loads(docs.stdout)["markdown"].startswith("<!--")
    for command in (["tools", "schema"], ["tools", "list"]):
        shown = run_hive(["-C", str(repo), *command, "--json"])
        assert shown.returncode == 0 and isinstance(json.loads(shown.stdout), list), command


def test_every_command_takes_json_and_the_cli_has_a_version(repo: Path) -> None:
    import typer

    from hive.cli.main import app

    leaves = _leaves(typer.main.get_command(app))
    assert len(leaves) > 60
    missing = [
        " ".join(path)
        for path, command in leaves
        if path not in JSON_BY_NATURE
        and "--json" not in {name for p in command.params for name in getattr(p, "opts", [])}
    ]
    assert not missing, missing
    version = CliRunner().invoke(app, ["--version"])
    assert version.exit_code == 0 and version.stdout == f"hive {hive.__version__}\n"


# surfaces rather than operations: servers, the tools' own runner and descriptions, the
# demo, the swarm supervisor and git's hook entry (docs/architecture.md says why)
HAND_WRITTEN = {("mcp",), ("serve",), ("demo",), ("swarm", "run"), ("hooks", "run")}
HAND_WRITTEN |= {("tools", "run"), ("tools", "schema"), ("tools", "list"), ("tools", "docs")}


def test_every_command_is_generated_from_an_operation_but_the_listed_surfaces() -> None:
    import typer

    from hive.cli.main import app

    generated = {command.path for op in operations() for command in op.commands}
    leaves = {path for path, _ in _leaves(typer.main.get_command(app))}
    assert leaves - generated == HAND_WRITTEN
    assert generated <= leaves


def test_demo_takes_json() -> None:
    from hive.cli.main import app

    result = CliRunner().invoke(app, ["demo", "--help"])
    assert result.exit_code == 0 and "--json" in result.stdout


def test_a_generated_command_reports_bad_values_like_the_tool(ws: Workspace, repo: Path) -> None:
    from hive.cli.main import app
    from hive.tools.registry import CallContext, call_tool

    result = CliRunner().invoke(
        app, ["-C", str(repo), "--json", "create", "x", "-t", "story"], env=agent_env(repo, "alice")
    )
    assert result.exit_code == 2
    error = json.loads(result.stdout)
    assert error["code"] == "invalid_input" and error["field"] == "type"
    assert "--type" in error["error"] and "'story'" in error["error"]
    ctx = CallContext(root=str(repo), agent="alice")
    tool = call_tool(ctx, "hive_create", {"title": "x", "type": "story"})
    assert tool["code"] == "invalid_arguments" and tool["field"] == "type"


class _TagParams(Params):
    cell_id: str
    labels: list[str] = Field(description="labels to add")
    note: str | None = None


class _Tagged(HiveModel):
    cell_id: str
    labels: list[str]
    note: str | None


def _tag_app(ws: Workspace, command: Command) -> Any:
    """A typer app with one command built from a made-up operation (its result: the
    parameters it was given)."""
    import typer

    from hive.cli.build import Presenter, add_commands

    op = Operation(
        name="tag",
        summary="Tag a cell.",
        params=_TagParams,
        result=_Tagged,
        run=lambda _ws, p: _Tagged(**p.model_dump()),
        writes=False,
        commands=(command,),
    )
    app = typer.Typer(add_completion=False, rich_markup_mode=None)
    app.callback()(lambda: None)  # a group, so that the command keeps its name
    presenter = Presenter(render=lambda result, params, _ws: print(result), opens=lambda: ws)
    add_commands({(): app}, [op], {"tag": presenter}, {"tag"})
    return app


def test_a_list_argument_may_also_be_given_as_a_repeatable_option(ws: Workspace) -> None:
    """``Command.argument_options``: any command's last argument, a list, may also be given
    by its options (as ``hive mail send --to NAME``), each value where it stands on the
    command line, and the command's help lists them."""
    command = Command(
        ("tag",),
        arguments=("cell_id", "labels"),
        short={"note": ("-n",)},
        argument_options={"labels": ("--label", "-l")},
    )
    app = _tag_app(ws, command)
    runner = CliRunner()

    def tagged(*args: str) -> dict[str, Any]:
        result = runner.invoke(app, ["tag", "--json", *args])
        assert result.exit_code == 0, (args, result.output)
        return dict(json.loads(result.stdout))

    assert tagged("A", "x", "--label", "y", "z")["labels"] == ["x", "y", "z"]
    assert tagged("-l", "y", "A", "x", "--label=z") == {
        "cell_id": "A",  # a label before the cell id waits for it: the id comes first
        "labels": ["y", "x", "z"],
        "note": None,
    }
    assert tagged("A", "-ly", "-n", "--label")["labels"] == ["y"]  # -n's value: never a label
    assert tagged("A", "-n", "--label", "--label", "x")["note"] == "--label"
    assert tagged("A", "--label", "-x")["labels"] == ["-x"]  # a value like an option: kept
    assert tagged("A", "x", "--", "-y")["labels"] == ["x", "-y"]
    for args, said in (
        (["A"], "missing LABELS (or --label)"),
        (["A", "x", "--label"], "Option '--label' requires an argument"),
        (["--label", "x"], "Missing argument 'CELL_ID'"),
        (["--label", "x", "--"], "Missing argument 'CELL_ID'"),
    ):
        refused = runner.invoke(app, ["tag", *args])
        assert refused.exit_code == 2 and said in refused.output, (args, refused.output)
    shown = runner.invoke(app, ["tag", "--help"])
    assert "-l, --label TEXT  labels to add; the same as LABELS (repeatable)" in shown.stdout
    for wrong in ({"cell_id": ("--cell",)}, {"note": ("--also",)}):
        with pytest.raises(LookupError, match="only its last argument, a list"):
            _tag_app(ws, replace(command, argument_options=wrong))


def test_a_limit_whose_null_means_all_takes_all_on_the_command_line() -> None:
    """A tool's ``limit: null`` (no limit) is ``--limit all`` on the command line: every
    such count of every command reads ``N`` or ``all`` and says so in its help."""
    from hive.cli.build import offered, parse_params, unlimited
    from hive.errors import InvalidInput

    found = []
    for op in operations():
        for command in op.commands:
            for name in offered(op, command):
                info = op.params.model_fields[name]
                if not unlimited(info):
                    continue
                found.append(f"{op.name}.{name}")
                given = {field: None for field in offered(op, command)}
                need = {f: "x" for f, i in op.params.model_fields.items() if i.is_required()}
                params = parse_params(op, command, {**given, **need, name: "all"})
                assert getattr(params, name) is None, (op.name, name)
                params = parse_params(op, command, {**given, **need, name: "7"})
                assert getattr(params, name) == 7
                with pytest.raises(InvalidInput, match=f"--{name.replace('_', '-')}"):
                    parse_params(op, command, {**given, **need, name: "many"})
    assert {"query_swarm_state.limit", "hive_blocked.limit"} <= set(found), found
    runner = CliRunner()
    from hive.cli.main import app

    shown = runner.invoke(app, ["swarm", "state", "--help"], env={"COLUMNS": "80"}).output
    assert "--limit N|all" in shown and "(or all)" in shown


def test_list_like_results_are_compact_for_agents(ws: Workspace, repo: Path) -> None:
    from hive.domain.cells import create_cell
    from hive.tools.registry import CallContext, call_tool

    for n in range(12):
        create_cell(ws, title=f"A task with a realistic title, number {n}", description="d" * 400)
    ctx = CallContext(root=str(repo), agent="alice")
    ready = call_tool(ctx, "hive_ready", {})["result"]
    keys = {"id", "title", "status", "priority", "type", "assignee"}
    assert len(ready) == 10 and set(ready[0]) == keys
    assert len(json.dumps(ready)) <= 2048
    listed = call_tool(ctx, "hive_query", {})["result"]
    assert "description" not in listed[0] and len(json.dumps(listed)) <= 4096
    whole = call_tool(ctx, "hive_ready", {"verbose": True})["result"]
    assert whole[0]["description"] == "d" * 400


def test_the_blocked_list_is_compact_for_agents(ws: Workspace, repo: Path) -> None:
    """hive_blocked gave an agent 50 whole entries by default, each repeating its open
    blockers' titles (~18 kB with realistic titles): now a page of 10 summaries with the
    blockers' ids, ``verbose`` for their titles and states; a person still sees them."""
    from hive.cli.main import app
    from hive.domain.cells import create_cell
    from hive.tools.registry import CallContext, call_tool

    blocker = create_cell(ws, title="Design the storage schema for every service we run")
    for n in range(12):
        create_cell(
            ws, title=f"A task with a realistic title, number {n}", deps=[f"blocks:{blocker.id}"]
        )
    ctx = CallContext(root=str(repo), agent="alice")
    page = call_tool(ctx, "hive_blocked", {})["result"]
    keys = {"id", "title", "status", "priority", "type", "assignee", "blocked_by"}
    assert len(page) == 10 and all(set(item) == keys for item in page), page[0]
    assert page[0]["blocked_by"] == [blocker.id] and len(json.dumps(page)) <= 2048
    whole = call_tool(ctx, "hive_blocked", {"verbose": True, "limit": None})["result"]
    assert len(whole) == 12 and whole[0]["open_blockers"][0]["title"] == blocker.title
    for given, state in (([], " [open]"), (["--no-verbose"], "")):  # a person: every entry
        shown = CliRunner().invoke(app, ["-C", str(repo), "blocked", *given])
        assert shown.exit_code == 0, shown.output
        assert shown.stdout.count(f" waits on {blocker.id}{state}\n") == 12, shown.stdout


def test_reservations_are_compact_for_agents(ws: Workspace, repo: Path) -> None:
    from hive.tools.registry import CallContext, call_tool

    ctx = CallContext(root=str(repo), agent="alice")
    call_tool(ctx, "swarmmail_init", {"agent_name": "alice"})
    paths = [f"src/module_{n}/**" for n in range(10)]
    reason = "a reason long enough to matter when an agent lists every reservation " * 2
    granted = call_tool(ctx, "swarmmail_reserve", {"paths": paths, "reason": reason})
    assert len(granted["result"]["granted"]) == 10, granted
    listed = call_tool(ctx, "swarmmail_reservations", {})["result"]
    keys = {"id", "agent", "path_pattern", "exclusive", "cell", "expires_at"}
    assert len(listed) == 10 and all(set(item) == keys for item in listed), listed[0]
    assert len(json.dumps(listed)) <= 1600
    whole = call_tool(ctx, "swarmmail_reservations", {"verbose": True})["result"]
    assert whole[0]["reason"] == reason and "created_at" in whole[0]


def test_the_seed_list_tools_are_compact_for_agents(ws: Workspace, repo: Path) -> None:
    """query_swarm_state and context_search answer a page of summaries by default (their
    seed parameters unchanged); ``verbose`` gives the whole records."""
    from hive.cli.main import app
    from hive.domain.cells import create_cell
    from hive.tools.registry import CallContext, call_tool

    for n in range(30):
        create_cell(ws, title=f"Delegated task number {n} about caching", description="d" * 400)
    ctx = CallContext(root=str(repo), agent="alice")
    call_tool(ctx, "delegate_task", {"targetAgent": "bob", "taskPayload": {"instruction": "x"}})
    call_tool(ctx, "update_blackboard", {"key": "plan", "value": "cache first"})
    state = call_tool(ctx, "query_swarm_state", {})["result"]
    assert set(state["tasks"][0]) == {"taskId", "title", "status", "priority", "agentId"}
    assert set(state["agents"][0]) == {"agentId", "status", "tasks"}
    assert state["blackboard"]["plan"] == {"value": "cache first", "sourceAgent": "alice"}
    whole = call_tool(ctx, "query_swarm_state", {"verbose": True})["result"]
    assert "deadline" in whole["tasks"][0] and "timestamp" in whole["blackboard"]["plan"]
    assert len(json.dumps(state)) < len(json.dumps(whole))
    found = call_tool(ctx, "context_search", {"term": "caching"})["result"]["result"]
    assert len(found["matches"]) == 10 and found["total"] == 30
    assert len(json.dumps(found)) <= 2400  # 30 whole matches: ~9 kB
    more = call_tool(ctx, "context_search", {"term": "caching", "limit": 40, "verbose": True})
    assert len(more["result"]["result"]["matches"]) == 30
    for given in ([], ["--no-verbose"]):  # a person reads either shape
        shown = CliRunner().invoke(app, ["-C", str(repo), "swarm", "state", *given])
        assert shown.exit_code == 0 and "task " in shown.stdout, shown.output
        shown = CliRunner().invoke(app, ["-C", str(repo), "search", "caching", *given, "-n", "9"])
        assert shown.exit_code == 0 and "round 1" in shown.stdout, shown.output
        assert "showing 9 of 30 matches (--limit for more)" in shown.stderr


def test_a_page_of_cells_carries_how_many_match(ws: Workspace, repo: Path) -> None:
    """``hive list`` tells what its page leaves out from the one query it ran."""
    from hive.cli.build import ShellCaller
    from hive.cli.main import app
    from hive.domain.cells import create_cell
    from hive.ops.cells import QueryParams, ReadyParams

    for n in range(5):
        create_cell(ws, title=f"cell {n}")
    page = operation("hive_query").call(ShellCaller.of(ws), QueryParams(limit=2))
    assert len(page) == 2 and page.total == 5
    whole = operation("hive_query").call(ShellCaller.of(ws), QueryParams(all=True))
    assert len(whole) == 5 and whole.total == 5
    shown = CliRunner().invoke(app, ["-C", str(repo), "list", "-n", "2"])
    assert shown.exit_code == 0, shown.output
    assert "showing 2 of 5 cells (--all for every one)" in shown.stderr
    every = CliRunner().invoke(app, ["-C", str(repo), "list", "--all"])
    assert every.exit_code == 0 and "showing" not in every.stderr
    ready = CliRunner().invoke(app, ["-C", str(repo), "ready", "-n", "2"])
    assert ready.exit_code == 0, ready.output
    assert "showing 2 of 5 ready cells (--all for every one)" in ready.stderr
    assert operation("hive_ready").call(ShellCaller.of(ws), ReadyParams(limit=2)).total == 5


def test_the_path_parameters_are_marked_in_the_descriptions() -> None:
    """Which parameter holds a path an agent gives relative to its working directory is
    said by the operation (``PathParam``), not by a table of tool names in a surface."""
    from hive.ops.spec import path_parameter
    from hive.tools import registry

    marked = {
        op.name: (found[0], found[1].in_context)
        for op in operations()
        if (found := path_parameter(op.params)) is not None
    }
    assert marked == {
        "fs_list": ("dir", False),
        "search_text": ("dir", False),
        "fs_read": ("path", False),
        "fs_write": ("path", False),
        "file_read": ("path", True),
        "list_files": ("path", True),
    }
    assert not hasattr(registry, "_PATH_ARGS")
    schema = json.dumps(operation("fs_read").params.model_json_schema())
    assert "in_context" not in schema and "PathParam" not in schema


def test_describing_the_operations_opens_no_repository_code() -> None:
    """Every command's start-up imports the operations' descriptions: they import the
    domain's functions only when called (the workspace, git and the store cost ~0.1 s)."""
    import subprocess

    probe = (
        "import sys\nfrom hive.ops.catalog import operations\nassert len(operations()) > 60\n"
        "print(sorted(m for m in sys.modules if m.startswith(('hive.domain.workspace',"
        " 'hive.domain.reading', 'hive.domain.commits', 'hive.git', 'hive.store', 'dulwich'))))"
    )
    found = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=False
    )
    assert found.returncode == 0, found.stderr
    assert found.stdout.strip() == "[]", found.stdout


def test_models_are_built_on_first_use_not_at_import() -> None:
    """Importing the full CLI (every operation's parameter and result model) builds no
    pydantic validator: each model is a HiveModel (``defer_build``), built when a
    command first uses it."""
    import subprocess

    probe = (
        "from hive.cli.main import app\n"
        "from pydantic import BaseModel\n"
        "from hive.models.base import HiveModel\n"
        "def subclasses(kind):\n"
        "    for sub in kind.__subclasses__():\n"
        "        yield sub\n"
        "        yield from subclasses(sub)\n"
        "ours = {c for c in subclasses(BaseModel) if c.__module__.startswith('hive.')}\n"
        "eager = sorted(c.__qualname__ for c in ours if not issubclass(c, HiveModel))\n"
        "built = sorted(c.__qualname__ for c in ours if c.__pydantic_complete__\n"
        "               and type(c.__pydantic_validator__).__name__ != 'MockValSer')\n"
        "print(len(ours), eager, built)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    count, eager, built = done.stdout.split(" ", 2)
    assert int(count) > 100, done.stdout
    assert (eager, built.strip()) == ("[]", "[]"), done.stdout


def test_every_commands_help_fits_80_columns_with_whole_option_names() -> None:
    """``hive X --help`` in an 80-column terminal: no line wider, and every option name
    and alias printed whole (a table cut ``--files-touched,--fi…``)."""
    import typer

    from hive.cli.main import app

    runner = CliRunner()
    for path, command in _leaves(typer.main.get_command(app)):
        shown = runner.invoke(app, [*path, "--help"], terminal_width=80, env={"COLUMNS": "80"})
        assert shown.exit_code == 0, (path, shown.output)
        wide = [line for line in shown.output.splitlines() if len(line) > 80]
        assert not wide, (path, wide)
        assert "…" not in shown.output, (path, shown.output)
        for param in command.params:
            for name in [*getattr(param, "opts", []), *getattr(param, "secondary_opts", [])]:
                if name.startswith("-") and not getattr(param, "hidden", False):
                    assert name in shown.output, (path, name, shown.output)


def test_the_operations_are_in_one_order_whatever_was_imported_first() -> None:
    """The catalogue's order (CLI help, docs/cli.md, the MCP tool list) was the order in
    which the declaring modules happened to be imported: a process that ran a swarm
    before rendering the CLI reference listed 'blocked' and 'stats' elsewhere."""
    import subprocess

    program = (
        "import importlib, sys\n"
        "for name in sys.argv[1:]: importlib.import_module(name)\n"
        "from hive.ops.catalog import operations\n"
        "print(' '.join(op.name for op in operations()))\n"
    )
    orders = {
        subprocess.run(
            [sys.executable, "-c", program, *first],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for first in ([], ["hive.ops.swarm"], ["hive.ops.coord", "hive.ops.files"])
    }
    assert len(orders) == 1, orders


def _nested_models(annotation: Any) -> list[type[BaseModel]]:
    """The pydantic models an argument's type holds (in lists, unions, dicts...), and
    the models their fields hold in turn (``models_in`` names the first level)."""
    from hive.models.base import models_in

    found: list[type[BaseModel]] = []
    for model in models_in(annotation):
        found.append(model)
        for field in model.model_fields.values():
            found += _nested_models(field.annotation)
    return found


def test_objects_inside_an_operation_s_arguments_are_as_strict_as_its_arguments() -> None:
    """hive_create_epic's subtasks took "2" for a number while its own arguments (and
    hive_create's) refused it: a nested model without ``strict`` is validated laxly."""
    nested = {
        (op.name, model.__name__): model.model_config.get("strict")
        for op in operations()
        for field in op.params.model_fields.values()
        for model in _nested_models(field.annotation)
    }
    assert nested, "no operation has an object argument: the check checks nothing"
    assert {key for key, strict in nested.items() if not strict} == set()
