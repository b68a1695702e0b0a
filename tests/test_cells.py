"""Cell operations on real repositories, including the beads behaviour cases."""

from __future__ import annotations

from pathlib import Path

import pytest

from hive.domain.cells import (
    add_dependency,
    close_cell,
    create_cell,
    delete_cell,
    dep_tree,
    list_cells,
    ready,
    remove_dependency,
    reopen_cell,
    resolve_id,
    show_cell,
    start_cell,
    update_cell,
    update_cells,
)
from hive.domain.commits import commit_message
from hive.domain.epics import create_epic, epic_status
from hive.domain.history import cell_log
from hive.domain.workspace import Workspace
from hive.errors import (
    AlreadyClaimed,
    AmbiguousId,
    BlockedByDependency,
    Conflict,
    DependencyCycle,
    InvalidInput,
    NotFound,
)
from hive.models import Cell, utc_now
from hive.store.cache import index_of_cells
from hive.store.layout import cell_path
from tests.conftest import assert_clean, credential, git


def ready_ids(ws: Workspace) -> list[str]:
    return [cell.id for cell in ready(ws)]


def test_create_is_one_commit_with_trailers(ws: Workspace, repo: Path) -> None:
    before = int(git(repo, "rev-list", "--count", "HEAD"))
    cell = create_cell(ws, title="Fix login", type="bug", priority=1, labels=["auth"])
    assert int(git(repo, "rev-list", "--count", "HEAD")) == before + 1
    message = git(repo, "log", "-1", "--format=%B")
    assert message.startswith(f"hive: create {cell.id} Fix login")
    assert f"Hive-Cell: {cell.id}" in message
    assert "Hive-Agent: alice" in message
    assert "Hive-Event: create" in message
    assert git(repo, "log", "-1", "--format=%an") == "alice\n"
    changed = git(repo, "show", "--name-only", "--format=", "HEAD").split()
    assert changed == [cell_path(cell.id)]
    shown = git(repo, "show", f"HEAD:{cell_path(cell.id)}")
    assert "title: Fix login" in shown and "priority: 1" in shown
    assert (repo / cell_path(cell.id)).read_text() == shown
    assert_clean(repo)


def test_ready_after_blocker_closes(ws: Workspace) -> None:
    blocker = create_cell(ws, title="schema")
    blocked = create_cell(ws, title="api", deps=[f"blocks:{blocker.id}"])
    assert ready_ids(ws) == [blocker.id]
    close_cell(ws, cell_id=blocker.id, reason="done")
    assert ready_ids(ws) == [blocked.id]


def test_chain_unblocks_one_at_a_time(ws: Workspace) -> None:
    a = create_cell(ws, title="A")
    b = create_cell(ws, title="B", deps=[a.id])
    c = create_cell(ws, title="C", deps=[b.id])
    d = create_cell(ws, title="D", deps=[c.id])
    for current, nxt in ((a, b), (b, c), (c, d)):
        assert ready_ids(ws) == [current.id]
        close_cell(ws, cell_id=current.id)
        assert ready_ids(ws) == [nxt.id]


def test_cycles_and_self_dependencies_are_refused(ws: Workspace, repo: Path) -> None:
    a = create_cell(ws, title="A")
    b = create_cell(ws, title="B", deps=[a.id])
    c = create_cell(ws, title="C", deps=[b.id])
    head = git(repo, "rev-parse", "HEAD")
    with pytest.raises(DependencyCycle, match="cycle"):
        add_dependency(ws, cell_id=a.id, target=c.id)
    with pytest.raises(DependencyCycle, match="itself"):
        add_dependency(ws, cell_id=a.id, target=a.id)
    assert git(repo, "rev-parse", "HEAD") == head
    assert [d.target for d in show_cell(ws, cell_id=a.id).dependencies] == []


def test_claim_twice_fails(ws: Workspace, repo: Path) -> None:
    cell = create_cell(ws, title="contested")
    started = start_cell(ws, cell_id=cell.id)
    assert started.status == "in_progress" and started.assignee == "alice"
    bob = Workspace(str(repo), actor="bob")
    with pytest.raises(AlreadyClaimed, match="already claimed by alice"):
        start_cell(bob, cell_id=cell.id)
    assert start_cell(ws, cell_id=cell.id).assignee == "alice"  # idempotent for the holder


