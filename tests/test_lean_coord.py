"""The lean coordination path (``hive/cli/lean_coord.py``): ``hive reserve``, ``hive
release`` and ``hive mail send`` in a fresh process without typer, pydantic, rich,
ruamel or dulwich.

Every answer it gives must be exactly the full CLI's: the same commit (tree,
message, trailers, author; with the clock fixed, the same commit id), the same
files, the same state index rows (mail state included), the same reservation id
sequence and the same output. Everything it does not handle exactly (a conflict,
a denied pattern, an identity it cannot prove, another option) is deferred
(``dispatch`` returns None and nothing is written) to the full CLI, which refuses
it as before.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hive.cli import entry
from hive.domain import reservecore
from hive.domain.identity import mail_init
from hive.domain.reservations import decode_file, encode_file, reserve
from hive.domain.setup import init_hive
from hive.domain.workspace import Workspace
from hive.models.reservation import Override, Reservation, ReservationFile
from hive.store.yamlfast import fast_loads
from tests.conftest import (
    agent_env,
    assert_clean,
    copy_repo,
    credential,
    git,
    isolated_env,
    make_repo,
)
from tests.gitchecks import assert_fsck_clean, commits_shown, rev_parse
from tests.templates import without_sample_hooks

FIXED_NOW = datetime(2026, 11, 25, 3, 4, 5, 678000, tzinfo=UTC)
FIXED_EPOCH = 1795575845


# ------------------------------------------------------------------ fixtures


@pytest.fixture(scope="module")
def base_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What ``base`` copies: made once per module."""
    import hive.domain.reservations as reservations

    with isolated_env(tmp_path_factory), pytest.MonkeyPatch.context() as monkeypatch:
        root = without_sample_hooks(make_repo(tmp_path_factory.mktemp("template") / "base"))
        for path in ("src/a.py", "src/b.py", "docs/x.md", "secrets/key.txt"):
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(f"{path}\n")
        git(root, "add", "-A")
        git(root, "commit", "-qm", "files")
        init_hive(Workspace(str(root), actor="alice"), prefix="hv")
        for name in ("alice", "bob"):
            credential(root, name)  # registered (mail log) with a credential
        mail_init(Workspace(str(root), actor="Test User"), agent_name="Test User")
        reserve(Workspace(str(root), actor="alice"), paths=["src/a.py"], reason="editing")
        reserve(Workspace(str(root), actor="bob"), paths=["docs/**"], exclusive=False)
        person = Workspace(str(root))
        with monkeypatch.context() as past:
            past.setattr(reservations, "utc_now", lambda: FIXED_NOW - timedelta(days=30))
            reserve(person, paths=["src/expired.py"], ttl_seconds=60)
        reserve(person, paths=["README.md", "src/old.py"], ttl_seconds=7 * 24 * 3600)
    return root


@pytest.fixture
def base(base_template: Path, tmp_path: Path) -> Path:
    """A repository where alice (exclusive ``src/a.py``) and bob (shared ``docs/**``)
    hold reservations, the person (Test User) holds ``README.md``, ``src/old.py`` and
    an expired one, and alice, bob and the person are registered for mail (a copy of
    one made once per module)."""
    return copy_repo(base_template, tmp_path / "base")


@pytest.fixture
def frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    """One clock for both paths (so their commits are identical)."""
    import time

    import hive.cli.lean_coord
    import hive.domain.mail
    import hive.domain.reservations

    for module in (hive.domain.reservations, hive.domain.mail, hive.cli.lean_coord):
        monkeypatch.setattr(module, "utc_now", lambda: FIXED_NOW)
    monkeypatch.setattr(time, "time", lambda: float(FIXED_EPOCH))


def twin(base: Path, tmp_path: Path, name: str) -> Path:
    copy = tmp_path / name
    copy_repo(base, copy)
    return copy


def argv(root: Path, args: list[str], where: str = "") -> list[str]:
    return ["-C", str(root / where), *(part.replace("{root}", str(root)) for part in args)]


def lean_run(
    root: Path, args: list[str], capsys: pytest.CaptureFixture[str], where: str = ""
) -> tuple[Any, str, str]:
    code = entry.dispatch(entry.parse(argv(root, args, where)))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def full_run(
    root: Path, args: list[str], capsys: pytest.CaptureFixture[str], where: str = ""
) -> tuple[Any, str, str]:
    from hive.cli.main import run

    with pytest.raises(SystemExit) as stopped:
        run(entry.parse(argv(root, args, where)).argv())
    captured = capsys.readouterr()
    return stopped.value.code, captured.out, captured.err


def index_dump(root: Path) -> list[list[Any]]:
    path = root / ".git" / "hive" / "index.sqlite3"
    if not path.exists():
        return []
    db = sqlite3.connect(path)
    try:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
        found = [
            db.execute("SELECT * FROM blobs ORDER BY blob").fetchall(),
            db.execute("SELECT * FROM dirs ORDER BY tree, name").fetchall(),
            db.execute("SELECT key FROM states ORDER BY key").fetchall(),
            db.execute("SELECT * FROM commits ORDER BY commit_id").fetchall(),
        ]
        if "mail_state" in tables:
            found.append(db.execute("SELECT * FROM mail_state").fetchall())
        return found
    finally:
        db.close()


def heads(root: Path) -> tuple[str, str]:
    head, mail = rev_parse(root, "HEAD", "refs/hive/mail")
    return head, mail


def outcome(root: Path) -> dict[str, Any]:
    """What a write leaves: HEAD, the mail ref, the last commit of each (message,
    author, tree), the changed files, the git index rows, the state index, the id
    sequence (HEAD and the mail ref asked of one ``git show``)."""
    shown = commits_shown(root, "%H%n%an <%ae>%n%T%n%B", "HEAD", "refs/hive/mail")
    (head_text, changed), (mail_text, _) = shown
    head, message = head_text.split("\n", 1)
    mail, mail_message = mail_text.split("\n", 1)
    sequence = root / ".git" / "hive" / reservecore.SEQUENCE_FILE
    return {
        "head": head,
        "mail": mail,
        "message": message,
        "mail_message": mail_message,
        "files": {path: (root / path).read_bytes() for path in changed if (root / path).exists()},
        "staged": git(root, "ls-files", "-s", "--", *changed) if changed else "",
        "index": index_dump(root),
        "sequence": sequence.read_text() if sequence.exists() else None,
        "status": git(root, "status", "--porcelain"),
    }


