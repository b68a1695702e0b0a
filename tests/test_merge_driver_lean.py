"""git's merge driver without the models (``hive/domain/mergecore.py``,
``hive/git/pathhistory.py``): the same bytes as the full path, and a driver process that
imports neither pydantic nor dulwich for a cell in hive's own form."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hive.domain.annotate import add_comment
from hive.domain.cells import create_cell, show_cell, update_cell
from hive.domain.merge import merge_file
from hive.domain.mergecore import merge_plain
from hive.domain.setup import DRIVER_KEY
from hive.domain.workspace import Workspace
from hive.git.pathhistory import (
    TABLES_DIR,
    LooseHistory,
    Unreadable,
    changed_blobs_by_git,
    versions_table,
)
from hive.git.refs import discover
from hive.git.repo import GitRepo
from hive.git.syncref import RepoHistory
from hive.models import Cell
from hive.store.cells import encode_cell
from hive.store.layout import cell_path
from tests.conftest import assert_clean, git

PATH = cell_path("hv-abc123")
T0 = datetime(2026, 1, 1, tzinfo=UTC)
# Modules a driver process must not load for a cell in hive's own form: each costs every
# file both sides changed (pydantic and the models ~100 ms, dulwich ~25 ms).
HEAVY = ("pydantic", "pydantic_core", "dulwich", "hive.models", "hive.domain.merge", "typer")
HEAVY += ("rich", "ruamel", "typing", "hive.git.repo", "hive.store.index")

# ------------------------------------------------------------------ the same bytes

small_text = st.sampled_from(["", "one", "two", "one\ntwo", "x: y", "naïve — ü"])
times = st.integers(0, 4).map(lambda n: T0 + timedelta(minutes=n))


@st.composite
def plain_cells(draw: st.DrawFn) -> Cell:
    """Cells as hive writes them, drawn from small pools so sides often agree, differ
    or match the base field by field."""
    created = draw(times)
    status = draw(st.sampled_from(["open", "in_progress", "closed"]))
    return Cell(
        id="hv-abc123",
        title=draw(st.sampled_from(["Base", "Ours", "Theirs"])),
        description=draw(small_text),
        design=draw(small_text),
        notes=draw(small_text),
        status=status,
        type=draw(st.sampled_from(["task", "bug"])),
        priority=draw(st.integers(0, 4)),
        labels=draw(st.lists(st.sampled_from(["a", "b", "c"]), unique=True)),
        files_owned=draw(st.lists(st.sampled_from(["src/a.py", "docs/**"]), unique=True)),
        dependencies=[
            {"type": kind, "target": target}
            for kind, target in draw(
                st.lists(
                    st.tuples(st.sampled_from(["blocks", "related"]), st.sampled_from(["hv-1"])),
                    unique=True,
                )
            )
        ],
        assignee=draw(st.sampled_from([None, "alice", "bob"])),
        parent=draw(st.sampled_from([None, "hv-abc"])),
        created_at=created,
        updated_at=created + timedelta(seconds=draw(st.integers(0, 3))),
        started_at=draw(st.none() | times),
        closed_at=created if status == "closed" else None,
        close_reason="done" if status == "closed" and draw(st.booleans()) else None,
        deleted_at=draw(st.none() | times | st.just(T0 - timedelta(days=60))),
        metadata=draw(st.dictionaries(st.sampled_from(["k", "m"]), st.sampled_from([1, "v"]))),
        comments=[
            {"id": f"c{number}", "author": author, "text": "said", "created_at": T0 + later}
            for number, author, later in draw(
                st.lists(
                    st.tuples(
                        st.integers(1, 4),
                        st.sampled_from(["", "bob"]),
                        st.sampled_from([timedelta(0), timedelta(microseconds=1500)]),
                    ),
                    unique_by=lambda item: item[0],
                    max_size=3,
                )
            )
        ],
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.none() | plain_cells(), plain_cells(), plain_cells())
def test_the_plain_path_writes_the_full_paths_bytes(
    base: Cell | None, ours: Cell, theirs: Cell
) -> None:
    sides = [None if base is None else encode_cell(base), encode_cell(ours), encode_cell(theirs)]
    plain = merge_plain(PATH, *sides, None)
    full = merge_file(PATH, *sides)
    assert plain is not None  # every cell drawn here is in hive's own form
    assert full.clean
    assert plain == (full.content, [record.field for record in full.conflicts])


@pytest.mark.parametrize(
    "change",
    [
        {"conflicts": [{"field": "title", "kept": "a", "other": "b"}]},
        {"metadata": {"ratio": 0.5}},
    ],
)
def test_what_the_plain_reader_leaves_to_the_model_goes_to_the_full_path(
    change: dict[str, Any],
) -> None:
    base = Cell(id="hv-abc123", title="Base", created_at=T0, updated_at=T0)
    ours = base.model_copy(update={"title": "Ours", "updated_at": T0 + timedelta(seconds=1)})
    theirs = Cell.model_validate({**base.model_dump(), "labels": ["x"], **change})
    sides = (encode_cell(base), encode_cell(ours), encode_cell(theirs))
    assert merge_plain(PATH, *sides, None) is None
    assert merge_plain(PATH, *sides[:2], encode_cell(ours), None) == (sides[1], [])
    assert merge_file(PATH, *sides).clean


def test_files_other_than_cells_and_broken_cells_go_to_the_full_path() -> None:
    good = encode_cell(Cell(id="hv-abc123", title="A", created_at=T0, updated_at=T0))
    reservations = ".hive/reservations/alice.yaml"
    assert merge_plain(reservations, b"a: 1\n", b"a: 2\n", b"a: 3\n", None) is None
    assert merge_plain(PATH, None, good, b"title: [unclosed\n", None) is None
    assert merge_plain(PATH, None, b"\xff\xfe\n", good, None) is None
    assert merge_plain(PATH, None, None, good, None) == (good, [])  # one side only


# ------------------------------------------------------------------ the histories


def test_loose_history_answers_as_the_repository_does(ws: Workspace, repo: Path) -> None:
    first = create_cell(ws, title="One")
    update_cell(ws, cell_id=first.id, add_labels=["x"])
    git(repo, "gc", "-q")  # some objects packed, later ones loose
    update_cell(ws, cell_id=first.id, add_labels=["y"])
    path = cell_path(first.id)
    paths = discover(str(repo))
    loose, full = LooseHistory(paths), RepoHistory(GitRepo(paths))
    head = loose.head_commit()
    assert head is not None and head == full.head_commit()
    for where in (path, ".hive", ".hive/cells", "missing/file", f"{path}/below", ""):
        assert loose.blob_at(head, where) == full.blob_at(head, where), where
    versions = loose.versions(head, path, limit=2000)
    assert len(versions) == 3 and versions == full.versions(head, path, limit=2000)
    assert all(loose.read_blob(sha) == full.read_blob(sha) for sha in versions)


# ------------------------------------------------------------------ a driver process


def _recording_driver(repo: Path, tmp_path: Path) -> Path:
    """Make git run the driver through a wrapper that records the modules it loaded."""
    script = tmp_path / "driver.py"
    script.write_text(
        "import atexit, json, os, runpy, sys\n"
        "out = os.environ['HIVE_TEST_MODULES']\n"
        "atexit.register(lambda: open(out, 'a').write(json.dumps(sorted(sys.modules)) + '\\n'))\n"
        "sys.argv = ['merge_driver', *sys.argv[1:]]\n"
        "runpy.run_module('hive.cli.merge_driver', run_name='__main__')\n"
    )
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} %O %A %B %P"
    git(repo, "config", DRIVER_KEY, command)
    return tmp_path / "modules.jsonl"


def _merge(repo: Path, branch: str, record: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HIVE_TEST_MODULES": str(record)}
    env.pop("PYTHONPROFILEIMPORTTIME", None)
    return subprocess.run(
        ["git", "-C", str(repo), "merge", "--no-edit", branch],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )


def test_a_driver_process_merging_cells_imports_no_models(
    ws: Workspace, repo: Path, tmp_path: Path
) -> None:
    record = _recording_driver(repo, tmp_path)
    one = create_cell(ws, title="One", labels=["keep"])
    two = create_cell(ws, title="Two")
    git(repo, "branch", "other")
    update_cell(ws, cell_id=one.id, add_labels=["main"], title="One from main")
    update_cell(ws, cell_id=two.id, priority=0)
    git(repo, "checkout", "-q", "other")
    update_cell(ws, cell_id=one.id, add_labels=["other"], title="One from other")
    update_cell(ws, cell_id=two.id, description="from other")
    git(repo, "checkout", "-q", "main")
    result = _merge(repo, "other", record)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "both sides changed title" in result.stderr  # a conflict record, reported
    runs = [json.loads(line) for line in record.read_text().splitlines()]
    assert len(runs) == 2  # one process per cell both sides changed
    for modules in runs:
        assert "hive.domain.mergecore" in modules
        loaded = [name for name in modules if name.split(".")[0] in HEAVY or name in HEAVY]
        assert loaded == []
    fresh = Workspace(str(repo))
    merged = show_cell(fresh, cell_id=one.id)
    assert merged.labels == ["keep", "main", "other"]
    assert merged.title == "One from other"
    assert [(c.field, c.other) for c in merged.conflicts] == [("title", "One from main")]
    second = show_cell(fresh, cell_id=two.id)
    assert (second.priority, second.description) == (0, "from other")
    assert_clean(repo)


def test_comments_of_both_sides_are_merged_without_the_models(
    ws: Workspace, repo: Path, tmp_path: Path
) -> None:
    record = _recording_driver(repo, tmp_path)
    target = create_cell(ws, title="Talked about")
    git(repo, "branch", "other")
    add_comment(ws, cell_id=target.id, text="from main")
    git(repo, "checkout", "-q", "other")
    add_comment(ws, cell_id=target.id, text="from other")
    git(repo, "checkout", "-q", "main")
    result = _merge(repo, "other", record)
    assert result.returncode == 0, result.stdout + result.stderr
    (modules,) = [json.loads(line) for line in record.read_text().splitlines()]
    assert "hive.domain.mergecore" in modules and "hive.domain.merge" not in modules
    merged = show_cell(Workspace(str(repo)), cell_id=target.id)
    assert sorted(c.text for c in merged.comments) == ["from main", "from other"]
    assert_clean(repo)


# ------------------------------------------------------------------ the versions table


def _branchy_history(repo: Path) -> None:
    """Files under .hive changed on branches, merged (some by hand, one merge changing a
    file itself), so that git log -m shows merges against each parent."""
    cells = repo / ".hive" / "cells" / "a"
    cells.mkdir(parents=True, exist_ok=True)
    for number in (1, 2, 3):
        (cells / f"c{number}.yaml").write_text("v0\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "start")
    for round_ in (1, 2, 3):
        git(repo, "checkout", "-q", "-b", f"b{round_}")
        (cells / "c1.yaml").write_text(f"b{round_}\n")
        (cells / f"c{round_ % 3 + 1}.yaml").write_text(f"x{round_}\n")
        git(repo, "commit", "-q", "-a", "-m", f"b{round_}")
        git(repo, "checkout", "-q", "main")
        (cells / "c2.yaml").write_text(f"m{round_}\n")
        git(repo, "commit", "-q", "-a", "-m", f"m{round_}")
        git(repo, "merge", "-q", "--no-ff", "--no-commit", f"b{round_}", check=False)
        (cells / "c1.yaml").write_text(f"b{round_}\n")  # the branch's version
        (cells / "c2.yaml").write_text(f"merged {round_}\n")  # a version of the merge's own
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", f"merge b{round_}")


def test_the_versions_table_holds_what_each_files_log_says(repo: Path) -> None:
    _branchy_history(repo)
    files = sorted(
        set(git(repo, "log", "--all", "--format=", "--name-only", "--", ".hive").split())
    )
    assert len(files) == 3
    for tip in ("main", "b2"):
        commit = git(repo, "rev-parse", tip).strip()
        for limit in (1, 2, 3, 2000):
            table = versions_table(str(repo), commit, limit=limit)
            assert table is not None
            for path in files:
                alone = changed_blobs_by_git(str(repo), commit, path, limit=limit)
                assert table.get(path, []) == alone, (tip, limit, path)


def test_the_second_asker_builds_the_table_and_later_ones_read_it(
    ws: Workspace, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    one = create_cell(ws, title="One")
    update_cell(ws, cell_id=one.id, add_labels=["x"])
    path = cell_path(one.id)
    paths = discover(str(repo))
    head = LooseHistory(paths).head_commit()
    assert head is not None
    expected = changed_blobs_by_git(str(repo), head, path, limit=2000)
    stored = Path(paths.hive_state_dir, TABLES_DIR, f"{head}-2000")
    assert LooseHistory(paths).versions(head, path, limit=2000) == expected  # by its own log
    assert stored.read_bytes() == b""  # the next asker builds it
    assert LooseHistory(paths).versions(head, path, limit=2000) == expected
    assert stored.stat().st_size > 0
    monkeypatch.setenv("PATH", "")  # no git: only the table can answer
    assert LooseHistory(paths).versions(head, path, limit=2000) == expected
    with pytest.raises(Unreadable):
        LooseHistory(paths, tables=False).versions(head, path, limit=2000)


def test_no_table_where_history_can_change_under_a_commit(repo: Path, tmp_path: Path) -> None:
    git(repo, "commit", "-q", "--allow-empty", "-m", "second")
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{repo}", str(shallow))
    assert not LooseHistory(discover(str(shallow))).tables
    assert LooseHistory(discover(str(repo))).tables
    git(repo, "replace", "--graft", "HEAD")
    assert not LooseHistory(discover(str(repo))).tables