def test_ready_claim_takes_most_urgent_first(ws: Workspace, repo: Path) -> None:
    low = create_cell(ws, title="low", priority=3)
    urgent = create_cell(ws, title="urgent", priority=0)
    assert ready_ids(ws) == [urgent.id, low.id]
    claimed = ready(Workspace(str(repo), actor="bob"), claim=True)
    assert [c.id for c in claimed] == [urgent.id]
    assert show_cell(ws, cell_id=urgent.id).assignee == "bob"
    assert ready_ids(ws) == [low.id]


def test_p0_survives_round_trips(ws: Workspace, repo: Path) -> None:
    cell = create_cell(ws, title="fire", priority="P0")
    update_cell(ws, cell_id=cell.id, title="fire!")
    fresh = Workspace(str(repo), actor="carol", persist_cache=False)
    assert show_cell(fresh, cell_id=cell.id).priority == 0
    assert "priority: 0" in git(repo, "show", f"HEAD:{cell_path(cell.id)}")


def test_epic_is_not_auto_closed(ws: Workspace) -> None:
    epic, *children = create_epic(ws, title="Auth", subtasks=["one", "two"])
    for child in children:
        assert child.id.startswith(epic.id + ".")
        close_cell(ws, cell_id=child.id)
    status = epic_status(ws, epic_id=epic.id)
    assert status.epic.status == "open"
    assert (status.closed, status.total, status.percent_complete) == (2, 2, 100)


def test_epic_create_is_one_commit_and_keeps_files_and_order(ws: Workspace, repo: Path) -> None:
    before = int(git(repo, "rev-list", "--count", "HEAD"))
    epic, first, second = create_epic(
        ws,
        title="Payments",
        subtasks=[
            {"title": "model", "files": ["src/pay/model.py"]},
            {"title": "api", "files": ["src/pay/api/**"], "dependencies": [0]},
        ],
    )
    assert int(git(repo, "rev-list", "--count", "HEAD")) == before + 1
    assert len(git(repo, "show", "--name-only", "--format=", "HEAD").split()) == 3
    assert second.files_owned == ["src/pay/api/**"]
    assert [(d.type, d.target) for d in second.dependencies] == [("blocks", first.id)]
    assert ready_ids(ws) == [first.id]
    with pytest.raises(BlockedByDependency):
        close_cell(ws, cell_id=epic.id)


def test_epic_subtasks_take_the_epic_priority_and_keep_their_complexity(
    ws: Workspace, repo: Path
) -> None:
    """A subtask given no priority gets the epic's; its estimated complexity joins its
    own metadata; the epic keeps its labels and metadata; subtasks keep their order."""
    epic, plain, ranked = create_epic(
        ws,
        title="Search",
        priority="P1",
        labels=["q"],
        metadata={"strategy": "file-based"},
        subtasks=[
            {"title": "index", "estimated_complexity": 3, "metadata": {"k": "v"}},
            {"title": "ui", "priority": 4},
        ],
    )
    assert (epic.type, epic.priority, plain.priority, ranked.priority) == ("epic", 1, 1, 4)
    assert (epic.labels, epic.metadata) == (["q"], {"strategy": "file-based"})
    assert plain.metadata == {"k": "v", "estimated_complexity": 3}
    assert ranked.metadata == {"estimated_complexity": 2}
    assert (plain.parent, ranked.parent) == (epic.id, epic.id)
    assert epic.created_at < plain.created_at < ranked.created_at
    stored = git(repo, "show", f"HEAD:{cell_path(plain.id)}")
    assert "estimated_complexity: 3" in stored and "k: v" in stored
    assert [c.id for c in list_cells(ws, parent=epic.id)] == [plain.id, ranked.id]


def test_epic_dependency_errors(ws: Workspace) -> None:
    with pytest.raises(InvalidInput, match="only 1 subtasks"):
        create_epic(ws, title="bad", subtasks=[{"title": "a", "dependencies": [3]}])
    with pytest.raises(DependencyCycle, match="cycle"):
        create_epic(
            ws,
            title="bad",
            subtasks=[{"title": "a", "dependencies": [1]}, {"title": "b", "dependencies": [0]}],
        )


def test_close_refused_while_blocked_unless_forced(ws: Workspace) -> None:
    blocker = create_cell(ws, title="first")
    cell = create_cell(ws, title="second", deps=[blocker.id])
    with pytest.raises(BlockedByDependency, match=blocker.id):
        close_cell(ws, cell_id=cell.id)
    closed = close_cell(ws, cell_id=cell.id, reason="obsolete", force=True)
    assert closed.status == "closed" and closed.close_reason == "obsolete"
    with pytest.raises(Conflict, match="already closed"):
        close_cell(ws, cell_id=cell.id)
    reopened = reopen_cell(ws, cell_id=cell.id)
    assert reopened.status == "open" and reopened.closed_at is None


