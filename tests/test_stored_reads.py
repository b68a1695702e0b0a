"""Reads that answer from the cells' stored JSON and light facts (``hive stats``, ``hive
search``, ``hive doctor``'s graph and conflict checks) give what the same reads over
the decoded models give, on a hive of a few hundred varied cells, in every kind of state:
indexed, committed by plain git and not indexed yet, edited in the working tree,
staged with ``HIVE_AUTOCOMMIT=0``, with damaged, misnamed, hand-written and deleted
cell files. The references below are the model-based code these reads replaced."""

from __future__ import annotations

import gc
import statistics
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from pydantic_core import to_json

from hive.domain import reading
from hive.domain.annotate import add_comment
from hive.domain.bulk import create_cells
from hive.domain.cells import close_cells, delete_cells, list_cells, update_cells
from hive.domain.debate import context_search
from hive.domain.doctor import _cell_problems, _hidden_names, _merge_conflicts, diagnose
from hive.domain.graph import find_cycles, ready_cell_ids
from hive.domain.readiness import open_blockers
from hive.domain.stats import HOUR_DIGITS, UNASSIGNED, cell_stats
from hive.domain.workspace import Workspace
from hive.errors import CorruptFile
from hive.models import STATUSES, Cell
from hive.models.cell import MergeConflict
from hive.models.cellresults import CellStats, LeadTime
from hive.models.results import Problem
from hive.store.cache import CellIndex, build_index, collector_paused
from hive.store.cells import encode_cell
from hive.store.ids import parent_from_id
from hive.store.index import (
    JSON_PIECE,
    StateIndex,
    nodes_of,
    write_json_list,
)
from hive.store.layout import cell_id_from_path, cell_path
from hive.times import format_time
from tests.conftest import copy_repo, git, isolated_env
from tests.inprocess import run_hive

KELVIN = "\u212a"  # lowercases to an ASCII "k"
TEXTS = [
    "plain words",
    'a "quoted" word and a back\\slash',
    "tab\there and\nsecond line",
    f"{KELVIN}elvin and \u0130stanbul",
    "\u039f\u0394\u039f\u03a3 \u03a3\u039f\u03a6\u0399\u0391\u03a3",  # final and inner sigma
    "emoji \U0001f41d and caf\u00e9",
    'its own\n  "closed_at": "1999-01-01T00:00:00.000Z",\n  "created_at": null',
    "",
]
TERMS = [
    "cell",
    "k",
    "kelvin",
    "i\u0307stanbul",
    "\u03bf\u03b4\u03bf\u03c2",
    "\u03c3\u03bf\u03c6\u03b9\u03b1\u03c2",
    '"quoted"',
    "back\\slash",
    "tab\there",
    "and\nsecond",
    "reason",
    "noted",
    "said",
    "caf\u00e9",
    "nothing matches this",
    "created_by",  # a key of the JSON, in no text
]


def _build(ws: Workspace) -> None:
    specs: list[dict[str, Any]] = []
    for number in range(240):
        spec: dict[str, Any] = {
            "key": f"k{number}",
            "title": " ".join(f"cell {number} {TEXTS[number % len(TEXTS)]}".split()),
            "type": ("bug", "feature", "task", "epic", "chore")[number % 5],
            "priority": number % 5,
            "description": TEXTS[(number + 1) % len(TEXTS)],
            "labels": [f"l{number % 3}"],
        }
        if number % 4 == 0:
            spec["assignee"] = ("alice", "bob", "carol")[number % 3]
        if number % 9 == 3:
            spec["parent"] = f"k{number - 3}"
        if number % 7 == 5:
            spec["blocks"] = [f"k{number - 1}"]
        if number % 11 == 6:
            spec["deps"] = [f"related:k{number - 2}"]
        if number % 13 == 1:
            spec["notes"] = f"noted {TEXTS[number % len(TEXTS)]}"
        specs.append(spec)
    ids = create_cells(ws, specs=specs).ids
    for number in range(0, 240, 10):
        add_comment(ws, cell_id=ids[number], text=f"said {TEXTS[number % len(TEXTS)]}")
    update_cells(ws, cell_ids=ids[1:60:6], status="in_progress", force=True, reason="test")
    closing = [cell_id for number, cell_id in enumerate(ids) if number % 4 == 2]
    close_cells(ws, cell_ids=closing, reason=f"reason {TEXTS[3]}", force=True)
    delete_cells(ws, cell_ids=[ids[n] for n in (7, 8, 107)], force=True, reason="test")


