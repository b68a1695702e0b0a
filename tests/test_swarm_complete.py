"""swarm_complete is all or nothing, in one commit; progress, status, record_outcome."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from hive.domain.cells import create_cell, show_cell, start_cell, update_cell
from hive.domain.epics import create_epic
from hive.domain.identity import mail_init
from hive.domain.mail import inbox
from hive.domain.outcomes import load_outcomes
from hive.domain.reservations import list_reservations, reserve
from hive.domain.setup import init_hive
from hive.domain.swarm.complete import swarm_complete
from hive.domain.swarm.progress import swarm_progress, swarm_record_outcome, swarm_status
from hive.domain.workspace import Workspace
from hive.errors import (
    Conflict,
    GateFailed,
    InvalidInput,
    NotFound,
    NotYourIdentity,
    PathOutsideRepository,
    PermissionDenied,
    ReservationConflict,
)
from hive.models import utc_now
from hive.store.yamlio import dumps
from tests.conftest import assert_clean, git, set_coordinators


def head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD").strip()


def epic_with_work(ws: Workspace) -> tuple[str, str, str]:
    cells = create_epic(
        ws,
        title="Auth",
        subtasks=[
            {"title": "session store", "files": ["src/session/**"]},
            {"title": "login form", "files": ["src/login.py"], "dependencies": [0]},
        ],
        metadata={"strategy": "feature-based"},
    )
    return cells[0].id, cells[1].id, cells[2].id


def set_verify(ws: Workspace, repo: Path, verify: dict[str, object]) -> None:
    config = repo / ".hive" / "config.yaml"
    base = config.read_text().split("verify:")[0]
    config.write_text(base + dumps({"verify": verify}))
    git(repo, "commit", "-qam", "gate")


def test_complete_is_one_commit_with_cell_reservations_outcome_and_code(
    ws: Workspace, repo: Path
) -> None:
    epic_id, session_id, _ = epic_with_work(ws)
    bob = ws.for_actor("bob")
    start_cell(bob, cell_id=session_id)
    reserve(bob, paths=["src/session/**"], cell=session_id)
    reserve(bob, paths=["docs/session.md", "src/util.py"])
    (repo / "src/session").mkdir(parents=True)
    (repo / "src/session/store.py").write_text("STORE = {}\n")
    (repo / "src/session/run.sh").write_text("#!/bin/sh\necho hi\n")
    os.chmod(repo / "src/session/run.sh", 0o755)
    (repo / "src/other.py").write_text("outside = True\n")
    (repo / "user-notes.txt").write_text("the user's own work\n")
    git(repo, "add", "user-notes.txt")
    before = head(repo)

    result = swarm_complete(
        ws.for_actor("bob"),
        agent_name="bob",
        cell_id=session_id,
        summary="session store with expiry",
        files_touched=["src/session/store.py", "./src/session/run.sh", "src/other.py"],
        error_count=1,
        retry_count=2,
    )

    assert git(repo, "rev-list", "--count", f"{before}..HEAD").strip() == "1"
    changed = sorted(git(repo, "show", "--name-only", "--format=", "HEAD").split())
    outcome_path = f".hive/outcomes/{result.outcome.id}.yaml"
    assert changed == sorted(
        [
            f".hive/cells/{session_id.split('-')[1][0]}/{session_id}.yaml",
            ".hive/reservations/bob.yaml",
            outcome_path,
            "src/other.py",
            "src/session/run.sh",
            "src/session/store.py",
        ]
    )
    message = git(repo, "log", "-1", "--format=%B")
    assert f"Hive-Cell: {session_id}" in message and "Hive-Event: complete" in message
    assert "Hive-Agent: bob" in message
    assert "100755 blob" in git(repo, "ls-tree", "HEAD", "src/session/run.sh")
    # the user's staged file is still staged, not committed
    assert git(repo, "status", "--porcelain") == "A  user-notes.txt\n"
    assert show_cell(ws, cell_id=session_id).status == "closed"
    assert [r.path_pattern for r in result.released] == [
        "src/session/**",
        "docs/session.md",
        "src/util.py",
    ]
    assert list_reservations(ws, agent="bob") == []
    outcome = load_outcomes(ws)[-1]
    assert outcome.cell_id == session_id and outcome.epic_id == epic_id
    assert outcome.strategy == "feature-based" and outcome.success
    assert (outcome.error_count, outcome.retry_count) == (1, 2)
    assert outcome.files_planned == ["src/session/**"]
    assert outcome.scope_violations == ["src/other.py"]
    git(repo, "reset", "-q")
    (repo / "user-notes.txt").unlink()
    assert_clean(repo)


def test_reservations_for_other_cells_are_kept(ws: Workspace, repo: Path) -> None:
    _, session_id, login_id = epic_with_work(ws)
    reserve(ws, paths=["src/session/**"], cell=session_id)
    reserve(ws, paths=["src/login.py"], cell=login_id)
    result = swarm_complete(
        ws.for_actor("alice"), agent_name="alice", cell_id=session_id, summary="done"
    )
    assert [r.path_pattern for r in result.released] == ["src/session/**"]
    assert [r.path_pattern for r in list_reservations(ws)] == ["src/login.py"]


def test_failures_change_nothing(ws: Workspace, repo: Path) -> None:
    _, session_id, login_id = epic_with_work(ws)
    start_cell(ws.for_actor("bob"), cell_id=session_id)
    (repo / "src").mkdir()
    (repo / "src/a.py").write_text("a\n")
    (repo / "outside.txt").write_text("x\n")
    os.symlink("/etc/hostname", repo / "src/escape")
    before = head(repo)
    cases = [
        (dict(cell_id=session_id), PermissionDenied, "claimed by bob; only bob may complete"),
        (dict(cell_id="hv-zzzzzz"), NotFound, "no cell"),
        (dict(cell_id=login_id, files_touched=["../x"]), PathOutsideRepository, "outside"),
        (dict(cell_id=login_id, files_touched=["/etc/passwd"]), PathOutsideRepository, "outside"),
        (dict(cell_id=login_id, files_touched=["src/escape"]), PathOutsideRepository, "symlink"),
        (dict(cell_id=login_id, files_touched=[".hive/config.yaml"]), InvalidInput, "not a source"),
        (dict(cell_id=login_id, evaluation={"passed": False}), GateFailed, "evaluation"),
        (dict(cell_id=login_id, summary="  "), InvalidInput, "summary"),
        (dict(cell_id=login_id, error_count=-1), InvalidInput, "error_count and retry_count"),
        (dict(cell_id=login_id, retry_count=-2), InvalidInput, "error_count and retry_count"),
    ]
    for kwargs, error, text in cases:
        arguments = {"agent_name": "alice", "summary": "done", **kwargs}
        with pytest.raises(error, match=text):
            swarm_complete(ws, **arguments)  # type: ignore[arg-type]
    # login is blocked by the open session cell
    with pytest.raises(Conflict, match="blocked by open"):
        swarm_complete(ws.for_actor("alice"), agent_name="alice", cell_id=login_id, summary="done")
    assert head(repo) == before
    assert git(repo, "status", "--porcelain", ".hive") == ""


def test_files_another_agent_reserved_are_not_committed(ws: Workspace, repo: Path) -> None:
    """swarm_complete commits touched files as the pre-commit hook would let a git
    commit: not a file under another agent's exclusive reservation (nothing changes)."""
    _, session_id, _ = epic_with_work(ws)
    bob, carol = ws.for_actor("bob"), ws.for_actor("carol")
    start_cell(bob, cell_id=session_id)
    reserve(bob, paths=["src/session/**"], cell=session_id)
    reserve(carol, paths=["docs/**"], reason="carol's docs")
    (repo / "src/session").mkdir(parents=True)
    (repo / "src/session/store.py").write_text("STORE = {}\n")
    (repo / "docs").mkdir()
    (repo / "docs/api.md").write_text("bob was here\n")
    before = head(repo)
    touched = ["src/session/store.py", "docs/api.md"]
    with pytest.raises(ReservationConflict, match=r"docs/api\.md is reserved by carol") as caught:
        swarm_complete(bob, cell_id=session_id, summary="done", files_touched=touched)
    assert caught.value.details["field"] == "files_touched"
    assert [(c["requested"], c["holder"]) for c in caught.value.details["conflicts"]] == [
        ("docs/api.md", "carol")
    ]
    assert head(repo) == before
    assert show_cell(ws, cell_id=session_id).status == "in_progress"
    assert {r.agent for r in list_reservations(ws)} == {"bob", "carol"}
    # a coordinator may commit them with force and a reason, recorded as an override
    set_coordinators(repo, ["lead"])
    lead = ws.for_actor("lead")
    with pytest.raises(PermissionDenied, match="carol"):
        swarm_complete(bob, cell_id=session_id, summary="done", files_touched=touched, force=True)
    result = swarm_complete(
        lead, cell_id=session_id, summary="done", files_touched=touched, force=True, reason="merge"
    )
    assert result.files_committed == touched
    message = git(repo, "log", "-1", "--format=%B")
    assert "commit the files reserved" in message and "of carol: merge" in message
    assert git(repo, "show", "HEAD:docs/api.md") == "bob was here\n"