def test_partial_ambiguous_and_unknown_ids(ws: Workspace) -> None:
    cell = create_cell(ws, title="x")
    short = cell.id.split("-", 1)[1][:4]
    assert show_cell(ws, cell_id=short).id == cell.id
    assert show_cell(ws, cell_id=cell.id.upper()).id == cell.id
    with pytest.raises(NotFound, match="no cell matches"):
        show_cell(ws, cell_id="zzzzzzzz")
    many = [create_cell(ws, title=f"c{i}") for i in range(40)]
    assert many
    with pytest.raises(AmbiguousId, match="ambiguous"):
        show_cell(ws, cell_id="hv-")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"priority": 7}, "invalid priority"),
        ({"priority": "high"}, "invalid priority"),
        ({"type": "story"}, "invalid type"),
        ({"title": "   "}, "blank"),
        ({"deps": ["nope:hv-x"]}, "invalid dependency"),
        ({"files": ["../etc/passwd"]}, "outside"),
    ],
)
def test_bad_create_input_writes_nothing(
    ws: Workspace, repo: Path, kwargs: dict[str, object], message: str
) -> None:
    head = git(repo, "rev-parse", "HEAD")
    args: dict[str, object] = {"title": "ok", **kwargs}
    with pytest.raises(InvalidInput, match=message):
        create_cell(ws, **args)  # type: ignore[arg-type]
    assert git(repo, "rev-parse", "HEAD") == head
    assert_clean(repo)


def test_update_status_and_notes(ws: Workspace) -> None:
    cell = create_cell(ws, title="t")
    with pytest.raises(InvalidInput, match="invalid status"):
        update_cell(ws, cell_id=cell.id, status="done")
    updated = update_cell(ws, cell_id=cell.id, status="deferred", append_notes="first")
    updated = update_cell(ws, cell_id=cell.id, append_notes="second", add_labels=["x"])
    assert updated.status == "deferred"
    assert updated.notes == "first\nsecond"
    assert updated.labels == ["x"]
    assert cell.id not in ready_ids(ws)


def test_delete_is_a_tombstone(ws: Workspace, repo: Path) -> None:
    blocker = create_cell(ws, title="gone soon")
    cell = create_cell(ws, title="waits", deps=[blocker.id])
    delete_cell(ws, cell_id=blocker.id)
    assert (repo / cell_path(blocker.id)).exists()
    assert blocker.id not in [c.id for c in list_cells(ws)]
    assert ready_ids(ws) == [cell.id]
    with pytest.raises(NotFound, match="deleted"):
        start_cell(ws, cell_id=blocker.id)


def test_dependency_tree_and_remove(ws: Workspace) -> None:
    a = create_cell(ws, title="A")
    b = create_cell(ws, title="B", deps=[a.id])
    c = create_cell(ws, title="C", deps=[b.id, f"related:{a.id}"])
    tree = dep_tree(ws, cell_id=c.id)
    assert [n.id for n in tree.depends_on] == [b.id, a.id]
    assert tree.depends_on[0].depends_on[0].id == a.id
    remove_dependency(ws, cell_id=c.id, target=b.id)
    assert [d.target for d in show_cell(ws, cell_id=c.id).dependencies] == [a.id]
    with pytest.raises(NotFound):
        remove_dependency(ws, cell_id=c.id, target=b.id)
    # a target given by a prefix is named by its whole id in the refusal
    with pytest.raises(NotFound, match=f"{c.id} has no dependency on {b.id}$"):
        remove_dependency(ws, cell_id=c.id, target=b.id.removeprefix("hv-")[:4])


def test_parent_blocked_blocks_children(ws: Workspace) -> None:
    gate = create_cell(ws, title="gate")
    epic = create_cell(ws, title="epic", type="epic", deps=[gate.id])
    child = create_cell(ws, title="child", parent=epic.id)
    assert child.id.startswith(epic.id + ".")
    assert ready_ids(ws) == [gate.id]
    close_cell(ws, cell_id=gate.id)
    assert ready_ids(ws) == [child.id]


