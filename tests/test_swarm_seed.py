"""Every seed-001 example call of the swarm_* tools and hive_create_epic, replayed through
the tool registry with the seed's own parameter names (only cell ids are mapped to real
ones), plus the seed workflow's validate -> hive_create_epic chain and the semantics of
progress "completed"/"failed" and a plain-text evaluation."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from hive.domain.cells import show_cell
from hive.domain.identity import mail_init
from hive.domain.outcomes import load_outcomes
from hive.domain.workspace import Workspace
from hive.tools.registry import CallContext, call_tool
from tests.conftest import assert_clean, git

PROJECT = "/Users/joel/projects/my-app"  # the seed's project path: not a directory here
AGENT_RESPONSE = """Here is the plan.
```json
{"epic": {"title": "User Authentication", "description": "OAuth with refresh tokens"},
 "strategy": "feature-based",
 "subtasks": [
   {"title": "Auth schema", "files": ["src/auth/schema.ts"], "priority": 0, "type": "feature"},
   {"title": "Implement OAuth flow", "files": ["src/auth/oauth.ts", "src/auth/tokens.ts"],
    "dependencies": [], "estimated_complexity": 3, "type": "task"},
   {"title": "Login page", "files": ["src/ui/login/**"], "dependencies": [1]}
 ]}
```
"""


def ok(ctx: CallContext, name: str, args: dict[str, Any]) -> Any:
    answer = call_tool(ctx, name, args)
    assert "error" not in answer, f"{name}: {answer}"
    return answer["result"]


@pytest.fixture
def ctx(ws: Workspace, repo: Path) -> CallContext:
    return CallContext(root=str(repo), agent="coordinator")


def blue_lake(ctx: CallContext) -> CallContext:
    """The worker BlueLake's own session (trusted in-process binding)."""
    return CallContext(root=ctx.root, agent="BlueLake", session="s-BlueLake")


@pytest.fixture
def cells(ctx: CallContext, ws: Workspace) -> dict[str, str]:
    """The seed workflow steps 3-4: validate, then create the epic from validation.data."""
    validation = ok(ctx, "swarm_validate_decomposition", {"response": AGENT_RESPONSE})
    assert validation["valid"] is True
    subtasks = validation["data"]["subtasks"]
    assert {"type", "priority"} <= set(subtasks[0])
    created = ok(
        ctx, "hive_create_epic", {"epic_title": "User Authentication", "subtasks": subtasks}
    )
    for name in ("coordinator", "BlueLake"):
        mail_init(ws.for_actor(name), agent_name=name, session=f"s-{name}")
    return {
        "bd-123": created[0]["id"],
        "bd-123.1": created[1]["id"],
        "bd-123.2": created[2]["id"],
        "bd-123.3": created[3]["id"],
    }


def test_create_epic_passes_validated_subtasks_through(
    ctx: CallContext, ws: Workspace, repo: Path, cells: dict[str, str]
) -> None:
    epic = show_cell(ws, cell_id=cells["bd-123"])
    schema = show_cell(ws, cell_id=cells["bd-123.1"])
    login = show_cell(ws, cell_id=cells["bd-123.3"])
    assert (schema.type, schema.priority, schema.files_owned) == (
        "feature",
        0,
        ["src/auth/schema.ts"],
    )
    assert [(d.type, d.target) for d in login.dependencies] == [("blocks", cells["bd-123.2"])]
    # hive_create_epic got no strategy: hive chose one and stored it on the epic
    assert epic.metadata.get("strategy") in {
        "file-based",
        "feature-based",
        "risk-based",
        "research-based",
    }
    assert git(repo, "log", "-1", "--format=%s").startswith("hive: ")
    assert_clean(repo)


