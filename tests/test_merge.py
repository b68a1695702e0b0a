"""The field-level merge of cell files: the rules, and git itself using the driver."""

from __future__ import annotations

import subprocess
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from hive.domain.annotate import add_comment, resolve_conflicts
from hive.domain.cells import (
    add_dependency,
    close_cell,
    create_cell,
    delete_cell,
    show_cell,
    start_cell,
    update_cell,
)
from hive.domain.doctor import diagnose
from hive.domain.merge import TOMBSTONE_TTL, merge_cells, merge_file
from hive.domain.setup import ATTRIBUTES_PATH, DRIVER_KEY, init_hive
from hive.domain.workspace import Workspace
from hive.errors import NotOwner
from hive.models import Cell, Comment, Dependency, utc_now
from hive.store.cells import decode_cell, encode_cell
from hive.store.layout import cell_path
from tests.conftest import assert_clean, git

T0 = utc_now() - timedelta(days=1)


def cell(**fields: object) -> Cell:
    data: dict[str, object] = {
        "id": "hv-abc123",
        "title": "Base title",
        "created_at": T0,
        "updated_at": T0,
    }
    data.update(fields)
    return Cell.model_validate(data)


def later(minutes: int) -> object:
    return T0 + timedelta(minutes=minutes)


def both_ways(base: Cell | None, ours: Cell, theirs: Cell) -> Cell:
    """Merge both ways round; the rules are commutative, so the results must match."""
    one, _ = merge_cells(base, ours, theirs)
    two, _ = merge_cells(base, theirs, ours)
    assert encode_cell(one) == encode_cell(two)
    return one


# ------------------------------------------------------------------ the rules


def test_edits_to_different_fields_both_land() -> None:
    base = cell()
    ours = cell(title="New title", updated_at=later(1))
    theirs = cell(priority=0, description="more", updated_at=later(2))
    merged = both_ways(base, ours, theirs)
    assert (merged.title, merged.priority, merged.description) == ("New title", 0, "more")
    assert merged.updated_at == later(2)
    assert merged.conflicts == []


def test_closed_beats_open_even_when_the_other_side_is_later() -> None:
    base = cell()
    closed = cell(status="closed", closed_at=later(1), close_reason="done", updated_at=later(1))
    started = cell(status="in_progress", assignee="bob", updated_at=later(5))
    merged = both_ways(base, closed, started)
    assert merged.status == "closed"
    assert merged.closed_at == later(1) and merged.close_reason == "done"
    assert merged.assignee == "bob"  # only one side changed it


def test_reopen_on_one_side_is_kept_when_the_other_did_not_touch_status() -> None:
    base = cell(status="closed", closed_at=later(0))
    reopened = cell(status="open", updated_at=later(1))
    edited = cell(status="closed", closed_at=later(0), title="Renamed", updated_at=later(2))
    merged = both_ways(base, reopened, edited)
    assert merged.status == "open" and merged.closed_at is None
    assert merged.title == "Renamed"


def test_later_updated_at_wins_scalar_text_and_the_loser_is_recorded() -> None:
    base = cell()
    early = cell(title="Early title", updated_at=later(1))
    late = cell(title="Late title", updated_at=later(2))
    merged = both_ways(base, early, late)
    assert merged.title == "Late title"
    assert [(c.field, c.kept, c.other) for c in merged.conflicts] == [
        ("title", "Late title", "Early title")
    ]


def test_equal_times_are_decided_the_same_way_on_both_sides() -> None:
    base = cell()
    merged = both_ways(
        base, cell(title="A", updated_at=later(1)), cell(title="B", updated_at=later(1))
    )
    assert merged.title in ("A", "B")


def test_sides_are_encoded_only_to_break_a_tie_of_times(monkeypatch: pytest.MonkeyPatch) -> None:
    """The winner of scalar fields is the later side; the encoded bytes decide only
    between equal times, but both sides were encoded for every merge (most of the
    time ``hive doctor`` spends merging cells with many comments to check syncs)."""
    import hive.store.celldoc

    encoded: list[object] = []
    real = hive.store.celldoc.encode

    def counted(plain: Any) -> Any:
        encoded.append(plain)
        return real(plain)

    monkeypatch.setattr(hive.store.celldoc, "encode", counted)
    merged = both_ways(cell(), cell(title="A", updated_at=later(1)), cell(title="B"))
    assert merged.title == "A" and encoded == []
    tie = both_ways(
        cell(), cell(title="A", updated_at=later(1)), cell(title="B", updated_at=later(1))
    )
    assert tie.title == "B" and len(encoded) == 4  # (both ways round: two sides each)