def _hand_written(root: Path, ws: Workspace) -> None:
    """Files a person or a merge left: a cycle, missing targets, merge conflicts, a
    file the plain reader declines (a comment), one that does not parse, a misnamed one,
    a removed file and a stray file; committed by plain git (not indexed yet)."""
    index = ws.cells()
    ids = sorted(cell_id for cell_id, node in index.nodes.items() if not node.deleted)
    first, second, third = (index.cells[cell_id] for cell_id in ids[:3])

    def put(cell: Cell, *extra: dict[str, str], prefix: bytes = b"") -> None:
        deps = [*(dep.model_dump() for dep in cell.dependencies), *extra]
        written = Cell.model_validate({**cell.model_dump(), "dependencies": deps})
        (root / cell_path(cell.id)).write_bytes(prefix + encode_cell(written))

    put(first, {"type": "blocks", "target": second.id})
    put(second, {"type": "blocks", "target": first.id}, {"type": "related", "target": "hv-none"})
    conflicts = [
        MergeConflict(field="title", kept="ours", other="theirs " * 20),
        MergeConflict(field="priority", kept=1, other=[2, {"x": None}]),
        MergeConflict(field="file", kept=None, other="broken: [text"),
    ]
    changed = third.model_copy(update={"conflicts": conflicts, "parent": "hv-gone"})
    put(changed, prefix=b"# by hand\n")
    (root / cell_path(ids[3])).write_text("id: [not closed\n")
    misnamed = index.cells[ids[4]].model_copy(update={"id": ids[5]})
    (root / cell_path(ids[4])).write_bytes(encode_cell(misnamed))
    (root / cell_path(ids[6])).unlink()
    (root / ".hive" / "cells" / "README").write_text("not a cell\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "--no-verify", "-m", "by hand")


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory, hive_template: Path) -> Path:
    with isolated_env(tmp_path_factory):
        root = copy_repo(hive_template, tmp_path_factory.mktemp("stored") / "repo")
        ws = Workspace(str(root))
        _build(ws)
        _hand_written(root, ws)
    return root


@pytest.fixture
def repo(made: Path, tmp_path: Path) -> Path:
    return copy_repo(made, tmp_path / "repo")


# ------------------------------------------------------------------ the references


def _reference_stats(index: CellIndex) -> CellStats:
    cells = index.live()
    unreadable = index.unreadable_ids()
    by_status = Counter({status: 0 for status in STATUSES})
    by_status.update(cell.status for cell in cells)
    blocked = sum(
        1
        for cell in cells
        if not cell.is_closed and open_blockers(index.nodes[cell.id], index.nodes, unreadable)
    )
    priorities = Counter(cell.priority for cell in cells)
    hours = [
        (cell.closed_at - cell.created_at).total_seconds() / 3600
        for cell in cells
        if cell.is_closed and cell.closed_at is not None
    ]
    lead = LeadTime()
    if hours:
        lead = LeadTime(
            closed=len(hours),
            mean_hours=round(statistics.fmean(hours), HOUR_DIGITS),
            median_hours=round(statistics.median(hours), HOUR_DIGITS),
            max_hours=round(max(hours), HOUR_DIGITS),
        )
    return CellStats(
        total=len(cells),
        open=sum(1 for cell in cells if not cell.is_closed),
        ready=len(ready_cell_ids(index)),
        blocked=blocked,
        by_status=dict(by_status),
        by_type=dict(sorted(Counter(cell.type for cell in cells).items())),
        by_priority={f"P{level}": priorities[level] for level in range(5)},
        by_assignee=dict(Counter(cell.assignee or UNASSIGNED for cell in cells).most_common()),
        lead_time=lead,
    )