def test_every_seed_example_call_is_accepted(
    ctx: CallContext, ws: Workspace, repo: Path, cells: dict[str, str]
) -> None:
    epic, cell = cells["bd-123"], cells["bd-123.2"]
    init = ok(ctx, "swarm_init", {"project_path": str(repo)})  # the seed's, here
    assert init["hive_available"] is True
    choice = ok(
        ctx, "swarm_select_strategy", {"task": "Add OAuth authentication with refresh tokens"}
    )
    assert (
        choice["strategy"] in init["strategies"]
        and choice["score"]["strategy"] == choice["strategy"]
    )
    ok(ctx, "swarm_select_strategy", {"task": "Add OAuth", "codebase_context": "Next.js app"})
    prompt = ok(
        ctx,
        "swarm_decompose",
        {"task": "Add OAuth authentication", "max_subtasks": 5, "query_cass": True},
    )
    assert "Add OAuth authentication" in prompt["prompt"]
    ok(ctx, "swarm_decompose", {"task": "Add OAuth", "cass_limit": 3, "context": "x"})
    plan = ok(
        ctx,
        "swarm_plan_prompt",
        {"task": "Add OAuth authentication", "strategy": "feature-based", "max_subtasks": 5},
    )
    assert plan["strategy"]["strategy"] == "feature-based"
    auto = ok(
        ctx,
        "swarm_plan_prompt",
        {"task": "Add OAuth", "strategy": "auto", "query_cass": False, "cass_limit": 2},
    )
    assert auto["cass"] == "skipped"
    brief = ok(
        ctx,
        "swarm_subtask_prompt",
        {
            "agent_name": "BlueLake",
            "cell_id": cell,
            "epic_id": epic,
            "subtask_title": "Implement OAuth flow",
            "files": ["src/auth/oauth.ts", "src/auth/tokens.ts"],
            "shared_context": "Use JWT with 5min refresh buffer",
        },
    )
    assert "Use JWT with 5min refresh buffer" in brief["prompt"]
    assert brief["files"] == ["src/auth/oauth.ts", "src/auth/tokens.ts"]
    spawn = ok(
        ctx,
        "swarm_spawn_subtask",
        {
            "cell_id": cell,
            "epic_id": epic,
            "subtask_title": "Implement OAuth flow",
            "files": ["src/auth/oauth.ts"],
        },
    )
    assert spawn["files"] == ["src/auth/oauth.ts"] and spawn["epic_id"] == epic
    status = ok(ctx, "swarm_status", {"epic_id": epic, "project_key": ctx.root})
    assert status["total"] == 3
    worker = blue_lake(ctx)  # the worker's own session: agent_name must be who calls
    progress = ok(
        worker,
        "swarm_progress",
        {
            "project_key": ctx.root,
            "agent_name": "BlueLake",
            "cell_id": cell,
            "status": "in_progress",
            "message": "Schema defined, starting service layer",
            "progress_percent": 40,
            "files_touched": ["src/auth/schema.ts"],
        },
    )
    assert progress["recipients"] == ["coordinator"] and progress["not_posted"] is None
    (repo / "src/auth").mkdir(parents=True)
    (repo / "src/auth/oauth.ts").write_text("export const oauth = 1;\n")
    (repo / "src/auth/tokens.ts").write_text("export const tokens = 1;\n")
    done = ok(
        worker,
        "swarm_complete",
        {
            "project_key": ctx.root,
            "agent_name": "BlueLake",
            "cell_id": cell,
            "summary": "OAuth flow implemented with JWT strategy",
            "files_touched": ["src/auth/oauth.ts", "src/auth/tokens.ts"],
            "evaluation": "Completed successfully, added unit tests",
        },
    )
    assert done["outcome"]["evaluation"] == {"notes": "Completed successfully, added unit tests"}
    assert git(repo, "show", "HEAD:src/auth/oauth.ts") == "export const oauth = 1;\n"
    recorded = ok(
        ctx,
        "swarm_record_outcome",
        {
            "cell_id": cell,
            "duration_ms": 1200000,
            "success": True,
            "error_count": 0,
            "retry_count": 0,
            "files_touched": ["src/auth/oauth.ts"],
            "strategy": "feature-based",
            "criteria": ["tests pass", "no scope creep"],
        },
    )
    assert recorded["criteria"] == ["tests pass", "no scope creep"]
    evaluation = ok(
        ctx,
        "swarm_evaluation_prompt",
        {
            "cell_id": cell,
            "subtask_title": "Implement OAuth flow",
            "files_touched": ["src/auth/oauth.ts"],
        },
    )
    assert "'Implement OAuth flow'" in evaluation["prompt"]
    assert_clean(repo)