# ------------------------------------------------------------------ same results


MANY_OPTIONS = ("--ack-required", "--importance", "high", "--json")
COMMANDS: dict[str, tuple[list[str], str]] = {
    "reserve": (["reserve", "src/b.py"], ""),
    "reserve-many": (
        ["reserve", "src/b.py", "src/c*.py", "docs/x.md", "src/b.py", "--shared", "--reason", "r"],
        "",
    ),
    "reserve-json": (["reserve", "src/b.py", "--ttl", "60", "--json"], ""),
    "reserve-options-first": (["--json", "reserve", "--exclusive", "--ttl-seconds=120", "x"], ""),
    "reserve-renew": (["reserve", "README.md", "--reason", "again", "--json"], ""),
    "reserve-renew-keeps-reason": (["reserve", "src/old.py"], ""),
    "reserve-directory": (["reserve", "docs", "--shared"], ""),
    "reserve-from-subdirectory": (["reserve", "b.py", "sub/*.py"], "src"),
    "reserve-absolute": (["reserve", "{root}/src/b.py"], ""),
    "reserve-absolute-directory": (["reserve", "{root}/docs", "--shared", "--ttl", "5"], "src"),
    "release": (["release", "README.md"], ""),
    "release-json": (["release", "src/old.py", "--json"], ""),
    "release-partly-held": (["release", "README.md", "src/nothing.py", "README.md"], ""),
    "release-all-held": (["release", "README.md", "src/old.py"], "src/.."),
    "release-from-subdirectory": (["release", "old.py"], "src"),
    "mail-send": (["mail", "send", "alice", "-s", "hello", "-b", "a body\nof two lines"], ""),
    "mail-send-many": (
        [*("mail", "send", "alice", "bob", "alice", "--subject", "s" * 80), *MANY_OPTIONS],
        "",
    ),
    "mail-send-to-self": (["--json", "mail", "send", "Test User", "-s", "note ü"], ""),
    "mail-send-to-options": (["mail", "send", "--to", "bob", "alice", "--to=bob", "-s", "to"], ""),
}


def test_the_lean_path_reads_the_recipients_options_of_the_command() -> None:
    """``--to NAME`` is the command's own (``Command.argument_options``), read alike."""
    from hive.cli.lean_coord import SEND_ARGUMENTS
    from hive.ops.catalog import operation

    (command,) = operation("swarmmail_send").commands
    assert command.argument_options["to"] == SEND_ARGUMENTS


