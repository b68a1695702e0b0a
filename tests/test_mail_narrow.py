"""Who an epic's thread reaches and who ``coordinator`` stands for, answered from the
state index's rows of the cells concerned (``StateIndex.files_of``) instead of every
cell: the same answers as the scan over every cell that preceded it, on varied
repositories (nested epics, closed and deleted cells, corrupt and misnamed files,
stray copies, parents that are missing or form a cycle), with the index warm, deleted,
stale (HEAD moved by a plain ``git commit``) and over staged changes, by the full path
(``hive/domain/mail.py``) and the lean one (``hive/cli/lean_coord.py``)."""

from __future__ import annotations

import os
import random
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from hive.cli import entry
from hive.cli.lean_coord import Addressed
from hive.cli.lean_write import Defer, prepare
from hive.domain import mail
from hive.domain.cells import get_cell
from hive.domain.setup import init_hive
from hive.domain.workspace import Workspace
from hive.errors import HiveError
from hive.models import Cell
from hive.store.cells import encode_cell
from hive.store.layout import cell_path
from tests.conftest import agent_env, credential, git, make_repo

AGENTS = ("ann", "bo", "cy")  # registered: they send
WORKERS = ("dee", "eve", "fay", "gus", "hal")  # only assigned
NOW = datetime(2026, 11, 27, 5, 0, tzinfo=UTC)


# ------------------------------------------------------------------ the scan it replaces


def named(ws: Workspace, given: str) -> Cell | None:
    """The cell a thread names, as before: an exact id, a prefix, or the one cell a
    prefix's matches all descend from (a scan of every id)."""
    index = ws.cells()
    wanted = given.strip().lower()
    matches = [c for c in index.known_ids() if wanted in (c[: len(wanted)], c[3:][: len(wanted)])]
    shortest = min(matches, key=len, default=None)
    family = shortest is not None and all(m.startswith(f"{shortest}.") for m in matches)
    try:
        return get_cell(index, shortest if shortest and family and len(matches) > 1 else given)
    except HiveError:
        return None


def old_thread_of(ws: Workspace, thread_id: str) -> tuple[str, set[str]]:
    """The thread's id and everyone assigned an open cell below its epic, over every
    decoded cell."""
    cell = named(ws, thread_id)
    if cell is None or cell.type != "epic":
        return (thread_id if cell is None else cell.id), set()
    every = dict(ws.cells().cells.items())
    below, frontier = {cell.id}, {cell.id}
    while frontier:
        frontier = {c.id for c in every.values() if c.parent in frontier} - below
        below |= frontier
    below.discard(cell.id)
    return cell.id, {every[c].assignee or "" for c in below if not every[c].is_closed} - {""}


def old_coordinator_of(ws: Workspace, thread_id: str | None, sender: str) -> str | None:
    """Who coordinates the epic above the thread's cell (or the sender's open work,
    in progress first, then the lowest id), over every decoded cell."""
    every = dict(ws.cells().cells.items())
    if thread_id:
        found = named(ws, thread_id)
        if found is None:
            return None
        cell = found
    else:
        mine = [c for c in every.values() if c.assignee == sender and c.parent and not c.is_closed]
        if not mine:
            return None
        cell = sorted(mine, key=lambda c: (c.status != "in_progress", c.id))[0]
    seen = set()
    while cell.type != "epic" and cell.parent in every and cell.id not in seen:
        seen.add(cell.id)
        cell = every[cell.parent]
    if cell.type != "epic":
        return None
    named_one = cell.metadata.get("coordinator")
    return str(named_one) if named_one else cell.assignee or cell.created_by or None


# ------------------------------------------------------------------ varied repositories


def _cell(cell_id: str, **fields: Any) -> Cell:
    return Cell.model_validate(
        {"id": cell_id, "title": f"cell {cell_id}", "created_at": NOW, "updated_at": NOW, **fields}
    )