def test_list_filters(ws: Workspace) -> None:
    a = create_cell(ws, title="a", type="bug", priority=1, labels=["ui"], assignee="bob")
    create_cell(ws, title="b", type="feature", priority=3)
    assert [c.id for c in list_cells(ws, type="bug")] == [a.id]
    assert [c.id for c in list_cells(ws, priority="P1")] == [a.id]
    assert [c.id for c in list_cells(ws, label="ui")] == [a.id]
    assert [c.id for c in list_cells(ws, assignee="bob")] == [a.id]
    assert len(list_cells(ws, status="open")) == 2


def test_log_lists_commits_for_a_cell(ws: Workspace) -> None:
    cell = create_cell(ws, title="tracked")
    create_cell(ws, title="other")
    start_cell(ws, cell_id=cell.id)
    close_cell(ws, cell_id=cell.id)
    events = [entry.event for entry in cell_log(ws, cell_id=cell.id)]
    assert events == ["close", "start", "create"]


def test_log_of_an_unknown_id_is_not_found(ws: Workspace) -> None:
    create_cell(ws, title="tracked")
    with pytest.raises(NotFound, match="no cell 'hv-zzzzzz'"):
        cell_log(ws, cell_id="hv-zzzzzz")


def test_a_root_with_children_resolves_by_its_hash(ws: Workspace) -> None:
    epic, first, _ = create_epic(ws, title="E", subtasks=["a", "b"])
    hash_part = epic.id.split("-", 1)[1]
    assert show_cell(ws, cell_id=hash_part).id == epic.id
    assert show_cell(ws, cell_id=hash_part[:-1]).id == epic.id
    assert show_cell(ws, cell_id=first.id[:-1]).id == first.id
    assert epic_status(ws, epic_id=hash_part).epic.id == epic.id
    assert cell_log(ws, cell_id=hash_part)[0].cells[0] == epic.id


def _bare_cell(cell_id: str, *, deleted: bool = False) -> Cell:
    now = utc_now()
    return Cell(
        id=cell_id,
        title=cell_id,
        created_at=now,
        updated_at=now,
        deleted_at=now if deleted else None,
    )


def test_resolving_prefers_exact_hashes_and_live_cells() -> None:
    cells = [
        _bare_cell("hv-abc"),
        _bare_cell("hv-abcd"),
        _bare_cell("hv-abx1", deleted=True),
        _bare_cell("hv-abx2"),
        _bare_cell("hv-q1", deleted=True),
        _bare_cell("hv-q2", deleted=True),
    ]
    index = index_of_cells("test", cells)
    assert resolve_id(index, "abc") == "hv-abc"
    assert resolve_id(index, "abx") == "hv-abx2"
    with pytest.raises(AmbiguousId) as raised:
        resolve_id(index, "ab")
    assert raised.value.details["matches"] == ["hv-abc", "hv-abcd", "hv-abx2"]
    with pytest.raises(AmbiguousId):
        resolve_id(index, "q")


def test_ready_claim_skips_cells_assigned_to_someone_else(ws: Workspace) -> None:
    create_cell(ws, title="bob's", priority=0, assignee="bob")
    free = create_cell(ws, title="free", priority=2)
    carol = ws.for_actor("carol")
    claimed = ready(carol, claim=True)
    assert [c.id for c in claimed] == [free.id]
    assert claimed[0].assignee == "carol"
    assert ready(carol, claim=True) == []
    bobs = ready(ws.for_actor("bob"), claim=True)
    assert [c.title for c in bobs] == ["bob's"]


def test_update_to_closed_keeps_the_other_changes(ws: Workspace, repo: Path) -> None:
    cell = create_cell(ws, title="multi")
    updated = update_cell(
        ws, cell_id=cell.id, status="closed", priority=0, title="renamed", append_notes="why"
    )
    assert (updated.status, updated.priority, updated.title, updated.notes) == (
        "closed",
        0,
        "renamed",
        "why",
    )
    assert updated.closed_at is not None
    assert show_cell(ws, cell_id=cell.id) == updated
    assert git(repo, "log", "-1", "--format=%s") == f"hive: close {cell.id} renamed\n"
    blocked = create_cell(ws, title="waits", deps=[create_cell(ws, title="open blocker").id])
    with pytest.raises(BlockedByDependency):
        update_cell(ws, cell_id=blocked.id, status="closed", title="nope")
    assert show_cell(ws, cell_id=blocked.id).title == "waits"