def _same(
    args: list[str],
    base: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    where: str = "",
    twins: tuple[Path, Path] | None = None,
) -> dict[str, Any]:
    """Run ``args`` by the lean path and by the full CLI on twin copies of ``base``:
    the same output, exit code and outcome."""
    lean_repo, full_repo = twins or (twin(base, tmp_path, "lean"), twin(base, tmp_path, "full"))
    code, lean_out, lean_err = lean_run(lean_repo, args, capsys, where)
    assert code == 0, f"the lean path deferred a form it should handle: {lean_err}"
    full = full_run(full_repo, args, capsys, where)
    assert full == (0, lean_out, lean_err)
    lean = outcome(lean_repo)
    assert lean == outcome(full_repo)
    assert lean["status"] == ""
    assert_fsck_clean(lean_repo)  # the status is checked just above
    return lean


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_lean_and_full_paths_give_the_same_result(
    name: str,
    base_template: Path,
    tmp_path: Path,
    frozen: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Twins of ``base``'s template (only read here): the same output and outcome."""
    before = dict(zip(("head", "mail"), heads(base_template), strict=True))
    args, where = COMMANDS[name]
    after = _same(args, base_template, tmp_path, capsys, where)
    moved = "mail" if name.startswith("mail") else "head"
    assert after[moved] != before[moved]


def test_renewing_a_held_reservation_says_renewed_on_both_paths(
    base: Path, tmp_path: Path, frozen: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """The person holds README.md: reserving it again renews it (the result's
    ``renewed``), and both paths say so; a pattern not held yet is 'reserved'."""
    args = ["reserve", "README.md", "src/new.py"]
    lean_repo, full_repo = twin(base, tmp_path, "lean"), twin(base, tmp_path, "full")
    code, out, err = lean_run(lean_repo, args, capsys)
    assert code == 0, err
    assert full_run(full_repo, args, capsys) == (0, out, err)
    renewed, reserved = out.splitlines()
    assert renewed.startswith("renewed #") and " README.md (exclusive) until " in renewed
    assert reserved.startswith("reserved #") and " src/new.py " in reserved
    held = json.loads(full_run(full_repo, [*args, "--json"], capsys)[1])
    assert [item["id"] for item in held["granted"]] == held["renewed"]


AS_ALICE = {
    "reserve": ["reserve", "src/b.py", "--json"],
    "release": ["release", "src/a.py"],
    "mail": ["mail", "send", "bob", "Test User", "-s", "from alice"],
}


@pytest.mark.parametrize("name", sorted(AS_ALICE))
def test_an_agent_with_its_credential_acts_as_itself(
    name: str,
    base: Path,
    tmp_path: Path,
    frozen: None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """alice, proven by HIVE_AGENT_TOKEN: her own reservations, her name on the commit."""
    for key, value in agent_env(base, "alice", {}).items():
        monkeypatch.setenv(key, value)
    after = _same(AS_ALICE[name], base, tmp_path, capsys)
    which = "mail_message" if name == "mail" else "message"
    assert after[which].startswith("alice <alice@hive.local>\n")
    if name != "mail":
        assert "Hive-Agent: alice" in after["message"]
        assert "Hive-Identity" not in after["message"]


def test_a_mail_state_behind_the_log_is_replayed_as_by_the_full_path(
    base: Path, tmp_path: Path, frozen: None, capsys: pytest.CaptureFixture[str]
) -> None:
    db = sqlite3.connect(base / ".git" / "hive" / "index.sqlite3")
    with db:
        db.execute("DELETE FROM mail_state")
    db.close()
    after = _same(COMMANDS["mail-send"][0], base, tmp_path, capsys)
    assert after["index"][-1]  # saved again, for the new tip


def test_a_worktree_without_conflicts_is_handled(
    base: Path, tmp_path: Path, frozen: None, capsys: pytest.CaptureFixture[str]
) -> None:
    lean_repo, full_repo = twin(base, tmp_path, "lean"), twin(base, tmp_path, "full")
    for repo in (lean_repo, full_repo):
        other = tmp_path / f"other-{repo.name}"
        git(repo, "worktree", "add", "-q", str(other), "-b", "other")
        reserve(Workspace(str(other), actor="carol"), paths=["lib/**"])
    _same(["reserve", "src/b.py", "lib.py"], base, tmp_path, capsys, twins=(lean_repo, full_repo))


# ------------------------------------------------------------------ threads


@pytest.fixture(scope="module")
def threaded_template(
    base_template: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, dict[str, str]]:
    """``base`` with an epic (created by alice, coordinated by bob as its metadata says)
    whose open subtask is assigned to bob, a closed one to alice, one to carol (not
    registered for mail), the person holding a reservation made for the epic's open
    subtask, and bob's cell in progress under another epic of alice's (made once per
    module); the repository and the ids."""
    with isolated_env(tmp_path_factory):
        base = copy_repo(base_template, tmp_path_factory.mktemp("threaded") / "base")
        return base, _thread_cells(base)


@pytest.fixture
def threaded_base(threaded_template: tuple[Path, dict[str, str]], tmp_path: Path) -> Path:
    """A copy of ``threaded_template``'s repository."""
    return copy_repo(threaded_template[0], tmp_path / "base")


@pytest.fixture
def threaded(threaded_template: tuple[Path, dict[str, str]]) -> dict[str, str]:
    """The ids of ``threaded_template``'s cells (``threaded_base`` has them)."""
    return dict(threaded_template[1])


def _thread_cells(base: Path) -> dict[str, str]:
    """The cells and reservation of ``threaded_template`` written in ``base``; the ids."""
    from hive.domain.cells import close_cell, create_cell, update_cell

    alice = Workspace(str(base), actor="alice")
    epic = create_cell(alice, title="auth", type="epic", metadata={"coordinator": "bob"})
    other = create_cell(alice, title="no epic", type="epic")
    open_task = create_cell(alice, title="login", parent=epic.id, assignee="bob")
    done = create_cell(alice, title="schema", parent=epic.id, assignee="alice")
    close_cell(alice, cell_id=done.id)
    carol = create_cell(alice, title="docs", parent=open_task.id)
    update_cell(alice, cell_id=carol.id, assignee="carol")
    plain = create_cell(alice, title="plain", parent=other.id)
    bob = Workspace(str(base), actor="bob")
    update_cell(bob, cell_id=plain.id, status="in_progress", assignee="bob")
    reserve(Workspace(str(base)), paths=["src/login.py"], cell=open_task.id)
    # a thread named like a cell id that is no cell's id nor the start of one (ids are
    # random: a fixed "hv-1" began an epic's id now and then, a prefix thread)
    unused = next(
        f"hv-{c}"
        for c in "0123456789abcdefghijklmnopqrstuvwxyz"
        if not any(cell.startswith(f"hv-{c}") for cell in (epic.id, other.id))
    )
    return {
        "epic": epic.id,
        "task": open_task.id,
        "plain": plain.id,
        "other": other.id,
        "unused": unused,
    }


THREADS: dict[str, tuple[list[str], str]] = {
    "epic-thread-reaches-its-workers": (["mail", "send", "-s", "all", "--thread", "{epic}"], ""),
    "epic-thread-and-to": (["mail", "send", "alice", "-s", "x", "--thread={epic}", "--json"], ""),
    "epic-thread-as-alice": (["mail", "send", "-s", "x", "--thread", "{epic}"], "alice"),
    "cell-thread": (["mail", "send", "alice", "-s", "x", "--thread", "{task}"], ""),
    "coordinator-of-the-thread": (
        ["mail", "send", "coordinator", "-s", "x", "--thread", "{task}"],
        "",
    ),
    "coordinator-by-created-by": (
        ["mail", "send", "coordinator", "-s", "x", "--thread", "{plain}"],
        "",
    ),
    "coordinator-of-my-work": (
        ["mail", "send", "coordinator", "alice", "-s", "x", "--json"],
        "bob",
    ),
    "plain-thread-name": (["mail", "send", "alice", "-s", "x", "--thread", "design"], ""),
    "thread-named-like-a-cell": (["mail", "send", "alice", "-s", "x", "--thread", "{unused}"], ""),
}


@pytest.mark.parametrize("name", sorted(THREADS))
def test_threads_and_the_coordinator_are_found_as_by_the_full_path(
    name: str,
    threaded_base: Path,
    threaded: dict[str, str],
    tmp_path: Path,
    frozen: None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    args, who = THREADS[name]
    if who:
        for key, value in agent_env(threaded_base, who, {}).items():
            monkeypatch.setenv(key, value)
    after = _same([part.format(**threaded) for part in args], threaded_base, tmp_path, capsys)
    event = json.loads(after["mail_message"].split("\n\n", 1)[1].split("\n\n")[0])
    expected = {
        "epic-thread-reaches-its-workers": ["bob"],  # not alice (closed), not the sender
        "epic-thread-and-to": ["alice", "bob"],
        "epic-thread-as-alice": ["Test User", "bob"],  # the holder of a reservation for it
        "cell-thread": ["alice"],
        "coordinator-of-the-thread": ["bob"],  # metadata.coordinator of the task's epic
        "coordinator-by-created-by": ["alice"],  # the epic has no coordinator: its creator
        "coordinator-of-my-work": ["alice"],  # bob's open work is under alice's other epic
        "plain-thread-name": ["alice"],  # no cell is or starts with it: nobody else
        "thread-named-like-a-cell": ["alice"],  # no cell is or starts with it
    }[name]
    assert event["to"] == expected


def registered(name: str) -> str:
    """The registered agent of ``base`` who stands for a person of ``test_mail_narrow``'s
    prefix test (its coordinators, workers and creator)."""
    return {"bo": "bob", "cy": "alice", "ann": "alice", "dee": "alice"}.get(name, "bob")


@pytest.fixture(scope="module")
def named_template(base_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``base`` with the cells of ``test_mail_narrow``'s prefix test (registered agents
    as their workers, coordinators and creator), made once per module."""
    from tests.test_mail_narrow import write_prefix_cells

    root = copy_repo(base_template, tmp_path_factory.mktemp("named") / "base")
    write_prefix_cells(root, registered)
    Workspace(str(root), actor="alice").reader.head_key()  # indexed, as after any command
    return root


def named_threads() -> dict[str, tuple[str, list[str], str | None]]:
    """A thread as given: the thread stored, who else it reaches, the coordinator of the
    epic above the cell it names (None: no such epic): ``test_mail_narrow``'s pinned
    answers, for the agents of ``base``."""
    from tests.test_mail_narrow import PREFIX_THREADS

    return {
        thread: (stored, sorted(map(registered, members)), coordinator and registered(coordinator))
        for thread, (stored, members, coordinator) in PREFIX_THREADS.items()
    }


NAMED_THREADS = named_threads()


@pytest.mark.parametrize("to", ["alice", "coordinator"])
@pytest.mark.parametrize("thread", sorted(NAMED_THREADS))
def test_a_thread_in_any_form_is_answered_by_the_lean_path_as_by_the_full_cli(
    thread: str,
    to: str,
    named_template: Path,
    tmp_path: Path,
    frozen: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A thread given as a full id, a prefix, in upper case, with spaces around, as a
    deleted cell's id or as a plain name: the lean path reads it as the full CLI does
    and writes the same commit (the same thread stored, the same recipients); only a
    refusal (``coordinator`` with no epic behind the thread) is left to the full CLI,
    which words it, nothing written by the lean path."""
    stored, members, coordinator = NAMED_THREADS[thread]
    args = ["mail", "send", to, "-s", "x", "--thread", thread, "--json"]
    lean_repo = twin(named_template, tmp_path, "lean")
    full_repo = twin(named_template, tmp_path, "full")
    before = outcome(lean_repo)
    if to == "coordinator" and coordinator is None:
        assert lean_run(lean_repo, args, capsys)[:2] == (None, "")  # deferred
        assert outcome(lean_repo) == before  # nothing written
        code, out, err = full_run(lean_repo, args, capsys)  # as the console script goes on
        assert code == 3 and "unknown recipient(s) coordinator" in json.loads(out)["error"]
        assert full_run(full_repo, args, capsys) == (code, out, err)
        assert outcome(lean_repo) == outcome(full_repo) == before
        return
    after = _same(args, named_template, tmp_path, capsys, twins=(lean_repo, full_repo))
    assert after["mail"] != before["mail"]
    event = json.loads(after["mail_message"].split("\n\n", 1)[1].split("\n\n")[0])
    first = coordinator if to == "coordinator" else to
    expected = [first, *sorted(set(members) - {first})]
    assert (event["thread_id"], event["to"]) == (stored, expected)
    shown = git(lean_repo, "show", "--format=%B", "refs/hive/mail")
    assert shown == git(full_repo, "show", "--format=%B", "refs/hive/mail")


def test_coordinator_with_no_epic_behind_the_senders_work_is_left_to_the_full_cli(
    base: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["mail", "send", "coordinator", "-s", "x"]
    mail = git(base, "rev-parse", "refs/hive/mail")
    assert lean_run(base, args, capsys)[:2] == (None, "")
    assert git(base, "rev-parse", "refs/hive/mail") == mail  # nothing written
    code, out, err = full_run(base, args, capsys)
    assert (code, out) == (3, "") and "unknown recipient(s) coordinator" in err


def test_a_deleted_cells_id_as_thread_is_a_plain_thread_on_both_paths(
    threaded_base: Path,
    threaded: dict[str, str],
    tmp_path: Path,
    frozen: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A thread naming a deleted epic by its full id is a plain thread (the full path
    reads it so): the lean path answers it from that cell's row, as the full CLI."""
    from hive.domain.cells import delete_cell

    delete_cell(Workspace(str(threaded_base), actor="alice"), cell_id=threaded["epic"], force=True)
    args = ["mail", "send", "alice", "-s", "x", "--thread", threaded["epic"], "--json"]
    after = _same(args, threaded_base, tmp_path, capsys)
    event = json.loads(after["mail_message"].split("\n\n", 1)[1].split("\n\n")[0])
    assert (event["thread_id"], event["to"]) == (threaded["epic"], ["alice"])  # not bob


# ------------------------------------------------------------------ inbox and read


@pytest.fixture(scope="module")
def mailbox_template(base_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``base`` with mail for the person (Test User) and alice: headers rich would read
    as markup, urgent, threaded, one read already, one sent by the person, one that is
    alice's only; more than an inbox shows (made once per module)."""
    from hive.domain.mail import read_message, send_message

    root = copy_repo(base_template, tmp_path_factory.mktemp("mailbox") / "base")
    alice, bob = Workspace(str(root), actor="alice"), Workspace(str(root), actor="bob")
    me = Workspace(str(root))
    first = send_message(alice, to=["Test User"], subject="hello", body="one\ntwo")
    send_message(bob, to=["alice"], subject="not yours", body="b")
    send_message(
        bob,
        to=["Test User", "alice"],
        subject="[bold]not bold[/bold] a\\",
        body="[red]x[/red] \\[y] z\\",
        importance="urgent",
        ack_required=True,
        thread_id="design",
    )
    send_message(alice, to=["Test User"], subject="path/[id]/x ü", importance="high", body="")
    send_message(me, to=["alice"], subject="from me", body="mine", ack_required=True)
    for number in range(4):
        send_message(alice, to=["Test User"], subject=f"m{number}", body="", thread_id="hv-q")
    read_message(me, message_id=first.message_id)
    return root


@pytest.fixture
def mailbox(mailbox_template: Path, tmp_path: Path) -> Path:
    """A copy of ``mailbox_template``'s repository."""
    return copy_repo(mailbox_template, tmp_path / "mailbox")


SUBJECTS = {
    "hello": "hello",
    "markup": "[bold]not bold[/bold] a\\",
    "path": "path/[id]/x ü",
    "mine": "from me",
    "other": "not yours",
}


def message_ids(root: Path) -> dict[str, str]:
    """The id of each message of :data:`SUBJECTS` in ``root``, by its short name."""
    from hive.domain import maillog
    from hive.domain.mail import _state

    state: maillog.MailState = _state(Workspace(str(root)))
    found = {event["subject"]: number for number, event in state.messages.items()}
    return {name: str(found[subject]) for name, subject in SUBJECTS.items()}


INBOX = {
    "plain": ["mail", "inbox"],
    "json": ["mail", "inbox", "--json"],
    "limit": ["mail", "inbox", "-n", "2"],
    "limit-long": ["--json", "mail", "inbox", "--limit=3"],
    "capped": ["mail", "inbox", "--limit", "9", "--json"],
    "urgent": ["mail", "inbox", "--urgent"],
    "urgent-only-json": ["mail", "inbox", "--urgent-only", "--json"],
    "unread": ["mail", "inbox", "--unread", "-n", "1"],
    "unread-only-json": ["mail", "inbox", "--json", "--unread-only"],
    "none-urgent-unread": ["mail", "inbox", "--urgent", "--unread", "-n", "1"],
}


@pytest.mark.parametrize("who", ["", "alice", "bob"])
@pytest.mark.parametrize("name", sorted(INBOX))
def test_an_inbox_is_shown_by_the_lean_path_as_by_the_full_cli(
    name: str,
    who: str,
    mailbox_template: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The person's inbox, alice's and bob's (empty: ``no messages``), every option
    form: the same bytes, exit code and state index rows; nothing committed."""
    if who:
        for key, value in agent_env(mailbox_template, who, {}).items():
            monkeypatch.setenv(key, value)
    lean_repo = twin(mailbox_template, tmp_path, "lean")
    full_repo = twin(mailbox_template, tmp_path, "full")
    lean = lean_run(lean_repo, INBOX[name], capsys)
    assert lean[0] == 0, f"the lean path deferred: {lean[2]}"
    assert full_run(full_repo, INBOX[name], capsys) == lean
    lean_outcome = outcome(lean_repo)
    assert lean_outcome == outcome(full_repo)
    assert (lean_outcome["head"], lean_outcome["mail"]) == heads(mailbox_template)
    if who == "bob":
        assert lean[1] in ("no messages\n", "[]\n")
    if (who, name) == ("", "plain"):  # the newest five, unread marked
        assert lean[1].startswith("*#") and lean[1].count("\n") == 5


READ = {
    "unread": (["mail", "read", "{path}"], "moved"),
    "unread-json": (["mail", "read", "#{markup}", "--json"], "moved"),
    "markup": (["mail", "read", "{markup}"], "moved"),
    "read-before": (["mail", "read", "{hello}"], ""),
    "sent-by-me": (["--json", "mail", "read", " #{mine}"], ""),
    "sent-by-me-text": (["mail", "read", "{mine}"], ""),
}


@pytest.mark.parametrize("name", sorted(READ))
def test_a_message_is_read_by_the_lean_path_as_by_the_full_cli(
    name: str,
    mailbox_template: Path,
    tmp_path: Path,
    frozen: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A message to the reader is marked read by the same commit; one read before or
    sent by the reader is shown with nothing written; the same bytes, exit code and
    state index rows either way."""
    ids = message_ids(mailbox_template)
    given, moved = READ[name]
    args = [part.format_map(ids) for part in given]
    before = dict(zip(("head", "mail"), heads(mailbox_template), strict=True))
    lean_repo = twin(mailbox_template, tmp_path, "lean")
    full_repo = twin(mailbox_template, tmp_path, "full")
    lean = lean_run(lean_repo, args, capsys)
    assert lean[0] == 0, f"the lean path deferred: {lean[2]}"
    assert full_run(full_repo, args, capsys) == lean
    if name == "markup":  # asks for an ack, on a thread: both said so alike
        assert "thread design  sent " in lean[1] and "ack required ('hive mail ack" in lean[1]
    if name == "sent-by-me-text":  # its sender is told who has not acknowledged it
        assert "ack required: not acknowledged yet by alice" in lean[1]
    after = outcome(lean_repo)
    assert after == outcome(full_repo)
    assert (after["mail"] != before["mail"]) == bool(moved)
    assert after["head"] == before["head"]
    shown = git(lean_repo, "show", "refs/hive/mail")
    assert shown == git(full_repo, "show", "refs/hive/mail")


MAIL_DEFERRED = {
    "another-inbox": ["mail", "inbox", "--agent", "alice"],
    "limit-zero": ["mail", "inbox", "-n", "0"],
    "limit-text": ["mail", "inbox", "-n", "x"],
    "argument": ["mail", "inbox", "x"],
    "force": ["mail", "inbox", "--force"],
    "help": ["mail", "inbox", "--help"],
    "read-another-s": ["mail", "read", "{other}"],
    "read-zero": ["mail", "read", "0"],
    "read-two": ["mail", "read", "{hello}", "{mine}"],
    "read-force": ["mail", "read", "{hello}", "--force", "--reason", "r"],
    "read-none": ["mail", "read"],
    "ack": ["mail", "ack", "{hello}"],
}


@pytest.mark.parametrize("name", sorted(MAIL_DEFERRED))
def test_mail_the_lean_path_does_not_answer_is_left_to_the_full_cli(
    name: str, mailbox: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Another's inbox or message, an unknown message, values the parameter model
    refuses, other options: deferred with nothing printed or written, then answered
    (or refused) by the full CLI, with no traceback."""
    args = [part.format_map(message_ids(mailbox)) for part in MAIL_DEFERRED[name]]
    before = outcome(mailbox)
    assert lean_run(mailbox, args, capsys) == (None, "", "")
    assert outcome(mailbox) == before
    code, _, err = full_run(mailbox, args, capsys)
    assert code is not None and "Traceback" not in err


def test_the_inbox_on_a_terminal_is_left_to_rich(
    mailbox_template: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Not piped (``COLUMNS`` set, as on a terminal): rich lays the lines out, the full CLI
    prints them; ``--json`` is answered all the same."""
    monkeypatch.setenv("COLUMNS", "20")
    assert lean_run(mailbox_template, ["mail", "inbox"], capsys) == (None, "", "")
    assert lean_run(mailbox_template, ["mail", "read", "#1"], capsys) == (None, "", "")
    assert lean_run(mailbox_template, ["mail", "inbox", "--json"], capsys)[0] == 0


# ------------------------------------------------------------------ refusals


CONFLICTS = {
    "same-file": ["reserve", "src/a.py"],
    "glob-over-held": ["reserve", "src/*.py"],
    "held-in-a-brace": ["reserve", "src/{b,a}.py"],
    "everything": ["reserve", "**"],
    "directory": ["reserve", "src"],
    "exclusive-over-shared": ["reserve", "docs/x.md"],
    "class": ["reserve", "src/[a-c].py", "--json"],
    "deep-glob": ["reserve", "**/a.py", "--shared"],
}


@pytest.mark.parametrize("name", sorted(CONFLICTS))
def test_a_conflict_is_found_and_left_to_the_full_cli_to_refuse(
    name: str, base: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    head = git(base, "rev-parse", "HEAD")
    code, out, _ = lean_run(base, CONFLICTS[name], capsys)
    assert (code, out) == (None, "")
    full = full_run(base, CONFLICTS[name], capsys)
    assert full[0] == 4
    assert "conflicts with" in full[2] or "reservation_conflict" in full[1]
    assert git(base, "rev-parse", "HEAD") == head
    assert_clean(base)


def test_a_conflict_in_another_worktree_is_found(
    base: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "other"
    git(base, "worktree", "add", "-q", str(other), "-b", "other")
    reserve(Workspace(str(other), actor="carol"), paths=["lib/**"])
    head = git(base, "rev-parse", "HEAD")
    assert lean_run(base, ["reserve", "lib/x.py"], capsys)[:2] == (None, "")
    code, _, err = full_run(base, ["reserve", "lib/x.py"], capsys)
    assert code == 4 and "in the worktree of branch other" in err
    assert git(base, "rev-parse", "HEAD") == head


def test_an_agents_denied_patterns_are_checked_by_the_path_rules(
    base: Path,
    tmp_path: Path,
    frozen: None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from hive.store.yamlio import dumps, load_mapping

    config = base / ".hive" / "config.yaml"
    settings = load_mapping(config.read_text(), "config")
    rules = {"alice": {"*": {"denied_paths": ["secrets/**"]}}}
    config.write_text(dumps({**settings, "tools": {"permissions": rules}}))
    git(base, "commit", "-qm", "rules", "--", ".hive/config.yaml")
    for key, value in agent_env(base, "alice", {}).items():
        monkeypatch.setenv(key, value)
    head = git(base, "rev-parse", "HEAD")
    assert lean_run(base, ["reserve", "secrets/key.txt"], capsys)[:2] == (None, "")
    assert full_run(base, ["reserve", "secrets/key.txt"], capsys)[0] == 5
    assert git(base, "rev-parse", "HEAD") == head
    _same(["reserve", "src/b.py", "--json"], base, tmp_path, capsys)  # not denied


IDENTITY_COMMANDS = {
    "reserve": ["reserve", "src/b.py"],
    "release": ["release", "README.md"],
    "send": ["mail", "send", "bob", "-s", "x"],
    "inbox": ["mail", "inbox"],
    "read": ["mail", "read", "1"],
}


@pytest.mark.parametrize("as_json", [False, True])
@pytest.mark.parametrize("command", sorted(IDENTITY_COMMANDS))
def test_an_identity_it_cannot_prove_is_refused_by_the_lean_path_as_by_the_full_cli(
    command: str,
    as_json: bool,
    base: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A name claimed without its credential (``HIVE_AGENT``, ``--actor``), a token of
    nobody, a token of another agent, a claim that is no agent name: refused by the
    lean path with the full CLI's output and exit code (no full CLI started for one
    line), and nothing is written."""
    args = ["--json"] * as_json + IDENTITY_COMMANDS[command]
    head, mail = heads(base)
    bob = credential(base, "bob")
    situations = [
        ({"HIVE_AGENT": "alice"}, [], "needs its credential"),
        ({}, ["--actor", "alice"], "needs its credential"),
        ({"HIVE_AGENT_TOKEN": "not-a-credential"}, [], "not the credential of any agent"),
        ({"HIVE_AGENT_TOKEN": bob, "HIVE_AGENT": "alice"}, [], "you are bob"),
        ({}, ["--actor", "no/name"], "invalid agent name"),
    ]
    for env, claim, said in situations:
        with monkeypatch.context() as scoped:
            for key, value in env.items():
                scoped.setenv(key, value)
            lean = lean_run(base, [*claim, *args], capsys)
            assert lean[0] is not None, f"the lean path deferred {env} {claim}"
            assert lean == full_run(base, [*claim, *args], capsys), (env, claim)
        assert said in lean[2] and lean[0] in (2, 5)
        if as_json:
            assert json.loads(lean[1])["code"] in ("not_your_identity", "invalid_input")
    assert heads(base) == (head, mail)
    assert_clean(base)


DEFERRED = {
    "cell": ["reserve", "src/b.py", "--cell", "hv-x"],
    "force": ["reserve", "src/a.py", "--force", "--reason", "mine now"],
    "no-pattern": ["reserve"],
    "ttl-zero": ["reserve", "x", "--ttl", "0"],
    "ttl-text": ["reserve", "x", "--ttl", "soon"],
    "ttl-too-long": ["reserve", "x", "--ttl", "604801"],
    "both-kinds": ["reserve", "x", "--shared", "--exclusive"],
    "markup-like": ["reserve", "src/[bc].py"],
    "outside": ["reserve", "../elsewhere"],
    "long-reason": ["reserve", "x", "--reason", "r" * 501],
    "help": ["reserve", "--help"],
    "release-nothing": ["release"],
    "release-id": ["release", "--id", "1"],
    "release-all": ["release", "--all"],
    "release-other": ["release", "src/a.py", "--agent", "alice", "--force", "--reason", "gone"],
    "mail-ack": ["mail", "ack", "1"],
    "mail-no-subject": ["mail", "send", "alice"],
    "mail-blank-subject": ["mail", "send", "alice", "-s", "  "],
    "mail-no-recipient": ["mail", "send", "-s", "x"],
    "mail-unknown": ["mail", "send", "zed", "-s", "x"],
    "mail-coordinator": ["mail", "send", "coordinator", "-s", "x"],
    "mail-stdin": ["mail", "send", "alice", "-s", "x", "-b", "-"],
    "mail-importance": ["mail", "send", "alice", "-s", "x", "--importance", "huge"],
}


@pytest.mark.parametrize("name", sorted(DEFERRED))
def test_what_the_lean_path_cannot_answer_exactly_is_deferred(
    name: str, base: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    head, mail = heads(base)
    code, out, err = lean_run(base, DEFERRED[name], capsys)
    assert (code, out, err) == (None, "", "")
    assert heads(base) == (head, mail)
    assert_clean(base)


REFUSED = {  # refusals the lean path words as the full CLI does: args, user.name
    "release-anothers": (["release", "src/a.py"], ""),
    "release-expired-only": (["release", "src/expired.py", "src/nothing.py"], ""),
    "release-holding-no-file": (["release", "README.md"], "Nobody Here"),
    "read-unknown": (["mail", "read", "#12"], ""),
}


@pytest.mark.parametrize("as_json", [False, True])
@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refusals_are_worded_by_the_lean_path_as_by_the_full_cli(
    name: str, as_json: bool, base: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A release matching none of the holder's active reservations, a message id the
    log does not have: refused here with the very error of the full path (no full CLI
    started for one line); nothing is written."""
    args, person = REFUSED[name]
    if person:
        git(base, "config", "user.name", person)
    args = ["--json"] * as_json + args
    head, mail = heads(base)
    lean = lean_run(base, args, capsys)
    assert lean[0] == 3, f"the lean path deferred: {lean[2]}"
    assert lean == full_run(base, args, capsys)
    assert lean[2].startswith("error: ") and lean[2].count("\n") == 1
    if as_json:
        assert json.loads(lean[1])["code"] == "not_found"
    assert heads(base) == (head, mail)
    assert_clean(base)


def test_an_unregistered_sender_is_deferred(base: Path, capsys: pytest.CaptureFixture[str]) -> None:
    git(base, "config", "user.name", "Somebody Else")
    assert lean_run(base, ["mail", "send", "alice", "-s", "x"], capsys)[:2] == (None, "")
    code, _, err = full_run(base, ["mail", "send", "alice", "-s", "x"], capsys)
    # a person is not told to register an agent under their own name (security.md)
    assert code == 5 and "you act as Somebody Else, a person (no HIVE_AGENT_TOKEN)" in err
    assert "register an agent under its own name ('hive agent register NAME', not yours)" in err


@pytest.mark.parametrize("as_json", [False, True])
def test_an_unregistered_readers_inbox_is_refused_by_the_lean_path_as_by_the_full_cli(
    base: Path, as_json: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    """The refusal is worded here (no full CLI to start for one line of error)."""
    git(base, "config", "user.name", "Somebody Else")
    args = ["--json"] * as_json + ["mail", "inbox", "-n", "3"]
    mail = git(base, "rev-parse", "refs/hive/mail")
    lean = lean_run(base, args, capsys)
    assert lean[0] == 5, "the lean path deferred it"
    assert lean == full_run(base, args, capsys)
    assert lean[2].startswith(
        "error: you act as Somebody Else, a person (no HIVE_AGENT_TOKEN), who has no mailbox"
    )
    assert "'hive mail inbox --agent NAME --force --reason WHY'" in lean[2]
    if as_json:  # the code of an unregistered tool session (docs/security.md)
        assert json.loads(lean[1])["code"] == "not_registered"
    assert git(base, "rev-parse", "refs/hive/mail") == mail


def test_reservation_files_the_plain_reader_declines_are_left_to_the_full_cli(
    base: Path, tmp_path: Path, frozen: None, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = base / ".hive" / "reservations" / "zed.yaml"
    broken.write_text("agent: zed\nreservations: [unclosed\n")
    git(base, "add", ".hive")
    git(base, "commit", "-qm", "a broken reservation file", "--no-verify")
    assert lean_run(base, ["reserve", "src/b.py"], capsys)[:2] == (None, "")
    assert full_run(base, ["reserve", "src/b.py"], capsys)[0] == 7  # corrupt: refused
    _same(["release", "README.md"], base, tmp_path, capsys)  # reads only the holder's file
    misfiled = base / ".hive" / "reservations" / "bob.yaml"
    broken.unlink()
    misfiled.rename(base / ".hive" / "reservations" / "robert.yaml")
    git(base, "add", "-A", ".hive")
    git(base, "commit", "-qm", "misfiled", "--no-verify")
    assert lean_run(base, ["reserve", "src/b.py"], capsys)[:2] == (None, "")


# ------------------------------------------------------------------ fresh processes


PROBE = (
    "import io, json, sys\n"
    "from hive.cli import entry\n"
    "def run(*args):\n"
    "    sys.stdout = io.TextIOWrapper(io.BytesIO())\n"
    "    assert entry.dispatch(entry.parse(['-C', sys.argv[1], *args])) == 0, args\n"
    "    sys.stdout.flush()\n"
    "    return sys.stdout.buffer.getvalue()\n"
    "run('reserve', 'src/b.py')\n"
    "run('release', 'src/b.py')\n"
    "sent = json.loads(run('mail', 'send', 'bob', '-s', 'x', '--json'))['message_id']\n"
    "run('mail', 'inbox', '--json')\n"
    "run('mail', 'inbox')\n"  # piped: the plain lines
    "run('mail', 'read', str(sent))\n"
    "run('mail', 'read', f'#{sent}', '--json')\n"
    "sys.stdout = sys.__stdout__\n"
    "heavy = ('typer', 'click', 'pydantic', 'pydantic_core', 'rich', 'ruamel', 'dulwich',"
    " 'filelock', 'typing', 'threading', 'secrets', *sys.argv[2:])\n"
    "print(sorted({m.split('.')[0] for m in sys.modules} & set(heavy)))\n"
)


@pytest.mark.parametrize("who", ["person", "agent"])
def test_fresh_processes_import_no_heavy_module(base: Path, who: str) -> None:
    """Not the models; a person's process not OpenSSL either (a name that is not a
    plain file name, ``Test User``, is hashed by the built-in SHA-256; an agent's
    credential is checked with ``hmac.compare_digest``, which loads it)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("HIVE_")}
    openssl = ["hashlib", "hmac", "_hashlib"]
    if who == "agent":
        env, openssl = agent_env(base, "alice", env), []
    found = subprocess.run(
        [sys.executable, "-c", PROBE, str(base), *openssl],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    assert found.returncode == 0, found.stderr
    assert found.stdout.splitlines()[-1] == "[]"


def test_the_built_in_sha256_is_hashlibs() -> None:
    import hashlib

    from hive.digests import sha256_hex

    for data in (b"", b"Test User", "ünï".encode(), bytes(range(256)) * 300):
        assert sha256_hex(data) == hashlib.sha256(data).hexdigest()


def test_a_fresh_process_refuses_a_conflict_as_before(base: Path) -> None:
    env = agent_env(base, "bob", {**os.environ})
    found = subprocess.run(
        [sys.executable, "-m", "hive", "-C", str(base), "--json", "reserve", "src/a.py"],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    assert found.returncode == 4, found.stderr
    assert json.loads(found.stdout)["code"] == "reservation_conflict"
    assert found.stderr.startswith("error: src/a.py conflicts with src/a.py reserved by alice")


# ------------------------------------------------------------------ the file format


_name = st.text(
    st.characters(min_codepoint=32, max_codepoint=0x2FF, blacklist_categories=("Cc", "Cs")),
    min_size=1,
    max_size=12,
)
_times = st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
)
_override = st.builds(Override, reservation_id=st.integers(1, 99), holder=_name, pattern=_name)


# Built once: a strategy built per example is validated again per example.
_ids = st.integers(1, 10**6)
_reasons = st.none() | st.text(max_size=20)
_cells = st.none() | _name
_overrides = st.lists(_override, max_size=2)
_yielded = st.none() | _override
_counts = st.integers(0, 3)


@st.composite
def reservation_files(draw: st.DrawFn) -> ReservationFile:
    agent = draw(_name)
    items = [
        Reservation(
            id=draw(_ids),
            agent=agent,
            path_pattern=draw(_name),
            exclusive=draw(st.booleans()),
            reason=draw(_reasons),
            cell=draw(_cells),
            created_at=draw(_times),
            expires_at=draw(_times),
            forced=draw(st.booleans()),
            overrides=draw(_overrides),
            yielded_to=draw(_yielded),
        )
        for _ in range(draw(_counts))
    ]
    return ReservationFile(agent=agent, reservations=items)


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(reservation_files())
def test_plain_reservation_files_are_exactly_what_the_model_makes(written: ReservationFile) -> None:
    stored = encode_file(written)
    model = decode_file(stored, reservecore.reservation_path(written.agent))
    plain = reservecore.plain_file(stored)
    if plain is None:  # declined only where the fast YAML reader declines the text
        assert fast_loads(stored.decode()) is None
        return
    assert plain.agent == model.agent
    assert [item.dump() for item in plain.reservations] == [
        item.model_dump() for item in model.reservations
    ]
    assert plain.encode() == encode_file(model) == stored
    now = datetime.now(UTC)
    assert [i.active(now) for i in plain.reservations] == [
        i.active(now) for i in model.reservations
    ]


def test_the_plain_reader_declines_what_the_model_would_change() -> None:
    good = {
        "id": 1,
        "agent": "a",
        "path_pattern": "x",
        "created_at": "2026-11-25T03:04:05.678Z",
        "expires_at": "2026-11-25T04:04:05.678Z",
    }
    from hive.store.yamlio import dumps

    def text(entry: dict[str, Any], **top: Any) -> bytes:
        return dumps({"agent": "a", "reservations": [entry], **top}).encode()

    assert reservecore.plain_file(text(good)) is not None
    declined = [
        {**good, "id": "1"},
        {**good, "id": 0},
        {**good, "exclusive": "yes"},
        {**good, "created_at": "2026-11-25T03:04:05Z"},
        {**good, "expires_at": "2026-11-25T04:04:05.678+00:00"},
        {**good, "unknown": 1},
        {**good, "overrides": [{"holder": "b"}]},
        {key: value for key, value in good.items() if key != "path_pattern"},
    ]
    for item in declined:
        assert reservecore.plain_file(text(item)) is None, item
    assert reservecore.plain_file(text(good, extra=1)) is None
    assert reservecore.plain_file(b"agent: a\nreservations: [x\n") is None


# ------------------------------------------------------------------ commits without dulwich


def test_commits_are_read_as_dulwich_reads_them(base: Path, tmp_path: Path) -> None:
    from hive.git.repo import CommitInfo, GitRepo

    other = make_repo(tmp_path / "other")
    git(other, "commit", "-q", "--allow-empty", "-m", "no trailing newline\n\n\nbody ü")
    git(other, "checkout", "-q", "-b", "side")
    git(other, "commit", "-q", "--allow-empty", "-m", "side")
    git(other, "checkout", "-q", "main")
    git(other, "commit", "-q", "--allow-empty", "-m", "main")
    git(other, "merge", "-q", "--no-ff", "side", "-m", "a merge")
    for root, tips in ((base, ["HEAD", "refs/hive/mail"]), (other, ["HEAD"])):
        repo = GitRepo.discover(str(root))
        for tip in tips:
            for sha in git(root, "rev-list", tip).split():
                commit = repo._commit(sha)
                assert repo.commit_info(sha) == CommitInfo(
                    sha=sha,
                    parents=tuple(p.decode() for p in commit.parents),
                    author=commit.author.decode("utf-8", errors="replace"),
                    time=commit.commit_time,
                    message=commit.message.decode("utf-8", errors="replace"),
                )


def test_the_id_sequence_is_written_in_place_and_reads_the_old_format(tmp_path: Path) -> None:
    """The highest id ever granted: an old-format file (``7\\n``) is read, a higher
    number overwrites it in place (same inode, no rename), a lower one changes nothing."""
    state = tmp_path / "hive"
    state.mkdir()
    path = state / reservecore.SEQUENCE_FILE
    path.write_text("7\n")
    inode = path.stat().st_ino
    assert reservecore.read_sequence(str(state)) == 7
    reservecore.write_sequence(str(state), 12)
    assert reservecore.read_sequence(str(state)) == 12
    assert path.stat().st_ino == inode and len(path.read_bytes()) == reservecore.SEQUENCE_WIDTH + 1
    reservecore.write_sequence(str(state), 3)
    assert reservecore.read_sequence(str(state)) == 12
    reservecore.write_sequence(str(state), 10**19)
    assert reservecore.read_sequence(str(state)) == 10**19
    assert reservecore.next_id([], str(state)) == 10**19 + 1
    fresh = tmp_path / "fresh"
    reservecore.write_sequence(str(fresh), 5)
    assert reservecore.read_sequence(str(fresh)) == 5