def test_notes_from_both_sides_are_kept() -> None:
    base = cell(notes="first")
    ours = cell(notes="first\nours added", updated_at=later(1))
    theirs = cell(notes="first\ntheirs added", updated_at=later(2))
    merged = both_ways(base, ours, theirs)
    assert merged.notes == "first\nours added\ntheirs added"


def test_comments_from_both_sides_are_kept_oldest_first() -> None:
    one = Comment(id="c-1", author="a", text="one", created_at=later(1))
    two = Comment(id="c-2", author="b", text="two", created_at=later(2))
    base = cell()
    merged = both_ways(base, cell(comments=[two], updated_at=later(2)), cell(comments=[one]))
    assert [c.id for c in merged.comments] == ["c-1", "c-2"]


def test_labels_and_dependencies_merge_as_sets_where_removals_win() -> None:
    dep_a = Dependency(type="blocks", target="hv-aaaaaa")
    dep_b = Dependency(type="related", target="hv-bbbbbb")
    base = cell(labels=["x", "y"], dependencies=[dep_a])
    ours = cell(labels=["y", "ours"], dependencies=[dep_a, dep_b], updated_at=later(1))
    theirs = cell(labels=["x", "y", "theirs"], dependencies=[], updated_at=later(2))
    merged = both_ways(base, ours, theirs)
    assert merged.labels == ["y", "ours", "theirs"]
    assert merged.dependencies == [dep_b]


def test_delete_beats_an_edit_within_the_ttl() -> None:
    base = cell()
    deleted = cell(deleted_at=later(1), updated_at=later(1))
    edited = cell(title="Edited", updated_at=later(10))
    merged = both_ways(base, deleted, edited)
    assert merged.deleted_at == later(1)
    assert merged.title == "Edited"


def test_an_edit_long_after_an_expired_tombstone_revives_the_cell() -> None:
    base = cell()
    deleted = cell(deleted_at=later(1), updated_at=later(1))
    revived_at = later(1) + TOMBSTONE_TTL + timedelta(minutes=1)
    edited = cell(title="Still wanted", updated_at=revived_at)
    merged = both_ways(base, deleted, edited)
    assert merged.deleted_at is None


def test_creates_on_both_sides_without_a_base_merge_as_a_union() -> None:
    ours = cell(labels=["a"], notes="mine", updated_at=later(1))
    theirs = cell(labels=["b"], notes="yours", updated_at=later(2))
    merged = both_ways(None, ours, theirs)
    assert merged.labels == ["a", "b"]
    assert merged.notes == "mine\nyours"


def test_a_side_that_does_not_parse_is_recorded_not_merged() -> None:
    path = cell_path("hv-abc123")
    good = encode_cell(cell(title="Good", updated_at=later(1)))
    broken = b"id: hv-abc123\ntitle: [unclosed\n"
    for ours, theirs in ((good, broken), (broken, good)):
        outcome = merge_file(path, encode_cell(cell()), ours, theirs)
        assert outcome.clean
        merged = decode_cell(outcome.content, path)
        assert merged.title == "Good"
        assert merged.conflicts[0].field == "file"
        assert "[unclosed" in str(merged.conflicts[0].other)


def test_no_side_parsing_is_unclean_and_keeps_ours_bytes() -> None:
    path = cell_path("hv-abc123")
    outcome = merge_file(path, None, b"a: [\n", b"b: [\n")
    assert not outcome.clean
    assert outcome.content == b"a: [\n"


# ------------------------------------------------------------------ with git itself


def _branch_edit(repo: Path, ws: Workspace, branch: str, edit: object) -> None:
    git(repo, "checkout", "-q", branch)
    edit()  # type: ignore[operator]


def _merge(repo: Path, branch: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", str(repo), "merge", "--no-edit", branch],
        capture_output=True,
        text=True,
        check=False,
    )