def test_a_forced_completion_releases_the_owners_reservations_for_the_cell(
    ws: Workspace, repo: Path
) -> None:
    """A coordinator completing a crashed worker's cell released the coordinator's own
    reservations (all of them) and left the worker's reservations for the cell held."""
    _, session_id, _ = epic_with_work(ws)
    set_coordinators(repo, ["lead"])
    bob, lead = ws.for_actor("bob"), ws.for_actor("lead")
    start_cell(bob, cell_id=session_id)
    reserve(bob, paths=["src/session/**"], cell=session_id)
    reserve(bob, paths=["docs/**"])  # not for this cell: bob may still be using it
    reserve(lead, paths=["tools/**"])
    before = head(repo)
    result = swarm_complete(
        lead, cell_id=session_id, summary="finished for bob", force=True, reason="bob crashed"
    )
    assert [r.path_pattern for r in result.released] == ["src/session/**"]
    assert [r.path_pattern for r in list_reservations(ws, agent="lead")] == ["tools/**"]
    assert [r.path_pattern for r in list_reservations(ws, agent="bob")] == ["docs/**"]
    assert git(repo, "rev-list", "--count", f"{before}..HEAD").strip() == "1"
    changed = git(repo, "show", "--name-only", "--format=", "HEAD").split()
    assert ".hive/reservations/bob.yaml" in changed
    assert ".hive/reservations/lead.yaml" not in changed
    message = git(repo, "log", "-1", "--format=%B")
    assert "Hive-Override: lead (coordinator) complete" in message and "Hive-Agent: lead" in message
    reserved = load_outcomes(ws)[-1].files_reserved  # the worker's, not the caller's
    assert "src/session/**" in reserved and "tools/**" not in reserved