@pytest.mark.parametrize(
    "title", ["esc \x1b[31mRED\x1b[0m", "nul\x01ctl", "cr\rtitle", "c1\x9bx", "tab\tx"]
)
def test_control_characters_in_titles_are_refused(ws: Workspace, repo: Path, title: str) -> None:
    head = git(repo, "rev-parse", "HEAD")
    with pytest.raises(InvalidInput, match=r"invalid title: .*control characters \(found U\+"):
        create_cell(ws, title=title)
    cell = create_cell(ws, title="fine")
    with pytest.raises(InvalidInput, match="control characters"):
        update_cell(ws, cell_id=cell.id, title=title)
    with pytest.raises(InvalidInput, match="control characters"):
        create_epic(ws, title="E", subtasks=[title])
    assert git(repo, "rev-list", "--count", f"{head.strip()}..HEAD") == "1\n"


def test_commit_subjects_never_carry_control_characters(ws: Workspace, repo: Path) -> None:
    cell = create_cell(ws, title="legacy")
    path = repo / cell_path(cell.id)
    path.write_text(path.read_text().replace("title: legacy", 'title: "old \\e[31m title"'))
    git(repo, "commit", "-qam", "a title written by an older hive")
    assert show_cell(ws, cell_id=cell.id).title == "old \x1b[31m title"
    message = commit_message("update", cell.id, "old \x1b[31m title", [cell.id], [])
    assert message.splitlines()[0] == f"hive: update {cell.id} old ?[31m title"
    update_cell(ws, cell_id=cell.id, title="clean again")
    assert git(repo, "log", "-1", "--format=%s") == f"hive: update {cell.id} clean again\n"


def test_child_suffixes_default_to_four_random_characters(ws: Workspace) -> None:
    assert ws.config().child_id_length == 4
    _, *children = create_epic(ws, title="E", subtasks=["a", "b", "c"])
    assert all(len(child.id.rsplit(".", 1)[1]) == 4 for child in children)


def test_subtasks_keep_the_order_they_were_given_in(ws: Workspace) -> None:
    titles = ["schema", "hashing", "endpoints", "docs", "rollout", "cleanup"]
    epic, *children = create_epic(ws, title="E", subtasks=titles)
    assert [c.title for c in children] == titles
    assert [c.title for c in epic_status(ws, epic_id=epic.id).children] == titles
    assert [c.title for c in list_cells(ws, parent=epic.id)] == titles
    assert [c.title for c in ready(ws)] == titles


def test_log_includes_your_commits_that_carried_staged_cells(ws: Workspace, repo: Path) -> None:
    staging = Workspace(str(repo), actor="alice", autocommit=False)
    cell = create_cell(staging, title="lands with code")
    (repo / "app.py").write_text("print('hi')\n")
    git(repo, "add", "app.py")
    git(repo, "commit", "-q", "-m", "code and cell together")
    other = create_cell(ws, title="unrelated")
    update_cell(ws, cell_id=cell.id, priority=0)
    (repo / "app.py").write_text("print('bye')\n")
    git(repo, "commit", "-q", "-am", "code only")
    entries = cell_log(ws, cell_id=cell.id)
    assert [(e.subject, e.event, e.cells) for e in entries] == [
        (f"hive: update {cell.id} lands with code", "update", [cell.id]),
        ("code and cell together", None, [cell.id]),
    ]
    assert [e.cells for e in cell_log(ws, cell_id=other.id)] == [[other.id]]
    assert "code and cell together" not in [e.subject for e in cell_log(ws)]


def test_epic_status_of_a_plain_cell_is_a_clear_error(ws: Workspace) -> None:
    task = create_cell(ws, title="just a task")
    with pytest.raises(InvalidInput, match=rf"{task.id} is a task, not an epic"):
        epic_status(ws, epic_id=task.id)
    create_cell(ws, title="child", parent=task.id)
    assert epic_status(ws, epic_id=task.id).total == 1


def test_a_blocker_whose_file_is_corrupt_still_blocks(ws: Workspace, repo: Path) -> None:
    blocker = create_cell(ws, title="blocker")
    waiting = create_cell(ws, title="waiting", deps=[blocker.id])
    (repo / cell_path(blocker.id)).write_text("title: [broken\n")
    git(repo, "commit", "-qam", "break the blocker")
    assert waiting.id not in ready_ids(ws)
    with pytest.raises(BlockedByDependency, match=blocker.id):
        close_cell(ws, cell_id=waiting.id)


def test_list_parent_filter_and_ready_limit(ws: Workspace) -> None:
    epic, first, second = create_epic(ws, title="E", subtasks=["a", "b"])
    create_cell(ws, title="elsewhere", priority=0)
    assert [c.id for c in list_cells(ws, parent=epic.id)] == [first.id, second.id]
    assert [c.title for c in ready(ws, limit=2)] == ["elsewhere", "a"]
    with pytest.raises(InvalidInput, match="at least 1"):
        ready(ws, limit=0)