def build(root: Path, seed: int, *, top_level: bool = False) -> list[str]:
    """A repository whose cells are written by hand (as a person or a merge may leave
    them) and committed with git; the cell ids (plus ids of unusable files).
    ``top_level``: a stray copy beside the shard directories too (a layout the lean
    path leaves to the full CLI)."""
    rng = random.Random(seed)
    make_repo(root)
    init_hive(Workspace(str(root), actor="ann"), prefix="hv")
    files: dict[str, bytes] = {}
    cells: list[Cell] = []
    roots = [f"hv-{shard}{seed}{n}x" for n, shard in enumerate("abcab")]
    kinds: list[dict[str, Any]] = [
        {"metadata": {"coordinator": "bo"}},
        {"assignee": "cy"},
        {"created_by": "ann"},
        {"metadata": {"coordinator": "cy"}, "assignee": "ann"},
        {},
    ]
    for cell_id, extra in zip(roots, kinds, strict=True):
        cells.append(_cell(cell_id, type="epic", **extra))
    counters: dict[str, int] = {}
    for _ in range(40):
        parent = rng.choice([c.id for c in cells] + [None, None, "hv-gone"])
        if parent is None:
            cell_id = f"hv-{rng.choice('abcd')}{rng.randrange(10**6)}"
        else:
            counters[parent] = counters.get(parent, 0) + 1
            cell_id = f"{parent}.{counters[parent]}"
        status = rng.choice(["open", "open", "in_progress", "blocked", "closed"])
        cells.append(
            _cell(
                cell_id,
                type=rng.choice(["task", "task", "bug", "epic"]),
                parent=parent,
                status=status,
                closed_at=NOW if status == "closed" else None,
                assignee=rng.choice([*AGENTS, *WORKERS, None]),
                deleted_at=NOW if rng.random() < 0.1 else None,
                created_by=rng.choice(["", "bo"]),
                metadata=rng.choice([{}, {"coordinator": "ann"}]),
            )
        )
    # a cycle of parents below an epic and one on its own
    first, second = f"{roots[4]}.c1", f"{roots[4]}.c2"
    cells += [_cell(first, parent=second, assignee="bo"), _cell(second, parent=first)]
    cells += [_cell("hv-d0loop", parent="hv-d0loop", assignee="cy", type="epic")]
    for cell in cells:
        files[cell_path(cell.id)] = encode_cell(cell)
    tasks = [c for c in cells if c.type != "epic"]
    corrupt, moved, misnamed = rng.sample(tasks, 3)
    files[cell_path(corrupt.id)] = b"id: [unclosed\n"
    # a cell whose own file and a copy in another shard disagree: the own file counts
    stray = _cell(f"{roots[0]}.s1", parent=roots[0], assignee="dee")
    files[cell_path(stray.id)] = encode_cell(stray)
    update = {"parent": roots[1], "assignee": "cy", "status": "in_progress"}
    other = stray.model_copy(update=update)
    files[f".hive/cells/y/{stray.id}.yaml"] = encode_cell(other)  # a copy in another shard
    if top_level:
        files[f".hive/cells/{moved.id}.yaml"] = encode_cell(
            other.model_copy(update={"id": moved.id})
        )
    files[f".hive/cells/zz/{moved.id}.yaml"] = files.pop(cell_path(moved.id))  # lone stray
    wrong = misnamed.model_copy(update={"id": misnamed.id + "x"})
    files[cell_path(misnamed.id)] = encode_cell(wrong)
    for path, data in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "cells by hand")
    for name in AGENTS:
        credential(root, name)
    return [c.id for c in cells]


def questions(ids: list[str]) -> list[str]:
    epics = [i for i in ids if i.count(".") == 0][:5]
    plain = ["design", "hv-gone", "gone"]
    return [*ids, epics[0][:5], epics[3][3:], epics[1].upper(), f" {epics[2]} ", *plain]


def full_answers(ws: Workspace, threads: list[str]) -> list[Any]:
    answers: list[Any] = []
    for thread in threads:
        thread_id, members = mail._thread_of(ws, thread)
        answers.append((thread_id, set(members)))
    for sender in AGENTS:
        answers.append(mail.coordinator_of(ws, None, sender))
        answers += [mail.coordinator_of(ws, thread, sender) for thread in threads[::3]]
    return answers


def old_answers(ws: Workspace, threads: list[str]) -> list[Any]:
    answers: list[Any] = [old_thread_of(ws, thread) for thread in threads]
    for sender in AGENTS:
        answers.append(old_coordinator_of(ws, None, sender))
        answers += [old_coordinator_of(ws, thread, sender) for thread in threads[::3]]
    return answers


