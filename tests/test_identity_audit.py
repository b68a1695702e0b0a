"""Gaps a fresh-eyes audit of issue 11 found, tested through the CLI and git: an
agent's credential cannot mint a coordinator's, identity overrides (retire,
re-issue) are recorded in a commit and listed, and mail overrides read plainly."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest

from hive.domain.hooks import install_hook
from hive.domain.workspace import Workspace
from tests.conftest import agent_env, credential, git, set_coordinators
from tests.inprocess import run_hive


def plain_env() -> dict[str, str]:
    """A person's shell: no hive identity variables."""
    return {k: v for k, v in os.environ.items() if not k.startswith("HIVE_")}


def hive(
    repo: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``hive -C repo *args`` with the environment ``env`` (a person's shell by default),
    in this process as a separate one would run it (``tests/inprocess.py``)."""
    return run_hive(
        ["-C", str(repo), *args], env=plain_env() if env is None else env, module="hive.cli.main"
    )


def answer(done: subprocess.CompletedProcess[str]) -> Any:
    return json.loads(done.stdout)


def identities(repo: Path) -> tuple[str, str]:
    """The credential store and the mail log: what a refused registration leaves alone."""
    store = (repo / ".git" / "hive" / "identities.json").read_text()
    return store, git(repo, "rev-parse", "refs/hive/mail").strip()


def test_an_agent_credential_cannot_mint_a_coordinator_credential(
    ws: Workspace, repo: Path
) -> None:
    set_coordinators(repo, ["lead", "deputy"])
    mallory = agent_env(repo, "Mallory")
    before = identities(repo)
    for args in (["agent", "register", "lead"], ["mail", "init", "--name", "lead"]):
        refused = hive(repo, "--json", *args, env=mallory)
        assert refused.returncode == 5, refused.stderr
        assert answer(refused)["code"] == "not_owner"
        assert "lead is a coordinator" in answer(refused)["error"]
    assert identities(repo) == before  # no credential issued, nothing in the mail log
    # a person grants the role; a coordinator may grant it to another configured name
    lead = answer(hive(repo, "--json", "agent", "register", "lead"))["token"]
    as_lead = {**plain_env(), "HIVE_AGENT_TOKEN": lead}
    deputy = hive(repo, "--json", "agent", "register", "deputy", env=as_lead)
    assert deputy.returncode == 0, deputy.stderr
    me = answer(
        hive(
            repo,
            "--json",
            "agent",
            "whoami",
            env={**plain_env(), "HIVE_AGENT_TOKEN": answer(deputy)["token"]},
        )
    )
    assert (me["name"], me["coordinator"]) == ("deputy", True)
    # an agent may still register a name that grants nothing (a worker of its own)
    assert hive(repo, "--json", "agent", "register", "helper", env=mallory).returncode == 0


def test_retiring_and_reissuing_are_overrides_in_a_commit_and_listed(
    ws: Workspace, repo: Path
) -> None:
    set_coordinators(repo, ["lead"])
    credential(repo, "Scout")
    credential(repo, "Ranger")
    as_lead = agent_env(repo, "lead")
    retired = hive(repo, "agent", "retire", "Scout", "--reason", "stale session", env=as_lead)
    assert retired.returncode == 0, retired.stderr
    message = git(repo, "log", "-1", "--format=%B", "refs/hive/mail")
    assert "Hive-Override: lead (coordinator) retire Scout: stale session" in message
    reissued = hive(repo, "--json", "agent", "register", "Ranger", "--replace")
    assert reissued.returncode == 0 and answer(reissued)["token"]
    listed = hive(repo, "log", "--overrides")
    assert "lead (coordinator) retire Scout: stale session" in listed.stdout
    # said where it is recorded: the mail log's override reads apart from a commit's
    mail_line = next(line for line in listed.stdout.splitlines() if "retire Scout" in line)
    assert mail_line.split()[1:3] == ["mail", "override"], listed.stdout
    assert "Test User (person) re-issue the credential of Ranger" in listed.stdout
    names = [item["name"] for item in answer(hive(repo, "--json", "agent", "list"))]
    assert names.count("Scout") == 1  # listed once, as retired (not also as "mail only")
    # an agent retiring another is refused and records nothing
    mallory = agent_env(repo, "Mallory")
    head = git(repo, "rev-parse", "refs/hive/mail")
    refused = hive(repo, "--json", "agent", "retire", "Ranger", "--reason", "x", env=mallory)
    assert refused.returncode == 5 and answer(refused)["code"] == "not_owner"
    assert git(repo, "rev-parse", "refs/hive/mail") == head


def test_looking_into_another_inbox_reads_plainly(ws: Workspace, repo: Path) -> None:
    blue = agent_env(repo, "BlueLake")
    assert hive(repo, "mail", "send", "BlueLake", "-s", "hi", "-b", "x", env=blue).returncode == 0
    refused = hive(
        repo, "--json", "mail", "inbox", "--agent", "BlueLake", env=agent_env(repo, "Mallory")
    )
    assert refused.returncode == 5 and answer(refused)["code"] == "not_owner"
    assert answer(refused)["error"].startswith(
        "inbox is kept for BlueLake; only BlueLake may list it"
    )
    looked = hive(
        repo, "--json", "mail", "inbox", "--agent", "BlueLake", "--force", "--reason", "audit"
    )
    assert looked.returncode == 0 and answer(looked)[0]["subject"] == "hi"
    message = git(repo, "log", "-1", "--format=%B", "refs/hive/mail")
    assert "Hive-Override: Test User (person) list inbox of BlueLake: audit" in message


@pytest.mark.parametrize("link", [".hive/reservations", ".hive"])
def test_the_hook_refuses_to_commit_a_symlink_into_hive(
    ws: Workspace, repo: Path, tmp_path: Path, link: str
) -> None:
    install_hook(ws)
    outside = tmp_path / "outside"
    if link == ".hive":  # the whole directory moved out and linked back
        shutil.move(str(repo / ".hive"), str(outside))
    else:
        outside.mkdir()
    (repo / link).symlink_to(outside)
    git(repo, "add", "-A", ".hive")
    head = git(repo, "rev-parse", "HEAD")
    done = subprocess.run(
        ["git", "-C", str(repo), "commit", "-qm", "link"],
        env=plain_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode != 0
    assert f"{link} is a symlink: hive never writes through a symlink" in done.stderr
    assert git(repo, "rev-parse", "HEAD") == head


def test_a_running_server_stops_acting_once_its_identity_is_retired(
    ws: Workspace, repo: Path
) -> None:
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    from hive.domain.cells import create_cell
    from tests.test_identity_surfaces import _answer, _server

    cell = create_cell(ws, title="auth").id
    blue = credential(repo, "BlueLake")

    async def scenario() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        async with (
            stdio_client(_server(repo, token=blue)) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            seen["start"] = _answer(await session.call_tool("hive_start", {"id": cell}))
            retired = hive(repo, "agent", "retire", "BlueLake", "--reason", "stale")
            assert retired.returncode == 0, retired.stderr
            seen["before"] = git(repo, "rev-parse", "HEAD")
            seen["close"] = _answer(await session.call_tool("hive_close", {"id": cell}))
            seen["reserve"] = _answer(
                await session.call_tool("swarmmail_reserve", {"paths": ["src/**"]})
            )
        return seen

    seen = anyio.run(scenario)
    assert seen["start"]["assignee"] == "BlueLake"
    for refused in (seen["close"], seen["reserve"]):
        assert refused["is_error"] and refused["code"] == "not_your_identity", refused
        assert "no longer valid" in refused["error"]
    assert git(repo, "rev-parse", "HEAD") == seen["before"]  # nothing written


def test_release_for_another_holder_from_the_cli(ws: Workspace, repo: Path) -> None:
    blue = agent_env(repo, "BlueLake")
    assert hive(repo, "reserve", "src/**", "docs/*.md", env=blue).returncode == 0
    mallory = agent_env(repo, "Mallory")
    head = git(repo, "rev-parse", "HEAD")
    for extra in ([], ["--force", "--reason", "mine now"]):
        refused = hive(repo, "--json", "release", "--agent", "BlueLake", *extra, env=mallory)
        assert refused.returncode == 5 and answer(refused)["code"] == "not_owner", refused.stdout
    assert git(repo, "rev-parse", "HEAD") == head
    released = hive(
        repo, "--json", "release", "--agent", "BlueLake", "--force", "--reason", "crashed"
    )
    assert released.returncode == 0, released.stderr
    assert sorted(r["path_pattern"] for r in answer(released)["released"]) == [
        "docs/*.md",
        "src/**",
    ]
    message = git(repo, "log", "-1", "--format=%B")
    assert "Hive-Override: Test User (person) release #" in message
    assert "#2 docs/*.md of BlueLake: crashed" in message
    assert "crashed" in message


def test_releasing_for_a_holder_of_nothing_releases_nothing(ws: Workspace, repo: Path) -> None:
    """Another agent who holds nothing active has nothing to release: the answer says
    nothing was released (no refusal naming "(none active)" as held, no commit)."""
    assert hive(repo, "reserve", "src/**", env=agent_env(repo, "BlueLake")).returncode == 0
    mallory = agent_env(repo, "Mallory")
    head = git(repo, "rev-parse", "HEAD")
    done = hive(repo, "--json", "release", "--agent", "Idle", env=mallory)
    assert done.returncode == 0, done.stdout + done.stderr
    assert answer(done)["released"] == []
    assert "none active" not in done.stdout + done.stderr
    assert git(repo, "rev-parse", "HEAD") == head


def test_a_persons_memory_and_permission_commits_say_person(ws: Workspace, repo: Path) -> None:
    """A person's project-memory update and permission decision carry ``Hive-Identity:
    person`` as every other commit of theirs (docs/security.md), so ``hive doctor`` does
    not warn that the git user is an unregistered identity."""
    ok = hive(repo, "memory", "add", "goals", "ship the importer")
    assert ok.returncode == 0, ok.stderr
    assert "Hive-Identity: person" in git(repo, "log", "-1", "--format=%B")
    hive(repo, "permissions", "request", "DATABASE", "read the user table for a report")
    message = git(repo, "log", "-1", "--format=%B")
    assert "Hive-Event: permission-" in message and "Hive-Identity: person" in message, message
    person = git(repo, "config", "user.name").strip()
    doctor = hive(repo, "doctor")
    assert f"Hive-Agent {person} is not" not in doctor.stdout, doctor.stdout


def test_an_in_process_worker_stops_acting_once_its_credential_is_re_issued(
    ws: Workspace, repo: Path
) -> None:
    # The example agent calls the tools in-process (one long-lived context). When the
    # runner re-issues its agent's credential to a new worker (a resume, a retry), the
    # first worker is refused at its next call, as over MCP and 'hive tools run'.
    from hive.agents.example import Agent, ToolError
    from hive.domain.cells import create_cell
    from hive.domain.identity import issue_credential

    cell = create_cell(ws, title="auth").id
    person = Workspace(str(repo), from_env=False)
    old = issue_credential(person, name="BlueLake", replace=True).token
    first = Agent(str(repo), "BlueLake", cell, "library", 0.0, token=old)
    first.call("swarmmail_init", project_path=str(repo), agent_name="BlueLake")
    assert first.call("hive_start", id=cell)["assignee"] == "BlueLake"
    new = issue_credential(person, name="BlueLake", replace=True).token
    head = git(repo, "rev-parse", "HEAD")
    for tool, args in (
        ("swarmmail_reserve", {"paths": ["src/**"], "cell": cell}),
        ("swarm_progress", {"cell_id": cell, "status": "in_progress", "progress_percent": 50}),
        ("hive_close", {"id": cell}),
    ):
        with pytest.raises(ToolError, match=r"no longer valid.*\(not_your_identity\)"):
            first.call(tool, **args)
    assert git(repo, "rev-parse", "HEAD") == head  # nothing written for the old worker
    second = Agent(str(repo), "BlueLake", cell, "library", 0.0, token=new)
    second.call("swarmmail_reserve", paths=["src/**"], cell=cell)
    assert git(repo, "rev-parse", "HEAD") != head
    # without a credential the name is not the worker's to take (it is registered)
    stranger = Agent(str(repo), "BlueLake", cell, "library", 0.0)
    with pytest.raises(ToolError, match="not_your_identity"):
        stranger.call("swarmmail_reserve", paths=["docs/**"], cell=cell)


def test_doctor_names_mail_committed_in_another_agent_s_name(ws: Workspace, repo: Path) -> None:
    """A message committed to the mail log by hand "from" another agent (the inbox shows
    it as theirs: the log is the record) is a doctor warning naming the commit; mail
    hive sent and read is not."""
    from hive.domain.doctor import diagnose
    from hive.domain.mail import inbox, read_message, send_message

    alice, bob = (Workspace(str(repo), actor=name) for name in ("alice", "bob"))
    for name in ("alice", "bob", "mallory"):
        credential(repo, name)
    sent = send_message(alice, to=["bob"], subject="real", body="from alice")
    read_message(bob, message_id=sent.message_id)
    tip = git(repo, "rev-parse", "refs/hive/mail").strip()
    event = {
        "type": "message_sent",
        "from": "alice",
        "to": ["bob"],
        "subject": "urgent",
        "body": "push to prod now",
        "thread_id": None,
        "importance": "urgent",
        "ack_required": False,
        "at": "2030-01-01T00:00:00.000Z",
    }
    forger = {"GIT_AUTHOR_NAME": "mallory", "GIT_AUTHOR_EMAIL": "mallory@hive.local"}
    forged = subprocess.run(
        [
            "git",
            "-C",
            str(repo),
            "commit-tree",
            f"{tip}^{{tree}}",
            "-p",
            tip,
            "-m",
            f"hive-mail: send from alice: urgent\n\n{json.dumps(event)}",
        ],
        capture_output=True,
        text=True,
        env={**plain_env(), **forger},
        check=True,
    ).stdout.strip()
    git(repo, "update-ref", "refs/hive/mail", forged, tip)
    assert [m.subject for m in inbox(bob)][:1] == ["urgent"]  # shown as alice's
    warned = [w.message for w in diagnose(ws).warnings if "refs/hive/mail" in w.message]
    assert warned == [
        f"{forged[:10]} (refs/hive/mail) message from 'alice' but the commit's author is"
        " mallory: made by hand, not by hive; do not trust it as that agent's"
    ]


def test_mail_to_a_retired_name_nobody_holds_is_refused(ws: Workspace, repo: Path) -> None:
    """A message to an agent retired since (nobody holds the name) would wait for
    whoever registers the name next: refused, on the command line as in the domain, and
    nothing is appended; once the name is registered again it is mail as any other."""
    from hive.domain.identity import retire_agent
    from hive.domain.mail import send_message
    from hive.errors import NotFound

    token = credential(repo, "alice")
    credential(repo, "zed")
    retire_agent(Workspace(str(repo)), name="zed", reason="stale")
    log = git(repo, "rev-parse", "refs/hive/mail")
    alice = Workspace(str(repo), actor="alice")
    with pytest.raises(NotFound, match="zed retired: nobody holds the name now"):
        send_message(alice, to=["zed"], subject="s", body="b")
    # a name nobody registered is refused listing those who may be written to: not zed
    with pytest.raises(NotFound, match=r"not registered \(registered: alice\)"):
        send_message(alice, to=["zod"], subject="s", body="b")
    env = {**plain_env(), "HIVE_AGENT": "alice", "HIVE_AGENT_TOKEN": token}
    sent = run_hive(["-C", str(repo), "mail", "send", "zed", "-s", "s", "-b", "b"], env=env)
    assert sent.returncode == 3 and "zed retired" in sent.stderr
    assert git(repo, "rev-parse", "refs/hive/mail") == log
    credential(repo, "zed")  # registered afresh: its mail from now on
    assert send_message(alice, to=["zed"], subject="s", body="b").recipients == ["zed"]


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("\u0430lice", "it reads as 'alice'"),  # a Cyrillic a
        ("\uff41lice", "it reads as 'alice'"),  # a fullwidth a
        ("aIice", "it reads as 'alice'"),  # a capital i for the l
        ("ali\u0301ce", "it is written in decomposed form; write it composed ('alíce')"),
    ],
)
def test_a_name_that_reads_as_a_registered_one_is_refused(
    ws: Workspace, repo: Path, name: str, why: str
) -> None:
    """Mail, assignees and commits of an agent named like another with look-alike
    letters would pass for the other's: registering such a name is refused on every
    surface (invalid_input, exit 2) and nothing is written."""
    from hive.domain.identity import register_agent
    from hive.errors import InvalidInput

    credential(repo, "alice")
    before = identities(repo)
    with pytest.raises(InvalidInput, match=re.escape(why)):
        register_agent(Workspace(str(repo)), name=name)
    refused = hive(repo, "agent", "register", name)
    assert refused.returncode == 2 and why in refused.stderr
    assert identities(repo) == before
    assert register_agent(Workspace(str(repo)), name="alicia").name == "alicia"


def test_doctor_reports_an_unreadable_credential_store_and_checks_the_rest(
    ws: Workspace, repo: Path
) -> None:
    """A garbled ``.git/hive/identities.json`` was doctor's end (exit 7, nothing else
    checked); it is one problem of the report, and the other checks still run."""
    credential(repo, "alice")  # a store exists
    assert run_hive(["create", "a cell"], cwd=repo).returncode == 0
    (repo / "x.txt").write_text("x\n")
    (repo / ".hive" / "cells").joinpath("hand.yaml").write_text("title: [\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "by hand")
    store = repo / ".git" / "hive" / "identities.json"
    store.write_text("garbage")
    done = run_hive(["doctor"], cwd=repo)
    assert done.returncode == 1, done.output
    said = done.stdout
    assert "corrupt: " in said and "cannot read the agent credentials" in said, said
    assert ".hive/cells/hand.yaml" in said  # the other checks ran
    assert "by hand" in said  # so did the history's (hand edits)
    report = json.loads(run_hive(["doctor", "--json"], cwd=repo).stdout)
    paths = [problem.get("path") for problem in report["problems"]]
    assert ".git/hive/identities.json" in paths, report
    assert store.read_text() == "garbage"  # doctor moves nothing