def test_seed_values_that_are_still_refused(ctx: CallContext, cells: dict[str, str]) -> None:
    bad = call_tool(
        ctx,
        "swarm_record_outcome",
        {"cell_id": cells["bd-123.1"], "duration_ms": 1, "success": True, "strategy": "vibes"},
    )
    assert bad["code"] == "invalid_arguments" and bad["field"] == "strategy"
    wrong_epic = call_tool(
        ctx,
        "swarm_subtask_prompt",
        {
            "agent_name": "BlueLake",
            "cell_id": cells["bd-123.1"],
            "epic_id": cells["bd-123.2"],
            "subtask_title": "x",
            "files": [],
        },
    )
    assert "belongs to epic" in wrong_epic["error"]
    missing = call_tool(ctx, "swarm_status", {"epic_id": cells["bd-123"], "project_key": PROJECT})
    assert missing["code"] == "invalid_input" and "does not exist" in missing["error"]
    for name, args in (
        ("swarm_complete", {"cell_id": cells["bd-123.1"], "summary": "x"}),
        ("swarm_progress", {"cell_id": cells["bd-123.1"], "status": "in_progress"}),
    ):
        refused = call_tool(
            ctx, name, {**args, "project_key": PROJECT, "agent_name": "coordinator"}
        )
        assert refused["code"] == "invalid_input" and refused["field"] == "project_key"


def test_progress_completed_keeps_the_cell_open_and_failed_records_a_failure(
    ctx: CallContext, ws: Workspace, repo: Path, cells: dict[str, str]
) -> None:
    first, second = cells["bd-123.1"], cells["bd-123.2"]
    worker = blue_lake(ctx)
    done = ok(
        worker,
        "swarm_progress",
        {
            "project_key": ctx.root,
            "agent_name": "BlueLake",
            "cell_id": first,
            "status": "completed",
        },
    )
    assert done["cell"]["status"] == "in_progress" and done["percent"] == 100
    assert "swarm_complete" in done["next_step"]
    before = git(repo, "rev-parse", "HEAD")
    failed = ok(
        worker,
        "swarm_progress",
        {
            "project_key": ctx.root,
            "agent_name": "BlueLake",
            "cell_id": second,
            "status": "failed",
            "message": "provider API is down",
        },
    )
    assert git(repo, "rev-list", "--count", f"{before.strip()}..HEAD").strip() == "1"
    assert show_cell(ws, cell_id=second).status == "blocked"
    outcome = load_outcomes(ws)[-1]
    assert (outcome.cell_id, outcome.success, outcome.source) == (second, False, "swarm_progress")
    assert outcome.summary == "provider API is down" and failed["outcome"]["id"] == outcome.id
    status = ok(ctx, "swarm_status", {"epic_id": cells["bd-123"], "project_key": ctx.root})
    assert (status["in_progress"], status["blocked"], status["open"]) == (1, 2, 0)


def test_evaluation_string_holding_json_is_parsed(
    ctx: CallContext, repo: Path, cells: dict[str, str]
) -> None:
    refused = call_tool(
        blue_lake(ctx),
        "swarm_complete",
        {
            "project_key": ctx.root,
            "agent_name": "BlueLake",
            "cell_id": cells["bd-123.1"],
            "summary": "x",
            "evaluation": json.dumps({"passed": False, "notes": "tests fail"}),
        },
    )
    assert refused["code"] == "gate_failed"
    assert show_cell(Workspace(str(repo)), cell_id=cells["bd-123.1"]).status == "open"


def test_every_project_path_is_checked_alike(ws: Workspace, repo: Path, tmp_path: Path) -> None:
    """swarm_init's project_path said 'must be this repository' but took any path and
    answered with this repository's counts under it; swarmmail_init took a directory that
    does not exist. Every tool that takes a project path now refuses both, naming the
    field, and takes the repository or a directory in it."""
    elsewhere = tmp_path / "other-project"
    elsewhere.mkdir()
    (repo / "src").mkdir()
    ctx = CallContext(root=str(repo))
    for name in ("swarm_init", "swarmmail_init"):
        for path, says in ((str(elsewhere), "is not this repository"), ("no/such", "not exist")):
            refused = call_tool(ctx, name, {"project_path": path})
            assert refused["code"] == "invalid_input", (name, refused)
            assert refused["field"] == "project_path" and says in refused["error"], refused
    assert ok(ctx, "swarm_init", {"project_path": str(repo / "src")})["hive_available"]
    assert ok(ctx, "swarm_init", {"project_path": str(repo)})["project_path"] == str(repo)
    assert ok(ctx, "swarmmail_init", {"project_path": "src"})["project_key"] == str(repo)