@pytest.mark.parametrize("seed", range(2))
def test_the_full_path_answers_as_the_scan_over_every_cell(seed: int, tmp_path: Path) -> None:
    root = tmp_path / "repo"
    threads = questions(build(root, seed, top_level=seed % 2 == 0))
    index_file = root / ".git" / "hive" / "index.sqlite3"
    stale = Workspace(str(root), actor="ann")  # the index holds init's state, not HEAD's
    new = full_answers(stale, threads)
    expected = old_answers(Workspace(str(root), actor="ann"), threads)
    assert new == expected
    assert any(members for _, members in new[: len(threads)])  # epics reach someone
    assert {answer for answer in new[len(threads) :]} - {None}  # coordinators found
    fresh = Workspace(str(root), actor="ann")  # a long-lived process after another's write
    epic = threads[3]  # coordinated by cy
    thread_id, members = mail._thread_of(fresh, epic)
    assert (thread_id, set(members)) == old_thread_of(stale, epic)
    assert mail.coordinator_of(fresh, epic, "ann") == "cy"
    assert not fresh.cache.indexes and fresh.cache.decoded == 1  # no other cell was read
    for path in index_file.parent.glob("index.sqlite3*"):
        path.unlink()  # missing: rebuilt by the first read
    assert full_answers(Workspace(str(root), actor="ann"), threads) == expected
    # staged changes over HEAD: the rows cannot answer, every cell is read as before
    (root / ".hive" / "cells" / "q").mkdir()
    (root / ".hive" / "cells" / "q" / "hv-q1.yaml").write_bytes(encode_cell(_cell("hv-q1")))
    git(root, "add", ".hive")
    staged = Workspace(str(root), actor="ann", autocommit=False)
    assert "+" in staged.cells().key
    assert full_answers(staged, threads) == old_answers(staged, threads)


def test_the_lean_path_answers_as_the_scan_or_defers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "repo"
    ids = build(root, 0)
    Workspace(str(root), actor="ann").cells()  # HEAD's state indexed, as after any command
    answered = deferred = 0
    # the thread's members and coordinator do not depend on the sender: asked as ann;
    # the coordinator of the sender's own work asked as each
    names = [*ids, "design", "hv-gone", ids[0][:5], ids[3][3:], ids[1].upper()]  # plain, prefixes
    asked = [("ann", i, c) for i in names for c in (False, True)]
    for sender, thread, coordinator in asked + [(name, None, True) for name in AGENTS]:
        if os.environ.get("HIVE_AGENT") != sender:
            for key, value in agent_env(root, sender, {}).items():
                monkeypatch.setenv(key, value)
        prepared = prepare(entry.parse(["-C", str(root), "mail", "send", "x", "-s", "y"]))
        assert prepared is not None and prepared.session.principal.name == sender
        try:
            found = Addressed(prepared, thread, coordinator)
        except Defer:
            deferred += 1
            continue
        answered += 1
        reference = Workspace(str(root), actor=sender)
        if thread is not None:
            assert (found.thread_id, set(found.members)) == old_thread_of(reference, thread)
        if coordinator:
            assert found.coordinator == old_coordinator_of(reference, thread, sender)
    assert answered > 50 and deferred > 0  # both kinds of case were met


def test_a_cycle_of_parents_through_an_epic_ends(tmp_path: Path) -> None:
    """An epic whose child is its parent (hand-edited files): the thread reaches the
    child's worker once; before, the walk over the family never ended."""
    root = make_repo(tmp_path / "repo")
    init_hive(Workspace(str(root), actor="ann"), prefix="hv")
    epic = _cell("hv-e1", type="epic", parent="hv-e1.1")
    child = _cell("hv-e1.1", parent="hv-e1", assignee="bo")
    for cell in (epic, child):
        (root / cell_path(cell.id)).parent.mkdir(parents=True, exist_ok=True)
        (root / cell_path(cell.id)).write_bytes(encode_cell(cell))
    git(root, "add", "-A")
    git(root, "commit", "-qm", "a cycle")
    assert mail._thread_of(Workspace(str(root), actor="ann"), "hv-e1") == ("hv-e1", ["bo"])


def test_the_rows_are_found_by_index_and_an_older_file_gets_the_indexes(tmp_path: Path) -> None:
    """``files_of`` looks rows up by (parent, tree) and (assignee, tree), so its cost
    follows the cells concerned, not the tracker; a file made before those indexes
    existed gets them when opened."""
    root = tmp_path / "repo"
    ids = build(root, 1)
    ws = Workspace(str(root), actor="ann")
    key = ws.cells().key
    epic = ids[0]
    children = ws.state_index.files_of(key, parents=[epic])
    assert children and {entry.parent for entry in children} == {epic}
    path = ws.state_index.path
    ws.state_index.close()
    with sqlite3.connect(path) as db:
        db.execute("DROP INDEX dirs_parent")
        db.execute("DROP INDEX dirs_assignee")
    again = Workspace(str(root), actor="ann")
    assert again.state_index.files_of(key, parents=[epic]) == children
    for column in ("parent", "assignee"):
        plan = again.state_index.db.execute(
            f"EXPLAIN QUERY PLAN SELECT name FROM dirs WHERE {column} IN (?) "
            "AND tree IN (?, ?) AND is_tree = 0",
            ["x", "a", "b"],
        ).fetchall()
        assert f"USING INDEX dirs_{column} ({column}=? AND tree=?)" in plan[0][3]


