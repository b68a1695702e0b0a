"""Spoofing through every surface is refused and changes nothing: MCP with the
official client (two servers, two identities), the JSON envelope and the CLI."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest

from hive.domain.cells import create_cell, start_cell
from hive.domain.identity import issue_credential, mail_init
from hive.domain.mail import send_message
from hive.domain.reservations import reserve
from hive.domain.workspace import Workspace
from tests.conftest import agent_env, assert_clean, git
from tests.hivefork import mcp_server
from tests.inprocess import run_hive


def state(repo: Path) -> tuple[str, str, dict[str, str]]:
    """HEAD, the mail log and every file under .hive/: what a refused call leaves alone."""
    files = {
        str(path.relative_to(repo)): path.read_text()
        for path in sorted((repo / ".hive").rglob("*"))
        if path.is_file()
    }
    mail = git(repo, "rev-parse", "refs/hive/mail").strip()
    return git(repo, "rev-parse", "HEAD").strip(), mail, files


@pytest.fixture
def world(ws: Workspace, repo: Path) -> dict[str, Any]:
    """BlueLake (a runner issued its credential) claimed a cell, reserved src/** and has
    a message from alice; Mallory is another agent of the same repository."""
    blue = issue_credential(Workspace(str(repo), from_env=False), name="BlueLake")
    as_blue = Workspace(str(repo), from_env=False, token=blue.token)
    cell = create_cell(ws, title="auth service", files=["src/**"])
    start_cell(as_blue, cell_id=cell.id)
    held = reserve(as_blue, paths=["src/**"], cell=cell.id).granted[0]
    alice = Workspace(str(repo), actor="alice")
    mail_init(alice, agent_name="alice")
    message = send_message(alice, to=["BlueLake"], subject="keys", body="private")
    (repo / "src").mkdir()
    (repo / "src/auth.py").write_text("TOKEN = 1\n")
    return {
        "cell": cell.id,
        "reservation": held.id,
        "message": message.message_id,
        "blue": blue.token,
    }


def _server(repo: Path, *args: str, token: str | None = None) -> Any:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_")}
    if token:
        env["HIVE_AGENT_TOKEN"] = token
    return mcp_server(["-C", str(repo), "mcp", *args], env=env)


def _answer(result: Any) -> dict[str, Any]:
    """A tool result as a dict: the error, or ``{"result": ...}`` for a list."""
    payload = json.loads(result.content[0].text)
    answer: dict[str, Any] = payload if isinstance(payload, dict) else {"result": payload}
    answer["is_error"] = result.is_error
    return answer


SPOOFS: list[tuple[str, dict[str, Any], str]] = [
    ("swarm_complete", {"agent_name": "BlueLake", "summary": "done"}, "not_your_identity"),
    ("swarm_progress", {"agent_name": "BlueLake", "status": "blocked"}, "not_your_identity"),
    ("swarmmail_init", {"agent_name": "BlueLake"}, "not_your_identity"),
    ("swarm_complete", {"summary": "done", "files_touched": ["src/auth.py"]}, "not_owner"),
    ("swarm_progress", {"status": "failed", "message": "x"}, "not_owner"),
    ("hive_close", {"reason": "mine"}, "not_owner"),
    ("hive_close", {"reason": "mine", "force": True}, "not_owner"),
    ("hive_update", {"status": "open"}, "not_owner"),
    ("hive_update", {"assignee": "Mallory"}, "not_owner"),
    ("hive_delete", {"force": True, "reason": "x"}, "not_owner"),
    ("swarmmail_release", {"reservation_ids": "RES"}, "not_owner"),
    ("swarmmail_release", {"agent": "BlueLake", "force": True, "reason": "x"}, "not_owner"),
    ("swarmmail_read_message", {"message_id": "MSG"}, "not_owner"),
    ("swarmmail_ack", {"message_id": "MSG"}, "not_owner"),
    ("swarmmail_reserve", {"paths": ["src/auth.py"]}, "reservation_conflict"),
    ("swarmmail_reserve", {"paths": ["src/auth.py"], "force": True, "reason": "x"}, "not_owner"),
]


def _spoof_args(world: dict[str, Any], name: str, args: dict[str, Any]) -> dict[str, Any]:
    filled = dict(args)
    if name.startswith(("hive_", "swarm_")) and name != "swarmmail_init":
        filled.setdefault("cell_id" if name.startswith("swarm_") else "id", world["cell"])
    if filled.get("reservation_ids") == "RES":
        filled["reservation_ids"] = [world["reservation"]]
    if filled.get("message_id") == "MSG":
        filled["message_id"] = world["message"]
    return filled


def test_two_mcp_servers_two_identities_spoofing_refused_restart_keeps_the_name(
    world: dict[str, Any], repo: Path
) -> None:
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    async def scenario() -> dict[str, Any]:
        seen: dict[str, Any] = {"spoofs": []}
        async with (
            stdio_client(_server(repo, "--agent", "Mallory")) as (r1, w1),
            ClientSession(r1, w1) as mallory,
            stdio_client(_server(repo, token=world["blue"])) as (r2, w2),
            ClientSession(r2, w2) as blue,
        ):
            await mallory.initialize()
            await blue.initialize()
            seen["mallory"] = _answer(await mallory.call_tool("swarmmail_init", {}))
            seen["blue"] = _answer(await blue.call_tool("swarmmail_init", {}))
            seen["before"] = state(repo)  # both registered (Mallory's is in the mail log)
            for name, args, _ in SPOOFS:
                answer = await mallory.call_tool(name, _spoof_args(world, name, args))
                seen["spoofs"].append(_answer(answer))
            seen["after"] = state(repo)
            seen["blue_inbox"] = _answer(await blue.call_tool("swarmmail_inbox", {}))
        return seen

    seen = anyio.run(scenario)
    assert seen["mallory"]["agent_name"] == "Mallory" and seen["mallory"]["token"]
    assert seen["blue"]["agent_name"] == "BlueLake" and "token" not in seen["blue"]
    for (name, _, code), answer in zip(SPOOFS, seen["spoofs"], strict=True):
        assert answer["is_error"] and answer["code"] == code, (name, answer)
    assert "BlueLake" in seen["spoofs"][0]["error"] and "Mallory" in seen["spoofs"][0]["error"]
    assert seen["after"] == seen["before"]  # nothing written: HEAD, .hive/ files, mail log
    assert seen["blue_inbox"]["result"][0]["subject"] == "keys"  # the recipient reads it

    async def restart() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        async with (
            stdio_client(_server(repo, "--agent", "BlueLake", token=world["blue"])) as (r, w),
            ClientSession(r, w) as again,
        ):
            await again.initialize()
            seen["init"] = _answer(await again.call_tool("swarmmail_init", {}))
            seen["release"] = _answer(await again.call_tool("swarmmail_release", {}))
        async with (
            stdio_client(_server(repo, "--agent", "BlueLake")) as (r, w),
            ClientSession(r, w) as impostor,
        ):
            await impostor.initialize()
            seen["acting"] = _answer(await impostor.call_tool("hive_close", {"id": world["cell"]}))
            seen["init_taken"] = _answer(await impostor.call_tool("swarmmail_init", {}))
        return seen

    restarted = anyio.run(restart)
    assert restarted["init"]["agent_name"] == "BlueLake" and restarted["init"]["reattached"]
    assert restarted["release"]["released"][0]["id"] == world["reservation"]
    assert restarted["acting"]["code"] == "not_your_identity"
    assert "BlueLake is registered" in restarted["acting"]["error"]
    assert restarted["init_taken"]["code"] == "name_taken"
    assert "Hive-Agent: BlueLake" in git(repo, "log", "-1", "--format=%B")
    assert git(repo, "log", "-1", "--format=%an").strip() == "BlueLake"


def _envelope(repo: Path, calls: list[dict[str, Any]], env: dict[str, str]) -> dict[str, Any]:
    done = run_hive(
        ["-C", str(repo), "tools", "run"],
        input=json.dumps({"tool_calls": calls}),
        env=env,
        module="hive.cli.main",
    )
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def test_the_envelope_refuses_spoofing_and_changes_nothing(
    world: dict[str, Any], repo: Path
) -> None:
    mallory = agent_env(repo, "Mallory")  # a runner registered Mallory
    before = state(repo)
    calls = [{"name": name, "args": _spoof_args(world, name, args)} for name, args, _ in SPOOFS]
    transcript = _envelope(repo, calls, mallory)
    assert transcript["agent"] == "Mallory"
    codes = [result.get("code") for result in transcript["results"]]
    assert codes == [code for _, _, code in SPOOFS]
    assert state(repo) == before
    lying = run_hive(
        ["-C", str(repo), "--json", "tools", "run"],
        input=json.dumps({"tool_calls": calls}),
        env={**mallory, "HIVE_AGENT": "BlueLake"},
        module="hive.cli.main",
    )
    assert lying.returncode == 5 and "you are Mallory" in lying.stderr
    assert state(repo) == before


def _cli(repo: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return run_hive(["-C", str(repo), *args], env=env, module="hive.cli.main")


def test_the_cli_refuses_names_without_credentials_and_people_override(
    world: dict[str, Any], repo: Path
) -> None:
    cell = world["cell"]
    plain = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_")}
    claims_blue = {**plain, "HIVE_AGENT": "BlueLake"}
    mallory = agent_env(repo, "Mallory")
    complete = ["swarm", "complete", cell, "-s", "x"]
    before = state(repo)
    refused = [
        _cli(repo, "--json", "mail", "inbox", env=claims_blue),
        _cli(repo, "--json", "mail", "read", str(world["message"]), env=claims_blue),
        _cli(repo, "--json", "mail", "send", "alice", "-s", "hi", env=claims_blue),
        _cli(repo, "--json", "close", cell, env=claims_blue),
        _cli(repo, "--json", "release", "--all", env=claims_blue),
        _cli(repo, "--json", "--actor", "Any Name", "create", "forged", env=plain),
        _cli(repo, "--json", "--actor", "BlueLake", *complete, env=mallory),
        _cli(repo, "--json", *complete, "--agent-name", "BlueLake", env=mallory),
    ]
    for result in refused:
        assert result.returncode == 5, result.stderr
        assert json.loads(result.stdout)["code"] == "not_your_identity", result.stdout
        assert "Traceback" not in result.stderr
    owner = _cli(repo, "--json", "close", cell, env=mallory)
    assert owner.returncode == 5 and json.loads(owner.stdout)["code"] == "not_owner"
    assert state(repo) == before
    # the pre-commit hook: HIVE_AGENT alone is a person, blocked by BlueLake's reservation
    from hive.domain.hooks import install_hook

    install_hook(Workspace(str(repo)))
    git(repo, "add", "src/auth.py")
    sneaky = subprocess.run(
        ["git", "-C", str(repo), "commit", "-qm", "x"],
        env=claims_blue,
        capture_output=True,
        text=True,
        check=False,
    )
    assert sneaky.returncode != 0 and "src/auth.py is reserved by BlueLake" in sneaky.stderr
    assert "proves nothing without HIVE_AGENT_TOKEN" in sneaky.stderr
    lying = subprocess.run(  # Mallory's credential, BlueLake's name: it is Mallory committing
        ["git", "-C", str(repo), "commit", "-qm", "x"],
        env={**mallory, "HIVE_AGENT": "BlueLake"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert lying.returncode != 0 and "Mallory may not commit it" in lying.stderr
    assert "HIVE_AGENT=BlueLake is not the agent of HIVE_AGENT_TOKEN" in lying.stderr
    real = {**plain, "HIVE_AGENT_TOKEN": world["blue"]}
    committed = subprocess.run(
        ["git", "-C", str(repo), "commit", "-qm", "auth"],
        env=real,
        capture_output=True,
        text=True,
        check=False,
    )
    assert committed.returncode == 0, committed.stderr
    # a person overrides with --force and --reason; it is recorded and listed
    closed = _cli(repo, "close", cell, "--force", "--reason", "BlueLake crashed", env=plain)
    assert closed.returncode == 0, closed.stderr
    assert "Hive-Override: Test User (person) close" in git(repo, "log", "-1", "--format=%B")
    listed = _cli(repo, "log", "--overrides", env=plain)
    assert "override" in listed.stdout and "BlueLake crashed" in listed.stdout
    events = _cli(repo, "--json", "events", "-n", "5", env=plain)
    assert '"event": "override"' in events.stdout
    assert_clean(repo)
