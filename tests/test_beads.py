"""Import from and export to beads, with beads' own exports (../shared/data/beads/)."""

from __future__ import annotations

import json
import resource
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from hive.domain.annotate import add_comment
from hive.domain.beads import export_beads, import_beads
from hive.domain.cells import (
    close_cell,
    list_cells,
    ready,
    resolve_id,
    show_cell,
    update_cell,
)
from hive.domain.workspace import Workspace
from hive.errors import InvalidInput
from hive.store.layout import cell_path
from tests.conftest import assert_clean, beads_export, copy_repo, git, isolated_env
from tests.inprocess import fork_on_terminal, run_hive

SMALL = beads_export("issues-2025-10-19.jsonl")  # 163 records
MEDIUM = beads_export("issues-2026-02-27.jsonl")  # 704 records
LARGE = beads_export("issues-2026-01-14.jsonl")  # 3,003 records
EXPORTS = [SMALL, MEDIUM, LARGE]


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def beads_ready(rows: list[dict[str, Any]]) -> set[str]:
    """beads' ready rule: status open and no ``blocks`` dependency on an issue that is
    not closed (a tombstone or a missing issue does not block)."""
    status = {row["id"]: row["status"] for row in rows}

    def blocked(row: dict[str, Any]) -> bool:
        return any(
            dep["type"] == "blocks"
            and status.get(dep["depends_on_id"]) not in (None, "closed", "tombstone")
            for dep in row.get("dependencies") or []
        )

    return {row["id"] for row in rows if row["status"] == "open" and not blocked(row)}


@dataclass
class Import:
    """A repository ``import_beads`` wrote (kept as a template), and how it went."""

    root: Path
    result: Any
    commits_before: int
    phases: list[str]
    seconds: float


