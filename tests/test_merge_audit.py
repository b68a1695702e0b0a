"""``hive doctor``'s audit of merge commits: a claimed cell a merge changed beyond
merging its parents is a ``not-owner`` breach; what the merge brings is not."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from hive.domain.annotate import add_comment
from hive.domain.cells import create_cell, start_cell, update_cell
from hive.domain.history import claim_breaches
from hive.domain.setup import install_merge_driver
from hive.domain.workspace import Workspace
from hive.store.layout import CONFIG_PATH, cell_path
from tests.conftest import GIT_ENV, git
from tests.parsecount import yaml_parses
from tests.test_reservations import agent


def _commit_merge(repo: Path, who: str) -> str:
    env = {**os.environ, **GIT_ENV, "GIT_AUTHOR_NAME": who, "GIT_AUTHOR_EMAIL": f"{who}@x"}
    subprocess.run(
        ["git", "-C", str(repo), "commit", "-q", "--no-verify", "-m", "merge side"],
        env=env,
        check=True,
    )
    return git(repo, "rev-parse", "HEAD").strip()


def test_a_claimed_cell_changed_in_a_merge_is_a_breach(ws: Workspace, repo: Path) -> None:
    """alice's claimed cell, changed by her on main and commented on by bob on a branch:
    merged by git with hive's driver, the merge is no breach; the same merge with the
    cell closed by hand before committing (an "evil merge") was not looked at, and is."""
    install_merge_driver(ws)
    cell = create_cell(ws, title="alice's")
    alice = agent(repo, "alice")
    start_cell(alice, cell_id=cell.id)
    git(repo, "checkout", "-q", "-b", "side")
    add_comment(agent(repo, "bob"), cell_id=cell.id, text="seen")
    git(repo, "checkout", "-q", "main")
    update_cell(alice, cell_id=cell.id, priority=0)
    merge = ["merge", "-q", "--no-ff", "--no-commit", "side"]
    git(repo, *merge)
    honest = _commit_merge(repo, "bob")
    shown = (repo / cell_path(cell.id)).read_text()
    assert "priority: 0" in shown and "seen" in shown  # both sides, field by field
    assert claim_breaches(ws, limit=20) == []
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    git(repo, *merge)
    path = repo / cell_path(cell.id)
    path.write_text(path.read_text().replace("status: in_progress", "status: closed"))
    git(repo, "add", str(path))
    evil = _commit_merge(repo, "bob")
    assert evil != honest
    assert claim_breaches(ws, limit=20) == [
        (evil, f"bob changed {cell.id} (claimed by alice) in a merge")
    ]


def test_another_s_reservation_released_in_a_merge_is_a_breach(ws: Workspace, repo: Path) -> None:
    """alice reserved on main and again on a branch: git's merge with hive's driver keeps
    both, no breach; the merge with her first reservation (both sides had it) dropped by
    hand, a version no side had, is one."""
    from hive.domain.reservations import reserve
    from hive.domain.reservecore import reservation_path

    install_merge_driver(ws)
    alice = agent(repo, "alice")
    reserve(alice, paths=["docs/**"], ttl_seconds=3600)
    git(repo, "checkout", "-q", "-b", "side")
    reserve(alice, paths=["lib/**"], ttl_seconds=3600)
    git(repo, "checkout", "-q", "main")
    reserve(alice, paths=["src/**"], ttl_seconds=3600)
    merge = ["merge", "-q", "--no-ff", "--no-commit", "side"]
    git(repo, *merge)
    _commit_merge(repo, "bob")
    held = (repo / reservation_path("alice")).read_text()
    assert all(pattern in held for pattern in ("docs/**", "lib/**", "src/**"))
    assert claim_breaches(ws, limit=20) == []
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    git(repo, *merge)
    path = repo / reservation_path("alice")
    kept = path.read_text().split("  - id: ")
    path.write_text("  - id: ".join(part for part in kept if "docs/**" not in part))
    git(repo, "add", str(path))
    evil = _commit_merge(repo, "bob")
    assert "docs/**" not in git(repo, "show", f"HEAD:{reservation_path('alice')}")
    assert claim_breaches(ws, limit=20) == [
        (evil, "bob changed the reservations of alice in a merge")
    ]


def test_a_merge_that_removes_every_cell_file_is_a_breach(ws: Workspace, repo: Path) -> None:
    """An evil merge that removes ``.hive/cells`` whole (alice's claimed cell in it) was
    no breach: the audit compared the merge's cells folder with its parents' and
    skipped a merge that has none."""
    cell = create_cell(ws, title="alice's")
    start_cell(agent(repo, "alice"), cell_id=cell.id)
    git(repo, "checkout", "-q", "-b", "side")
    git(repo, "commit", "-q", "--allow-empty", "-m", "side")
    git(repo, "checkout", "-q", "main")
    git(repo, "commit", "-q", "--allow-empty", "-m", "main")
    git(repo, "merge", "-q", "--no-ff", "--no-commit", "side")
    git(repo, "rm", "-rq", ".hive/cells")
    evil = _commit_merge(repo, "bob")
    assert claim_breaches(ws, limit=20) == [
        (evil, f"bob changed {cell.id} (claimed by alice) in a merge")
    ]


def test_merges_ask_the_audit_s_one_table_for_their_parents_versions(
    ws: Workspace, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three merges of branches where bob commented on alice's claimed cell and alice
    reserved: each merge's parents' versions of each file came from a ``git log`` of
    its own (two a file a merge); the audit's one table of the histories answers
    them, with the same findings (none: each merge is git's with hive's driver). Each
    version of the cell and of alice's reservation file is parsed once (the claim
    checks and the merges made from the files parsed each up to six times)."""
    from hive.domain.reservations import reserve

    install_merge_driver(ws)
    cell = create_cell(ws, title="alice's")
    alice = agent(repo, "alice")
    start_cell(alice, cell_id=cell.id)
    for number in range(3):
        git(repo, "checkout", "-q", "-b", f"side{number}")
        add_comment(agent(repo, "bob"), cell_id=cell.id, text=f"seen {number}")
        reserve(alice, paths=[f"side{number}/**"], ttl_seconds=3600)
        git(repo, "checkout", "-q", "main")
        update_cell(alice, cell_id=cell.id, priority=number)
        reserve(alice, paths=[f"main{number}/**"], ttl_seconds=3600)
        git(repo, "merge", "-q", "--no-ff", "--no-edit", f"side{number}")
    assert len(git(repo, "rev-list", "--merges", "HEAD").split()) == 3
    parsed = yaml_parses(monkeypatch)
    trace = tmp_path / "trace"
    monkeypatch.setenv("GIT_TRACE", str(trace))
    assert claim_breaches(ws, limit=50) == []
    monkeypatch.delenv("GIT_TRACE")
    logs = [line for line in trace.read_text().splitlines() if "built-in: git log" in line]
    assert len(logs) == 1, logs  # the table's, not one a (parent, file)
    for marker in (cell.id, "agent: alice"):
        versions = {text: count for text, count in parsed.items() if marker in text}
        assert len(versions) >= 6 and max(versions.values()) == 1, (marker, versions)


def _config_on(repo: Path, branch: str, old: str, new: str) -> None:
    git(repo, "checkout", "-q", branch)
    path = repo / CONFIG_PATH
    path.write_text(path.read_text().replace(old, new))
    git(repo, "add", CONFIG_PATH)
    git(repo, "commit", "-q", "--no-verify", "-m", f"config on {branch}")


def test_a_config_edited_by_hand_in_a_merge_is_reported(ws: Workspace, repo: Path) -> None:
    """A merge that takes one side's config change, one that line-merges both sides'
    changes (as git merges the file) and one made by hive's driver (a line of
    ``.gitattributes`` added by hand routes the file to it) are no finding; a merge whose config is
    neither (a coordinator named during ``git merge --no-commit``, committed past the
    hook: an "evil merge") was seen by no audit (merges are skipped as hand edits, and
    the claim audit compares cells and reservations only): a ``hand-edit`` warning."""
    from hive.domain.doctor import diagnose
    from hive.domain.history import merge_edits

    git(repo, "branch", "side")
    _config_on(repo, "side", "lock_timeout_seconds: 30.0", "lock_timeout_seconds: 45.0")
    git(repo, "checkout", "-q", "main")
    create_cell(ws, title="on main")
    git(repo, "merge", "-q", "--no-ff", "--no-edit", "side")  # side's config, as it is
    _config_on(repo, "side", "prefix: hv", "prefix: hv\nrate_limits: {}")
    _config_on(repo, "main", "lock_timeout_seconds: 45.0", "lock_timeout_seconds: 50.0")
    git(repo, "merge", "-q", "--no-ff", "--no-edit", "side")  # both sides', line-merged
    merged = (repo / CONFIG_PATH).read_text()
    assert "rate_limits" in merged and "lock_timeout_seconds: 50.0" in merged
    install_merge_driver(ws)  # and a line routing the config to hive's driver, by hand
    with (repo / ".gitattributes").open("a") as attributes:
        attributes.write(f"{CONFIG_PATH} merge=hive\n")
    git(repo, "commit", "-qam", "config merged by hive's driver")
    git(repo, "checkout", "-q", "side")
    git(repo, "merge", "-q", "main")
    _config_on(repo, "side", "id_length: 6", "id_length: 7")
    _config_on(repo, "main", "child_id_length: 4", "child_id_length: 5")  # (the next line)
    git(repo, "merge", "-q", "--no-ff", "--no-edit", "side")  # setting by setting
    merged = (repo / CONFIG_PATH).read_text()
    assert "\nid_length: 7" in merged and "child_id_length: 5" in merged
    assert merge_edits(ws, limit=20) == []
    git(repo, "checkout", "-q", "side")
    create_cell(ws, title="on side")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "--no-commit", "side")
    path = repo / CONFIG_PATH
    path.write_text(path.read_text().replace("coordinators: []", "coordinators: [mallory]"))
    git(repo, "add", CONFIG_PATH)
    evil = _commit_merge(repo, "mallory")
    assert merge_edits(ws, limit=20) == [(evil, "merge side")]
    warnings = [p.message for p in diagnose(ws).warnings if p.kind == "hand-edit"]
    assert [m for m in warnings if m.startswith(evil[:10])] == [
        f"{evil[:10]} is a merge that left {CONFIG_PATH} as neither parent's version nor"
        " a merge of theirs (merge side): edited by hand during the merge (who"
        " coordinates, the agents' tools and policy); review it with git show"
    ]