def test_completing_twice_is_refused(ws: Workspace) -> None:
    _, session_id, _ = epic_with_work(ws)
    swarm_complete(ws.for_actor("alice"), agent_name="alice", cell_id=session_id, summary="done")
    with pytest.raises(Conflict, match="already closed"):
        swarm_complete(
            ws.for_actor("alice"), agent_name="alice", cell_id=session_id, summary="again"
        )


def test_gate_failure_and_timeout_leave_everything_as_it_was(ws: Workspace, repo: Path) -> None:
    _, session_id, _ = epic_with_work(ws)
    (repo / "src").mkdir()
    (repo / "src/a.py").write_text("a\n")
    set_verify(ws, repo, {"commands": ["test -f {files} && echo checked {files} && exit 3"]})
    before = head(repo)
    with pytest.raises(GateFailed, match="exited 3") as failed:
        swarm_complete(
            ws.for_actor("alice"),
            agent_name="alice",
            cell_id=session_id,
            summary="x",
            files_touched=["src/a.py"],
        )
    assert "checked src/a.py" in failed.value.details["gate"][0]["output"]
    set_verify(ws, repo, {"commands": ["sleep 30"], "timeout_seconds": 0.5})
    before = head(repo)
    with pytest.raises(GateFailed, match="timed out"):
        swarm_complete(ws.for_actor("alice"), agent_name="alice", cell_id=session_id, summary="x")
    assert head(repo) == before
    assert show_cell(ws, cell_id=session_id).status == "open"
    set_verify(ws, repo, {"commands": ["true"]})
    done = swarm_complete(
        ws.for_actor("alice"), agent_name="alice", cell_id=session_id, summary="x"
    )
    assert done.gate[0].exit_code == 0 and done.outcome.gate == "passed"