def test_init_installs_the_driver_idempotently(ws: Workspace, repo: Path) -> None:
    assert (repo / ATTRIBUTES_PATH).read_text().count("merge=hive") == 3
    head = git(repo, "rev-parse", "HEAD")
    again = init_hive(ws)
    assert again.merge_driver == "unchanged"
    assert git(repo, "rev-parse", "HEAD") == head
    assert len(git(repo, "config", "--get-all", DRIVER_KEY).splitlines()) == 1
    assert (
        git(repo, "check-attr", "merge", "--", cell_path("hv-abc123"))
        .strip()
        .endswith("merge: hive")
    )
    assert_clean(repo)


def test_git_merge_of_two_branches_editing_one_cell_is_clean(ws: Workspace, repo: Path) -> None:
    target = create_cell(ws, title="Shared cell", labels=["keep", "drop"])
    git(repo, "branch", "other")
    update_cell(ws, cell_id=target.id, priority=0, add_labels=["main-label"])
    add_comment(ws, cell_id=target.id, text="from main")
    git(repo, "checkout", "-q", "other")
    update_cell(ws, cell_id=target.id, description="written on other", remove_labels=["drop"])
    update_cell(ws, cell_id=target.id, append_notes="note from other")
    add_comment(ws, cell_id=target.id, text="from other")
    git(repo, "checkout", "-q", "main")
    result = _merge(repo, "other")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "<<<<<<<" not in (repo / cell_path(target.id)).read_text()
    merged = show_cell(Workspace(str(repo)), cell_id=target.id)
    assert merged.priority == 0
    assert merged.description == "written on other"
    assert merged.labels == ["keep", "main-label"]
    assert merged.notes == "note from other"
    assert sorted(c.text for c in merged.comments) == ["from main", "from other"]
    assert_clean(repo)


def test_git_merge_close_vs_edit_and_conflicting_titles(ws: Workspace, repo: Path) -> None:
    target = create_cell(ws, title="Original")
    git(repo, "branch", "other")
    update_cell(ws, cell_id=target.id, title="Title from main")
    close_cell(ws, cell_id=target.id, reason="finished")
    git(repo, "checkout", "-q", "other")
    update_cell(ws, cell_id=target.id, title="Title from other", status="in_progress")
    git(repo, "checkout", "-q", "main")
    assert _merge(repo, "other").returncode == 0
    fresh = Workspace(str(repo))
    merged = show_cell(fresh, cell_id=target.id)
    assert merged.status == "closed" and merged.close_reason == "finished"
    assert merged.title == "Title from other"  # written later
    assert [(c.field, c.other) for c in merged.conflicts] == [("title", "Title from main")]
    report = diagnose(fresh)
    assert [p.kind for p in report.problems] == ["merge-conflict"]
    assert "Title from main" in report.problems[0].message
    resolved = resolve_conflicts(fresh, cell_id=target.id, field="title", use_other=True)
    assert resolved.title == "Title from main" and resolved.conflicts == []
    assert diagnose(fresh).ok


def _edited_on_both_branches(
    ws: Workspace, repo: Path, field: str, on_main: str, on_other: str
) -> Cell:
    """A cell whose ``field`` main and branch ``other`` changed (other's later); on main."""
    target = create_cell(ws, title="Original")
    git(repo, "branch", "other")
    update_cell(ws, cell_id=target.id, **{field: on_main})
    git(repo, "checkout", "-q", "other")
    update_cell(ws, cell_id=target.id, **{field: on_other})
    git(repo, "checkout", "-q", "main")
    return target


def test_taking_the_other_value_of_a_claimed_cell_is_its_assignees(
    ws: Workspace, repo: Path
) -> None:
    target = _edited_on_both_branches(ws, repo, "title", "Title from main", "Title from other")
    assert _merge(repo, "other").returncode == 0
    start_cell(Workspace(str(repo), actor="bob"), cell_id=target.id)
    with pytest.raises(NotOwner, match="only bob may change the title of it"):
        resolve_conflicts(
            Workspace(str(repo), actor="alice"), cell_id=target.id, field="title", use_other=True
        )
    person = Workspace(str(repo))
    with pytest.raises(NotOwner):  # a person too needs force, and says why
        resolve_conflicts(person, cell_id=target.id, field="title", use_other=True)
    resolved = resolve_conflicts(
        person, cell_id=target.id, field="title", use_other=True, force=True, reason="main's"
    )
    assert resolved.title == "Title from main" and resolved.conflicts == []
    assert "Hive-Override:" in git(repo, "log", "-1", "--format=%B")


