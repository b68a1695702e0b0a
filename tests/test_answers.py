"""Fresh processes: answers of read commands reused between writes, never stale;
a fresh writer parses only the cells that changed."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from hive.domain.cells import create_cell, list_cells, update_cell
from hive.domain.workspace import Workspace
from hive.store.layout import cell_path
from tests.conftest import git

ENTRY = [sys.executable, "-m", "hive"]  # the console script's entry point (answers first)
FULL = [sys.executable, "-m", "hive.cli.main"]  # always the whole CLI


def run(repo: Path, *args: str, entry: list[str] = ENTRY, **env: str) -> tuple[bytes, bytes]:
    result = subprocess.run(
        [*entry, "-C", str(repo), *args],
        capture_output=True,
        check=False,
        env={**os.environ, **env},
    )
    assert result.returncode == 0, result.stderr
    return result.stdout, result.stderr


def saved_ready_list(repo: Path) -> Path:
    """The ready list a CLI process saves in a forked child as it exits."""
    path = state_dir(repo) / "ready.answer"
    deadline = time.monotonic() + 10
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    return path


def ready_ids(output: bytes) -> list[str]:
    import json

    return [cell["id"] for cell in json.loads(output)]


def state_dir(repo: Path) -> Path:
    return repo / ".git" / "hive"


def test_ready_answers_are_byte_identical_and_follow_every_write(ws: Workspace, repo: Path) -> None:
    first = create_cell(ws, title="first", priority=1)
    create_cell(ws, title="second", priority=0)
    full, _ = run(repo, "ready", "--json", entry=FULL)
    assert saved_ready_list(repo).exists()
    served, _ = run(repo, "ready", "--json")  # from the list saved by the full run above
    assert served == full
    assert (
        run(repo, "ready", "--json", "-n", "1")[0]
        == run(repo, "ready", "--json", "-n", "1", entry=FULL)[0]
    )
    assert len(ready_ids(run(repo, "ready", "--json", "--limit", "1")[0])) == 1

    # A library write (no process exit in between) moves HEAD: never a stale answer.
    third = create_cell(ws, title="third", priority=0)
    assert third.id in ready_ids(run(repo, "ready", "--json")[0])
    update_cell(ws, cell_id=first.id, status="deferred")
    after = run(repo, "ready", "--json")[0]
    assert first.id not in ready_ids(after)
    assert after == run(repo, "ready", "--json", entry=FULL)[0]


def test_a_code_commit_keeps_the_answers(ws: Workspace, repo: Path) -> None:
    create_cell(ws, title="work")
    before, _ = run(repo, "list", "--json")
    (repo / "code.py").write_text("x = 1\n")
    git(repo, "add", "code.py")
    git(repo, "commit", "-qm", "code only")
    answers = state_dir(repo) / "answers"
    stored = {entry.name for entry in answers.iterdir()}
    again, _ = run(repo, "list", "--json")
    assert again == before
    assert {entry.name for entry in answers.iterdir()} == stored  # served, not recomputed


def test_staging_mode_and_warnings_are_never_cached(ws: Workspace, repo: Path) -> None:
    create_cell(ws, title="committed")
    run(repo, "ready", "--json")
    run(repo, "ready", "--json")
    staged = Workspace(str(repo), actor="alice", autocommit=False)
    pending = create_cell(staged, title="staged only")
    assert pending.id in ready_ids(run(repo, "ready", "--json", HIVE_AUTOCOMMIT="0")[0])
    assert pending.id not in ready_ids(run(repo, "ready", "--json")[0])

    git(repo, "reset", "-q", "--hard")
    broken = repo / cell_path("hv-zzzzzz")
    broken.parent.mkdir(parents=True, exist_ok=True)
    broken.write_text("id: [unclosed\n")
    git(repo, "add", str(broken))
    git(repo, "commit", "-qm", "a broken cell", "--no-verify")
    for _ in range(2):
        _, stderr = run(repo, "list", "--json")
        assert b"hv-zzzzzz" in stderr


def test_a_fresh_writer_parses_only_what_changed(ws: Workspace, repo: Path) -> None:
    cells = [create_cell(ws, title=f"cell {n}") for n in range(30)]
    reader = Workspace(str(repo), actor="bob")
    assert len(list_cells(reader)) == 30  # a fresh process parses and saves the index
    assert reader.cache.parsed == 30
    create_cell(ws, title="one more")  # HEAD moves on: the saved index is one behind
    writer = Workspace(str(repo), actor="carol")
    update_cell(writer, cell_id=cells[0].id, priority=0)
    assert writer.cache.parsed == 1  # only the new cell; the other 30 come from the save


def test_a_long_lived_writer_saves_in_the_background(ws: Workspace, repo: Path) -> None:
    ws.save_after_writes(0.05)
    cell = create_cell(ws, title="written by a server")
    commit = git(repo, "rev-parse", "HEAD").strip()
    path = saved_ready_list(repo)
    deadline = time.monotonic() + 10
    while commit.encode() not in path.read_bytes() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert commit.encode() in path.read_bytes()
    served, _ = run(repo, "ready", "--json")
    assert cell.id in ready_ids(served)
    assert served == run(repo, "ready", "--json", entry=FULL)[0]


def test_a_reader_waits_for_a_ready_list_that_is_being_saved(ws: Workspace, repo: Path) -> None:
    from hive.store import ready_answer

    create_cell(ws, title="first")
    run(repo, "ready", "--json", entry=FULL)
    saved_ready_list(repo)
    cell = create_cell(ws, title="just written")  # nothing saved for this commit yet
    commit = git(repo, "rev-parse", "HEAD").strip()
    ready_answer.mark_pending(str(state_dir(repo)), commit)
    assert ready_answer.pending(str(state_dir(repo)), commit)
    answers = state_dir(repo) / "answers"
    before = sorted(answers.iterdir()) if answers.exists() else []
    reader = subprocess.Popen(
        [*ENTRY, "-C", str(repo), "ready", "--json"], stdout=subprocess.PIPE, env=os.environ
    )
    time.sleep(0.3)  # the reader is waiting for the list, not computing its own
    ws.save_cache()
    served, _ = reader.communicate(timeout=30)
    assert cell.id in ready_ids(served)
    # Served from the saved list: the full CLI (which records its answer) never ran.
    assert (sorted(answers.iterdir()) if answers.exists() else []) == before
    assert served == run(repo, "ready", "--json", entry=FULL)[0]