def test_the_actor_comes_from_the_credential_then_git_user_name(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hive.domain.setup import init_hive
    from hive.errors import NotYourIdentity

    init_hive(Workspace(str(repo)))
    by_git = create_cell(Workspace(str(repo)), title="by git user")
    assert by_git.created_by == "Test User"
    assert git(repo, "log", "-1", "--format=%an <%ae>") == "Test User <test@example.com>\n"
    assert "Hive-Identity: person" in git(repo, "log", "-1", "--format=%B")
    monkeypatch.setenv("HIVE_AGENT", "BlueLake")  # a claim without a credential
    head = git(repo, "rev-parse", "HEAD")
    with pytest.raises(NotYourIdentity, match="HIVE_AGENT_TOKEN"):
        create_cell(Workspace(str(repo)), title="by agent")
    assert git(repo, "rev-parse", "HEAD") == head
    monkeypatch.setenv("HIVE_AGENT_TOKEN", credential(repo, "BlueLake"))
    by_agent = create_cell(Workspace(str(repo)), title="by agent")
    assert by_agent.created_by == "BlueLake"
    assert git(repo, "log", "-1", "--format=%an <%ae>") == "BlueLake <bluelake@hive.local>\n"
    assert "Hive-Agent: BlueLake" in git(repo, "log", "-1", "--format=%B")
    explicit = create_cell(Workspace(str(repo), actor="RedStone"), title="explicit")
    assert explicit.created_by == "RedStone"


def test_update_reopens_a_closed_cell_with_a_new_description(ws: Workspace, repo: Path) -> None:
    """update to open of a closed cell clears its close time and reason, in one commit
    with its new description; a blank title is refused and changes nothing."""
    cell = create_cell(ws, title="t", description="old")
    close_cell(ws, cell_id=cell.id, reason="done")
    head = git(repo, "rev-parse", "HEAD").strip()
    with pytest.raises(InvalidInput, match="title must not be blank"):
        update_cell(ws, cell_id=cell.id, title="  ", status="open")
    assert git(repo, "rev-parse", "HEAD").strip() == head
    reopened = update_cell(ws, cell_id=cell.id, status="open", description="new text")
    assert (reopened.status, reopened.closed_at, reopened.close_reason) == ("open", None, None)
    assert reopened.description == "new text" and show_cell(ws, cell_id=cell.id) == reopened
    assert git(repo, "rev-list", "--count", f"{head}..HEAD") == "1\n"
    stored = git(repo, "show", f"HEAD:{cell_path(cell.id)}")
    assert "new text" in stored and "done" not in stored and "closed_at" not in stored
    assert_clean(repo)


def test_an_update_to_what_the_cell_already_has_makes_no_commit(ws: Workspace, repo: Path) -> None:
    """`update -p 2` of a priority-2 cell (the tool's hive_update too) changes nothing:
    no commit, updated_at kept; a real change in the same call still commits."""
    cell = create_cell(ws, title="same", priority=2, labels=["x"])
    head = git(repo, "rev-parse", "HEAD")
    again = update_cells(
        ws, cell_ids=[cell.id], priority=2, status="open", title="same", add_labels=["x"]
    )[0]
    assert git(repo, "rev-parse", "HEAD") == head
    assert again.updated_at == cell.updated_at
    changed = update_cells(ws, cell_ids=[cell.id], priority=1, title="same")[0]
    assert changed.priority == 1 and git(repo, "rev-parse", "HEAD") != head
    assert_clean(repo)


def test_labels_given_as_a_comma_list_are_several(ws: Workspace, repo: Path) -> None:
    """`-l a,b` is two labels, as beads reads it; `--remove-label a,b` removes both,
    and also a stored label holding the comma; `,` alone is an empty label."""
    cell = create_cell(ws, title="tagged", labels=["a,b", " c , a", "d"])
    assert cell.labels == ["a", "b", "c", "d"]
    assert update_cell(ws, cell_id=cell.id, remove_labels=["a,b"]).labels == ["c", "d"]
    with pytest.raises(InvalidInput, match="empty label"):
        create_cell(ws, title="x", labels=[","])
    with pytest.raises(InvalidInput, match="too many labels"):
        create_cell(ws, title="x", labels=[",".join(f"l{n}" for n in range(51))])
    assert_clean(repo)