def test_swarm_status_of_a_subtask_names_its_epic(ws: Workspace, repo: Path) -> None:
    """A worker asking swarm_status about its own subtask (the id it knows) was told
    only that it is no epic; the error now names the epic to ask about, also from a
    subtask's subtask, and nothing for a cell under no epic."""
    ctx = CallContext(root=str(repo), agent="coordinator")
    plan = {"epic_title": "E", "subtasks": [{"title": "a"}]}
    epic, subtask = (cell["id"] for cell in ok(ctx, "hive_create_epic", plan))
    lone = ok(ctx, "hive_create", {"title": "lone"})["id"]
    no_epic = "is a task, not an epic, and has no subtasks"
    asked = call_tool(ctx, "swarm_status", {"epic_id": subtask})
    assert asked["code"] == "invalid_input"
    assert asked["error"] == f"{subtask} {no_epic}; give its epic, {epic}"
    part = ok(ctx, "hive_create", {"title": "part", "parent": subtask})["id"]
    deeper = call_tool(ctx, "swarm_status", {"epic_id": part})["error"]
    assert deeper == f"{part} {no_epic}; give its epic, {epic}"
    assert call_tool(ctx, "swarm_status", {"epic_id": lone})["error"] == f"{lone} {no_epic}"
    assert ok(ctx, "swarm_status", {"epic_id": epic})["total"] == 1


def test_swarm_init_names_the_calling_agent(ws: Workspace, repo: Path) -> None:
    """An agent registered by another session ('hive agent register', a restarted server)
    is the caller swarm_init reports: it said agent null. A wrong project_key's error
    names its field."""
    from hive.domain.identity import register_agent

    register_agent(ws, name="BlueLake")
    bound = CallContext(root=str(repo), agent="BlueLake", session="mcp:other")
    assert call_tool(bound, "swarm_init", {})["result"]["agent"] == "BlueLake"
    assert call_tool(CallContext(root=str(repo)), "swarm_init", {})["result"]["agent"] is None
    cell = call_tool(bound, "hive_create", {"title": "t"})["result"]["id"]
    refused = call_tool(bound, "swarm_status", {"epic_id": cell, "project_key": "/"})
    assert refused["field"] == "project_key" and "not this repository" in refused["error"]


def test_a_workers_reports_over_mcp_answer_the_cell_in_brief(ws: Workspace, repo: Path) -> None:
    """swarm_progress and swarm_complete answered the whole cell, whose notes hold every
    report so far: each answer longer than the last (~15 kB after ten reports). Over
    the real stdio transport each answer now carries the cell's summary, the same size
    at the tenth report as at the first; hive_query gives the whole cell on request."""
    import anyio
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    from tests.hivefork import mcp_server

    env = {k: v for k, v in os.environ.items() if k not in ("HIVE_AGENT", "HIVE_AGENT_TOKEN")}
    server = mcp_server(["-C", str(repo), "--actor", "BlueLake", "mcp"], env=env)

    async def scenario() -> tuple[list[int], dict[str, Any], dict[str, Any]]:
        async with stdio_client(server) as (read, write), ClientSession(read, write) as agent:
            await agent.initialize()

            async def call(name: str, args: dict[str, Any]) -> Any:
                answer = await agent.call_tool(name, args)
                assert not answer.is_error, answer.content[0].text
                return json.loads(answer.content[0].text)

            cell = (await call("hive_create", {"title": "t", "description": "d" * 2000}))["id"]
            await call("hive_start", {"id": cell})
            sizes = []
            for step in range(10):
                report = {"cell_id": cell, "status": "in_progress", "message": f"{step} " * 100}
                sizes.append(len(json.dumps(await call("swarm_progress", report))))
            done = await call("swarm_complete", {"cell_id": cell, "summary": "done"})
            whole = await call("hive_query", {"id": cell})
            return sizes, done, whole

    sizes, done, whole = anyio.run(scenario)
    assert max(sizes) <= 1024 and max(sizes) - min(sizes) <= 8, sizes
    assert set(done["cell"]) == {"id", "title", "status", "priority", "type", "assignee"}
    assert done["cell"]["status"] == "closed" and done["outcome"]["summary"] == "done"
    assert whole["notes"].count("in_progress") == 10 and whole["description"] == "d" * 2000