def test_a_skipped_gate_is_said_in_the_answer_with_its_setting(ws: Workspace, repo: Path) -> None:
    """gate: false skipped the verify commands with nothing in the answer but an empty
    ``gate`` list (as when none is configured) and the outcome's ``gate: skipped``;
    ``hive swarm complete --no-gate`` said nothing. The answer's ``gate_skipped`` says
    the gate was skipped and by which setting, and the command line prints it."""
    from hive.tools.registry import CallContext, call_tool
    from tests.inprocess import run_hive

    _, session_id, login_id = epic_with_work(ws)
    set_verify(ws, repo, {"commands": ["exit 3"]})
    ctx = CallContext(root=str(repo), agent="alice")
    args = {"cell_id": session_id, "summary": "x", "gate": False}
    answer = call_tool(ctx, "swarm_complete", args)["result"]
    assert answer["gate"] == [] and answer["outcome"]["gate"] == "skipped"
    assert "skipped by gate: false (--no-gate" in answer["gate_skipped"], answer
    assert "verify.commands" in answer["gate_skipped"]
    set_verify(ws, repo, {"commands": ["true"]})
    done = swarm_complete(ws.for_actor("bob"), agent_name="bob", cell_id=login_id, summary="x")
    assert done.gate_skipped is None and done.outcome.gate == "passed"
    other = create_cell(ws, title="by hand").id
    printed = run_hive(["swarm", "complete", other, "-s", "all", "--no-gate"], cwd=repo)
    assert printed.returncode == 0, printed.stderr
    assert "the verify gate was skipped by gate: false (--no-gate" in printed.stdout


def test_a_touched_file_staged_with_other_content_is_named_a_staged_source_file(
    ws: Workspace, repo: Path
) -> None:
    """A touched source file staged (git add) and edited again was refused as
    ``dirty_hive_file``: "commit or reset them first", as if a .hive/ file were at
    fault. It is ``staged_source_file``, naming the file as a source file, the staged
    copy against the working copy, and the two ways on; the staged content is kept and
    nothing is committed, and once the working copy is staged the completion goes."""
    from hive.tools.registry import CallContext, call_tool

    _, session_id, _ = epic_with_work(ws)
    (repo / "src/session").mkdir(parents=True)
    staged = repo / "src/session/store.py"
    staged.write_text("first\n")
    git(repo, "add", "src/session/store.py")
    staged.write_text("second\n")
    before = head(repo)
    ctx = CallContext(root=str(repo), agent="alice")
    args = {"cell_id": session_id, "summary": "x", "files_touched": ["src/session/store.py"]}
    refused = call_tool(ctx, "swarm_complete", args)
    assert refused["code"] == "staged_source_file", refused
    assert refused["error"].startswith("source file src/session/store.py is staged (git add)")
    assert "git add src/session/store.py" in refused["error"]
    assert "git restore --staged src/session/store.py" in refused["error"]
    assert head(repo) == before
    assert git(repo, "show", ":src/session/store.py") == "first\n"  # the user's, kept
    git(repo, "add", "src/session/store.py")
    assert "result" in call_tool(ctx, "swarm_complete", args)
    assert git(repo, "show", "HEAD:src/session/store.py") == "second\n"


def test_work_started_by_progress_or_update_has_a_start(ws: Workspace, repo: Path) -> None:
    """swarm_progress(in_progress) claims an open cell and hive_update --status in_progress
    starts one: each sets started_at as hive_start does (it stayed null, and the outcome
    timed the work from the cell's creation)."""
    _, session_id, login_id = epic_with_work(ws)
    bob = ws.for_actor("bob")
    reported = swarm_progress(bob, cell_id=session_id, status="in_progress", progress_percent=5)
    started = reported.cell.started_at
    assert reported.cell.assignee == "bob" and started is not None
    swarm_progress(bob, cell_id=session_id, status="blocked", message="waiting")
    again = swarm_progress(bob, cell_id=session_id, status="in_progress")
    assert again.cell.started_at == started  # the first start stays
    forced = update_cell(ws, cell_id=login_id, status="in_progress", force=True)  # blocked
    assert forced.started_at is not None
    done = swarm_complete(bob, cell_id=session_id, summary="done")
    assert done.outcome.duration_seconds is not None and done.outcome.duration_seconds < 60