def test_git_merge_delete_vs_edit_keeps_the_tombstone(ws: Workspace, repo: Path) -> None:
    target = create_cell(ws, title="Doomed")
    git(repo, "branch", "other")
    delete_cell(ws, cell_id=target.id)
    git(repo, "checkout", "-q", "other")
    update_cell(ws, cell_id=target.id, priority=1)
    git(repo, "checkout", "-q", "main")
    assert _merge(repo, "other").returncode == 0
    merged = show_cell(Workspace(str(repo)), cell_id=target.id)
    assert merged.is_deleted and merged.priority == 1


def test_git_rebase_and_pull_use_the_driver(ws: Workspace, repo: Path, tmp_path: Path) -> None:
    target = create_cell(ws, title="Rebased")
    blocker = create_cell(ws, title="Blocker")
    git(repo, "branch", "feature")
    update_cell(ws, cell_id=target.id, priority=4)
    git(repo, "checkout", "-q", "feature")
    add_dependency(ws, cell_id=target.id, target=blocker.id)
    git(repo, "rebase", "-q", "main")
    rebased = show_cell(Workspace(str(repo)), cell_id=target.id)
    assert rebased.priority == 4 and rebased.blockers() == [blocker.id]

    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    other = Workspace(str(clone), actor="bob")
    init_hive(other)  # the driver is configured per clone
    update_cell(other, cell_id=target.id, append_notes="from the clone")
    update_cell(ws, cell_id=target.id, title="Renamed upstream")
    git(clone, "pull", "-q", "--no-rebase", "origin", "feature")
    pulled = show_cell(Workspace(str(clone)), cell_id=target.id)
    assert pulled.title == "Renamed upstream" and pulled.notes == "from the clone"
    assert_clean(clone)


def test_doctor_reports_a_missing_driver(ws: Workspace, repo: Path) -> None:
    git(repo, "config", "--unset", DRIVER_KEY)
    problems = diagnose(ws).problems
    assert [p.kind for p in problems] == ["merge-driver"]
    assert "hive init" in problems[0].message
    git(repo, "config", DRIVER_KEY, "/nonexistent/python -m hive.cli.merge_driver %O %A %B %P")
    assert "not available" in diagnose(ws).problems[0].message
    init_hive(ws)
    assert diagnose(ws).ok


def test_doctor_reports_missing_attributes(ws: Workspace, repo: Path) -> None:
    git(repo, "rm", "-q", ATTRIBUTES_PATH)
    git(repo, "commit", "-q", "-m", "drop attributes")
    kinds = [p.kind for p in diagnose(ws).problems]
    assert kinds == ["merge-driver"]
    init_hive(ws)
    assert diagnose(ws).ok


def test_init_keeps_the_users_attributes_and_never_commits_their_edits(
    repo: Path,
) -> None:
    (repo / ".gitattributes").write_text("*.png binary\n")
    git(repo, "add", ".gitattributes")
    git(repo, "commit", "-qm", "attributes")
    (repo / ".gitattributes").write_text("*.png binary\n*.jpg binary\n")  # uncommitted edit
    ws = Workspace(str(repo), actor="alice")
    init_hive(ws)
    assert (repo / ".gitattributes").read_text() == "*.png binary\n*.jpg binary\n"
    assert [p.kind for p in diagnose(ws).problems] == ["merge-driver"]
    git(repo, "checkout", "--", ".gitattributes")
    init_hive(ws)
    text = (repo / ".gitattributes").read_text()
    assert text.startswith("*.png binary\n") and ".hive/cells/** merge=hive" in text
    assert diagnose(ws).ok
    assert_clean(repo)