def _reference_search(index: CellIndex, term: str) -> dict[str, Any]:
    """``context_search``'s answer as it was read from the models (cells only: the
    hive has no messages or outcomes)."""
    roots = sorted(
        (c for c in index.cells.values() if c.parent is None), key=lambda c: (c.created_at, c.id)
    )
    numbered = {root.id: (number, root.created_by) for number, root in enumerate(roots, 1)}
    rounds: dict[str, tuple[int, str]] = {}
    for cell in index.cells.values():
        top = cell
        seen = {cell.id}
        while top.parent is not None and top.parent in index.cells and top.parent not in seen:
            seen.add(top.parent)
            top = index.cells[top.parent]
        rounds[cell.id] = numbered.get(top.id, (0, ""))
    needle = term.lower()
    found: list[tuple[Any, ...]] = []

    def consider(content: str, cell_id: str, agent: str, kind: str, when: str) -> None:
        if needle in content.lower():
            number, coordinator = rounds.get(cell_id, (0, ""))
            role = "coordinator" if agent and agent == coordinator else "worker"
            match = {"roundNumber": number, "agentId": agent, "agentRole": role, "type": kind}
            found.append((number, when, {**match, "contentSnippet": content, "cellId": cell_id}))

    for cell in index.cells.values():
        if cell.is_deleted:
            continue
        texts = (cell.title, cell.description, cell.design, cell.acceptance_criteria)
        when = format_time(cell.created_at)
        consider("\n".join(t for t in texts if t).strip(), cell.id, cell.created_by, "cell", when)
        worker = cell.assignee or cell.created_by
        if cell.notes:
            consider(cell.notes, cell.id, worker, "notes", format_time(cell.updated_at))
        for comment in cell.comments:
            when = format_time(comment.created_at)
            consider(comment.text, cell.id, comment.author, "comment", when)
        if cell.close_reason:
            closed = format_time(cell.closed_at or cell.updated_at)
            consider(cell.close_reason, cell.id, worker, "close_reason", closed)
    found.sort(key=lambda item: (item[0], item[1]))
    shown = [match for *_, match in found[:100]]
    return {"status": "success", "result": {"matches": shown, "total": len(found)}}


def _reference_cell_problems(
    index: CellIndex,
) -> tuple[list[Problem], list[Problem], list[Problem]]:
    """doctor's graph problems, merge conflicts and hidden characters in names as they
    were read from the models."""
    graph: list[Problem] = []
    for cell in sorted(index.cells.values(), key=lambda c: c.id):
        for dep in cell.dependencies:
            if dep.target not in index.cells:
                message = f"{cell.id} has a {dep.type} dependency on missing {dep.target}"
                graph.append(Problem(kind="dangling-dependency", message=message, cell=cell.id))
        if cell.parent and cell.parent not in index.cells:
            message = f"{cell.id} has missing parent {cell.parent}"
            graph.append(Problem(kind="dangling-parent", message=message, cell=cell.id))
        implied = parent_from_id(cell.id)
        if implied is not None and cell.parent != implied:
            message = f"{cell.id}: its id names parent {implied} but parent is {cell.parent}"
            graph.append(Problem(kind="parent-mismatch", message=message, cell=cell.id))
    for cycle in find_cycles(index):
        message = "dependency cycle: " + " -> ".join(cycle)
        graph.append(Problem(kind="cycle", message=message, cell=cycle[0]))
    conflicts: list[Problem] = []
    hidden: list[Problem] = []
    for cell in sorted(index.cells.values(), key=lambda c: c.id):
        conflicts += _merge_conflicts(index, cell)  # its wording: from the model still
        hidden += _hidden_names(cell.id, {"labels": cell.labels, "assignee": cell.assignee})
    return graph, conflicts, hidden


LIST_FILTERS: list[dict[str, Any]] = [
    {},
    {"include_deleted": True},
    {"status": "closed", "limit": 7},
    {"status": "all", "type": "epic"},
    {"priority": 1, "assignee": "bob"},
    {"label": "l1", "limit": 30},
    {"label": "l2", "include_deleted": True, "status": "open"},
]


def _reference_list(index: CellIndex, **given: Any) -> tuple[list[Cell], int]:
    """``list_cells`` as it filtered and sorted the models."""
    status = None if given.get("status") in (None, "all") else given["status"]
    found = [
        cell
        for cell in index.cells.values()
        if (given.get("include_deleted") or not cell.is_deleted)
        and (status is None or cell.status == status)
        and (given.get("type") is None or cell.type == given["type"])
        and (given.get("priority") is None or cell.priority == given["priority"])
        and (given.get("label") is None or given["label"] in cell.labels)
        and (given.get("assignee") is None or cell.assignee == given["assignee"])
    ]
    found.sort(key=lambda c: (c.is_closed, c.priority, c.created_at, c.id))
    limit = given.get("limit")
    return (found[:limit] if limit is not None else found), len(found)