def test_unclaimed_cells_memory_and_grants_made_in_a_merge_are_reported(
    ws: Workspace, repo: Path
) -> None:
    """The merge audit looked at claimed cells, reservations and the config only: a
    merge that rewrote an unclaimed cell, the project memory or made up a permission
    decision (``git merge --no-commit``, an edit, ``--no-verify``) was seen by nothing.
    Each is now a ``hand-edit`` warning naming the files; an honest merge of the same
    cells (both sides' changes, by hive's driver) is none, and a claimed cell changed
    so stays the claim audit's alone."""
    from hive.domain.doctor import diagnose
    from hive.domain.history import merge_state_edits
    from hive.store.layout import CONTEXT_PATH, PERMISSIONS_DIR

    install_merge_driver(ws)
    open_cell = create_cell(ws, title="nobody's")
    claimed = create_cell(ws, title="alice's")
    start_cell(agent(repo, "alice"), cell_id=claimed.id)
    git(repo, "checkout", "-q", "-b", "side")
    update_cell(ws, cell_id=open_cell.id, priority=0)
    git(repo, "checkout", "-q", "main")
    update_cell(ws, cell_id=open_cell.id, title="nobody's, retitled")
    merge = ["merge", "-q", "--no-ff", "--no-commit", "side"]
    git(repo, *merge)
    _commit_merge(repo, "mallory")
    shown = (repo / cell_path(open_cell.id)).read_text()
    assert "priority: 0" in shown and "retitled" in shown  # both sides, field by field
    assert merge_state_edits(ws, limit=20) == []
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    git(repo, *merge)
    for cell in (open_cell, claimed):
        path = repo / cell_path(cell.id)
        text = path.read_text().replace("status: in_progress", "status: open")
        path.write_text(text.replace("status: open", "status: closed"))
    grant = f"{PERMISSIONS_DIR}/made-up.yaml"
    (repo / grant).parent.mkdir(parents=True, exist_ok=True)
    (repo / grant).write_text("agent: mallory\ndecision: granted\n")
    (repo / CONTEXT_PATH).write_text("facts: [mallory coordinates]\n")
    git(repo, "add", "-A", ".hive")
    evil = _commit_merge(repo, "mallory")
    what = f"{cell_path(open_cell.id)}, {CONTEXT_PATH}, {grant} (merge side)"
    assert merge_state_edits(ws, limit=20) == [(evil, what)]
    assert claim_breaches(ws, limit=20) == [
        (evil, f"mallory changed {claimed.id} (claimed by alice) in a merge")
    ]
    warnings = [p.message for p in diagnose(ws).warnings if p.kind == "hand-edit"]
    assert [m for m in warnings if m.startswith(evil[:10])] == [
        f"{evil[:10]} is a merge that left {what}: a version neither parent had nor a merge"
        " of theirs (unclaimed cells, the project memory, permission decisions): edited by"
        " hand during the merge; review it with git show"
    ]