def _cpu_seconds() -> float:
    """CPU time of this process and of the child processes it has waited for."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.fixture(scope="module")
def import_templates(
    tmp_path_factory: pytest.TempPathFactory, hive_template: Path
) -> Callable[[Path], Import]:
    """``path`` imported (by alice) into a fresh hive, once per module: what the tests of
    an import check, in copies (``imported``)."""
    made: dict[Path, Import] = {}

    def template(path: Path) -> Import:
        if path not in made:
            with isolated_env(tmp_path_factory):
                root = copy_repo(hive_template, tmp_path_factory.mktemp("imported") / "repo")
                before = int(git(root, "rev-list", "--count", "HEAD"))
                phases: list[str] = []
                started = _cpu_seconds()
                result = import_beads(
                    Workspace(str(root), actor="alice"),
                    path=str(path),
                    progress=lambda phase, done, total: phases.append(phase),
                )
                seconds = _cpu_seconds() - started
            made[path] = Import(root, result, before, phases, seconds)
        return made[path]

    return template


@pytest.fixture
def imported(
    import_templates: Callable[[Path], Import], tmp_path: Path
) -> Callable[[Path], Workspace]:
    """``imported(path)``: alice's workspace in a copy of a repository with ``path``
    imported into a fresh hive."""
    return lambda path: Workspace(
        str(copy_repo(import_templates(path).root, tmp_path / "repo")), actor="alice"
    )


def test_import_of_3003_records_is_one_commit_and_fast(
    import_templates: Callable[[Path], Import], imported: Callable[[Path], Workspace]
) -> None:
    made = import_templates(LARGE)
    repo = Path(imported(LARGE).root)  # a copy: the import's repository stays as it was
    result = made.result
    assert (result.records, result.imported) == (3003, 3003)
    assert int(git(repo, "rev-list", "--count", "HEAD")) == made.commits_before + 1
    assert git(repo, "log", "-1", "--format=%s").startswith("hive: import")
    assert {"reading", "committing"} <= set(made.phases)
    assert result.mapped_statuses == {"tombstone": 346, "hooked": 28}
    assert result.mapped_types["event"] == 642
    # CPU seconds (this process and the git processes it ran), not wall-clock: ~1 s on
    # an idle machine, and the same when other tests share the cores
    assert made.seconds < 10, f"import took {made.seconds:.1f} s of CPU"
    assert_clean(repo)
    fresh = Workspace(str(repo))
    assert len(list_cells(fresh, status="all", include_deleted=True)) == 3003
    assert {c.id for c in ready(fresh)} == beads_ready(records(LARGE))


@pytest.mark.parametrize("path", [SMALL, MEDIUM], ids=["163", "704"])
def test_ready_agrees_with_beads(imported: Callable[[Path], Workspace], path: Path) -> None:
    ws = imported(path)
    rows = records(path)
    expected = beads_ready(rows)
    got = {cell.id for cell in ready(Workspace(ws.root))}
    # hive's one refinement: an epic is not ready while its own subtasks are open.
    by_id = {row["id"]: row for row in rows}
    waiting = {
        cid
        for cid in expected
        if by_id[cid]["issue_type"] == "epic"
        and any(
            other.startswith(cid + ".") and row["status"] not in ("closed", "tombstone")
            for other, row in by_id.items()
        )
    }
    assert got == expected - waiting
    assert len(waiting) <= 1


@pytest.mark.parametrize("path", EXPORTS, ids=["163", "704", "3003"])
def test_export_of_import_gives_back_every_field(
    imported: Callable[[Path], Workspace], path: Path
) -> None:
    ws = imported(path)
    exported = export_beads(Workspace(ws.root))
    assert exported.text is not None
    back = {row["id"]: row for row in map(json.loads, exported.text.splitlines())}
    original = records(path)
    assert len(back) == len(original)
    for row in original:
        again = back[row["id"]]
        assert sorted(again) == sorted(row), row["id"]
        for key, value in row.items():
            # as written: a time in its own zone and precision too, not only its instant
            assert again[key] == value, (row["id"], key)


def test_ids_are_kept_and_resolve(imported: Callable[[Path], Workspace]) -> None:
    ws = imported(LARGE)
    index = Workspace(ws.root).cells()
    assert resolve_id(index, "bd-0088") == "bd-0088"
    assert resolve_id(index, "bd-1dez.1") == "bd-1dez.1"
    assert resolve_id(index, "bd-wisp-0l5p") == "bd-wisp-0l5p"
    child = show_cell(Workspace(ws.root), cell_id="bd-1dez.1")
    assert child.parent == "bd-1dez"
    tombstone = show_cell(Workspace(ws.root), cell_id="bd-06px")
    assert tombstone.is_deleted and tombstone.metadata["beads"]["original_type"] == "bug"


def test_priority_zero_mixed_zones_comments_and_dependency_types(
    ws: Workspace, tmp_path: Path
) -> None:
    source = tmp_path / "mixed.jsonl"
    rows = [
        {
            "id": "bd-a1",
            "title": "Zero",
            "status": "open",
            "priority": 0,
            "issue_type": "bug",
            "created_at": "2025-12-17T21:19:10.9462-08:00",
            "updated_at": "2025-12-18T05:19:11Z",
            "labels": ["x", "y"],
            "assignee": "wolf",
            "comments": [
                {
                    "id": 7,
                    "issue_id": "bd-a1",
                    "author": "a",
                    "text": "hi",
                    "created_at": "2026-01-12T02:16:51+01:00",
                }
            ],
        },
        {
            "id": "bd-a2",
            "title": "Pinned",
            "status": "pinned",
            "priority": 4,
            "issue_type": "convoy",
            "created_at": "2025-12-17T21:19:10Z",
            "updated_at": "2025-12-17T21:19:10Z",
            "dependencies": [
                {
                    "issue_id": "bd-a2",
                    "depends_on_id": "bd-a1",
                    "type": "supersedes",
                    "created_at": "2025-12-17T21:19:10Z",
                }
            ],
        },
    ]
    source.write_text("".join(json.dumps(row) + "\n" for row in rows))
    import_beads(ws, path=str(source))
    fresh = Workspace(ws.root)
    zero = show_cell(fresh, cell_id="bd-a1")
    assert zero.priority == 0 and zero.labels == ["x", "y"] and zero.assignee == "wolf"
    assert zero.created_at.isoformat() == "2025-12-18T05:19:10.946200+00:00"
    assert zero.comments[0].created_at.isoformat() == "2026-01-12T01:16:51+00:00"
    pinned = show_cell(fresh, cell_id="bd-a2")
    assert (pinned.status, pinned.type) == ("deferred", "task")
    assert pinned.dependencies[0].type == "related"
    assert pinned.metadata["beads"]["status"] == "pinned"
    back = {
        row["id"]: row for row in map(json.loads, (export_beads(fresh).text or "").splitlines())
    }
    assert back["bd-a2"]["status"] == "pinned" and back["bd-a2"]["issue_type"] == "convoy"
    assert back["bd-a2"]["dependencies"][0]["type"] == "supersedes"
    assert back["bd-a1"]["comments"][0]["id"] == 7
    # times come back as beads wrote them (zone, digits), not as hive's UTC of them
    assert back["bd-a1"]["created_at"] == "2025-12-17T21:19:10.9462-08:00"
    assert back["bd-a1"]["updated_at"] == "2025-12-18T05:19:11Z"
    assert back["bd-a1"]["comments"][0]["created_at"] == "2026-01-12T02:16:51+01:00"
    # ... while they are the same instant: a time hive changed is written in UTC
    add_comment(fresh, cell_id="bd-a1", text="said in hive")
    commented = {
        r["id"]: r for r in map(json.loads, (export_beads(fresh).text or "").splitlines())
    }["bd-a1"]
    assert commented["created_at"] == "2025-12-17T21:19:10.9462-08:00"
    assert commented["updated_at"].endswith("Z") and commented["updated_at"] > "2026"
    assert commented["comments"][0]["created_at"] == "2026-01-12T02:16:51+01:00"
    # a cell changed in hive exports its new value, not the recorded original
    update_cell(fresh, cell_id="bd-a2", status="closed")
    again = {r["id"]: r for r in map(json.loads, (export_beads(fresh).text or "").splitlines())}
    assert again["bd-a2"]["status"] == "closed"


def test_malformed_lines_are_named_and_nothing_is_committed(
    ws: Workspace, repo: Path, tmp_path: Path
) -> None:
    good = LARGE.read_text().splitlines()[:50]
    lines = [*good[:10], "{not json", *good[10:20], '{"id": "bd-x", "title": "t", "priority": 9}']
    source = tmp_path / "broken.jsonl"
    source.write_text("\n".join(lines) + "\n")
    head = git(repo, "rev-parse", "HEAD")
    with pytest.raises(InvalidInput) as caught:
        import_beads(ws, path=str(source))
    assert "broken.jsonl:11: invalid JSON" in caught.value.message
    assert "nothing was imported" in caught.value.message
    assert git(repo, "rev-parse", "HEAD") == head
    lines[10] = good[10]
    source.write_text("\n".join(lines) + "\n")
    with pytest.raises(InvalidInput, match=r"broken\.jsonl:22: bd-x: priority must be 0-4"):
        import_beads(ws, path=str(source))
    assert git(repo, "rev-parse", "HEAD") == head
    assert not (repo / ".hive" / "cells" / "0").exists()
    assert_clean(repo)


def _bead(ident: str, **fields: Any) -> str:
    stamp = "2025-12-17T21:19:10Z"
    row = {"id": ident, "title": f"bead {ident}", "status": "open", "priority": 2}
    return json.dumps(row | {"created_at": stamp, "updated_at": stamp} | fields)


def test_every_bad_line_is_named_at_once_in_file_order(
    ws: Workspace, repo: Path, tmp_path: Path
) -> None:
    """A file with damaged JSON named only its first bad line (the bad fields of the
    others came one import later), and a lone surrogate escape (``"\\udc80"``) was
    refused at write time without its line: 'lone \\udc80...': not UTF-8 text."""
    lines = [
        _bead("bd-1"),
        _bead("bd-2", priority=9),
        _bead("bd-3")[:30],  # truncated
        _bead("bd-4", description="lone \udc80 surrogate"),
        _bead("bd-5", title="a pair \U0001f41d is fine"),
        _bead("bd-6", comments=[{"text": "x", "created_at": "2025-12-17T21:19:10Z", "\ud800": 1}]),
    ]
    source = tmp_path / "damaged.jsonl"
    source.write_text("\n".join(lines) + "\n")
    head = git(repo, "rev-parse", "HEAD")
    with pytest.raises(InvalidInput) as caught:
        import_beads(ws, path=str(source))
    message = caught.value.message
    found = [error.split(":")[1] for error in caught.value.details["errors"]]
    assert found == ["2", "3", "4", "6"], message
    assert "damaged.jsonl:3: invalid JSON" in message
    assert "damaged.jsonl:4: description holds a lone surrogate" in message
    assert "damaged.jsonl:6: a field name in comments[0] holds a lone surrogate" in message
    assert message.endswith("nothing was imported")
    assert git(repo, "rev-parse", "HEAD") == head
    result = run_hive(["-C", str(repo), "import", "beads", str(source)], module="hive.cli.main")
    assert result.exit_code == 2 and "damaged.jsonl:4: description" in result.stderr
    source.write_text("\n".join([lines[0], lines[4]]) + "\n")
    assert import_beads(ws, path=str(source)).imported == 2


def test_a_skipped_record_the_file_has_otherwise_is_reported(
    ws: Workspace, repo: Path, tmp_path: Path
) -> None:
    """Importing a second export whose ids are taken by other issues (beads reuses
    ``bd-3`` across databases) said only "skipped 2 already present": the file's
    version was dropped without a word."""
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    first.write_text(_bead("bd-3") + "\n" + _bead("bd-4") + "\n")
    second.write_text(_bead("bd-3", title="another issue") + "\n" + _bead("bd-4") + "\n")
    import_beads(ws, path=str(first))
    again = import_beads(ws, path=str(second))
    assert (again.skipped, again.differing, again.differing_ids) == (2, 1, ["bd-3"])
    result = run_hive(["-C", str(repo), "import", "beads", str(second)], module="hive.cli.main")
    assert result.exit_code == 0, result.output
    assert "skipped 2 already present" in result.stdout
    assert "file's version of 1 skipped cell (bd-3) differs" in result.stderr
    assert "--update" in result.stderr
    replaced = import_beads(ws, path=str(second), update=True)  # the same time: kept
    assert (replaced.updated, replaced.differing, replaced.kept_ids) == (0, 0, ["bd-3"])
    replaced = import_beads(ws, path=str(second), overwrite=True)
    assert (replaced.updated, replaced.differing) == (1, 0)
    assert show_cell(Workspace(ws.root), cell_id="bd-3").title == "another issue"


def test_a_record_whose_cell_here_cannot_be_read_is_skipped_with_a_word(
    ws: Workspace, repo: Path, tmp_path: Path
) -> None:
    """A record whose cell file here does not parse is neither the same cell nor one
    ``--update`` may replace: it was counted as "already present", without a word, with
    ``--update`` too."""
    from hive.store.layout import cell_path

    source = tmp_path / "issues.jsonl"
    source.write_text(_bead("bd-3") + "\n" + _bead("bd-4") + "\n")
    import_beads(ws, path=str(source))
    (repo / cell_path("bd-3")).write_text("id: bd-3\ntitle: [unclosed\n")
    git(repo, "commit", "-qam", "a damaged cell file", "--no-verify")
    source.write_text(_bead("bd-3", title="another") + "\n" + _bead("bd-4") + "\n")
    for update in (False, True):
        again = import_beads(Workspace(str(repo)), path=str(source), update=update)
        assert (again.skipped, again.updated, again.differing) == (2, 0, 0)
        [warning] = again.warnings
        assert "1 record skipped: the cell file here cannot be read (bd-3)" in warning
    result = run_hive(
        ["-C", str(repo), "import", "beads", str(source), "--update"], module="hive.cli.main"
    )
    assert result.exit_code == 0, result.output
    assert "warning: 1 record skipped: the cell file here cannot be read" in result.stderr
    doctor = run_hive(["-C", str(repo), "doctor"], module="hive.cli.main")
    assert cell_path("bd-3") in doctor.output


def test_missing_links_and_cycles_are_imported_and_said(
    ws: Workspace, repo: Path, tmp_path: Path
) -> None:
    """Records that block each other, a subtask whose parent is not in the export and a
    blocker that is gone were imported without a word ('hive doctor' found them later,
    exit 1). They are still imported as they are, and the import says so."""

    def blocks(target: str) -> dict[str, Any]:
        return {"dependencies": [{"depends_on_id": target, "type": "blocks"}]}

    lines = [
        _bead("bd-a", **blocks("bd-b")),
        _bead("bd-b", **blocks("bd-a")),
        _bead("bd-gone.1"),
        _bead("bd-c", **blocks("bd-wisp-x")),
    ]
    source = tmp_path / "links.jsonl"
    source.write_text("\n".join(lines) + "\n")
    result = run_hive(["-C", str(repo), "import", "beads", str(source)], module="hive.cli.main")
    assert result.exit_code == 0, result.output
    assert "imported 4 cells" in result.stdout
    warned = [line for line in result.stderr.splitlines() if line.startswith("warning: ")]
    assert len(warned) == 3, result.stderr
    assert "1 dependency target in neither the file nor the hive (bd-wisp-x)" in warned[0]
    assert "1 parent of subtasks in neither the file nor the hive (bd-gone)" in warned[1]
    assert "dependency cycle: bd-a -> bd-b -> bd-a" in warned[2]
    fresh = Workspace(str(repo))
    assert {c.id for c in ready(fresh)} == {"bd-c", "bd-gone.1"}  # kept, as beads has them
    source.write_text(_bead("bd-d", **blocks("bd-c")) + "\n")
    assert import_beads(fresh, path=str(source)).warnings == []


def test_a_record_nested_deeper_than_a_cell_file_may_is_refused(
    ws: Workspace, repo: Path, tmp_path: Path
) -> None:
    """A record's other fields go into its cell's metadata.beads, two levels deeper: a
    record nested 99 levels made a cell file nested 101, which hive then read as one
    corrupt cell (malformed YAML, nested too deeply)."""
    from hive.store.yamlio import MAX_NESTING

    def record(number: int, depth: int) -> dict[str, Any]:  # nested ``depth`` levels
        value: Any = 1
        for _ in range(depth - 1):
            value = {"a": value}
        stamp = "2025-12-17T21:19:10Z"
        return {"id": f"bd-x{number}", "title": f"nests {depth}", "status": "open"} | {
            "priority": 2,
            "issue_type": "task",
            "created_at": stamp,
            "updated_at": stamp,
            "deep": value,
        }

    source = tmp_path / "deep.jsonl"
    rows = [record(1, MAX_NESTING - 2), record(2, MAX_NESTING - 1)]
    source.write_text("".join(json.dumps(row) + "\n" for row in rows))
    head = git(repo, "rev-parse", "HEAD")
    with pytest.raises(InvalidInput, match=r"deep\.jsonl:2: invalid JSON: nested more than 98"):
        import_beads(ws, path=str(source))
    assert git(repo, "rev-parse", "HEAD") == head
    source.write_text(json.dumps(rows[0]) + "\n")
    assert import_beads(ws, path=str(source)).imported == 1
    assert not Workspace(ws.root).cells().problems  # its cell file reads
    assert show_cell(Workspace(ws.root), cell_id="bd-x1").metadata["beads"]["deep"]


def test_reimport_skips_or_updates(ws: Workspace) -> None:
    first = import_beads(ws, path=str(SMALL))
    again = import_beads(ws, path=str(SMALL))
    assert (first.imported, again.imported, again.skipped, again.commit) == (163, 0, 163, None)
    some = records(SMALL)[0]["id"]
    update_cell(ws, cell_id=some, title="Changed in hive")
    updated = import_beads(ws, path=str(SMALL), update=True)
    assert (updated.updated, updated.kept, updated.kept_ids) == (0, 1, [some])
    assert show_cell(ws, cell_id=some).title == "Changed in hive"
    forced = import_beads(ws, path=str(SMALL), overwrite=True)
    assert forced.updated == 1 and show_cell(ws, cell_id=some).title != "Changed in hive"


def _cell_at(repo: Path, commit: str, cell_id: str) -> str:
    return git(repo, "show", f"{commit}:{cell_path(cell_id)}")


def test_update_keeps_a_cell_edited_here_after_the_record(
    imported: Callable[[Path], Workspace], tmp_path: Path
) -> None:
    """``--update`` replaced a cell even when hive's own edit came after the export's
    ``updated_at``: a close or a comment made here was lost from the tip. The later
    ``updated_at`` wins (beads' rule), compared as instants whatever the record's time
    zone; an equal time or a record without one keeps the cell; ``--overwrite``
    replaces them all."""
    ws = imported(SMALL)
    repo = Path(ws.root)
    rows = {row["id"]: row for row in records(SMALL)}
    opened = [i for i, row in rows.items() if row["status"] == "open"]
    closed_here, commented, equal, undated, newer, later_zone = opened[:6]
    close_cell(ws, cell_id=closed_here, reason="done in hive")
    add_comment(ws, cell_id=commented, text="said in hive")
    edited = {i: dict(rows[i], title=f"{rows[i]['title']} (bd)") for i in opened[:6]}
    # the same instant as the cell's, written in another zone
    stamp = show_cell(ws, cell_id=equal).updated_at.astimezone(timezone(timedelta(hours=5)))
    edited[equal]["updated_at"] = stamp.isoformat()
    del edited[undated]["updated_at"]
    edited[newer]["updated_at"] = "2999-01-01T00:00:00Z"
    # one second after the cell's time, seven hours behind UTC: later
    cell_time = show_cell(ws, cell_id=later_zone).updated_at + timedelta(seconds=1)
    behind = timezone(timedelta(hours=-7))
    edited[later_zone]["updated_at"] = cell_time.astimezone(behind).isoformat()
    source = tmp_path / "later.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in {**rows, **edited}.values()))
    before = git(repo, "rev-parse", "HEAD~2")

    result = run_hive(
        ["-C", str(repo), "import", "beads", str(source), "--update", "--json"],
        module="hive.cli.main",
    )
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    assert (answer["updated"], answer["kept"], answer["skipped"]) == (2, 4, 161)
    assert answer["kept_ids"] == [closed_here, commented, equal, undated]
    tip = answer["commit"]
    changed = git(repo, "show", "--name-only", "--format=", tip).split()
    assert sorted(changed) == sorted(cell_path(i) for i in (newer, later_zone))
    assert "done in hive" in _cell_at(repo, tip, closed_here)
    assert "said in hive" in _cell_at(repo, tip, commented)
    assert f"{rows[newer]['title']} (bd)" in show_cell(ws, cell_id=newer).title

    again = run_hive(
        ["-C", str(repo), "import", "beads", str(source), "--update"], module="hive.cli.main"
    )
    assert again.exit_code == 0, again.output
    assert f"kept 4 cells as here ({closed_here}, {commented}, {equal}, ...)" in again.stderr
    assert "--overwrite replaces them" in again.stderr
    assert git(repo, "rev-parse", "HEAD").strip() == tip  # nothing newer: no commit

    forced = import_beads(Workspace(ws.root), path=str(source), overwrite=True)
    assert (forced.updated, forced.kept) == (4, 0)
    assert "done in hive" not in _cell_at(repo, "HEAD", closed_here)
    assert "done in hive" in _cell_at(repo, tip, closed_here)  # still in history
    assert git(repo, "rev-parse", "HEAD~1", "HEAD~4").split() == [tip, before.strip()]


def test_cli_import_and_export(ws: Workspace, repo: Path, tmp_path: Path) -> None:
    result = run_hive(["-C", str(repo), "import", "beads", str(SMALL)], module="hive.cli.main")
    assert result.exit_code == 0, result.output
    assert "imported 163 cells" in result.output
    target = tmp_path / "out.jsonl"
    result = run_hive(["-C", str(repo), "export", "beads", str(target)], module="hive.cli.main")
    assert result.exit_code == 0 and "exported 163 cells" in result.output
    assert len(target.read_text().splitlines()) == 163
    result = run_hive(["-C", str(repo), "export", "beads"], module="hive.cli.main")
    assert result.output.count("\n") == 163
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "bd-1", "title": "ok"}\n[1]\n')
    result = run_hive(["-C", str(repo), "import", "beads", str(bad)], module="hive.cli.main")
    assert result.exit_code == 2 and "bad.jsonl:2:" in result.output


def test_a_dash_is_standard_input_and_standard_output(
    ws: Workspace, repo: Path, tmp_path: Path
) -> None:
    """``hive export beads -`` wrote a file named ``-`` in the current directory ("exported
    163 cells to -"), and ``bd export | hive import beads -`` said "-: no such file": a
    dash is the pipe, as ``hive create --from -`` and ``--body -`` read it."""
    data = SMALL.read_bytes()
    result = run_hive(["-C", str(repo), "import", "beads", "-"], input=data.decode())
    assert result.exit_code == 0, result.output
    assert "imported 163 cells from standard input" in result.output
    assert "from <stdin>" in git(repo, "log", "-1", "--format=%s")
    result = run_hive(["export", "beads", "-"], cwd=str(repo))
    assert result.exit_code == 0, result.output
    assert [json.loads(line)["id"] for line in result.stdout.splitlines()][:1] == ["bd-1"]
    assert result.stdout.count("\n") == 163
    assert not (repo / "-").exists()
    assert git(repo, "status", "--porcelain") == ""
    broken = run_hive(["-C", str(repo), "import", "beads", "-"], input='{"id": "bd-x",\n')
    assert broken.exit_code == 2 and "<stdin>:1: invalid JSON" in broken.stderr


def test_import_shows_a_progress_bar_on_a_terminal(ws: Workspace, repo: Path) -> None:
    command = ["-C", str(repo), "import", "beads", str(SMALL)]
    code, seen = fork_on_terminal(command)  # a process of its own on a pseudo-terminal
    assert code == 0, seen
    assert b"reading" in seen and b"163/163" in seen and b"\x1b[" in seen
    assert b"imported 163 cells" in seen


def test_an_export_saved_with_a_byte_order_mark_and_crlf_imports(
    ws: Workspace, repo: Path, tmp_path: Path
) -> None:
    """An export opened and saved on Windows (Notepad: UTF-8 with a byte order mark,
    CRLF line ends): "issues.jsonl:1: invalid JSON: Unexpected UTF-8 BOM (decode using
    utf-8-sig)", nothing imported. The mark is the encoding's, not the first record's."""
    saved = tmp_path / "issues.jsonl"
    saved.write_bytes(b"\xef\xbb\xbf" + SMALL.read_bytes().replace(b"\n", b"\r\n"))
    assert import_beads(ws, path=str(saved)).imported == 163


def test_a_gzipped_export_imports_and_a_broken_one_is_named(
    ws: Workspace, repo: Path, tmp_path: Path
) -> None:
    """docs/from-beads.md points at the exports in tests/data/beads/, which are gzipped:
    ``hive import beads issues.jsonl.gz`` reads them as they are (it said "not valid
    UTF-8" for each of 163 lines). A truncated or broken one is one clear error."""
    import gzip

    packed = Path(__file__).parent / "data" / "beads" / "issues-2025-10-19.jsonl.gz"
    head = git(repo, "rev-parse", "HEAD")
    truncated = tmp_path / "cut.jsonl.gz"
    truncated.write_bytes(packed.read_bytes()[:200])
    with pytest.raises(InvalidInput, match="truncated"):
        import_beads(ws, path=str(truncated))
    broken = tmp_path / "broken.jsonl.gz"
    broken.write_bytes(b"\x1f\x8b" + b"not really gzip")
    with pytest.raises(InvalidInput, match="cannot be unpacked"):
        import_beads(ws, path=str(broken))
    assert git(repo, "rev-parse", "HEAD") == head
    result = run_hive(["-C", str(repo), "import", "beads", str(packed)], module="hive.cli.main")
    assert result.exit_code == 0, result.output
    assert "imported 163 cells" in result.output
    ids = {row["id"] for row in records(SMALL)}
    listed = list_cells(Workspace(str(repo)), status="all", include_deleted=True)
    assert {cell.id for cell in listed} == ids
    assert len(gzip.decompress(packed.read_bytes()).splitlines()) == 163
