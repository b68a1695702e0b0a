"""The bound identity of a tool surface: swarmmail_init names the caller."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import anyio

from hive.domain.workspace import Workspace
from hive.tools.registry import CallContext, call_tool
from tests.hivefork import mcp_server
from tests.inprocess import run_hive
from tests.test_tools import envelope

GENERATED = re.compile(r"^[A-Z][a-z]+[A-Z][a-z]+$")


def _server(repo: Path, *extra: str) -> Any:
    env = {k: v for k, v in os.environ.items() if k not in ("HIVE_AGENT", "HIVE_SESSION")}
    return mcp_server(["-C", str(repo), *extra, "mcp"], env=env)


def test_two_mcp_servers_never_share_an_identity(ws: Workspace, repo: Path) -> None:
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    (repo / "src").mkdir()

    async def scenario() -> list[dict[str, Any]]:
        outcomes: list[dict[str, Any]] = []
        async with (
            stdio_client(_server(repo)) as (r1, w1),
            ClientSession(r1, w1) as one,
            stdio_client(_server(repo)) as (r2, w2),
            ClientSession(r2, w2) as two,
        ):
            await one.initialize()
            await two.initialize()
            for session in (one, two):
                init = await session.call_tool("swarmmail_init", {"project_path": str(repo)})
                reserve = await session.call_tool("swarmmail_reserve", {"paths": ["src/a.py"]})
                inbox = await session.call_tool("swarmmail_inbox", {"limit": 10})
                outcomes.append({"init": init, "reserve": reserve, "inbox": inbox})
            wrong = await one.call_tool("swarmmail_init", {"project_path": "/elsewhere"})
            outcomes.append({"wrong": wrong})
        return outcomes

    first, second, last = anyio.run(scenario)
    names = [json.loads(o["init"].content[0].text)["agent_name"] for o in (first, second)]
    assert names[0] != names[1]
    assert all(GENERATED.match(name) for name in names), names
    granted = json.loads(first["reserve"].content[0].text)
    assert not first["reserve"].is_error and granted["granted"][0]["agent"] == names[0]
    assert second["reserve"].is_error
    assert json.loads(second["reserve"].content[0].text)["code"] == "reservation_conflict"
    assert not first["inbox"].is_error and not second["inbox"].is_error
    assert last["wrong"].is_error
    wrong = json.loads(last["wrong"].content[0].text)
    assert wrong["code"] == "invalid_input" and "project_path" in wrong["error"]


def _unbound_envelope(repo: Path, calls: list[dict[str, Any]], **env: str) -> dict[str, Any]:
    """``hive tools run`` with no identity given: the session is unbound until it
    registers (or proves one with HIVE_AGENT_TOKEN in ``env``)."""

    clean = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_")}
    done = run_hive(
        ["-C", str(repo), "tools", "run"],
        input=json.dumps({"tool_calls": calls}),
        env={**clean, **env},
        module="hive.cli.main",
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_later_calls_act_as_the_name_swarmmail_init_returned(ws: Workspace, repo: Path) -> None:
    results = _unbound_envelope(
        repo,
        [
            {"name": "swarmmail_reserve", "args": {"paths": ["src/x.py"]}},
            {"name": "swarmmail_init", "args": {"agent_name": "GreenHill"}},
            {"name": "swarmmail_init", "args": {"agent_name": "Peer"}},
            {"name": "swarmmail_send", "args": {"to": ["GreenHill"], "subject": "hi"}},
            {"name": "swarmmail_reserve", "args": {"paths": ["src/x.py"]}},
        ],
    )["results"]
    assert results[0]["code"] == "not_registered" and "swarmmail_init" in results[0]["error"]
    init = results[1]["result"]
    assert init["agent_name"] == init["name"] == "GreenHill"
    assert init["token"].startswith("hive_")  # shown once, to the session that registered
    assert results[2]["code"] == "not_your_identity"  # the identity is fixed once registered
    assert "result" in results[3], results[3]
    assert results[4]["result"]["granted"][0]["agent"] == "GreenHill"


def test_init_without_a_name_generates_one_and_binds_it(ws: Workspace, repo: Path) -> None:
    ctx = CallContext(root=str(repo), session="s-1")
    first = call_tool(ctx, "swarmmail_init", {})["result"]
    assert GENERATED.match(first["agent_name"]) and ctx.agent == first["agent_name"]
    again = call_tool(ctx, "swarmmail_init", {})["result"]
    assert again["agent_name"] == first["agent_name"] and again["reattached"]
    explicit = CallContext(root=str(repo), agent="Tee", session="s-2")
    assert call_tool(explicit, "swarmmail_init", {})["result"]["agent_name"] == "Tee"


def test_inbox_limit_above_five_is_capped_not_refused(ws: Workspace, repo: Path) -> None:
    results = envelope(
        repo,
        [
            {"name": "swarmmail_init", "args": {"agent_name": "bob"}},
            *[
                {"name": "swarmmail_send", "args": {"to": ["bob"], "subject": f"m{n}"}}
                for n in range(7)
            ],
            {"name": "swarmmail_inbox", "args": {"limit": 10}},
        ],
    )["results"]
    assert len(results[-1]["result"]) == 5


def test_a_later_envelope_keeps_the_identity_with_its_credential(ws: Workspace, repo: Path) -> None:
    first = _unbound_envelope(repo, [{"name": "swarmmail_init", "args": {}}])["results"][0]
    name, token = first["result"]["agent_name"], first["result"]["token"]
    assert GENERATED.match(name)
    reserve = [{"name": "swarmmail_reserve", "args": {"paths": ["src/z.py"]}}]
    later = _unbound_envelope(repo, reserve, HIVE_AGENT_TOKEN=token)
    assert later["agent"] == name
    assert later["results"][0]["result"]["granted"][0]["agent"] == name
    session_only = _unbound_envelope(repo, reserve, HIVE_SESSION="shell-1")
    assert session_only["results"][0]["code"] == "not_registered"  # a session proves nothing
    claimed = _unbound_envelope(repo, reserve, HIVE_AGENT=name)  # a name without credential
    assert claimed["results"][0]["code"] == "not_your_identity"
    assert name in claimed["results"][0]["error"] and "registered" in claimed["results"][0]["error"]


def test_a_stale_credential_says_how_to_go_on(ws: Workspace, repo: Path) -> None:
    """A credential that is no agent's (retired, re-issued) refused the envelope with
    no way forward: the refusal names unsetting it to register anew, or the live ones."""
    first = _unbound_envelope(repo, [{"name": "swarmmail_init", "args": {}}])["results"][0]
    name, token = first["result"]["agent_name"], first["result"]["token"]
    assert run_hive(["-C", str(repo), "agent", "retire", name, "--reason", "x"]).returncode == 0
    env = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_")}
    done = run_hive(
        ["-C", str(repo), "--json", "tools", "run"],
        env={**env, "HIVE_AGENT_TOKEN": token},
        input=json.dumps({"tool_calls": [{"name": "hive_ready", "args": {}}]}),
    )
    assert done.returncode == 5 and "Traceback" not in done.stderr
    refused = json.loads(done.stdout)
    assert refused["code"] == "not_your_identity"
    assert "unset HIVE_AGENT_TOKEN to register anew (swarmmail_init" in refused["error"]
    assert "'hive agent list' names the live identities" in refused["error"]