def test_init_leaves_staged_attributes_alone_and_names_them_as_hive_s(repo: Path) -> None:
    """Edits of .gitattributes staged (git add) and then undone in the working tree: init
    failed with "source file .gitattributes has staged changes" (staged_source_file), a
    file of hive's called an agent's source file. It leaves them alone, as edits in the
    working tree, and doctor says to commit or undo them first; a write of hive's
    .gitattributes over staged edits (a git add racing it) is refused as hive's file."""
    from hive.errors import DirtyHiveFile
    from hive.git.repo import Change, format_message

    attributes = repo / ATTRIBUTES_PATH
    attributes.write_text("*.png binary\n")
    git(repo, "add", ATTRIBUTES_PATH)
    git(repo, "commit", "-qm", "attributes")
    attributes.write_text("*.png binary\n*.jpg binary\n")
    git(repo, "add", ATTRIBUTES_PATH)
    attributes.write_text("*.png binary\n")  # the working tree as HEAD has it
    ws = Workspace(str(repo), actor="alice")
    assert init_hive(ws).attributes == ""
    assert git(repo, "diff", "--cached", "--name-only") == ".gitattributes\n"  # kept staged
    assert git(repo, "show", ":.gitattributes") == "*.png binary\n*.jpg binary\n"
    [problem] = diagnose(ws).problems
    assert problem.message.endswith(
        "(first commit or undo your uncommitted edits of .gitattributes: hive init leaves"
        " them alone)"
    )

    def plan(snap: Any) -> tuple[list[Change], str, None]:
        wanted = Change(ATTRIBUTES_PATH, b"*.png binary\n.hive/cells/** merge=hive\n")
        return [wanted], format_message("hive: attributes", []), None

    with pytest.raises(DirtyHiveFile) as refused:
        ws.write_files(plan)
    assert refused.value.code == "dirty_hive_file", refused.value
    assert str(refused.value).startswith(".gitattributes has staged changes")
    git(repo, "restore", "--staged", ATTRIBUTES_PATH)
    assert init_hive(ws).attributes == "added"
    assert diagnose(ws).ok
    assert_clean(repo)


def test_init_moves_its_lines_after_a_line_that_overrides_them(ws: Workspace, repo: Path) -> None:
    """A ``* merge=union`` added after hive's lines took cells from the driver: doctor
    said "run 'hive init' to add them", and init said "unchanged" and left them there.
    Now init moves its lines last, and doctor names what git does instead and why."""
    with (repo / ATTRIBUTES_PATH).open("a") as handle:
        handle.write("* merge=union\n")
    git(repo, "commit", "-qam", "union merges")
    sample = ".hive/cells/x/hv-x.yaml"
    assert git(repo, "check-attr", "merge", sample).strip().endswith("merge: union")
    [problem] = diagnose(ws).problems
    assert "git merges them with merge=union" in problem.message
    assert "a line after hive's in .gitattributes" in problem.message
    assert init_hive(ws).attributes == "moved last"
    lines = (repo / ATTRIBUTES_PATH).read_text().splitlines()
    assert lines[0] == "* merge=union" and lines[-1] == ".hive/context.yaml merge=hive"
    assert len(lines) == 5  # moved, not added again
    assert git(repo, "check-attr", "merge", sample).strip().endswith("merge: hive")
    assert diagnose(ws).ok
    assert_clean(repo)
    tip = git(repo, "rev-parse", "HEAD")
    assert init_hive(ws).attributes == ""  # nothing more to do
    assert git(repo, "rev-parse", "HEAD") == tip

    (repo / ".hive" / ".gitattributes").write_text("** -merge\n")  # out of init's reach
    git(repo, "add", ".hive/.gitattributes")
    git(repo, "commit", "-qm", "no merging in .hive")
    init_hive(ws)
    assert git(repo, "rev-parse", "HEAD~1") == tip  # no commit: moving would not help
    [problem] = diagnose(ws).problems
    assert "git merges them with -merge (as binary files)" in problem.message
    assert "another attributes file" in problem.message


# ------------------------------------------------------------------ the project context log


def _context(**sections: object) -> bytes:
    from hive.domain.memory import ProjectContext, encode_context

    return encode_context(ProjectContext.model_validate(sections))


