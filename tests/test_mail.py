"""Swarm mail: identities, messages, threads, the git-backed event log."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest

from hive.domain.cells import start_cell
from hive.domain.epics import create_epic
from hive.domain.mail import (
    MAIL_REF,
    ack_message,
    inbox,
    list_agents,
    mail_init,
    read_message,
    send_message,
)
from hive.domain.workspace import Workspace
from hive.errors import InvalidInput, NotFound, PermissionDenied
from tests.conftest import assert_clean, git


def agent(repo: Path, name: str, session: str | None = None) -> Workspace:
    ws = Workspace(str(repo), actor=name, session=session or f"s-{name}")
    mail_init(ws, agent_name=name)
    return ws


def test_init_generates_names_and_reinit_returns_same_identity(ws: Workspace, repo: Path) -> None:
    anon = Workspace(str(repo), session="session-1")
    first = mail_init(anon, task_description="hv-1: auth")
    again = mail_init(anon)
    assert first.name == again.name
    assert first.name[0].isupper() and any(c.isupper() for c in first.name[1:])
    assert first.project_key == str(repo)
    named = mail_init(Workspace(str(repo), session="s2"), agent_name="BlueLake")
    assert mail_init(Workspace(str(repo), session="s2"), agent_name="BlueLake") == named
    other = mail_init(Workspace(str(repo), session="s3"), agent_name="BlueLake")
    assert other.name == "BlueLake2"
    assert mail_init(Workspace(str(repo), session="s3"), agent_name="BlueLake").name == "BlueLake2"


def _register(repo: str, session: str, queue: multiprocessing.Queue[str]) -> None:
    queue.put(mail_init(Workspace(repo, session=session), agent_name="SameName").name)


def test_simultaneous_registration_of_one_name_gives_distinct_identities(
    ws: Workspace, repo: Path
) -> None:
    context = multiprocessing.get_context("fork")
    queue: multiprocessing.Queue[str] = context.Queue()
    procs = [context.Process(target=_register, args=(str(repo), f"p{n}", queue)) for n in range(4)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0
    names = sorted(queue.get() for _ in procs)
    assert names == ["SameName", "SameName2", "SameName3", "SameName4"]


def test_send_inbox_read_ack(ws: Workspace, repo: Path) -> None:
    alice = agent(repo, "alice")
    bob = agent(repo, "bob")
    head = git(repo, "rev-parse", "HEAD")
    sent = send_message(
        alice, to=["bob"], subject="Progress", body="schema done", ack_required=True
    )
    assert sent.recipient_count == 1 and sent.message_id == 1
    for number in range(7):
        send_message(
            alice,
            to=["bob"],
            subject=f"n{number}",
            body="x",
            importance="urgent" if number == 3 else "normal",
        )
    headers = inbox(bob, limit=50)
    assert [h.subject for h in headers] == ["n6", "n5", "n4", "n3", "n2"]
    assert not hasattr(headers[0], "body")
    assert [h.subject for h in inbox(bob, urgent_only=True)] == ["n3"]
    message = read_message(bob, message_id=sent.message_id)
    assert message.body == "schema done" and message.read
    acked = ack_message(bob, message_id=sent.message_id)
    assert acked.agent == "bob"
    assert ack_message(bob, message_id=sent.message_id).acked_at == acked.acked_at
    fresh = Workspace(str(repo), actor="bob", session="s-bob")
    oldest = inbox(fresh, limit=5)
    assert all(h.id != 1 for h in oldest)
    # the user's branch and working tree are untouched; the log is in git
    assert git(repo, "rev-parse", "HEAD") == head
    assert_clean(repo)
    assert "hive-mail: ack #1 by bob" in git(repo, "log", "-1", "--format=%s", MAIL_REF)
    assert int(git(repo, "rev-list", "--count", MAIL_REF)) == 12


def test_mail_errors(ws: Workspace, repo: Path) -> None:
    alice = agent(repo, "alice")
    carol = agent(repo, "carol")
    with pytest.raises(NotFound, match="unknown recipient"):
        send_message(alice, to=["nobody"], subject="s", body="b")
    with pytest.raises(InvalidInput, match="importance"):
        send_message(alice, to=["carol"], subject="s", body="b", importance="meh")
    with pytest.raises(InvalidInput, match="subject"):
        send_message(alice, to=["carol"], subject=" ", body="b")
    with pytest.raises(NotFound, match="not registered"):
        send_message(Workspace(str(repo), actor="ghost"), to=["carol"], subject="s", body="b")
    sent = send_message(alice, to=["alice"], subject="note to self", body="b")
    with pytest.raises(PermissionDenied):
        read_message(carol, message_id=sent.message_id)
    with pytest.raises(NotFound, match="no message #99"):
        read_message(carol, message_id=99)


def test_epic_thread_reaches_everyone_working_in_the_epic(ws: Workspace, repo: Path) -> None:
    epic, first, second = create_epic(ws, title="Auth", subtasks=["a", "b"])
    coordinator = agent(repo, "coordinator")
    workers = [agent(repo, "w1"), agent(repo, "w2")]
    start_cell(workers[0], cell_id=first.id)
    start_cell(workers[1], cell_id=second.id)
    sent = send_message(
        coordinator, to=[], subject="Plan changed", body="use JWT", thread_id=epic.id
    )
    assert sorted(sent.recipients) == ["w1", "w2"]
    assert [h.subject for h in inbox(workers[1])] == ["Plan changed"]
    reply = send_message(
        workers[0], to=["coordinator"], subject="ok", body="ack", thread_id=epic.id
    )
    assert sorted(reply.recipients) == ["coordinator", "w2"]


def test_agents_survive_restart(ws: Workspace, repo: Path) -> None:
    agent(repo, "alice")
    fresh = Workspace(str(repo), persist_cache=False)
    assert [a.name for a in list_agents(fresh)] == ["alice"]


def test_mail_through_the_cli(ws: Workspace, repo: Path) -> None:
    import json
    import os
    import subprocess
    import sys

    def hive(actor: str, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "HIVE_SESSION": f"cli-{actor}"}
        return subprocess.run(
            [sys.executable, "-m", "hive.cli.main", "-C", str(repo), "--actor", actor, *args],
            capture_output=True,
            text=True,
            check=False,
            input=stdin,
            env=env,
        )

    for name in ("alice", "bob"):
        registered = hive(name, "--json", "mail", "init", "--name", name, "--task", "t")
        assert registered.returncode == 0, registered.stderr
        assert json.loads(registered.stdout)["name"] == name
    sent = hive(
        "alice",
        "mail",
        "send",
        "bob",
        "-s",
        "hello",
        "-b",
        "-",
        "--ack-required",
        stdin="body from stdin",
    )
    assert sent.returncode == 0, sent.stderr
    listed = json.loads(hive("bob", "--json", "mail", "inbox").stdout)
    assert [(m["from"], m["subject"], m["read"]) for m in listed] == [("alice", "hello", False)]
    message = json.loads(hive("bob", "--json", "mail", "read", str(listed[0]["id"])).stdout)
    assert message["body"] == "body from stdin"
    assert hive("bob", "mail", "ack", str(listed[0]["id"])).returncode == 0
    again = json.loads(hive("bob", "--json", "mail", "inbox").stdout)
    assert again[0]["read"] and again[0]["acked"]
    unknown = hive("alice", "mail", "send", "nobody", "-s", "x", "-b", "y")
    assert unknown.returncode == 3 and unknown.stderr.startswith("error: unknown recipient")
    assert "Traceback" not in unknown.stderr
    assert git(repo, "status", "--porcelain") == ""