def test_progress_posts_to_the_epic_thread_and_status_counts(ws: Workspace, repo: Path) -> None:
    epic_id, session_id, login_id = epic_with_work(ws)
    for name in ("alice", "bob"):
        mail_init(ws.for_actor(name), agent_name=name, session=f"s-{name}")
    start_cell(ws.for_actor("alice"), cell_id=login_id, force=True)  # blocked: forced
    result = swarm_progress(
        ws.for_actor("bob"),
        agent_name="bob",
        cell_id=session_id,
        status="in_progress",
        progress_percent=40,
        message="schema done",
    )
    assert result.thread_id == epic_id and result.message_id is not None
    assert "40% - schema done" in show_cell(ws, cell_id=session_id).notes
    headers = inbox(ws.for_actor("alice"), agent="alice")
    assert headers[0].thread_id == epic_id and headers[0].sender == "bob"
    with pytest.raises(PermissionDenied):
        swarm_progress(
            ws.for_actor("carol"), agent_name="carol", cell_id=session_id, status="blocked"
        )
    status = swarm_status(ws, epic_id=epic_id)
    assert (status.total, status.in_progress, status.completed) == (2, 2, 0)
    assert status.agents == {session_id: "bob", login_id: "alice"}


def test_progress_refuses_bad_reports_and_a_forced_one_keeps_the_assignee(
    ws: Workspace, repo: Path
) -> None:
    """An unknown status or a percent outside 0-100 changes nothing; a coordinator's
    forced report on a worker's cell sets its status but leaves it the worker's."""
    _, session_id, _ = epic_with_work(ws)
    set_coordinators(repo, ["lead"])
    bob, lead = ws.for_actor("bob"), ws.for_actor("lead")
    start_cell(bob, cell_id=session_id)
    before = head(repo)
    with pytest.raises(InvalidInput, match="invalid status 'done': use in_progress, blocked"):
        swarm_progress(bob, cell_id=session_id, status="done")
    with pytest.raises(InvalidInput, match="progress_percent must be between 0 and 100"):
        swarm_progress(bob, cell_id=session_id, status="in_progress", progress_percent=101)
    assert head(repo) == before
    forced = swarm_progress(
        lead, cell_id=session_id, status="blocked", message="waiting", force=True, reason="r"
    )
    assert (forced.cell.status, forced.cell.assignee) == ("blocked", "bob")
    assert "Hive-Override: lead (coordinator)" in git(repo, "log", "-1", "--format=%B")
    assert show_cell(ws, cell_id=session_id).assignee == "bob"


def test_record_outcome_is_one_commit_with_only_the_outcome(ws: Workspace, repo: Path) -> None:
    _, session_id, _ = epic_with_work(ws)
    outcome = swarm_record_outcome(
        ws,
        cell_id=session_id,
        success=False,
        duration_ms=1500,
        error_count=3,
        strategy="risk-based",
        summary="flaky tests",
    )
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == [
        f".hive/outcomes/{outcome.id}.yaml"
    ]
    stored = load_outcomes(ws)[-1]
    assert (stored.success, stored.duration_seconds, stored.strategy) == (False, 1.5, "risk-based")
    assert stored.source == "record_outcome"
    with pytest.raises(NotFound):
        swarm_record_outcome(ws, cell_id="hv-nope00", success=True)


def test_record_outcome_refuses_bad_values_and_changes_nothing(ws: Workspace, repo: Path) -> None:
    """A negative duration or count, or an agent_name that is not the caller, is refused
    before anything is written."""
    _, session_id, _ = epic_with_work(ws)
    before = head(repo)
    cases = [
        (dict(duration_ms=-1), InvalidInput, "duration_ms must be >= 0"),
        (dict(error_count=-1), InvalidInput, "error_count and retry_count must be >= 0"),
        (dict(retry_count=-1), InvalidInput, "error_count and retry_count must be >= 0"),
        (dict(agent_name="mallory"), NotYourIdentity, "agent_name 'mallory' is not you"),
    ]
    for kwargs, error, text in cases:
        with pytest.raises(error, match=text):
            swarm_record_outcome(ws, cell_id=session_id, success=True, **kwargs)  # type: ignore[arg-type]
    assert head(repo) == before
    recorded = swarm_record_outcome(ws, cell_id=session_id, success=True, agent_name="alice")
    assert recorded.agent == "alice" and head(repo) != before