def _commit_as(repo: Path, who: str, path: str, message: str, *, when: str = "") -> str:
    """``path`` written and committed past the hook (``--no-verify``) as ``who``
    (``when``: the commit's date, as git takes it)."""
    env = {**os.environ, **GIT_ENV, "GIT_AUTHOR_NAME": who, "GIT_AUTHOR_EMAIL": f"{who}@x"}
    if when:
        env.update(GIT_COMMITTER_DATE=when, GIT_AUTHOR_DATE=when)
    (repo / path).parent.mkdir(parents=True, exist_ok=True)
    (repo / path).write_text(f"{message}\n")
    git(repo, "add", path)
    subprocess.run(
        ["git", "-C", str(repo), "commit", "-q", "--no-verify", "-m", message],
        env=env,
        check=True,
    )
    return git(repo, "rev-parse", "HEAD").strip()


def test_commits_a_fast_forward_brings_into_others_reserved_files_are_listed(
    ws: Workspace, repo: Path
) -> None:
    """Commits made where no hook checked them (``--no-verify``, a clone without hive's
    hooks) and brought in by ``git merge --ff-only`` (or a pull), which runs no hook,
    changed files alice had reserved and nothing said so. ``hive doctor`` lists each
    commit that changed a file while another agent held it reserved (exclusive, active
    at the commit's time, in its parent): not alice's own commits, not files outside the
    reservation, not commits after it expired."""
    from hive.domain.doctor import diagnose
    from hive.domain.history import reserved_changes
    from hive.domain.reservations import reserve

    reserve(agent(repo, "alice"), paths=["src/**"], ttl_seconds=3600)
    git(repo, "checkout", "-q", "-b", "side")
    trespass = _commit_as(repo, "bob", "src/a.py", "bob's edit")
    _commit_as(repo, "bob", "docs/b.md", "outside")
    mine = "alice's own\n\nHive-Committer: alice"
    _commit_as(repo, "Ada", "src/b.py", mine)  # an agent's git commit names it so
    _commit_as(repo, "bob", "src/c.py", "after it expired", when="2099-01-01T00:00:00Z")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--ff-only", "side")
    git(repo, "checkout", "-q", "-b", "hers")
    _commit_as(repo, "Ada", "src/d.py", mine)
    git(repo, "checkout", "-q", "main")
    _commit_as(repo, "bob", "docs/e.md", "on main meanwhile")
    git(repo, "merge", "-q", "--no-ff", "--no-verify", "--no-edit", "hers")  # (her work)
    found = reserved_changes(ws, limit=20)
    assert [sha for sha, _ in found] == [trespass], found
    assert found[0][1].startswith("bob changed src/a.py while alice had it reserved (src/**,")
    warnings = [p.message for p in diagnose(ws).warnings if p.kind == "reserved-change"]
    assert len(warnings) == 1 and warnings[0].startswith(f"{trespass[:10]} bob changed src/a.py")
    assert "brought here by a fast-forward merge or a pull" in warnings[0]
