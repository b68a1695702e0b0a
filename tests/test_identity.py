"""Who is acting: ownership in the domain, recorded overrides, roles as grants,
credentials, deny rules vs reservations, symlinks, and the audit of hive commits."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from hive.domain.cells import (
    close_cell,
    create_cell,
    delete_cell,
    show_cell,
    start_cell,
    update_cell,
)
from hive.domain.doctor import diagnose
from hive.domain.events import read_events
from hive.domain.history import audit_log
from hive.domain.hooks import install_hook
from hive.domain.identity import issue_credential, mail_init, register_agent, retire_agent, whoami
from hive.domain.mail import ack_message, inbox, read_message, send_message
from hive.domain.reservations import list_reservations, release, reserve
from hive.domain.swarm.complete import swarm_complete
from hive.domain.swarm.progress import swarm_progress
from hive.domain.workspace import Workspace
from hive.errors import (
    InvalidInput,
    NameTaken,
    NotOwner,
    NotYourIdentity,
    PermissionDenied,
    SymlinkRefused,
)
from hive.store.layout import cell_path
from hive.tools.registry import CallContext, call_tool
from tests.conftest import agent_env, assert_clean, git, set_coordinators
from tests.inprocess import run_hive


def agent(repo: Path, name: str) -> Workspace:
    return Workspace(str(repo), actor=name)


def person(repo: Path) -> Workspace:
    """Someone at the CLI without a credential: the git user, trusted as a person."""
    return Workspace(str(repo), from_env=False)


def state(repo: Path) -> tuple[str, dict[str, str]]:
    """HEAD and every file under .hive/ (what a refused call must leave unchanged)."""
    files = {
        str(path.relative_to(repo)): path.read_text()
        for path in sorted((repo / ".hive").rglob("*"))
        if path.is_file()
    }
    return git(repo, "rev-parse", "HEAD").strip(), files


def overrides_logged(repo: Path) -> list[dict[str, object]]:
    return [e for e in read_events(str(repo / ".git" / "hive")) if e.get("event") == "override"]


@pytest.fixture
def claimed(ws: Workspace, repo: Path) -> str:
    """A cell claimed by BlueLake."""
    cell = create_cell(ws, title="auth service")
    start_cell(agent(repo, "BlueLake"), cell_id=cell.id)
    return cell.id


# ------------------------------------------------------------------ ownership


def test_only_the_assignee_changes_a_claimed_cell(ws: Workspace, repo: Path, claimed: str) -> None:
    mallory = agent(repo, "Mallory")
    before = state(repo)
    attempts = [
        lambda: update_cell(mallory, cell_id=claimed, status="blocked"),
        lambda: update_cell(mallory, cell_id=claimed, assignee="Mallory"),
        lambda: update_cell(mallory, cell_id=claimed, status="closed"),
        lambda: close_cell(mallory, cell_id=claimed, reason="mine now"),
        lambda: close_cell(mallory, cell_id=claimed, reason="x", force=True),  # not a grant
        lambda: delete_cell(mallory, cell_id=claimed),
        lambda: swarm_complete(mallory, cell_id=claimed, summary="done", run_gate=False),
        lambda: swarm_progress(mallory, cell_id=claimed, status="blocked"),
        lambda: swarm_progress(mallory, cell_id=claimed, status="failed", message="x"),
    ]
    for attempt in attempts:
        with pytest.raises(NotOwner, match=f"BlueLake.* {claimed}|{claimed} .*BlueLake") as caught:
            attempt()
        assert caught.value.code == "not_owner"
    assert state(repo) == before
    # any other field too (issue 12: a claimed cell is respected); the owner changes anything
    with pytest.raises(NotOwner, match="only BlueLake may update"):
        update_cell(mallory, cell_id=claimed, priority=0)
    assert state(repo) == before
    assert update_cell(agent(repo, "BlueLake"), cell_id=claimed, priority=0).priority == 0
    assert close_cell(agent(repo, "BlueLake"), cell_id=claimed).status == "closed"


def test_the_dependencies_of_a_claimed_cell_are_its_assignees(
    ws: Workspace, repo: Path, claimed: str
) -> None:
    """Another agent could add a blocker to a claimed cell (its assignee could then
    neither close nor complete it) or remove one, though every other field is refused."""
    from hive.domain.cells import add_dependency, remove_dependency

    blocker = create_cell(ws, title="schema first").id
    mine = create_cell(ws, title="Mallory's work").id
    start_cell(agent(repo, "Mallory"), cell_id=mine)
    mallory = agent(repo, "Mallory")
    before = state(repo)
    with pytest.raises(NotOwner, match="only BlueLake may change the dependencies of it"):
        add_dependency(mallory, cell_id=claimed, target=blocker)
    refused = run_hive(
        ["-C", str(repo), "--json", "dep", "add", claimed, blocker],
        env=agent_env(repo, "Mallory"),
        module="hive.cli.main",
    )
    assert refused.returncode == 5 and json.loads(refused.stdout)["code"] == "not_owner"
    assert state(repo) == before
    # her own cell may wait for his; his assignee and people change his
    assert add_dependency(mallory, cell_id=mine, target=claimed).dependencies
    assert add_dependency(agent(repo, "BlueLake"), cell_id=claimed, target=blocker).dependencies
    with pytest.raises(NotOwner):
        remove_dependency(mallory, cell_id=claimed, target=blocker)
    done = remove_dependency(person(repo), cell_id=claimed, target=blocker, force=True, reason="r")
    assert done.dependencies == []
    assert "Hive-Override: Test User (person) change the dependencies of" in git(
        repo, "log", "-1", "--format=%B"
    )
    # a person's --force alone is an override too, recorded as given without a reason
    again = add_dependency(person(repo), cell_id=claimed, target=blocker, force=True)
    assert again.dependencies
    assert f"Hive-Override: Test User (person) change the dependencies of {claimed} of" in git(
        repo, "log", "-1", "--format=%B"
    )
    assert git(repo, "log", "-1", "--format=%B").count(": (no reason given)") == 1


def test_a_field_naming_the_caller_must_be_the_caller(
    ws: Workspace, repo: Path, claimed: str
) -> None:
    mallory = agent(repo, "Mallory")
    before = state(repo)
    with pytest.raises(NotYourIdentity, match="this session is Mallory"):
        swarm_complete(mallory, agent_name="BlueLake", cell_id=claimed, summary="x")
    with pytest.raises(NotYourIdentity):
        swarm_progress(mallory, agent_name="BlueLake", cell_id=claimed, status="blocked")
    assert state(repo) == before


def test_coordinators_and_people_override_with_a_reason_and_it_is_recorded(
    ws: Workspace, repo: Path, claimed: str
) -> None:
    lead = agent(repo, "lead")
    with pytest.raises(NotOwner, match="only coordinators"):
        close_cell(lead, cell_id=claimed, reason="stuck", force=True)
    set_coordinators(repo, ["lead"])
    before = state(repo)
    with pytest.raises(InvalidInput, match="needs a reason"):
        update_cell(lead, cell_id=claimed, status="open", force=True)
    assert state(repo) == before
    update_cell(lead, cell_id=claimed, status="open", force=True, reason="BlueLake crashed")
    message = git(repo, "log", "-1", "--format=%B")
    assert (
        f"Hive-Override: lead (coordinator) change the status or assignee of {claimed} of"
        " BlueLake: BlueLake crashed" in message
    )
    assert "Hive-Agent: lead" in message
    commit = git(repo, "rev-parse", "HEAD").strip()
    logged = overrides_logged(repo)[-1]
    assert (logged["agent"], logged["role"], logged["owner"], logged["commit"]) == (
        "lead",
        "coordinator",
        "BlueLake",
        commit,
    )
    deleted = delete_cell(person(repo), cell_id=claimed, force=True, reason="duplicate")
    assert deleted.deleted_at is not None
    message = git(repo, "log", "-1", "--format=%B")
    assert "Hive-Override: Test User (person) delete" in message
    assert "Hive-Identity: person" in message
    audit = audit_log(ws)
    assert [e.kind for e in audit if e.kind == "override"] == ["override", "override"]
    assert audit[0].detail.startswith("Test User (person) delete")


def test_only_the_holder_releases(ws: Workspace, repo: Path) -> None:
    held = reserve(agent(repo, "BlueLake"), paths=["src/**"]).granted[0]
    mallory = agent(repo, "Mallory")
    before = state(repo)
    with pytest.raises(NotOwner, match=f"reservation #{held.id} .* is held by BlueLake"):
        release(mallory, reservation_ids=[held.id])
    with pytest.raises(NotOwner, match="held by BlueLake"):
        release(mallory, agent="BlueLake")
    with pytest.raises(NotOwner, match="only coordinators"):
        release(mallory, agent="BlueLake", force=True, reason="x")
    assert state(repo) == before
    done = release(person(repo), agent="BlueLake", force=True, reason="BlueLake is gone")
    assert [r.id for r in done.released] == [held.id]
    assert list_reservations(ws) == []
    assert f"Hive-Override: Test User (person) release #{held.id} src/** of BlueLake" in git(
        repo, "log", "-1", "--format=%B"
    )
    assert overrides_logged(repo)[-1]["action"] == "release"


def test_only_recipients_read_and_ack(ws: Workspace, repo: Path) -> None:
    names = ("alice", "bob", "mallory")
    alice, bob, mallory = (agent(repo, n) for n in names)
    for name, workspace in zip(names, (alice, bob, mallory), strict=True):
        mail_init(workspace, agent_name=name)
    sent = send_message(alice, to=["bob"], subject="secret", body="the plan")
    tip = git(repo, "rev-parse", "refs/hive/mail")
    with pytest.raises(PermissionDenied, match="addressed to bob"):
        read_message(mallory, message_id=sent.message_id)
    with pytest.raises(NotOwner, match="only its recipients"):
        from hive.domain.mail import ack_message

        ack_message(mallory, message_id=sent.message_id)
    with pytest.raises(NotOwner):
        inbox(mallory, agent="bob")
    with pytest.raises(NotOwner, match="only coordinators"):
        inbox(mallory, agent="bob", force=True, reason="curious")
    assert git(repo, "rev-parse", "refs/hive/mail") == tip
    assert read_message(alice, message_id=sent.message_id).body == "the plan"  # the sender
    seen = read_message(person(repo), message_id=sent.message_id, force=True, reason="audit")
    assert seen.body == "the plan" and not seen.read  # not marked read for bob
    assert "Hive-Override: Test User (person) read" in git(
        repo, "log", "-1", "--format=%B", "refs/hive/mail"
    )
    assert any(e.ref == "refs/hive/mail" for e in audit_log(ws))


# ------------------------------------------------------------------ credentials


def test_credentials_are_hashed_and_names_come_back_only_with_them(
    ws: Workspace, repo: Path
) -> None:
    issued = issue_credential(person(repo), name="worker1")
    assert issued.env == {"HIVE_AGENT": "worker1", "HIVE_AGENT_TOKEN": issued.token}
    store = (repo / ".git" / "hive" / "identities.json").read_text()
    assert issued.token not in store and "worker1" in store
    assert oct(os.stat(repo / ".git" / "hive" / "identities.json").st_mode)[-3:] == "600"
    with pytest.raises(NameTaken, match="worker1 is registered"):
        register_agent(Workspace(str(repo), from_env=False, session="other"), name="worker1")
    back = register_agent(person(repo), name="worker1", token=issued.token)
    assert back.reattached and back.token is None
    as_worker = Workspace(str(repo), from_env=False, token=issued.token)
    assert whoami(as_worker).model_dump() == {
        "name": "worker1",
        "kind": "agent",
        "coordinator": False,
        "registered": True,
        "may_override": False,
    }
    with pytest.raises(NotYourIdentity, match="you are worker1"):
        _ = Workspace(str(repo), from_env=False, token=issued.token, claim="other").actor
    # a stale identity is retired by a person or coordinator, not by another agent
    with pytest.raises(NotOwner):
        retire_agent(agent(repo, "worker2"), name="worker1", reason="x")
    retire_agent(person(repo), name="worker1", reason="process died")
    with pytest.raises(NotYourIdentity, match="not the credential of any agent"):
        _ = Workspace(str(repo), from_env=False, token=issued.token).actor
    assert register_agent(person(repo), name="worker1").token  # the name is free again


def test_a_name_registered_afresh_after_retiring_starts_clean(ws: Workspace, repo: Path) -> None:
    """The retired agent's reservations are released as it is retired (one commit,
    recorded), and its mail stays its own: the new agent of the name gets an empty
    inbox and may not read or acknowledge the old mail, but gets what is sent now."""
    boss = issue_credential(person(repo), name="boss")
    old = issue_credential(person(repo), name="worker1")
    as_boss = Workspace(str(repo), from_env=False, token=boss.token)
    as_old = Workspace(str(repo), from_env=False, token=old.token)
    sent = send_message(as_boss, to=["worker1"], subject="for the old one", body="x")
    reserve(as_old, paths=["src/**"], ttl_seconds=3600)
    claimed = create_cell(as_old, title="the old one's work").id
    start_cell(as_old, cell_id=claimed)
    retired = retire_agent(person(repo), name="worker1", reason="process died")
    assert retired.released == ["#1 src/**"]
    assert retired.reopened == [claimed]  # its claims are not the new agent's
    reopened = show_cell(ws, cell_id=claimed)
    assert (reopened.status, reopened.assignee) == ("open", None)
    assert "open again: its agent worker1 was retired by" in reopened.notes
    assert list_reservations(ws) == []
    assert not (repo / ".hive" / "reservations" / "worker1.yaml").exists()
    # one commit: reservations released and claims reopened together
    message = git(repo, "log", "-1", "--format=%B")
    assert message.startswith("hive: retire worker1 (retired: reservations released")
    assert "Hive-Override: " in message and "retire worker1: process died" in message
    assert f"Hive-Cell: {claimed}" in message and "Hive-Released: worker1 #1 src/**" in message
    changed = git(repo, "show", "--name-only", "--format=", "HEAD").split()
    assert sorted(changed) == sorted([".hive/reservations/worker1.yaml", cell_path(claimed)])
    assert_clean(repo)
    new = Workspace(
        str(repo), from_env=False, token=register_agent(person(repo), name="worker1").token
    )
    assert inbox(new) == []
    with pytest.raises(NotOwner, match="retired worker1"):
        read_message(new, message_id=sent.message_id)
    with pytest.raises(NotOwner, match="before that name was retired"):
        ack_message(new, message_id=sent.message_id)
    later = send_message(as_boss, to=["worker1"], subject="for the new one", body="y")
    assert [h.id for h in inbox(new)] == [later.message_id]
    assert read_message(new, message_id=later.message_id).body == "y"
    reserve(new, paths=["src/**"], ttl_seconds=3600)  # nothing of the old one is in the way
    start_cell(new, cell_id=claimed)
    # an agent that retires itself releases its own reservations and claims too
    assert retire_agent(new, name="worker1").reopened == [claimed]
    assert list_reservations(ws) == []
    assert show_cell(ws, cell_id=claimed).status == "open"
    assert_clean(repo)


def _retire_setup(repo: Path) -> tuple[str, str, dict[str, str]]:
    """worker1 holding a reservation and a claimed cell, with mail waiting: its cell,
    its credential and a person's environment (no HIVE_ variables)."""
    old = issue_credential(person(repo), name="worker1")
    as_old = Workspace(str(repo), from_env=False, token=old.token)
    reserve(as_old, paths=["src/**"], ttl_seconds=3600)
    claimed = create_cell(as_old, title="the old one's work").id
    start_cell(as_old, cell_id=claimed)
    send_message(as_old, to=["worker1"], subject="note to self", body="x")
    plain = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_")}
    return claimed, old.token, plain