# ------------------------------------------------------------------ the comparisons


def _agree(ws: Workspace) -> None:
    """Every stored read of ``ws``'s current state agrees with its model reference."""
    index = ws.cells()
    for cell_id, blob in index.blobs.items():
        assert index.json_of([blob])[blob] == to_json(index.cells[cell_id], indent=2)
    assert cell_stats(ws) == _reference_stats(index)
    for term in TERMS:
        searched = context_search(ws, term=term, limit=100, snippet=10_000)
        assert searched == _reference_search(index, term), term
    assert _cell_problems(index) == _reference_cell_problems(index)
    for given in LIST_FILTERS:
        page = list_cells(ws, **given)
        assert (list(page), page.total) == _reference_list(index, **given), given
    parents = {node.parent for node in index.nodes.values() if node.parent in index.blobs}
    for parent in sorted(p for p in parents if p is not None)[:5]:
        page = list_cells(ws, parent=parent, status="all")
        expected = [cell for cell in _reference_list(index)[0] if cell.parent == parent]
        assert list(page) == expected


def test_the_varied_hive_has_what_the_comparisons_need(repo: Path) -> None:
    """The fixture holds every case (else the comparisons below prove less)."""
    ws = Workspace(str(repo))
    index = ws.cells()
    stats = cell_stats(ws)
    assert stats.lead_time.closed > 50 and stats.blocked > 5 and len(stats.by_assignee) == 4
    kinds = {problem.kind for problem in diagnose(ws).problems}
    expected = {"cycle", "dangling-dependency", "dangling-parent", "merge-conflict", "corrupt"}
    assert expected <= kinds
    assert any(node.deleted for node in index.nodes.values())
    for term in ("k", "\u03c3\u03bf\u03c6\u03b9\u03b1\u03c2", "and\nsecond", '"quoted"'):
        assert context_search(ws, term=term)["result"]["total"] > 3, term


def test_reads_agree_on_a_state_committed_by_hand_and_not_indexed(repo: Path) -> None:
    _agree(Workspace(str(repo)))


def test_reads_agree_in_a_warm_process_that_decoded_every_cell(repo: Path) -> None:
    """Cells decoded already (an MCP server's cache) give the same answers."""
    ws = Workspace(str(repo))
    ws.cells().cells.values()
    _agree(ws)


def test_reads_agree_on_staged_changes(repo: Path) -> None:
    """``HIVE_AUTOCOMMIT=0``: the state is the staged index over HEAD, whose changed
    files the state index does not hold."""
    ws = Workspace(str(repo), autocommit=False)
    index = ws.cells()
    nodes = index.nodes.values()
    ids = sorted(node.id for node in nodes if not node.deleted and node.status == "open")
    add_comment(ws, cell_id=ids[10], text=f"said {KELVIN} staged")
    close_cells(ws, cell_ids=[ids[11], ids[12]], reason="staged reason", force=True)
    (repo / cell_path(ids[13])).write_text("title: [broken\n")
    git(repo, "add", cell_path(ids[13]))
    git(repo, "rm", "-q", cell_path(ids[14]))
    staged = Workspace(str(repo), autocommit=False)
    assert "+" in staged.cells().key  # the overlay, not a stored state
    _agree(staged)


def test_doctor_and_stats_agree_through_the_command_line(repo: Path) -> None:
    """The same bytes from ``hive stats``, ``hive search`` and ``hive doctor`` in a
    fresh index and in the warm one, with a cell file edited in the working tree."""
    ids = sorted(Workspace(str(repo)).cells().blobs)
    edited = repo / cell_path(ids[20])
    edited.write_text(edited.read_text().replace("title:", "title: [edited"))
    answers = []
    for _ in range(2):
        runs = [
            run_hive(args, cwd=repo, module="hive.cli.main")
            for args in (["stats"], ["--json", "stats"], ["search", "k", "-n", "100"], ["doctor"])
        ]
        answers.append([(run.returncode, run.stdout, run.stderr) for run in runs])
        for path in (repo / ".git" / "hive").glob("index.sqlite3*"):
            path.unlink()
    assert answers[0] == answers[1]
    doctor = answers[0][3]
    assert doctor[0] == 1 and "corrupt-uncommitted" in doctor[1] and "cycle" in doctor[1]


