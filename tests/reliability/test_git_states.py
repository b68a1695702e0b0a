"""The user's own git state: what hive does mid-merge, mid-rebase, mid-cherry-pick,
during a bisect, on a detached HEAD and on an unborn branch (see hive/git/state.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from hive.domain.cells import close_cell, create_cell, list_cells, show_cell
from hive.domain.doctor import diagnose
from hive.domain.identity import mail_init
from hive.domain.mail import inbox, send_message
from hive.domain.reservations import reserve
from hive.domain.setup import init_hive
from hive.domain.workspace import Workspace
from hive.errors import GitStateConflict
from tests.conftest import assert_clean, git, make_repo
from tests.inprocess import run_hive


def _run_git(repo: Path, *args: str) -> int:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=False
    ).returncode


def _conflicting_branches(repo: Path) -> None:
    """``main`` and ``other`` both change README.md differently."""
    git(repo, "checkout", "-q", "-b", "other")
    (repo / "README.md").write_text("# other\n")
    git(repo, "commit", "-qam", "other's readme")
    git(repo, "checkout", "-q", "main")
    (repo / "README.md").write_text("# main\n")
    git(repo, "commit", "-qam", "main's readme")


def _refused(ws: Workspace, way_out: str) -> None:
    with pytest.raises(GitStateConflict) as caught:
        create_cell(ws, title="must not land")
    assert way_out in caught.value.message
    assert caught.value.code == "git_state" and caught.value.exit_code == 4
    with pytest.raises(GitStateConflict):
        reserve(ws, paths=["src/**"])


def _mail_still_works(ws: Workspace) -> None:
    mail_init(ws, agent_name="Mailer")
    send_message(ws.for_actor("Mailer"), to=["Mailer"], subject="still works", body="")
    assert [m.subject for m in inbox(ws.for_actor("Mailer"))][:1] == ["still works"]


def test_unresolved_merge_is_refused_and_abort_loses_nothing(ws: Workspace, repo: Path) -> None:
    kept = create_cell(ws, title="made before the merge")
    _conflicting_branches(repo)
    assert _run_git(repo, "merge", "other") != 0  # stops with a conflict
    head = git(repo, "rev-parse", "HEAD")
    _refused(ws, "git merge --abort")
    _mail_still_works(ws)
    assert any(p.kind == "git-state" for p in diagnose(ws).problems)
    assert git(repo, "rev-parse", "HEAD") == head
    git(repo, "merge", "--abort")
    assert show_cell(ws, cell_id=kept.id).title == "made before the merge"
    later = create_cell(ws, title="after the abort")
    assert {c.id for c in list_cells(ws)} == {kept.id, later.id}
    assert_clean(repo)


def test_rebase_stop_is_refused_and_abort_drops_no_hive_write(ws: Workspace, repo: Path) -> None:
    cell = create_cell(ws, title="work item")
    _conflicting_branches(repo)
    git(repo, "checkout", "-q", "other")
    assert _run_git(repo, "rebase", "main") != 0  # stops on the README conflict
    _refused(ws, "git rebase --abort")
    with pytest.raises(GitStateConflict):
        close_cell(ws, cell_id=cell.id)
    git(repo, "rebase", "--abort")
    assert git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip() == "other"
    git(repo, "checkout", "-q", "main")
    assert not show_cell(ws, cell_id=cell.id).is_closed
    close_cell(ws, cell_id=cell.id)
    assert show_cell(ws, cell_id=cell.id).is_closed
    assert_clean(repo)


def test_rebase_continue_never_buries_hive_commits(ws: Workspace, repo: Path) -> None:
    _conflicting_branches(repo)
    git(repo, "checkout", "-q", "other")
    assert _run_git(repo, "rebase", "main") != 0
    _refused(ws, "git rebase --continue")
    (repo / "README.md").write_text("# resolved\n")
    git(repo, "add", "README.md")
    subprocess.run(
        ["git", "-C", str(repo), "-c", "core.editor=true", "rebase", "--continue"],
        check=True,
        capture_output=True,
    )
    subjects = git(repo, "log", "--format=%s", "main..HEAD").splitlines()
    assert subjects == ["other's readme"]  # no hive commit inside the rebased history
    create_cell(ws, title="after the rebase")
    assert git(repo, "log", "-1", "--format=%s").startswith("hive: create")


def test_cherry_pick_stop_is_refused(ws: Workspace, repo: Path) -> None:
    _conflicting_branches(repo)
    assert _run_git(repo, "cherry-pick", "other") != 0
    _refused(ws, "git cherry-pick --abort")
    git(repo, "cherry-pick", "--abort")
    create_cell(ws, title="fine again")


def test_bisect_is_refused_until_reset(ws: Workspace, repo: Path) -> None:
    for number in range(3):
        (repo / f"f{number}.txt").write_text(str(number))
        git(repo, "add", ".")
        git(repo, "commit", "-qm", f"commit {number}")
    git(repo, "bisect", "start", "HEAD", "HEAD~3")
    _refused(ws, "git bisect reset")
    git(repo, "bisect", "reset")
    create_cell(ws, title="after bisect")


def test_detached_head_is_refused_unless_allowed(
    ws: Workspace, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cell = create_cell(ws, title="on main")
    git(repo, "checkout", "-q", "--detach")
    _refused(ws, "git switch -c NAME")
    assert show_cell(ws, cell_id=cell.id).title == "on main"  # reading is fine
    monkeypatch.setenv("HIVE_ALLOW_DETACHED", "1")
    detached = create_cell(ws, title="on purpose")
    assert git(repo, "rev-parse", "HEAD").strip() != git(repo, "rev-parse", "main").strip()
    assert show_cell(ws, cell_id=detached.id).title == "on purpose"


def test_unborn_branch_gets_a_first_commit_with_only_hive_files(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "fresh", commit=False)
    (repo / "app.py").write_text("print('mine')\n")
    git(repo, "add", "app.py")
    workspace = Workspace(str(repo), actor="alice")
    init_hive(workspace)
    create_cell(workspace, title="first")
    committed = git(repo, "ls-tree", "-r", "--name-only", "HEAD").split()
    assert committed and all(p.startswith(".hive/") or p == ".gitattributes" for p in committed)
    assert git(repo, "diff", "--cached", "--name-only").split() == ["app.py"]  # still staged
    assert git(repo, "rev-list", "--count", "HEAD").strip() == "2"


def test_cli_names_the_way_out(ws: Workspace, repo: Path) -> None:
    _conflicting_branches(repo)
    assert _run_git(repo, "merge", "other") != 0
    result = run_hive(["-C", str(repo), "create", "nope"], module="hive.cli.main")
    assert result.exit_code == 4
    assert "a merge is in progress" in result.output and "git merge --abort" in result.output
    result = run_hive(["-C", str(repo), "sync"], module="hive.cli.main")
    assert result.exit_code == 4