def test_project_key_must_be_this_repository(ws: Workspace, tmp_path: Path) -> None:
    _, session_id, _ = epic_with_work(ws)
    other = tmp_path / "elsewhere"
    other.mkdir()
    with pytest.raises(InvalidInput, match="not this repository"):
        swarm_complete(
            ws.for_actor("alice"),
            agent_name="alice",
            cell_id=session_id,
            summary="x",
            project_key=str(other),
        )


def test_complete_in_a_fresh_repository_workspace(tmp_path: Path) -> None:
    from tests.conftest import make_repo

    repo = make_repo(tmp_path / "r")
    ws = Workspace(str(repo), actor="w")
    init_hive(ws, prefix="hv")
    _, session_id, _ = epic_with_work(ws)
    result = swarm_complete(ws.for_actor("w"), agent_name="w", cell_id=session_id, summary="ok")
    assert result.commit == head(repo) and result.outcome.gate == "none"
    assert_clean(repo)


@pytest.mark.parametrize("target", ["../.git", "../.hive", "../lib"])
def test_paths_through_an_in_repo_symlinked_directory_are_refused(
    ws: Workspace, repo: Path, target: str
) -> None:
    _, session_id, _ = epic_with_work(ws)
    (repo / "lib").mkdir()
    (repo / "lib/real.py").write_text("real = 1\n")
    (repo / "src").mkdir()
    os.symlink(target, repo / "src/g")
    git(repo, "add", "lib", "src/g")
    git(repo, "commit", "-qm", "symlinked dir")
    before = head(repo)
    aliased = {"../.git": "src/g/config", "../.hive": "src/g/config.yaml"}.get(
        target, "src/g/real.py"
    )
    with pytest.raises(InvalidInput, match="symlink"):
        swarm_complete(
            ws.for_actor("alice"),
            agent_name="alice",
            cell_id=session_id,
            summary="x",
            files_touched=[aliased],
        )
    assert head(repo) == before
    assert git(repo, "ls-tree", "HEAD", "src/g").startswith("120000")
    assert_clean(repo)


def test_a_touched_path_missing_from_worktree_and_head_is_refused(
    ws: Workspace, repo: Path
) -> None:
    _, session_id, _ = epic_with_work(ws)
    (repo / "gone.py").write_text("x\n")
    git(repo, "add", "gone.py")
    git(repo, "commit", "-qm", "gone")
    before = head(repo)
    with pytest.raises(InvalidInput, match="neither in the working tree nor in HEAD"):
        swarm_complete(
            ws.for_actor("alice"),
            agent_name="alice",
            cell_id=session_id,
            summary="x",
            files_touched=["lib/typo_never_existed.py"],
        )
    assert head(repo) == before
    (repo / "gone.py").unlink()  # a real deletion is still committed
    done = swarm_complete(
        ws.for_actor("alice"),
        agent_name="alice",
        cell_id=session_id,
        summary="x",
        files_touched=["gone.py"],
    )
    assert done.files_committed == ["gone.py"]
    assert git(repo, "ls-tree", "HEAD", "gone.py") == ""


def test_status_buckets_partition_the_subtasks(ws: Workspace) -> None:
    cells = create_epic(
        ws,
        title="Pipeline",
        subtasks=[
            {"title": "one"},
            {"title": "two", "dependencies": [0]},
            {"title": "three", "dependencies": [0]},
            {"title": "four"},
            {"title": "five"},
        ],
    )
    epic_id, one, two, _, four, five = (c.id for c in cells)
    start_cell(ws, cell_id=one)
    swarm_progress(ws.for_actor("alice"), agent_name="alice", cell_id=four, status="blocked")
    swarm_complete(ws.for_actor("alice"), agent_name="alice", cell_id=five, summary="done")
    status = swarm_status(ws, epic_id=epic_id)
    buckets = (status.completed, status.in_progress, status.blocked, status.open)
    assert buckets == (1, 1, 3, 0)  # four is blocked by status, two and three wait on one
    assert sum(buckets) == status.total == 5
    swarm_complete(ws.for_actor("alice"), agent_name="alice", cell_id=one, summary="done")
    after = swarm_status(ws, epic_id=epic_id)
    assert (after.completed, after.in_progress, after.blocked, after.open) == (2, 0, 1, 2)
    assert two in after.ready