def _reference_index(state: StateIndex, key: str) -> tuple[Any, ...]:
    """(paths, blobs, nodes, problems: path -> (message, details)) of the cell index as
    it was built from the state index's entries (an Entry a file, then a Node of it:
    as the lean path's ``nodes_of`` and ``StateIndex.problems`` still
    read them), before it was built from the rows."""
    entries = state.entries(key)
    blobs: dict[str, str] = {}
    nodes, _ = nodes_of(entries, blobs)
    lines = {entry.path: entry.line for entry in entries if entry.line is not None}
    problems = {
        path: (message, {"path": path, **({"line": lines[path]} if path in lines else {})})
        for path, message in state.problems(key)
    }
    paths = {
        cell_id: entry.path
        for entry in entries
        if (cell_id := cell_id_from_path(entry.path)) is not None
        and entry.path not in problems
        and blobs[cell_id] == entry.blob
    }
    return paths, blobs, nodes, problems


def test_the_cell_index_built_from_rows_is_the_one_built_from_entries(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fresh process's cell index (every full-CLI command's start) is built from the
    state index's rows directly, with the collector paused: the same paths, blobs,
    nodes and problems as from the entries, with stray copies, a directory named as a
    cell file, damaged, misnamed and hand-written files."""
    ids = sorted(Workspace(str(repo)).cells().blobs)
    stray = repo / ".hive" / "cells" / "zz" / "deeper" / f"{ids[30]}.yaml"  # read after its own
    stray.parent.mkdir(parents=True)
    stray.write_bytes((repo / cell_path(ids[30])).read_bytes().replace(b"cell", b"copy"))
    (repo / ".hive" / "cells" / "zz" / "hv-dir.yaml").mkdir()
    (repo / ".hive" / "cells" / "zz" / "hv-dir.yaml" / "inside").write_text("x\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "stray copy and a directory")
    collecting = []

    def build(*args: Any) -> CellIndex:
        collecting.append(gc.isenabled())
        return build_index(*args)

    monkeypatch.setattr(reading, "build_index", build)
    ws = Workspace(str(repo))
    index = ws.cells()
    assert collecting == [False] and gc.isenabled()
    problems = {path: (p.message, p.details) for path, p in index.problems.items()}
    reference = _reference_index(ws.reader.state_index, index.key)
    assert (index.paths, index.blobs, index.nodes, problems) == reference
    assert all(type(problem) is CorruptFile for problem in index.problems.values())
    assert len(problems) >= 3 and index.paths[ids[30]] == cell_path(ids[30])
    assert any("is a directory" in message for message, _ in problems.values())
    assert any("line" in details for _, details in problems.values())


def test_the_collector_is_paused_in_the_block_and_restored_after() -> None:
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(KeyError), collector_paused():
        raise KeyError("x")
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()  # it was off: left off
    finally:
        gc.enable()


@pytest.mark.parametrize("count", [0, 1, JSON_PIECE, JSON_PIECE + 1, 2 * JSON_PIECE + 7])
def test_a_listing_written_in_pieces_is_the_page_pydantic_prints(count: int) -> None:
    """The lean ``list --json`` writes its cells a thousand at a time (never the
    whole ~66 MB of 100,000 cells copied at once): the bytes are the page's."""
    made = Cell.model_validate(
        {
            "id": "hv-abc123",
            "title": f'a {KELVIN} "title"',
            "created_by": "alice",
            "created_at": "2026-11-27T10:00:00.123Z",
            "updated_at": "2026-11-27T10:00:00.123456Z",
        }
    )
    cells = [
        made.model_copy(update={"id": f"hv-{number:06d}", "description": TEXTS[number % 7]})
        for number in range(count)
    ]
    pieces: list[bytes] = []
    write_json_list([to_json(cell, indent=2) for cell in cells], pieces.append)
    assert len(pieces) == (1 if not count else 2 + -(-count // JSON_PIECE))
    assert b"".join(pieces) == to_json(cells, indent=2) + b"\n"
