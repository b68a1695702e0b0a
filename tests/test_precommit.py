"""The pre-commit hook with the real ``git commit``: every way of committing is checked."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hive.domain.cells import create_cell, start_cell
from hive.domain.doctor import diagnose
from hive.domain.hooks import install_hook
from hive.domain.reservations import release, reservation_path, reserve
from hive.domain.workspace import Workspace
from hive.errors import CorruptFile
from hive.store.yamlio import load_mapping
from tests.conftest import git, set_coordinators
from tests.inprocess import run_hive
from tests.test_reservations import agent, commit, hive_env

ROOT = Path(__file__).resolve().parent.parent


def _tracked(repo: Path, path: str, text: str = "x = 1\n") -> None:
    full = repo / path
    full.parent.mkdir(parents=True, exist_ok=True)
    full.write_text(text)
    git(repo, "add", path)
    git(repo, "commit", "-qm", f"add {path}", "--no-verify")


def _forged_commit(repo: Path, who: str, subject: str, *args: str) -> str:
    """Commit past the hook (--no-verify) as hive would for ``who``: its author, a
    ``hive:`` subject and ``Hive-Agent`` trailer written by hand; the commit's id."""
    event = subject.split(" ", 1)[0]
    message = f"hive: {subject}\nHive-Agent: {who}\nHive-Event: {event}"
    if "\n\n" not in subject:
        message = message.replace("\nHive-Agent", "\n\nHive-Agent", 1)
    env = {**hive_env(repo, who), "GIT_AUTHOR_NAME": who, "GIT_AUTHOR_EMAIL": f"{who}@hive.local"}
    done = subprocess.run(
        ["git", "-C", str(repo), "commit", "-q", "--no-verify", *args, "-m", message],
        capture_output=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return git(repo, "rev-parse", "HEAD").strip()


def _refused(repo: Path, env: dict[str, str], *args: str) -> str:
    """Commit with ``args``; assert the hook blocked it; the hook's message."""
    result = commit(repo, env, *args)
    assert result.returncode != 0, result.stdout
    return result.stderr


def test_commit_all_and_commit_path_are_checked(ws: Workspace, repo: Path) -> None:
    _tracked(repo, "src/a.py")
    install_hook(ws)
    reserve(agent(repo, "alice"), paths=["src/**"])
    (repo / "src/a.py").write_text("changed\n")  # not staged: git commit -a/<path> stages it
    head = git(repo, "rev-parse", "HEAD")
    assert "src/a.py is reserved by alice" in _refused(repo, hive_env(repo, "bob"), "-a")
    assert "src/a.py is reserved by alice" in _refused(repo, hive_env(repo, "bob"), "src/a.py")
    assert git(repo, "rev-parse", "HEAD") == head
    assert commit(repo, hive_env(repo, "alice"), "-a").returncode == 0


def test_a_reserved_file_whose_name_is_not_utf8_is_named_as_its_bytes(
    ws: Workspace, repo: Path
) -> None:
    """The hook names a file whose name git took in Latin-1 bytes as docs/tools.md says
    every surface does (``caf\\xe9.txt``), not as Python's lone surrogate (``\\udce9``)."""
    install_hook(ws)
    reserve(agent(repo, "alice"), paths=["src/**"])
    (repo / "src").mkdir()
    (repo / os.fsdecode(b"src/caf\xe9.txt")).write_text("x\n")
    git(repo, "add", "-A")
    said = _refused(repo, hive_env(repo, "bob"))
    assert "src/caf\\xe9.txt is reserved by alice" in said, said
    assert "udce9" not in said


def test_a_mode_change_of_a_reserved_file_is_checked(ws: Workspace, repo: Path) -> None:
    """A change of the executable bit alone (the same blob) changes the file as git
    commits it: it is checked against the reservations like a change of its content."""
    _tracked(repo, "src/a.py")
    install_hook(ws)
    reserve(agent(repo, "alice"), paths=["src/a.py"])
    os.chmod(repo / "src/a.py", 0o755)
    git(repo, "add", "src/a.py")
    head = git(repo, "rev-parse", "HEAD")
    assert "src/a.py is reserved by alice" in _refused(repo, hive_env(repo, "bob"))
    assert git(repo, "rev-parse", "HEAD") == head
    assert commit(repo, hive_env(repo, "alice")).returncode == 0
    assert git(repo, "ls-tree", "HEAD", "src/a.py").startswith("100755")


def test_commit_all_validates_hive_files(ws: Workspace, repo: Path) -> None:
    install_hook(ws)
    cell = create_cell(ws, title="valid")
    path = next(repo.glob(f".hive/cells/*/{cell.id}.yaml"))
    path.write_text(path.read_text().replace("priority: 2", "priority: banana"))
    assert "invalid field 'priority'" in _refused(repo, hive_env(repo, "alice"), "-a")


def test_the_full_check_runs_without_the_full_cli(ws: Workspace, repo: Path) -> None:
    """An agent's commit (or one a reservation may block) is checked in the hook's own
    process without typer, click or rich (the full CLI was most of the hook's time)."""
    _tracked(repo, "src/a.py")
    reserve(agent(repo, "alice"), paths=["src/**"])
    (repo / "src/a.py").write_text("changed\n")
    git(repo, "add", "src/a.py")
    probe = (
        "import sys\n"
        "from hive.cli import entry\n"
        "sys.argv = ['hive', '-C', sys.argv[1], 'hooks', 'run', 'pre-commit']\n"
        "try:\n"
        "    entry.main()\n"
        "except SystemExit as exc:\n"
        "    code = exc.code\n"
        "print(code, sorted({m.split('.')[0] for m in sys.modules} & {'typer', 'click', 'rich'}))\n"
    )
    for name, code in (("bob", 1), ("alice", 0)):
        found = subprocess.run(
            [sys.executable, "-c", probe, str(repo)],
            capture_output=True,
            text=True,
            env=hive_env(repo, name),
            check=False,
        )
        assert found.stdout == f"{code} []\n", found.stderr
        assert ("src/a.py is reserved by alice" in found.stderr) == (name == "bob")


def test_no_verify_skips_the_hook(ws: Workspace, repo: Path) -> None:
    _tracked(repo, "src/a.py")
    install_hook(ws)
    reserve(agent(repo, "alice"), paths=["src/**"])
    (repo / "src/a.py").write_text("changed\n")
    assert commit(repo, hive_env(repo, "bob"), "-a", "--no-verify").returncode == 0


def test_staged_reservations_are_enforced_without_autocommit(ws: Workspace, repo: Path) -> None:
    _tracked(repo, "src/a.py")
    install_hook(ws)
    staging = Workspace(str(repo), actor="alice", autocommit=False)
    reserve(staging, paths=["src/**"])
    assert ".hive/reservations/alice.yaml" in git(repo, "diff", "--cached", "--name-only")
    (repo / "src/a.py").write_text("b\n")
    git(repo, "add", "src/a.py")
    assert "reserved by alice" in _refused(repo, hive_env(repo, "bob"))


@pytest.mark.parametrize(
    "tamper",
    ["delete", "shared", "expired"],
)
def test_dropping_the_holder_s_reservation_in_the_commit_does_not_pass(
    ws: Workspace, repo: Path, tamper: str
) -> None:
    """A commit that releases another agent's reservation by hand (its file deleted, its
    entry made shared or expired) along with the files it reserves is refused: HEAD's
    reservations still count (only the holder releases, in a commit of its own)."""
    _tracked(repo, "src/a.py")
    install_hook(ws)
    reserve(agent(repo, "alice"), paths=["src/**"])
    held = repo / ".hive/reservations/alice.yaml"
    if tamper == "delete":
        git(repo, "rm", "-q", str(held))
    else:
        old = "exclusive: true" if tamper == "shared" else 'expires_at: "2'
        new = "exclusive: false" if tamper == "shared" else 'expires_at: "1'
        assert old in held.read_text()
        held.write_text(held.read_text().replace(old, new))
        git(repo, "add", str(held))
    (repo / "src/a.py").write_text("bob's\n")
    git(repo, "add", "src/a.py")
    head = git(repo, "rev-parse", "HEAD")
    for who in ("bob", None):  # an agent, and a person
        assert "src/a.py is reserved by alice" in _refused(repo, hive_env(repo, who))
    assert git(repo, "rev-parse", "HEAD") == head
    assert commit(repo, hive_env(repo, "alice")).returncode == 0  # the holder's own


def test_a_merge_bringing_the_holder_s_release_commits(ws: Workspace, repo: Path) -> None:
    """Concluding a merge whose other side released the reservation (the holder's own
    commit there) is no hand release: the files it brings in are committed."""
    _tracked(repo, "src/a.py")
    _tracked(repo, "notes.txt", "base\n")
    install_hook(ws)
    reserve(agent(repo, "alice"), paths=["src/**"])
    main = git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip()
    git(repo, "switch", "-q", "-c", "feature")
    (repo / "src/a.py").write_text("alice's\n")
    (repo / "notes.txt").write_text("feature\n")
    assert commit(repo, hive_env(repo, "alice"), "-a").returncode == 0
    release(agent(repo, "alice"))
    git(repo, "switch", "-q", main)
    (repo / "notes.txt").write_text("main\n")
    assert commit(repo, hive_env(repo, "bob"), "-a").returncode == 0
    merged = subprocess.run(
        ["git", "-C", str(repo), "merge", "-q", "feature"], capture_output=True, check=False
    )
    assert merged.returncode != 0  # the conflict in notes.txt: git commit concludes it
    (repo / "notes.txt").write_text("both\n")
    git(repo, "add", "notes.txt")
    assert commit(repo, hive_env(repo, "bob")).returncode == 0
    assert git(repo, "show", "HEAD:src/a.py") == "alice's\n"


def test_an_agent_s_hand_edit_of_another_s_claimed_cell_is_refused(
    ws: Workspace, repo: Path
) -> None:
    """Closing or deleting a cell another agent has claimed by editing its file and
    committing with git is refused as the tools refuse it; a comment (staged by hive
    with HIVE_AUTOCOMMIT=0) is anyone's, and the assignee's own edit or a coordinator's
    commits."""
    from hive.domain.annotate import add_comment

    install_hook(ws)
    set_coordinators(repo, ["lead"])
    cell = create_cell(ws, title="alice's")
    start_cell(agent(repo, "alice"), cell_id=cell.id)
    path = next(repo.glob(f".hive/cells/*/{cell.id}.yaml"))
    head = git(repo, "rev-parse", "HEAD")
    path.write_text(path.read_text().replace("status: in_progress", "status: closed"))
    git(repo, "add", str(path))
    refused = _refused(repo, hive_env(repo, "bob"))
    assert f"{cell.id} is claimed by alice; only alice may change or delete it" in refused
    git(repo, "rm", "-q", "--cached", str(path))
    assert f"{cell.id} is claimed by alice" in _refused(repo, hive_env(repo, "bob"))
    assert git(repo, "rev-parse", "HEAD") == head
    git(repo, "reset", "-q", "--hard")
    add_comment(Workspace(str(repo), actor="bob", autocommit=False), cell_id=cell.id, text="hi")
    assert commit(repo, hive_env(repo, "bob")).returncode == 0
    assert "priority: 2" in path.read_text()
    path.write_text(path.read_text().replace("priority: 2", "priority: 1"))
    assert commit(repo, hive_env(repo, "lead"), "-a").returncode == 0
    path.write_text(path.read_text().replace("status: in_progress", "status: closed"))
    assert commit(repo, hive_env(repo, "alice"), "-a").returncode == 0
    assert "status: closed" in git(repo, "show", f"HEAD:{path.relative_to(repo)}")


def test_doctor_names_a_claimed_cell_taken_past_the_hook(ws: Workspace, repo: Path) -> None:
    """What the hook refuses, committed with --no-verify under trailers written by hand
    (author and Hive-Agent both the editor's: nothing else would tell), is a doctor
    warning; hive's own writes (a comment, a person's forced close) are not."""
    from hive.domain.annotate import add_comment
    from hive.domain.cells import close_cell

    cell = create_cell(ws, title="alice's")
    other = create_cell(ws, title="also alice's")
    for claimed in (cell, other):
        start_cell(agent(repo, "alice"), cell_id=claimed.id)
    add_comment(agent(repo, "bob"), cell_id=cell.id, text="hi")
    close_cell(Workspace(str(repo)), cell_id=other.id, force=True)  # a person, recorded
    path = next(repo.glob(f".hive/cells/*/{cell.id}.yaml"))
    path.write_text(path.read_text().replace("status: in_progress", "status: closed"))
    trailers = f"Hive-Cell: {cell.id}\nHive-Worker: alice"  # an agent is no runner
    sha = _forged_commit(repo, "bob", f"close {cell.id}\n\n{trailers}", "-a")
    warned = [w.message for w in diagnose(ws).warnings if w.kind == "not-owner"]
    assert warned == [
        f"{sha[:10]} bob changed {cell.id} (claimed by alice) without an override (hive"
        " refuses that; made by hand past the pre-commit hook, or under trailers written"
        " by hand): review it with git show"
    ]


def test_a_commit_deleting_every_cell_file_takes_the_claimed_ones(
    ws: Workspace, repo: Path
) -> None:
    """A hand commit under hive's trailers that removes ``.hive/cells`` whole (alice's
    claimed cell with it) was no ``not-owner`` breach: the audit compared the cells
    folders of the two trees and skipped a commit whose tree has none."""
    from hive.domain.history import claim_breaches

    cell = create_cell(ws, title="alice's")
    start_cell(agent(repo, "alice"), cell_id=cell.id)
    git(repo, "rm", "-rq", ".hive/cells")
    sha = _forged_commit(repo, "bob", f"delete {cell.id}")
    assert claim_breaches(ws, limit=50) == [(sha, f"bob changed {cell.id} (claimed by alice)")]


def test_doctor_s_three_audits_read_one_walk(ws: Workspace, repo: Path) -> None:
    """``hive doctor`` reads the latest commits once and hands the list to its three
    commit audits (a list: each reads all of it): each finds what its own walk finds."""
    from hive.domain.doctor import AUDITED_COMMITS
    from hive.domain.history import audit_log, claim_breaches, hand_edits, latest_commits

    cell = create_cell(ws, title="alice's")
    start_cell(agent(repo, "alice"), cell_id=cell.id)
    path = next(repo.glob(f".hive/cells/*/{cell.id}.yaml"))
    path.write_text(path.read_text().replace("status: in_progress", "status: closed"))
    _forged_commit(repo, "mallory", f"close {cell.id}", "-a")  # not-owner, unregistered
    path.write_text(path.read_text().replace("priority: 2", "priority: 1"))
    git(repo, "commit", "-qam", "by hand", "--no-verify")  # a hand edit
    commits = latest_commits(ws, AUDITED_COMMITS)
    shared = (
        audit_log(ws, limit=AUDITED_COMMITS, commits=commits),
        hand_edits(ws, limit=AUDITED_COMMITS, commits=commits),
        claim_breaches(ws, limit=AUDITED_COMMITS, commits=commits),
    )
    alone = (
        audit_log(ws, limit=AUDITED_COMMITS, scan=AUDITED_COMMITS),
        hand_edits(ws, limit=AUDITED_COMMITS),
        claim_breaches(ws, limit=AUDITED_COMMITS),
    )
    assert shared == alone and all(shared)
    assert {"unregistered", "hand-edit", "not-owner"} <= {w.kind for w in diagnose(ws).warnings}


def test_an_agent_cannot_commit_itself_a_role_or_a_grant(ws: Workspace, repo: Path) -> None:
    """Roles and grants are given, not taken: an agent's commit changing the config (to
    make itself a coordinator) or writing a permission decision the policy would not
    make (a grant, or one for longer, or another agent's) is refused; a person's, a
    coordinator's and hive's own decision staged with HIVE_AUTOCOMMIT=0 commit."""
    from hive.domain.permissions import request_permission
    from hive.store.yamlio import dumps, load_mapping
    from tests.seedkit import configure

    install_hook(ws)
    policy = {
        "default": "deny",
        "ttl_seconds": 60,
        "rules": [{"agent": "bob", "resource": "EMAIL", "decision": "grant"}],
    }
    configure(repo, coordinators=["lead"], permission_policy=policy)
    config = repo / ".hive/config.yaml"
    settings = load_mapping(config.read_text(), "config")
    config.write_text(dumps({**settings, "coordinators": ["lead", "bob"]}))
    head = git(repo, "rev-parse", "HEAD")
    refused = _refused(repo, hive_env(repo, "bob"), "-a")
    assert ".hive/config.yaml: it grants roles and sets the agents' policy" in refused
    assert commit(repo, hive_env(repo, "lead"), "-a").returncode == 0  # a coordinator may
    git(repo, "reset", "-q", "--hard", head.strip())
    request_permission(
        Workspace(str(repo), actor="bob", autocommit=False),
        resource_type="EMAIL",
        justification="send the weekly report",
    )
    assert commit(repo, hive_env(repo, "bob")).returncode == 0  # as the policy decided
    made = next((repo / ".hive/permissions").glob("*.yaml"))
    decided = made.read_text()
    for forged, why in (
        (decided.replace("EMAIL", "PAYMENTS"), "grants PAYMENTS to bob"),
        (decided.replace("agent: bob", "agent: alice"), "a permission decision for alice"),
    ):
        made.with_name("pm-forged.yaml").write_text(forged.replace(made.stem, "pm-forged"))
        git(repo, "add", ".hive/permissions")
        assert why in _refused(repo, hive_env(repo, "bob"))
        git(repo, "rm", "-q", "--cached", ".hive/permissions/pm-forged.yaml")
    assert 'expires_at: "2' in decided
    made.write_text(decided.replace('expires_at: "2', 'expires_at: "3'))
    assert "a permission decision stands as it was made" in _refused(
        repo, hive_env(repo, "bob"), "-a"
    )
    git(repo, "checkout", "-q", "--", ".hive/permissions")
    # rules that cannot be read fail every agent closed: one may mend them, no more
    good = config.read_text()
    config.write_text(good + "tools: {permissions: {'*': {'*': {denied: [x]}}}}\n")
    git(repo, "commit", "-qam", "broken rules", "--no-verify")
    settings = load_mapping(good, "config")
    config.write_text(dumps({**settings, "coordinators": ["lead", "bob"]}))
    assert "it grants roles" in _refused(repo, hive_env(repo, "bob"), "-a")
    config.write_text(good)
    assert commit(repo, hive_env(repo, "bob"), "-a").returncode == 0


def test_an_agent_cannot_reserve_or_release_in_another_s_file(ws: Workspace, repo: Path) -> None:
    """A reservation added to (or an entry changed in) another agent's file by hand is
    refused: only the holder reserves and releases there; a coordinator's release for a
    holder, staged with HIVE_AUTOCOMMIT=0, commits."""
    install_hook(ws)
    set_coordinators(repo, ["lead"])
    reserve(agent(repo, "alice"), paths=["lib/**"])
    held = repo / ".hive/reservations/alice.yaml"
    text = held.read_text()
    assert 'path_pattern: "lib/**"' in text
    held.write_text(text.replace('path_pattern: "lib/**"', 'path_pattern: "**"'))
    git(repo, "add", str(held))
    head = git(repo, "rev-parse", "HEAD")
    refused = _refused(repo, hive_env(repo, "bob"))
    assert ".hive/reservations/alice.yaml holds alice's reservations: only alice" in refused
    assert git(repo, "rev-parse", "HEAD") == head
    git(repo, "checkout", "-q", "HEAD", "--", str(held))
    lead = Workspace(str(repo), actor="lead", autocommit=False)
    release(lead, agent="alice", force=True, reason="stale")
    assert commit(repo, hive_env(repo, "lead")).returncode == 0
    assert "alice.yaml" not in git(repo, "ls-tree", "-r", "--name-only", "HEAD", ".hive")


def test_doctor_names_reservations_released_past_the_hook(ws: Workspace, repo: Path) -> None:
    """Another holder's reservation released by hand with --no-verify (under an author
    and trailers written to look like hive's) is a doctor warning; releases hive made
    (the holder's own, a person's forced one) are not."""
    reserve(agent(repo, "alice"), paths=["lib/**"])
    release(agent(repo, "alice"))
    reserve(agent(repo, "carol"), paths=["doc/**"])
    release(Workspace(str(repo)), agent="carol", force=True)  # a person, recorded
    reserve(agent(repo, "alice"), paths=["src/**"])
    git(repo, "rm", "-q", ".hive/reservations/alice.yaml")
    sha = _forged_commit(repo, "bob", "release bob src/**")
    warned = [w.message for w in diagnose(ws).warnings if w.kind == "not-owner"]
    assert [message.split(" without")[0] for message in warned] == [
        f"{sha[:10]} bob changed the reservations of alice"
    ]


def test_an_agent_cannot_record_another_s_outcome_by_hand(ws: Workspace, repo: Path) -> None:
    """An outcome in another agent's name (or one recorded before, changed) committed by
    hand is refused, as swarm_record_outcome refuses it; the agent's own, staged by hive
    with HIVE_AUTOCOMMIT=0, commits."""
    from hive.domain.outcomes import encode_outcome, outcome_path
    from hive.domain.swarm.progress import swarm_record_outcome
    from hive.models import utc_now
    from hive.models.outcome import Outcome

    install_hook(ws)
    cell = create_cell(ws, title="work")
    bob = Workspace(str(repo), actor="bob", autocommit=False)
    swarm_record_outcome(bob, cell_id=cell.id, success=True, summary="done")
    assert commit(repo, hive_env(repo, "bob")).returncode == 0
    forged = Outcome(
        id=f"{cell.id}~forged01",
        cell_id=cell.id,
        agent="alice",
        success=False,
        summary="alice failed",
        recorded_at=utc_now(),
    )
    path = repo / outcome_path(forged.id)
    path.write_bytes(encode_outcome(forged))
    git(repo, "add", str(path))
    head = git(repo, "rev-parse", "HEAD")
    assert "an outcome of alice's work, committed by bob" in _refused(repo, hive_env(repo, "bob"))
    assert git(repo, "rev-parse", "HEAD") == head
    git(repo, "rm", "-q", "--cached", str(path))
    mine = next(p for p in (repo / ".hive/outcomes").glob("*.yaml") if "forged" not in p.name)
    mine.write_text(mine.read_text().replace("success: true", "success: false"))
    assert "an outcome stands as it was recorded" in _refused(repo, hive_env(repo, "bob"), "-a")


def test_expired_and_shared_reservations_never_block(
    ws: Workspace, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from datetime import timedelta

    import hive.domain.reservations as reservations
    from hive.models import utc_now

    _tracked(repo, "src/a.py")
    _tracked(repo, "docs/a.md")
    install_hook(ws)
    reserve(agent(repo, "carol"), paths=["docs/**"], exclusive=False)
    with monkeypatch.context() as past:  # made a minute ago for a second: expired now
        past.setattr(reservations, "utc_now", lambda: utc_now() - timedelta(minutes=1))
        reserve(agent(repo, "alice"), paths=["src/**"], ttl_seconds=1)
    assert "src/**" in git(repo, "show", "HEAD:.hive/reservations/alice.yaml")  # still there
    (repo / "src/a.py").write_text("b\n")
    (repo / "docs/a.md").write_text("b\n")
    assert commit(repo, hive_env(repo, "bob"), "-a").returncode == 0


def test_force_is_recorded_and_lets_the_coordinator_commit(ws: Workspace, repo: Path) -> None:
    _tracked(repo, "src/a.py")
    _tracked(repo, "src/b.py")
    install_hook(ws)
    set_coordinators(repo, ["coordinator"])
    held = reserve(agent(repo, "alice"), paths=["src/**"]).granted[0]
    forced = reserve(
        agent(repo, "coordinator"), paths=["src/a.py"], force=True, reason="hotfix"
    ).granted[0]
    assert [(o.holder, o.reservation_id, o.pattern) for o in forced.overrides] == [
        ("alice", held.id, "src/**")
    ]
    trailer = git(repo, "log", "-1", "--format=%(trailers:key=Hive-Overrides,valueonly)")
    assert trailer.strip() == f"alice #{held.id} src/**"
    stored = load_mapping((repo / ".hive/reservations/coordinator.yaml").read_text(), "f")
    assert stored["reservations"][0]["overrides"][0]["holder"] == "alice"
    (repo / "src/a.py").write_text("coordinator\n")
    assert commit(repo, hive_env(repo, "coordinator"), "src/a.py").returncode == 0
    (repo / "src/b.py").write_text("not overridden\n")
    refused = _refused(repo, hive_env(repo, "coordinator"), "src/b.py")
    assert "src/b.py is reserved by alice" in refused


def test_outcome_and_stray_cell_files_are_validated(ws: Workspace, repo: Path) -> None:
    install_hook(ws)
    outcome = repo / ".hive/outcomes/hv-x~abc.yaml"
    outcome.parent.mkdir(parents=True)
    outcome.write_text("cell: [broken\n")
    git(repo, "add", ".hive/outcomes")
    assert ".hive/outcomes/hv-x~abc.yaml" in _refused(repo, hive_env(repo, "alice"))
    git(repo, "rm", "-q", "--cached", ".hive/outcomes/hv-x~abc.yaml")
    (repo / ".hive/cells").mkdir(exist_ok=True)
    (repo / ".hive/cells/junk.txt").write_text("junk\n")
    git(repo, "add", ".hive/cells/junk.txt")
    assert ".hive/cells/junk.txt: not a cell file" in _refused(repo, hive_env(repo, "alice"))


def test_corrupt_reservation_file_blocks_instead_of_hiding(ws: Workspace, repo: Path) -> None:
    _tracked(repo, "sub/f.py")
    install_hook(ws)
    reserve(agent(repo, "alice"), paths=["sub/**"])
    path = repo / ".hive/reservations/alice.yaml"
    path.write_text(path.read_text().replace("exclusive: true", "exclusive: maybe"))
    git(repo, "add", str(path))
    assert commit(repo, hive_env(repo, "alice")).returncode != 0  # the hook refuses to store it
    assert commit(repo, hive_env(repo, "alice", HIVE_BYPASS="1")).returncode == 0
    with pytest.raises(CorruptFile, match=r"\.hive/reservations/alice\.yaml"):
        reserve(agent(repo, "bob"), paths=["sub/f.py"])
    (repo / "sub/f.py").write_text("b\n")
    assert ".hive/reservations/alice.yaml" in _refused(repo, hive_env(repo, "bob"), "-a")
    with pytest.raises(CorruptFile, match=r"alice\.yaml"):
        release(agent(repo, "alice"))
    kinds = [p.kind for p in diagnose(ws).problems]
    assert "corrupt-reservations" in kinds
    listed = run_hive(["-C", str(repo), "reservations"], module="hive.cli.main")
    assert "warning: .hive/reservations/alice.yaml" in listed.stderr


def test_agents_never_share_a_reservation_file(ws: Workspace, repo: Path) -> None:
    names = ["bob smith", "bob_smith", "Alice", "alice", "BlueLake", "../x", "a~b"]
    paths = {reservation_path(name) for name in names}
    assert len(paths) == len(names)
    assert reservation_path("alice") == ".hive/reservations/alice.yaml"
    assert all("/" not in p.removeprefix(".hive/reservations/") for p in paths)
    reserve(agent(repo, "bob smith"), paths=["lib/**"])
    reserve(agent(repo, "bob_smith"), paths=["tests/**"])
    from hive.domain.reservations import list_reservations

    assert {(r.agent, r.path_pattern) for r in list_reservations(ws)} == {
        ("bob smith", "lib/**"),
        ("bob_smith", "tests/**"),
    }


def test_a_file_claiming_another_agent_is_refused(ws: Workspace, repo: Path) -> None:
    install_hook(ws)
    reserve(agent(repo, "alice"), paths=["lib/**"])
    impostor = repo / ".hive/reservations/zzz.yaml"
    impostor.write_text("agent: alice\nreservations: []\n")
    git(repo, "add", str(impostor))
    blocked = commit(repo, hive_env(repo, "bob"))
    assert blocked.returncode != 0
    assert "zzz.yaml: holds agent 'alice'" in blocked.stderr
    assert commit(repo, hive_env(repo, "bob", HIVE_BYPASS="1")).returncode == 0
    with pytest.raises(CorruptFile, match=r"zzz\.yaml"):
        reserve(agent(repo, "bob"), paths=["lib/x.py"])


def test_installed_hook_fails_closed_without_hive(ws: Workspace, repo: Path) -> None:
    _tracked(repo, "f.txt")
    result = install_hook(ws)
    script = Path(result.path)
    script.write_text(script.read_text().replace(sys.executable, "/nonexistent/python"))
    (repo / "f.txt").write_text("b\n")
    git_dir = os.path.dirname(shutil.which("git") or "/usr/bin/git")
    env = {**hive_env(repo, "bob"), "PATH": f"{git_dir}:/bin"}
    assert "HIVE_BYPASS=1" in _refused(repo, env, "-a")
    assert commit(repo, {**env, "HIVE_BYPASS": "1"}, "-a").returncode == 0


def test_shipped_thin_hook_script_blocks(ws: Workspace, repo: Path, tmp_path: Path) -> None:
    _tracked(repo, "src/a.py")
    hook = repo / ".git/hooks/pre-commit"
    shutil.copy(ROOT / "hooks/pre-commit", hook)
    hook.chmod(0o755)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "hive"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m hive.cli.main "$@"\n')
    wrapper.chmod(0o755)
    reserve(agent(repo, "alice"), paths=["src/**"])
    (repo / "src/a.py").write_text("b\n")
    env = {**hive_env(repo, "bob"), "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    assert "reserved by alice" in _refused(repo, env, "-a")
    git_dir = os.path.dirname(shutil.which("git") or "/usr/bin/git")
    missing = commit(repo, {**env, "PATH": f"{git_dir}:/bin"}, "-a")
    assert missing.returncode != 0 and "not on PATH" in missing.stderr


def test_an_agent_s_own_commits_carry_the_cell_it_works_on(ws: Workspace, repo: Path) -> None:
    """The commit-msg hook: a commit an agent makes itself (its credential in the
    environment, as a worker of hive swarm run has it) gets the Hive-Cell trailer of
    its cell, HIVE_CELL when that is the agent's, else the one it has in progress. A
    person's commit, a HIVE_CELL that is not the agent's and an empty message get
    none; an amend keeps one; the user's own commit-msg hook still runs, and refuses."""
    hooks = repo / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    own = hooks / "commit-msg"
    own.write_text('#!/bin/sh\n! grep -q "refuse me" "$1"\n')
    own.chmod(0o755)
    msg_hook, _merge_hook = install_hook(ws).also
    assert (msg_hook.path, msg_hook.chained) == (str(own), f"{own}.hive-chained")
    _tracked(repo, "src/a.py")
    cell = start_cell(agent(repo, "alice"), cell_id=create_cell(ws, title="hers").id)
    other = create_cell(ws, title="not hers")
    alice = hive_env(repo, "alice")

    def committed(env: dict[str, str], *args: str) -> str:
        (repo / "src/a.py").write_text(git(repo, "rev-parse", "HEAD"))  # a change each time
        done = commit(repo, env, "-a", *args)
        assert done.returncode == 0, done.stderr
        return git(repo, "log", "-1", "--format=%(trailers:key=Hive-Cell,valueonly)").strip()

    assert committed(alice) == cell.id
    assert committed(alice, "--amend") == cell.id  # once, not twice
    assert committed(hive_env(repo, "alice", HIVE_CELL=cell.id), "-m", "body") == cell.id
    recorded = git(repo, "log", "-1", "--format=%B").strip()
    assert recorded.endswith(f"body\n\nHive-Committer: alice\nHive-Cell: {cell.id}")
    assert committed(hive_env(repo, None)) == ""  # a person's
    by = "--format=%(trailers:key=Hive-Committer,valueonly)"
    assert git(repo, "log", "-1", by).strip() == ""  # a person is git's author
    assert committed(hive_env(repo, "alice", HIVE_CELL=other.id)) == ""  # not hers
    assert git(repo, "log", "-1", by).strip() == "alice"  # but hers: git's author is Ada's
    # an editor left with nothing but git's comments: git still refuses the empty message
    (repo / "src/a.py").write_text("left for an empty message\n")
    empty = subprocess.run(
        ["git", "-C", str(repo), "commit", "-a"],
        env={**alice, "GIT_EDITOR": "true"},
        capture_output=True,
        text=True,
    )
    assert empty.returncode != 0 and "empty commit message" in empty.stderr
    refused = commit(repo, alice, "-a", "-m", "refuse me")
    assert refused.returncode != 0  # the user's own hook, chained, still decides
    said = run_hive(["-C", str(repo), "hooks", "uninstall"], module="hive.cli.main")
    assert f"restored: {own} (your own hook, which hive had chained)" in said.stdout
    assert own.read_text().startswith("#!/bin/sh\n! grep")


def test_the_cell_of_an_agent_s_commit_is_found_without_decoding_every_cell(
    ws: Workspace, repo: Path
) -> None:
    """The commit-msg hook runs on every commit an agent makes: the cell it has in
    progress is found from the state's light facts (status, assignee), not by decoding
    every cell of the hive (seconds at 100,000 cells)."""
    from hive.domain.commitmsg import commit_cell

    cell = start_cell(agent(repo, "alice"), cell_id=create_cell(ws, title="hers").id)
    for number in range(20):
        create_cell(ws, title=f"other {number}")
    fresh = Workspace(str(repo), actor="bob")
    assert commit_cell(fresh, "alice", None) == cell.id
    assert commit_cell(fresh, "alice", cell.id) == cell.id
    assert commit_cell(fresh, "bob", cell.id) is None
    assert fresh.cache.decoded == 0


def test_pre_commit_framework_manifest() -> None:
    text = (ROOT / ".pre-commit-hooks.yaml").read_text()
    assert text.startswith("- id: hive\n")
    assert "  entry: hive hooks run pre-commit\n" in text
    assert "  pass_filenames: false\n" in text


def test_hooks_through_the_cli(ws: Workspace, repo: Path) -> None:
    def hive(*args: str) -> subprocess.CompletedProcess[str]:
        return run_hive(["-C", str(repo), *args], env=hive_env(repo, "bob"), module="hive.cli.main")

    installed = hive("hooks", "install")
    assert installed.returncode == 0 and "installed" in installed.stdout
    assert "unchanged" in hive("hooks", "install").stdout
    assert (repo / ".git/hooks/pre-commit").exists()
    _tracked(repo, "src/a.py")
    reserve(agent(repo, "alice"), paths=["src/**"])
    (repo / "src/a.py").write_text("b\n")
    git(repo, "add", "src/a.py")
    ran = hive("hooks", "run", "pre-commit")
    assert ran.returncode == 1 and "reserved by alice" in ran.stderr
    assert hive("hooks", "run", "post-commit").returncode == 2
    assert "removed" in hive("hooks", "uninstall").stdout
    assert not (repo / ".git/hooks/pre-commit").exists()


def _merge(repo: Path, env: dict[str, str], branch: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", str(repo), "merge", "--no-ff", "-m", f"merge {branch}", branch],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


def test_a_clean_merge_over_another_s_reservation_is_refused(ws: Workspace, repo: Path) -> None:
    """``git merge`` that makes a merge commit without a conflict runs no pre-commit
    hook: hive's pre-merge-commit hook checks it as a merge concluded by ``git commit``
    is checked, for an agent and for a person; the holder's own merge goes through."""
    _tracked(repo, "src/a.py")
    install_hook(ws)
    main = git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip()
    git(repo, "switch", "-q", "-c", "feature")
    (repo / "src/a.py").write_text("bob's\n")
    assert commit(repo, hive_env(repo, "bob"), "-a").returncode == 0
    git(repo, "switch", "-q", main)
    reserve(agent(repo, "alice"), paths=["src/**"])
    head = git(repo, "rev-parse", "HEAD")
    for who in ("bob", None):  # an agent, and a person
        merged = _merge(repo, hive_env(repo, who), "feature")
        assert merged.returncode != 0, merged.stdout
        assert "src/a.py is reserved by alice" in merged.stderr
        assert git(repo, "rev-parse", "HEAD") == head
        git(repo, "merge", "--abort", check=False)
        assert git(repo, "status", "--porcelain", "--untracked-files=no") == ""
    merged = _merge(repo, hive_env(repo, "alice"), "feature")
    assert merged.returncode == 0, merged.stderr
    assert git(repo, "show", "HEAD:src/a.py") == "bob's\n"
    assert len(git(repo, "rev-list", "--parents", "-n", "1", "HEAD").split()) == 3


def test_a_clean_merge_bringing_the_holder_s_release_commits(ws: Workspace, repo: Path) -> None:
    """The holder's work and release made on a branch, merged without a conflict while
    HEAD still holds the reservation: git names the merged head only in GITHEAD_<id>
    (MERGE_HEAD is written after the pre-merge-commit hook), which counts as it does."""
    _tracked(repo, "src/a.py")
    install_hook(ws)
    reserve(agent(repo, "alice"), paths=["src/**"])
    main = git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip()
    git(repo, "switch", "-q", "-c", "feature")
    (repo / "src/a.py").write_text("alice's\n")
    assert commit(repo, hive_env(repo, "alice"), "-a").returncode == 0
    release(agent(repo, "alice"))
    git(repo, "switch", "-q", main)
    _tracked(repo, "notes.txt", "main\n")
    merged = _merge(repo, hive_env(repo, "bob"), "feature")
    assert merged.returncode == 0, merged.stderr
    assert git(repo, "show", "HEAD:src/a.py") == "alice's\n"
    assert not (repo / ".git" / "MERGE_HEAD").exists()


def test_a_token_of_nobody_cannot_commit(ws: Workspace, repo: Path) -> None:
    """A retired agent's credential, still in its worker's environment, is refused by the
    hook as by every command (the quick check and the full one alike): its commit is not
    made as the person of the git identity, whose rules (no claimed-cell check) are
    looser than the agent's; unsetting the token, or HIVE_BYPASS, commits."""
    from hive.domain.identity import retire_agent

    install_hook(ws)
    cell = create_cell(ws, title="alice's")
    start_cell(agent(repo, "alice"), cell_id=cell.id)
    retired = hive_env(repo, "dave")
    retire_agent(agent(repo, "dave"), name="dave", reason="gone")
    head = git(repo, "rev-parse", "HEAD")
    _tracked(repo, "notes.txt")
    (repo / "notes.txt").write_text("more\n")
    refused = _refused(repo, retired, "-a")  # nothing staged under .hive: the quick check
    assert "HIVE_AGENT_TOKEN is not the credential of any agent registered" in refused
    assert "unset it to commit as yourself" in refused
    path = next(repo.glob(f".hive/cells/*/{cell.id}.yaml"))
    path.write_text(path.read_text().replace("status: in_progress", "status: closed"))
    assert "not the credential of any agent" in _refused(repo, retired, "-a")  # the full one
    assert git(repo, "rev-parse", "HEAD") != head  # _tracked's own commit
    assert "status: in_progress" in git(repo, "show", f"HEAD:{path.relative_to(repo)}")
    assert commit(repo, {**retired, "HIVE_BYPASS": "1"}, "-a").returncode == 0
    assert "status: closed" in git(repo, "show", f"HEAD:{path.relative_to(repo)}")