def test_progress_reaches_the_coordinator_or_says_why_not(ws: Workspace) -> None:
    epic_id, session_id, _ = epic_with_work(ws)
    silent = swarm_progress(
        ws.for_actor("bob"), agent_name="bob", cell_id=session_id, status="in_progress"
    )
    assert silent.message_id is None and "bob is not registered" in (silent.not_posted or "")
    mail_init(ws.for_actor("bob"), agent_name="bob", session="s-bob")
    alone = swarm_progress(
        ws.for_actor("bob"), agent_name="bob", cell_id=session_id, status="in_progress"
    )
    assert alone.recipients == [] and "not registered: alice" in (alone.not_posted or "")
    mail_init(ws.for_actor("alice"), agent_name="alice", session="s-alice")
    told = swarm_progress(
        ws.for_actor("bob"),
        agent_name="bob",
        cell_id=session_id,
        status="blocked",
        message="need schema",
    )
    assert told.recipients == ["alice"] and told.not_posted is None  # alice created the epic
    [header] = inbox(ws.for_actor("alice"), agent="alice")
    assert header.thread_id == epic_id and header.importance == "high"


def test_files_of_the_agents_own_commits_are_in_the_outcome(ws: Workspace, repo: Path) -> None:
    """Commits the agent made itself for the cell (its Hive-Cell trailer, as hive review
    shows them) are in the outcome's files_touched, and so in its scope check; commits
    of other cells, and any made long before the claim, are not read into it."""
    _, session_id, login_id = epic_with_work(ws)
    (repo / "src").mkdir()
    (repo / "src/old.py").write_text("old = 1\n")
    git(repo, "add", "src/old.py")
    old = {**os.environ, "GIT_COMMITTER_DATE": "2001-01-01T00:00:00Z"}
    subprocess.run(  # before the claim: outside what swarm_complete reads
        ["git", "commit", "-qm", "early", "--trailer", f"Hive-Cell: {session_id}"],
        cwd=repo,
        env=old,
        check=True,
    )
    bob = ws.for_actor("bob")
    start_cell(bob, cell_id=session_id)
    (repo / "src/session").mkdir()
    (repo / "src/session/store.py").write_text("STORE = {}\n")
    (repo / "src/elsewhere.py").write_text("x = 1\n")
    (repo / "src/login.py").write_text("login = 1\n")
    git(repo, "add", "src/session/store.py", "src/elsewhere.py")
    git(repo, "commit", "-qm", "store", "--trailer", f"Hive-Cell: {session_id}")
    git(repo, "add", "src/login.py")
    git(repo, "commit", "-qm", "login", "--trailer", f"Hive-Cell: {login_id}")
    (repo / "src/session/ttl.py").write_text("TTL = 60\n")
    result = swarm_complete(
        bob, cell_id=session_id, summary="store", files_touched=["src/session/ttl.py"]
    )
    assert result.files_committed == ["src/session/ttl.py"]
    assert result.outcome.files_touched == [
        "src/elsewhere.py",
        "src/session/store.py",
        "src/session/ttl.py",
    ]
    assert load_outcomes(ws)[-1].files_touched == result.outcome.files_touched
    assert result.outcome.scope_violations == ["src/elsewhere.py"]
    assert_clean(repo)


def test_files_git_ignores_are_not_committed(ws: Workspace, repo: Path) -> None:
    """A file git ignores (a .env, a build output) that git does not track is refused,
    as 'git add' refuses it, naming the rule: the agent's secrets and scratch files never
    reach history because it listed them. A tracked one is committed, as git commits it."""
    _, session_id, _ = epic_with_work(ws)
    (repo / ".gitignore").write_text("*.log\n.env\n!keep.log\n")
    (repo / "tracked.log").write_text("old\n")
    git(repo, "add", ".gitignore")
    git(repo, "add", "-f", "tracked.log")
    git(repo, "commit", "-qm", "ignores")
    bob = ws.for_actor("bob")
    start_cell(bob, cell_id=session_id)
    (repo / ".env").write_text("API_KEY=secret\n")
    (repo / "src").mkdir()
    (repo / "src/a.py").write_text("a\n")
    (repo / "keep.log").write_text("kept\n")
    (repo / "tracked.log").write_text("new\n")
    before = head(repo)
    with pytest.raises(InvalidInput, match=r"\.env is ignored by git \(\.gitignore:2: \.env\)"):
        swarm_complete(bob, cell_id=session_id, summary="done", files_touched=["src/a.py", ".env"])
    assert head(repo) == before
    assert show_cell(ws, cell_id=session_id).status == "in_progress"
    touched = ["src/a.py", "keep.log", "tracked.log"]
    done = swarm_complete(bob, cell_id=session_id, summary="done", files_touched=touched)
    assert done.files_committed == touched
    assert git(repo, "show", "HEAD:tracked.log") == "new\n"
    assert git(repo, "ls-tree", "HEAD", ".env") == ""