def test_context_entries_of_both_sides_are_kept_once_each() -> None:
    from hive.domain.memory import CONTEXT_PATH, decode_context

    decision = {"decision": "use git", "recorded_at": "2026-01-01T00:00:00Z", "by": "a"}
    base = _context(
        goals=["ship"],
        decisions=[decision],
        milestones=[{"name": "m1", "status": "pending"}],
        stack={"lang": "python", "db": "sqlite", "old": "x"},
    )
    ours = _context(
        goals=["ship", "fast"],
        decisions=[decision, {"decision": "ours", "recorded_at": "2026-01-02T00:00:00Z"}],
        milestones=[{"name": "m1", "status": "completed"}, {"name": "m2", "status": "pending"}],
        stack={"lang": "python", "db": "postgres"},
        banned=["eval"],
    )
    theirs = _context(
        goals=["ship", "safe"],
        decisions=[decision, {"decision": "theirs", "recorded_at": "2026-01-03T00:00:00Z"}],
        milestones=[{"name": "m1", "status": "pending"}, {"name": "m3", "status": "pending"}],
        stack={"lang": "python", "db": "sqlite", "old": "x", "ci": "yes"},
        banned=["eval"],
    )
    one = merge_file(CONTEXT_PATH, base, ours, theirs)
    two = merge_file(CONTEXT_PATH, base, theirs, ours)
    assert one.clean and one.content == two.content  # commutative, byte for byte
    merged = decode_context(one.content)
    assert merged.goals == ["ship", "fast", "safe"]
    assert [d["decision"] for d in merged.decisions] == ["use git", "ours", "theirs"]
    assert {m["name"]: m["status"] for m in merged.milestones} == {
        "m1": "completed",
        "m2": "pending",
        "m3": "pending",
    }
    assert merged.stack == {"lang": "python", "db": "postgres", "ci": "yes"}  # 'old' removed
    assert merged.banned == ["eval"]  # added on both sides: once


def test_context_side_that_does_not_parse_keeps_the_other() -> None:
    from hive.domain.memory import CONTEXT_PATH, decode_context

    good = _context(goals=["kept"])
    outcome = merge_file(CONTEXT_PATH, _context(), good, b"goals: [unclosed\n")
    assert outcome.clean and decode_context(outcome.content).goals == ["kept"]
    broken = merge_file(CONTEXT_PATH, None, b"goals: [x\n", b"- not a mapping\n")
    assert not broken.clean and broken.content == b"goals: [x\n"


def test_git_merge_of_two_branches_writing_the_context_is_clean(ws: Workspace, repo: Path) -> None:
    from hive.domain.memory import load_context, update_context

    update_context(ws, section="goals", add="one goal")
    git(repo, "branch", "other")
    update_context(ws, section="decisions", add="decided on main")
    update_context(ws, section="milestones", add="beta")
    git(repo, "checkout", "-q", "other")
    update_context(ws, section="decisions", add="decided on other")
    update_context(ws, section="stack", set={"db": "sqlite"})
    git(repo, "checkout", "-q", "main")
    result = _merge(repo, "other")
    assert result.returncode == 0, result.stdout + result.stderr
    merged = load_context(Workspace(str(repo)))
    assert sorted(d["decision"] for d in merged.decisions) == [
        "decided on main",
        "decided on other",
    ]
    assert [m["name"] for m in merged.milestones] == ["beta"]
    assert merged.goals == ["one goal"] and merged.stack == {"db": "sqlite"}
    assert diagnose(Workspace(str(repo))).ok
    assert_clean(repo)


def test_cli_show_doctor_and_resolve_a_conflict_the_rules_could_not_settle(
    ws: Workspace, repo: Path
) -> None:
    import json

    from typer.testing import CliRunner

    from hive.cli.main import app

    # other's text is written later: kept
    target = _edited_on_both_branches(ws, repo, "description", "main's text", "other's text")
    assert _merge(repo, "other").returncode == 0
    runner = CliRunner()

    def cli(*args: str) -> Any:
        return runner.invoke(app, ["-C", str(repo), *args])

    shown = cli("show", target.id)
    assert shown.exit_code == 0 and "merge conflicts" in shown.output
    assert "other's text" in shown.output and "main's text" in shown.output
    as_json = json.loads(cli("show", target.id, "--json").output)
    assert [(c["field"], c["other"]) for c in as_json["conflicts"]] == [
        ("description", "main's text")
    ]
    doctor = cli("doctor")
    assert doctor.exit_code == 1 and f"merge-conflict: {target.id}" in doctor.output
    resolved = cli("resolve", target.id, "--field", "description", "--use-other")
    assert resolved.exit_code == 0, resolved.output
    assert show_cell(Workspace(str(repo)), cell_id=target.id).description == "main's text"
    assert "merge conflicts" not in cli("show", target.id).output
    assert cli("doctor").exit_code == 0
    assert_clean(repo)