# ------------------------------------------------------------------ threads named by a prefix


# a thread as given: the thread stored, who else it reaches, the coordinator named
PREFIX_THREADS: dict[str, tuple[str, set[str], str | None]] = {
    "hv-ab1": ("hv-ab1", {"dee"}, "bo"),  # an epic's full id
    "HV-AB1": ("hv-ab1", {"dee"}, "bo"),  # upper case
    " hv-ab1 ": ("hv-ab1", {"dee"}, "bo"),  # spaces around
    "hv-ab1.": ("hv-ab1.", set(), None),  # two children begin it: ambiguous
    "hv-ab1.1": ("hv-ab1.1", set(), "bo"),  # a task: the thread, coordinator of its epic
    "ab1": ("hv-ab1", {"dee"}, "bo"),  # the hash part's prefix: the epic and children
    "hv-ab": ("hv-ab", set(), None),  # hv-ab1's family and hv-ab2: ambiguous
    "hv-ab2": ("hv-ab2", set(), None),  # a task under no epic
    "hv-cd1": ("hv-cd1", set(), None),  # a deleted cell: a plain thread
    "hv-cd": ("hv-cd", set(), None),  # the family of a deleted epic: its root, deleted
    "hv-cd1.1": ("hv-cd1.1", set(), "cy"),  # a live child of a deleted epic
    "hv-ef": ("hv-ef2", {"gus"}, "ann"),  # deleted hv-ef1 does not count
    "hv-gh": ("hv-gh", set(), None),  # only deleted cells, two of them: ambiguous
    "hv-gh1": ("hv-gh1", set(), None),
    "ij": ("hv-ij", {"hal"}, "cy"),  # the id whose hash part is exactly it wins
    "hv-ijk": ("hv-ijk", set(), None),
    "hv-q": ("hv-q", set(), None),  # no cell begins it
    "design": ("design", set(), None),
}


def write_prefix_cells(root: Path, who: Callable[[str], str] = str) -> None:
    """The cells of :data:`PREFIX_THREADS` (``who``: the name each person is given),
    written by hand and committed with git."""
    gone = {"deleted_at": NOW}
    cells = [
        _cell("hv-ab1", type="epic", metadata={"coordinator": who("bo")}),
        _cell("hv-ab1.1", parent="hv-ab1", assignee=who("dee")),
        _cell("hv-ab1.2", parent="hv-ab1", assignee=who("eve"), status="closed", closed_at=NOW),
        _cell("hv-ab2", assignee=who("fay")),
        _cell("hv-cd1", type="epic", assignee=who("cy"), **gone),  # deleted, its child is not
        _cell("hv-cd1.1", parent="hv-cd1", assignee=who("fay")),
        _cell("hv-ef1", type="epic", **gone),
        _cell("hv-ef2", type="epic", created_by=who("ann")),
        _cell("hv-ef2.1", parent="hv-ef2", assignee=who("gus")),
        _cell("hv-gh1", **gone),
        _cell("hv-gh2", **gone),
        _cell("hv-ij", type="epic", assignee=who("cy")),
        _cell("hv-ij.1", parent="hv-ij", assignee=who("hal")),
        _cell("hv-ijk"),
        *(_cell(f"hv-z{n}", assignee=who("dee")) for n in range(60)),  # never read
    ]
    for cell in cells:
        (root / cell_path(cell.id)).parent.mkdir(parents=True, exist_ok=True)
        (root / cell_path(cell.id)).write_bytes(encode_cell(cell))
    git(root, "add", "-A")
    git(root, "commit", "-qm", "cells")