def _still_active(repo: Path, claimed: str, token: str, head: str) -> None:
    """Nothing of a refused retire was done: the branch, the credential, the mail log."""
    assert git(repo, "rev-parse", "HEAD").strip() == head
    assert "src/**" in git(repo, "show", "HEAD:.hive/reservations/worker1.yaml")
    cell = git(repo, "show", f"HEAD:{cell_path(claimed)}")
    assert "status: in_progress" in cell and "assignee: worker1" in cell
    as_old = Workspace(str(repo), from_env=False, token=token)
    assert whoami(as_old).registered and [h.subject for h in inbox(as_old)] == ["note to self"]
    assert "retire" not in git(repo, "log", "--format=%s", "refs/hive/mail")
    assert_clean(repo)


def test_a_retire_that_cannot_write_the_credentials_changes_nothing(
    ws: Workspace, repo: Path
) -> None:
    """The credential store is written before the commit that releases and reopens:
    a store hive cannot write refuses the retire with nothing half done (was: the
    reservations released and the claims reopened, then a traceback)."""
    claimed, token, plain = _retire_setup(repo)
    head = git(repo, "rev-parse", "HEAD").strip()
    # the retire runs in this process: its temporary store file cannot be made
    blocker = repo / ".git" / "hive" / f"identities.json.{os.getpid()}.tmp"
    blocker.mkdir()
    refused = run_hive(
        ["-C", str(repo), "agent", "retire", "worker1", "--reason", "stuck"], env=plain
    )
    assert refused.returncode == 8 and "Traceback" not in refused.stderr
    assert "cannot write the agent credentials" in refused.stderr
    _still_active(repo, claimed, token, head)
    blocker.rmdir()
    done = run_hive(["-C", str(repo), "agent", "retire", "worker1", "--reason", "stuck"], env=plain)
    assert done.returncode == 0, done.stderr
    assert git(repo, "rev-list", "--count", f"{head}..HEAD").strip() == "1"
    assert git(repo, "ls-tree", "HEAD", ".hive/reservations/worker1.yaml") == ""
    assert "status: open" in git(repo, "show", f"HEAD:{cell_path(claimed)}")
    assert "retire worker1" in git(repo, "log", "--format=%s", "refs/hive/mail")
    assert_clean(repo)