def test_a_touched_file_named_like_an_option_reaches_the_gate_as_a_file(
    ws: Workspace, repo: Path
) -> None:
    """``{files}`` gives each touched file as a path, never as an option of the gate's
    command: a file an agent named ``--exit-zero`` (or ``-v``) turned ``ruff check
    {files}`` into a check that always passes (or ``grep`` into another search)."""
    _, session_id, _ = epic_with_work(ws)
    (repo / "-v").write_text("x\n")  # holds what the gate looks for
    set_verify(ws, repo, {"commands": ["grep -q x {files}"]})
    alice = ws.for_actor("alice")
    done = swarm_complete(alice, cell_id=session_id, summary="x", files_touched=["-v"])
    assert done.gate[0].command == "grep -q x ./-v" and done.files_committed == ["-v"]


def test_only_the_assignee_records_an_outcome_of_a_claimed_cell(ws: Workspace, repo: Path) -> None:
    """A claimed cell's outcome is its assignee's to record, as its progress is: another
    agent's failure recorded on it would count against that work in learning."""
    _, session_id, _ = epic_with_work(ws)
    bob, mallory = ws.for_actor("bob"), ws.for_actor("mallory")
    start_cell(bob, cell_id=session_id)
    before = head(repo)
    with pytest.raises(PermissionDenied, match="claimed by bob; only bob records its outcome"):
        swarm_record_outcome(mallory, cell_id=session_id, success=False)
    assert head(repo) == before and load_outcomes(ws) == []
    assert swarm_record_outcome(bob, cell_id=session_id, success=False).agent == "bob"
    set_coordinators(repo, ["lead"])
    assert (
        swarm_record_outcome(ws.for_actor("lead"), cell_id=session_id, success=True).agent == "lead"
    )


def test_a_claim_committed_a_second_after_it_was_stamped_still_bounds_the_agents_commits(
    ws: Workspace, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The claim's ``started_at`` is stamped in one second and its commit may be dated
    a later one (a loaded machine): the claim is still where the reading of the
    agent's commits stops, so a commit for the cell made before the claim (here dated
    2001) is not read into the outcome (before, it was: a flaky scope violation)."""
    _, session_id, _ = epic_with_work(ws)
    (repo / "src").mkdir()
    (repo / "src/old.py").write_text("old = 1\n")
    git(repo, "add", "src/old.py")
    old = {**os.environ, "GIT_COMMITTER_DATE": "2001-01-01T00:00:00Z"}
    subprocess.run(
        ["git", "commit", "-qm", "early", "--trailer", f"Hive-Cell: {session_id}"],
        cwd=repo,
        env=old,
        check=True,
    )
    bob = ws.for_actor("bob")
    later = int(utc_now().timestamp()) + 5
    monkeypatch.setenv("GIT_COMMITTER_DATE", f"@{later} +0000")
    start_cell(bob, cell_id=session_id)  # dated 5 s after its started_at
    monkeypatch.delenv("GIT_COMMITTER_DATE")
    claim = git(repo, "log", "-1", "--format=%ct").strip()
    started = show_cell(ws, cell_id=session_id).started_at
    assert started is not None and int(claim) > int(started.timestamp())
    (repo / "src/session").mkdir()
    (repo / "src/session/ttl.py").write_text("TTL = 60\n")
    result = swarm_complete(
        bob, cell_id=session_id, summary="ttl", files_touched=["src/session/ttl.py"]
    )
    assert result.outcome.files_touched == ["src/session/ttl.py"]
    assert result.outcome.scope_violations == []