def test_a_thread_given_as_a_prefix_is_found_as_before_without_reading_every_cell(
    tmp_path: Path,
) -> None:
    """A thread given as a prefix, in upper case, around spaces, as a deleted cell's id
    or a prefix only deleted cells or several cells begin: each answer is pinned (the
    answers of the scan over every cell that preceded it) and comes from the files of
    the ids the thread could name (no index of every cell is built, only the epics
    whose coordinator is asked are decoded)."""
    root = make_repo(tmp_path / "repo")
    init_hive(Workspace(str(root), actor="ann"), prefix="hv")
    write_prefix_cells(root)
    expected = PREFIX_THREADS
    ws = Workspace(str(root), actor="ann")
    ws.reader.head_key()  # HEAD's state indexed, as after any command
    found = {
        thread: (*mail._thread_of(ws, thread), mail.coordinator_of(ws, thread, "ann"))
        for thread in expected
    }
    assert {t: (i, set(m), c) for t, (i, m, c) in found.items()} == expected
    assert not ws.cache.indexes  # no index of every cell was built
    assert ws.cache.decoded <= 4  # the epics whose coordinator was asked


def test_staged_cell_changes_are_read_over_heads_rows_as_every_cell_was(tmp_path: Path) -> None:
    """With ``autocommit`` off the state is HEAD's plus the staged cell files: who an
    epic's thread reaches and who coordinates are read from HEAD's rows of the cells
    concerned with the staged files over them (added, changed, removed), the answers
    of the scan over every staged cell; a staged file the rows cannot certainly place
    (unreadable, a copy outside its own path) has every cell read, as before."""
    root = make_repo(tmp_path / "repo")
    init_hive(Workspace(str(root), actor="ann"), prefix="hv")

    def put(*cells: Cell, path: str | None = None) -> None:
        for cell in cells:
            where = root / (path or cell_path(cell.id))
            where.parent.mkdir(parents=True, exist_ok=True)
            where.write_bytes(encode_cell(cell))

    epic = _cell("hv-ep1", type="epic", metadata={"coordinator": "bo"})
    put(
        epic,
        _cell("hv-ep1.1", parent="hv-ep1", assignee="dee"),
        _cell("hv-ep1.2", parent="hv-ep1", assignee="eve"),
        _cell("hv-ep1.3", parent="hv-ep1", assignee="fay"),
        _cell("hv-ot1", type="epic", created_by="cy"),
        _cell("hv-ot1.1", parent="hv-ot1", assignee="ann", status="in_progress"),
        *(_cell(f"hv-z{n}", assignee="gus") for n in range(40)),
    )
    git(root, "add", "-A")
    git(root, "commit", "-qm", "cells")
    # staged: a new child for hal, eve's closed, fay's file removed, the epic's
    # coordinator changed, a new epic a prefix names, ann's work moved under hv-ep1
    put(
        _cell("hv-ep1.4", parent="hv-ep1", assignee="hal"),
        _cell("hv-ep1.2", parent="hv-ep1", assignee="eve", status="closed", closed_at=NOW),
        epic.model_copy(update={"metadata": {"coordinator": "cy"}}),
        _cell("hv-nw1", type="epic", assignee="dee"),
        _cell("hv-nw1.1", parent="hv-nw1", assignee="gus"),
        _cell("hv-ot1.1", parent="hv-ep1", assignee="ann", status="in_progress"),
    )
    git(root, "add", ".hive")
    git(root, "rm", "-q", cell_path("hv-ep1.3"))
    (root / cell_path("hv-ep1.1")).write_bytes(b"id: [not staged\n")  # the work tree: unread
    expected: dict[str, tuple[str, set[str], str | None]] = {
        "hv-ep1": ("hv-ep1", {"dee", "hal", "ann"}, "cy"),
        "hv-ep1.4": ("hv-ep1.4", set(), "cy"),
        "hv-ep1.3": ("hv-ep1.3", set(), None),  # removed from the index: no such cell
        "hv-nw": ("hv-nw1", {"gus"}, "dee"),  # a prefix of staged cells only
        "hv-ot1": ("hv-ot1", set(), "cy"),
        "design": ("design", set(), None),
    }

    def answers(ws: Workspace) -> dict[str, tuple[str, set[str], str | None]]:
        found = {}
        for thread in expected:
            thread_id, members = mail._thread_of(ws, thread)
            found[thread] = (thread_id, set(members), mail.coordinator_of(ws, thread, "ann"))
        return found

    staged = Workspace(str(root), actor="ann", autocommit=False)
    staged.reader.head_key()  # HEAD's state indexed, as after any command
    assert answers(staged) == expected
    assert mail.coordinator_of(staged, None, "ann") == "cy"  # ann's work, now under hv-ep1
    assert not staged.cache.indexes  # no index of every cell was built
    scan = Workspace(str(root), actor="ann", autocommit=False)
    for thread, (thread_id, members, coordinator) in expected.items():
        assert old_thread_of(scan, thread) == (thread_id, members)
        assert old_coordinator_of(scan, thread, "ann") == coordinator
    assert old_coordinator_of(scan, None, "ann") == "cy"
    # what the rows cannot place, each alone: an unreadable staged file of a cell
    # concerned, a staged copy outside its own path; every cell is read, as before
    git(root, "checkout", "-q", "--", ".hive")  # the work tree as staged
    copy = encode_cell(_cell("hv-ep1.1", parent="hv-ep1", assignee="gus"))
    copy_path = ".hive/cells/q/hv-ep1.1.yaml"
    for path, data in ((cell_path("hv-ep1.4"), b"id: [unclosed\n"), (copy_path, copy)):
        before = (root / path).read_bytes() if (root / path).exists() else None
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data)
        git(root, "add", path)
        doubtful = Workspace(str(root), actor="ann", autocommit=False)
        thread_id, members = mail._thread_of(doubtful, "hv-ep1")
        assert (thread_id, set(members)) == old_thread_of(doubtful, "hv-ep1")
        assert doubtful.cache.indexes  # every cell was read
        if before is None:
            git(root, "rm", "-q", "--cached", path)
        else:
            (root / path).write_bytes(before)
            git(root, "add", path)