def test_a_retire_whose_commit_is_refused_changes_nothing(ws: Workspace, repo: Path) -> None:
    """The commit that releases and reopens refused (here: a merge in progress) leaves
    the credential and the mail log as they were."""
    claimed, token, plain = _retire_setup(repo)
    head = git(repo, "rev-parse", "HEAD").strip()
    (repo / ".git" / "MERGE_HEAD").write_text(head + "\n")
    refused = run_hive(
        ["-C", str(repo), "agent", "retire", "worker1", "--reason", "stuck"], env=plain
    )
    assert refused.returncode != 0 and "Traceback" not in refused.stderr
    (repo / ".git" / "MERGE_HEAD").unlink()
    _still_active(repo, claimed, token, head)
    assert not list((repo / ".git" / "hive").glob("identities.json.*.tmp"))


def test_a_retire_whose_store_cannot_be_put_in_place_after_its_commit_says_so(
    ws: Workspace, repo: Path
) -> None:
    """The store is staged, the commit releases and reopens, then the rename that puts
    the store in place fails (here: a directory took its place meanwhile). The error
    said "nothing was changed" though the commit was made: now it names what the
    commit did, that the identity is not retired, and that retiring again finishes."""
    import time

    from hive.git.flock import try_lock
    from tests.hivefork import hive_command

    claimed, token, plain = _retire_setup(repo)
    head = git(repo, "rev-parse", "HEAD").strip()
    state = repo / ".git" / "hive"
    store = state / "identities.json"
    held = try_lock(str(state / "write.lock"), 0)  # the retire's commit waits for it
    assert held is not None
    try:
        retire = subprocess.Popen(
            hive_command(["-C", str(repo), "agent", "retire", "worker1", "--reason", "stuck"]),
            env=plain,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 60  # a state waited for, as on a loaded machine
        while not list(state.glob("identities.json.*.tmp")):  # staged: now at the commit
            assert retire.poll() is None and time.monotonic() < deadline, retire.communicate()
            time.sleep(0.01)
        kept = store.read_bytes()
        store.unlink()
        (store / "in-the-way").mkdir(parents=True)
    finally:
        held.release()
    _, said = retire.communicate(timeout=60)
    assert retire.returncode == 8 and "Traceback" not in said, said
    assert "nothing was changed" not in said
    assert "cannot write the agent credentials" in said and "Is a directory" in said
    assert f"released #1 src/**; reopened {claimed}" in said
    assert "worker1 is not retired: its credential still works" in said
    assert "run 'hive agent retire worker1 --reason stuck' again to finish" in said
    # what the message says: the commit was made, the credential is live
    assert git(repo, "rev-list", "--count", f"{head}..HEAD").strip() == "1"
    assert git(repo, "ls-tree", "HEAD", ".hive/reservations/worker1.yaml") == ""
    assert "status: open" in git(repo, "show", f"HEAD:{cell_path(claimed)}")
    (store / "in-the-way").rmdir()
    store.rmdir()
    store.write_bytes(kept)
    assert whoami(Workspace(str(repo), from_env=False, token=token)).registered
    done = run_hive(["-C", str(repo), "agent", "retire", "worker1", "--reason", "stuck"], env=plain)
    assert done.returncode == 0, done.stderr
    assert git(repo, "rev-list", "--count", f"{head}..HEAD").strip() == "1"  # no new commit
    with pytest.raises(NotYourIdentity):
        whoami(Workspace(str(repo), from_env=False, token=token))
    assert "retire worker1" in git(repo, "log", "--format=%s", "refs/hive/mail")
    assert not list(state.glob("identities.json.*.tmp"))
    assert_clean(repo)


def test_a_retire_the_mail_log_missed_is_finished_by_retiring_again(
    ws: Workspace, repo: Path
) -> None:
    """The mail log's lock held by another process: the identity is retired (one
    commit, credential gone), the message says how to finish, and retiring again
    (or registering the name afresh) appends the agent_retired event, so the old
    mail is not the new agent's."""
    from hive.git.flock import try_lock

    _, token, plain = _retire_setup(repo)
    held = try_lock(str(repo / ".git" / "hive" / "mail.lock"), 0)
    assert held is not None
    try:
        half = run_hive(
            ["-C", str(repo), "agent", "retire", "worker1", "--reason", "stuck"],
            env={**plain, "HIVE_LOCK_TIMEOUT": "0.2"},
        )
    finally:
        held.release()
    assert half.returncode == 6 and "Traceback" not in half.stderr
    assert "worker1 is retired" in half.stderr and "again to finish" in half.stderr
    with pytest.raises(NotYourIdentity):  # the credential is gone
        whoami(Workspace(str(repo), from_env=False, token=token))
    assert "retire" not in git(repo, "log", "--format=%s", "refs/hive/mail")
    fresh = register_agent(person(repo), name="worker1")  # finishes it first
    assert "retire worker1" in git(repo, "log", "--format=%s", "refs/hive/mail")
    assert inbox(Workspace(str(repo), from_env=False, token=fresh.token)) == []
    retire_agent(person(repo), name="worker1", reason="done")
    again = run_hive(["-C", str(repo), "agent", "retire", "worker1", "--reason", "x"], env=plain)
    assert again.returncode == 3  # nothing left to finish: no live identity
    assert_clean(repo)


def test_roles_are_grants_not_names(ws: Workspace, repo: Path) -> None:
    set_coordinators(repo, ["lead"])
    ctx = CallContext(root=str(repo), session="tool-session")
    taken = call_tool(ctx, "swarmmail_init", {"agent_name": "lead"})
    assert taken["code"] == "not_owner" and "issued by a person" in taken["error"]
    issued = issue_credential(person(repo), name="lead")  # a person grants it
    lead = Workspace(str(repo), from_env=False, token=issued.token)
    assert whoami(lead).coordinator and whoami(lead).may_override
    named = Workspace(
        str(repo), from_env=False, token=issue_credential(person(repo), name="coordinator").token
    )
    assert not whoami(named).coordinator  # calling yourself "coordinator" grants nothing


# ------------------------------------------------------------------ deny rules


def _deny(repo: Path, denied: list[str]) -> None:
    from hive.store.yamlio import dumps, load_mapping

    config = repo / ".hive" / "config.yaml"
    settings = load_mapping(config.read_text(), "config")
    settings["tools"] = {"permissions": {"*": {"*": {"denied_paths": denied}}}}
    config.write_text(dumps(settings))
    git(repo, "commit", "-qm", "deny", "--", ".hive/config.yaml")


def test_reservations_that_could_contain_denied_files_are_granted(
    ws: Workspace, repo: Path
) -> None:
    _deny(repo, ["**/.env*"])
    bob = agent(repo, "bob")
    granted = reserve(bob, paths=["src/auth/**", "src/*.py"]).granted
    assert [r.path_pattern for r in granted] == ["src/auth/**", "src/*.py"]
    head = git(repo, "rev-parse", "HEAD")
    with pytest.raises(PermissionDenied, match=r"names only files denied .*\*\*/\.env\*") as caught:
        reserve(bob, paths=["src/auth/.env.local"])
    assert caught.value.details["rule"] == "*.*.denied_paths: **/.env*"
    with pytest.raises(PermissionDenied):
        reserve(bob, paths=[".env*"])
    assert git(repo, "rev-parse", "HEAD") == head
    # the denied files inside a granted reservation stay denied to the agent: the hook
    install_hook(ws)
    (repo / "src/auth").mkdir(parents=True)
    (repo / "src/auth/.env").write_text("KEY=1\n")
    (repo / "src/auth/login.py").write_text("x = 1\n")
    git(repo, "add", "src/auth")
    env = agent_env(repo, "bob")
    hook = subprocess.run(
        ["git", "-C", str(repo), "commit", "-qm", "x"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert hook.returncode != 0 and "src/auth/.env" in hook.stderr
    assert "denied by tools.permissions.*.*.denied_paths" in hook.stderr
    assert "login.py" not in hook.stderr
    # ...and the file tools refuse it too
    read = call_tool(CallContext(root=str(repo), agent="bob"), "fs_read", {"path": "src/auth/.env"})
    assert read["code"] == "permission_denied"


def test_tool_reservations_that_could_contain_denied_files_are_granted(
    ws: Workspace, repo: Path
) -> None:
    """The same rule through the tool surface (MCP, envelope): the call's paths are not
    checked file by file as a file tool's are, or ``src/auth/**`` under ``**/.env*``
    would be refused for everyone."""
    bob = _bob_under_an_env_rule(repo)
    granted = call_tool(bob, "swarmmail_reserve", {"paths": ["src/auth/**", "docs/**"]})
    assert "result" in granted, granted
    assert [r["path_pattern"] for r in granted["result"]["granted"]] == ["src/auth/**", "docs/**"]
    before = state(repo)
    _refused_by_the_env_rule(
        call_tool(bob, "swarmmail_reserve", {"paths": ["src/auth/.env.local"]})
    )
    assert state(repo) == before


def _bob_under_an_env_rule(repo: Path) -> CallContext:
    """A tool session registered as bob, under a global ``**/.env*`` deny rule."""
    _deny(repo, ["**/.env*"])
    bob = CallContext(root=str(repo))
    assert "result" in call_tool(bob, "swarmmail_init", {"agent_name": "bob"})
    return bob


def _refused_by_the_env_rule(refused: dict[str, Any]) -> None:
    assert refused["code"] == "permission_denied", refused
    assert "names only files denied to bob" in refused["error"]
    assert refused["rule"] == "*.*.denied_paths: **/.env*"


def test_a_cells_owned_globs_follow_the_reservation_rule_on_the_tool_surface(
    ws: Workspace, repo: Path
) -> None:
    """A cell's owned files (hive_create / hive_update ``files``) are claims like a
    reservation's patterns: ``src/**`` under a global ``**/.env*`` rule is fine (the
    denied files inside stay denied one by one); a glob naming only denied files is
    refused, naming the rule, and nothing is written."""
    bob = _bob_under_an_env_rule(repo)
    created = call_tool(bob, "hive_create", {"title": "auth", "files": ["src/auth/**"]})
    assert "result" in created, created
    cell = created["result"]["id"]
    updated = call_tool(bob, "hive_update", {"id": cell, "files": ["src/**", "docs/*.md"]})
    assert "result" in updated, updated
    assert updated["result"]["changed"] == ["files_owned"]
    shown = call_tool(bob, "hive_query", {"id": cell})["result"]
    assert shown["files_owned"] == ["src/**", "docs/*.md"]
    before = state(repo)
    for tool, args in (
        ("hive_create", {"title": "secrets", "files": ["config/.env"]}),
        ("hive_update", {"id": cell, "files": ["src/**", "**/.env.local"]}),
    ):
        _refused_by_the_env_rule(call_tool(bob, tool, args))
    assert state(repo) == before


def test_an_agents_command_line_claims_no_files_its_tools_would_refuse(
    ws: Workspace, repo: Path
) -> None:
    """`hive create --files` / `hive update --files` by an agent (its credential in
    HIVE_AGENT_TOKEN) were not checked against tools.permissions: bob claimed through
    the CLI what hive_create refuses him. Now the same rule, the same words, exit 5 and
    nothing written; a glob that merely could contain denied files is fine, and a
    person (no credential) is not an agent."""
    _deny(repo, ["**/.env*"])
    bob = agent_env(repo, "bob")
    made = run_hive(["-C", str(repo), "--json", "create", "auth", "--files", "src/**"], env=bob)
    assert made.returncode == 0, made
    cell = json.loads(made.stdout)["id"]
    before = state(repo)
    for argv in (
        ["create", "secrets", "--files", "config/.env"],
        ["update", cell, "--files", "src/**", "--files", "**/.env.local"],
    ):
        refused = run_hive(["-C", str(repo), "--json", *argv], env=bob)
        assert refused.returncode == 5, refused
        _refused_by_the_env_rule(json.loads(refused.stdout))
    assert state(repo) == before
    plain = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_")}
    person = run_hive(["-C", str(repo), "create", "secrets", "--files", "config/.env"], env=plain)
    assert person.returncode == 0, person


def test_an_agents_cells_from_a_file_or_a_plan_claim_no_files_its_tools_would_refuse(
    ws: Workspace, repo: Path
) -> None:
    """`hive create --from FILE`, `hive swarm create-epic SOURCE` and the subtasks of
    `hive epic create` / `hive_create_epic` claimed owned files unchecked: bob created
    there cells owning what hive_create --files refuses him. Now every cell's globs meet
    the rule: the same words, exit 5, nothing written; a glob that merely could contain
    denied files is fine, a person is not an agent, and bypass_permissions skips it."""
    _deny(repo, ["**/.env*"])
    bob = agent_env(repo, "bob")
    cells, plan = repo / "cells.yaml", repo / "plan.json"
    cells.write_text(
        "- title: auth\n  files: [src/**]\n- title: keys\n  files_owned: [config/.env]\n"
    )
    denied = {"title": "keys", "files": ["config/.env"]}
    plan.write_text(json.dumps({"epic": {"title": "e"}, "subtasks": [{"title": "a"}, denied]}))
    subtask = json.dumps(denied)
    before = state(repo)
    for argv in (
        ["create", "--from", str(cells)],
        ["swarm", "create-epic", str(plan)],
        ["epic", "create", "e", "--subtask", "a", "--subtask", subtask],
    ):
        refused = run_hive(["-C", str(repo), "--json", *argv], env=bob)
        assert refused.returncode == 5, refused
        _refused_by_the_env_rule(json.loads(refused.stdout))
    tool = call_tool(
        CallContext(root=str(repo), agent="bob"),
        "hive_create_epic",
        {"epic_title": "e", "subtasks": [{"title": "a"}, denied]},
    )
    _refused_by_the_env_rule(tool)
    assert state(repo) == before
    cells.write_text("- title: auth\n  files: [src/**]\n")
    assert run_hive(["-C", str(repo), "create", "--from", str(cells)], env=bob).returncode == 0
    person = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_")}
    assert (
        run_hive(["-C", str(repo), "swarm", "create-epic", str(plan)], env=person).returncode == 0
    )
    from tests.seedkit import configure

    configure(repo, agents={"free": {"bypass_permissions": True}})
    free = agent_env(repo, "free")
    made = run_hive(["-C", str(repo), "epic", "create", "e", "--subtask", subtask], env=free)
    assert made.returncode == 0, made
    owned = git(repo, "log", "-1", "--format=%an %s")
    assert owned.startswith("free "), owned


def test_an_agents_commit_is_refused_while_its_rules_cannot_be_read(
    ws: Workspace, repo: Path
) -> None:
    """A broken ``tools:`` section fails the agent's commits closed, as it fails its tool
    calls: the hook cannot tell which files the rules deny. A person commits as before,
    and a commit of hive's files alone (the mend) is not refused for it."""
    config = repo / ".hive" / "config.yaml"
    good = config.read_text()
    config.write_text(good + "tools:\n  permissions:\n    '*':\n      '*': {denied: [x]}\n")
    git(repo, "commit", "-qm", "broken rules", "--", ".hive/config.yaml")
    install_hook(ws)
    (repo / "notes.txt").write_text("x\n")
    git(repo, "add", "notes.txt")
    env = agent_env(repo, "bob")

    def commit(*args: str, env: dict[str, str] | None = env) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["git", "-C", str(repo), "commit", "-qm", "x", *args],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )

    refused = commit()
    assert refused.returncode != 0, refused.stderr
    assert "cannot check bob's tools.permissions rules" in refused.stderr
    assert ".hive/config.yaml:" in refused.stderr and "tools.permissions.*.*.denied" in (
        refused.stderr
    )
    assert git(repo, "diff", "--cached", "--name-only").split() == ["notes.txt"]
    person = {key: value for key, value in os.environ.items() if not key.startswith("HIVE_")}
    assert commit(env=person).returncode == 0
    (repo / "notes.txt").write_text("y\n")
    git(repo, "add", "notes.txt")
    assert commit().returncode != 0
    git(repo, "reset", "-q", "notes.txt")
    config.write_text(good)
    git(repo, "add", ".hive/config.yaml")
    mended = commit()
    assert mended.returncode == 0, mended.stderr
    git(repo, "add", "notes.txt")
    assert commit().returncode == 0
    assert "notes.txt" in git(repo, "show", "--name-only", "HEAD")


# ------------------------------------------------------------------ symlinks


@pytest.mark.parametrize("committed", [True, False])
def test_hive_never_writes_through_a_symlink(
    ws: Workspace, repo: Path, tmp_path: Path, committed: bool
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    link = repo / ".hive" / "reservations"
    link.symlink_to(outside)
    if committed:
        git(repo, "add", ".hive/reservations")
        git(repo, "commit", "-qm", "a symlink", "--no-verify")
    before = state(repo)
    with pytest.raises(SymlinkRefused, match=r"\.hive/reservations is .*symlink") as caught:
        reserve(agent(repo, "bob"), paths=["src/**"])
    assert caught.value.code == "symlink_refused"
    assert list(outside.iterdir()) == []  # nothing written outside the repository
    assert git(repo, "rev-parse", "HEAD").strip() == before[0]
    problems = diagnose(ws).problems
    assert [(p.kind, p.path) for p in problems] == [("symlink", ".hive/reservations")]
    assert git(repo, "write-tree")  # the index is still one git can commit


def test_a_symlinked_hive_directory_is_refused_for_cells_too(
    ws: Workspace, repo: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "cells"
    outside.mkdir()
    cells = repo / ".hive" / "cells"
    assert not cells.exists()  # a fresh hive has no cells yet
    cells.symlink_to(outside)
    with pytest.raises(SymlinkRefused):
        create_cell(ws, title="x")
    assert list(outside.iterdir()) == []


# ------------------------------------------------------------------ audit


def test_log_overrides_lists_commits_naming_unregistered_identities(
    ws: Workspace, repo: Path
) -> None:
    issued = issue_credential(person(repo), name="real")
    create_cell(Workspace(str(repo), from_env=False, token=issued.token), title="by real")
    (repo / "forged.txt").write_text("x\n")
    git(repo, "add", "forged.txt")
    git(repo, "commit", "-qm", "hive: close hv-zzz\n\nHive-Agent: Ghost\nHive-Event: close")
    found = audit_log(ws)
    kinds = {(e.kind, e.agent) for e in found}
    assert ("unregistered", "Ghost") in kinds and ("author-mismatch", "Ghost") in kinds
    assert all(e.agent != "real" for e in found)
    cli = run_hive(
        ["-C", str(repo), "--json", "log", "--overrides"],
        env={k: v for k, v in os.environ.items() if not k.startswith("HIVE_")},
        module="hive.cli.main",
    )
    assert cli.returncode == 0, cli.stderr
    listed = json.loads(cli.stdout)
    assert any(e["agent"] == "Ghost" and e["kind"] == "unregistered" for e in listed)
    warnings = diagnose(ws).warnings
    assert any(w.kind == "unregistered" and "Ghost" in w.message for w in warnings)
    # a commit that claims an agent without hive's event trailer was not looked at
    git(repo, "commit", "-q", "--allow-empty", "-m", "fix auth\n\nHive-Agent: real")
    claimed = [e for e in audit_log(ws) if e.agent == "real"]
    assert [e.kind for e in claimed] == ["author-mismatch"]
    assert_clean(repo)


def test_a_person_s_own_git_author_is_no_author_mismatch(
    ws: Workspace, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A person's hive commit carries git's author (author.name / GIT_AUTHOR_NAME before
    # user.name, git's guess without one) while Hive-Agent names the person by user.name:
    # the two may differ by design, and the audit must not call that a mismatch.
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Ann Author")
    create_cell(person(repo), title="by the person")
    assert git(repo, "log", "-1", "--format=%an").strip() == "Ann Author"
    head = git(repo, "rev-parse", "HEAD").strip()
    assert [e.kind for e in audit_log(ws) if e.commit == head] == []
    assert not [w for w in diagnose(ws).warnings if w.kind == "author-mismatch"]


def test_agent_commands_register_list_whoami_retire(ws: Workspace, repo: Path) -> None:
    plain = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_")}

    def hive(*args: str, env: dict[str, str] = plain) -> subprocess.CompletedProcess[str]:
        return run_hive(["-C", str(repo), *args], env=env, module="hive.cli.main")

    made = json.loads(hive("--json", "agent", "register", "Scout", "--task", "t").stdout)
    token = made["token"]
    again = hive("--json", "agent", "register", "Scout")
    assert again.returncode == 4 and json.loads(again.stdout)["code"] == "name_taken"
    me = json.loads(
        hive("--json", "agent", "whoami", env={**plain, "HIVE_AGENT_TOKEN": token}).stdout
    )
    assert (me["name"], me["kind"]) == ("Scout", "agent")
    person_me = json.loads(hive("--json", "agent", "whoami").stdout)
    assert (person_me["name"], person_me["kind"], person_me["may_override"]) == (
        "Test User",
        "person",
        True,
    )
    listed = {i["name"]: i for i in json.loads(hive("--json", "agent", "list").stdout)}
    assert listed["Scout"]["credential"] and listed["Scout"]["task"] == "t"
    assert hive("agent", "retire", "Scout").returncode == 2  # a reason is required
    assert hive("agent", "retire", "Scout", "--reason", "done").returncode == 0
    gone = hive("--json", "agent", "whoami", env={**plain, "HIVE_AGENT_TOKEN": token})
    assert gone.returncode == 5 and json.loads(gone.stdout)["code"] == "not_your_identity"
    assert overrides_logged(repo)[-1]["action"] == "retire"


def test_a_name_mistaken_for_something_else_is_refused_at_registration(
    ws: Workspace, repo: Path
) -> None:
    """'hive' (the sender of hive's own notices: an agent of that name could pass its
    mail off as them), a name starting with '-' (an option on the command line; '-'
    is 'nobody' in listings) and a cell id of this repository (hv-..., or any cell's
    id) are refused on every surface, before anything is written; others work."""
    cell = create_cell(ws, title="a cell").id
    before = state(repo)
    for name in ("hive", "Hive", "-x", "-", "hv-abc123", "HV-x7k2.a3f8", cell):
        refused = run_hive(["-C", str(repo), "--json", "agent", "register", "--", name])
        assert refused.returncode == 2, (name, refused.stdout)
        error = json.loads(refused.stdout)
        assert error["code"] == "invalid_input" and "choose another name" in error["error"]
    ctx = CallContext(root=str(repo), session="tool-session")
    tool = call_tool(ctx, "swarmmail_init", {"agent_name": "hv-abc123"})
    assert tool["code"] == "invalid_input" and "looks like a cell id" in tool["error"]
    assert "notices" in call_tool(ctx, "swarmmail_init", {"agent_name": "hive"})["error"]
    assert state(repo) == before
    assert not (repo / ".git" / "hive" / "identities.json").exists()  # nobody registered
    for name in ("worker-1", "hv", "bd-a1b2", "coordinator"):  # not this repository's ids
        assert register_agent(person(repo), name=name).token


def test_an_unreadable_credential_store_says_how_to_recover(ws: Workspace, repo: Path) -> None:
    register_agent(ws, name="zed")
    store = repo / ".git" / "hive" / "identities.json"
    store.write_text("{ not json")
    listed = run_hive(["-C", str(repo), "agent", "list"], module="hive.cli.main")
    assert listed.exit_code == 7 and "Traceback" not in listed.output
    assert "cannot read the agent credentials" in listed.stderr
    assert "move it aside" in listed.stderr and "hive agent register NAME" in listed.stderr
    store.rename(store.with_suffix(".broken"))  # as the message says
    again = run_hive(["-C", str(repo), "agent", "register", "zed"], module="hive.cli.main")
    assert again.exit_code == 0, again.output