def test_git_revert_of_an_older_hive_commit_goes_through_the_driver(
    ws: Workspace, repo: Path
) -> None:
    """A revert's "theirs" is the reverted commit's parent: an older version this branch
    had, on purpose. The driver merges it against git's base (field by field), so the
    title comes back and the later priority change stays."""
    made = create_cell(ws, title="First title")
    update_cell(ws, cell_id=made.id, title="Second title")
    renamed = git(repo, "rev-parse", "HEAD").strip()
    update_cell(ws, cell_id=made.id, priority=0)
    git(repo, "revert", "--no-edit", renamed)
    reverted = show_cell(Workspace(str(repo)), cell_id=made.id)
    assert (reverted.title, reverted.priority) == ("First title", 0)
    assert reverted.conflicts == []
    assert_clean(repo)


def test_the_versions_a_side_had_include_side_branches_merged_away(
    ws: Workspace, repo: Path
) -> None:
    """The merge driver's history search (``git log``) finds every version of a cell file
    that the branch's history holds, newest first: on side branches too, even when a
    merge kept the other side's file (git's default history simplification would skip
    that branch), and the same set as reading every commit object by object."""
    from hive.git.syncref import (
        _history_blobs_read,
        _path_versions_read,
        history_blobs,
        path_versions,
    )

    made = create_cell(ws, title="v1")
    path = cell_path(made.id)
    git(repo, "branch", "side")
    update_cell(ws, cell_id=made.id, title="v2 on main")
    git(repo, "checkout", "-q", "side")
    update_cell(ws, cell_id=made.id, title="v3 on side")
    update_cell(ws, cell_id=made.id, title="v4 on side")
    side_versions = {git(repo, "rev-parse", f"side{back}:{path}").strip() for back in ("", "~1")}
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "-s", "ours", "--no-edit", "side")  # main's file kept as it is
    update_cell(ws, cell_id=made.id, title="v5 on main")
    head = git(repo, "rev-parse", "HEAD").strip()
    found = path_versions(ws.git, head, path, limit=2000)
    read = _path_versions_read(ws.git, head, path, limit=2000)
    assert found[0] == read[0] == git(repo, "rev-parse", f"HEAD:{path}").strip()
    assert side_versions <= set(found)
    assert set(found) == set(read) and len(found) == 5
    assert path_versions(ws.git, head, ".hive/cells/x/hv-nothere.yaml", limit=2000) == []
    every = history_blobs(ws.git, head, limit=2000)
    assert every == _history_blobs_read(ws.git, head, limit=2000)
    assert set(found) <= every and side_versions <= every


def test_config_merges_setting_by_setting_the_same_both_ways() -> None:
    from hive.domain.merge import merge_config_files

    base = b"prefix: hv\nverify:\n  commands: [make]\n  timeout_seconds: 300\ncoordinators: []\n"
    ours = (
        b"prefix: hv\nverify:\n  commands: [make]\n  timeout_seconds: 600\ncoordinators: [boss]\n"
    )
    theirs = b"prefix: hv\nverify:\n  commands: [make test]\n  timeout_seconds: 300\n"
    theirs += b"coordinators: [lead]\nnew: 1\n"
    path = ".hive/config.yaml"
    one, other = (
        merge_config_files(path, base, ours, theirs),
        merge_config_files(path, base, theirs, ours),
    )
    assert one.content == other.content and one.clean
    assert one.content.decode() == (
        '# hive merge conflict: both clones changed coordinators: kept ["lead"], the other'
        ' had ["boss"] (set it, then delete this line)\n'
        "prefix: hv\nverify:\n  commands:\n    - make test\n  timeout_seconds: 600\n"
        "coordinators:\n  - lead\nnew: 1\n"
    )
    broken = merge_config_files(path, base, ours, b"prefix: [\n")
    assert not broken.clean and broken.content == ours and "malformed YAML" in broken.message