def test_names_like_reads_ranges_of_names_as_the_scan_of_every_name(tmp_path: Path) -> None:
    """``StateIndex.names_like`` finds by ranges of each tree's names (one per distinct
    part before a first '-') exactly the files the comparison of every name found:
    names with several dashes, none, an empty part before one, parts that begin one
    another, upper case, a directory named as a cell file, files that are no cell's."""
    root = make_repo(tmp_path / "repo")
    init_hive(Workspace(str(root), actor="ann"), prefix="bn")
    names = [
        "b/bn-abc.yaml",
        "b/bn-abd.yaml",
        "b/bn-abc.1.yaml",
        "b/bnx-abc.yaml",
        "b/b-bn-abc.yaml",
        "w/bd-wisp-0385z.yaml",
        "x.yaml",
        "README",
        "b/bn-ab.yaml/inner.txt",
        "b/BN-ABC.yaml",
        "b/bn+x-ab.yaml",
        "b/bn.x-ab.yaml",
        "b/bn--ab.yaml",
        "c/-ab.yaml",
        "c/ab-.yaml",
        "c/é-ab.yaml",
        "c/nested/deeper/bn-abe.yaml",
    ]
    for name in names:
        (root / ".hive" / "cells" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / ".hive" / "cells" / name).write_text("id: [not a cell\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "names")
    ws = Workspace(str(root), actor="ann")
    key = ws.reader.head_key()
    assert key is not None
    stems = {part for name in names for part in name.split("/")}
    wanted = {stem[:n] for stem in stems for n in range(1, len(stem) + 1)}
    wanted |= {stem.partition("-")[2][:n] for stem in stems for n in range(1, 6)} - {""}
    wanted |= {"q", "bn-q", "zz", "-", "--", "abz", "\ud7ff", "\U0010ffff"}
    index = ws.state_index
    trees = index._stored_trees(key)
    assert trees
    for text in sorted(wanted):
        found = index.names_like(key, text)
        assert found is not None
        assert sorted(found) == sorted(index._names_like_scan(trees, text)), text
    assert sorted(index.names_like(key, "ab") or []) == [
        ".hive/cells/b/bn+x-ab.yaml",
        ".hive/cells/b/bn-ab.yaml",  # the directory named as a cell file
        ".hive/cells/b/bn-abc.1.yaml",
        ".hive/cells/b/bn-abc.yaml",
        ".hive/cells/b/bn-abd.yaml",
        ".hive/cells/b/bn.x-ab.yaml",
        ".hive/cells/b/bnx-abc.yaml",
        ".hive/cells/c/-ab.yaml",
        ".hive/cells/c/ab-.yaml",
        ".hive/cells/c/nested/deeper/bn-abe.yaml",
        ".hive/cells/c/é-ab.yaml",
    ]
    plan = index.db.execute(
        "EXPLAIN QUERY PLAN SELECT tree, name FROM dirs WHERE tree IN (?, ?) AND name >= ? "
        "AND name < ? AND (is_tree = 0 OR name LIKE '%.yaml')",
        ["a", "b", "x", "y"],
    ).fetchall()
    assert "USING PRIMARY KEY (tree=? AND name>? AND name<?)" in plan[0][3]  # not a scan
