"""The state index: derived from git content only, never stale, rebuilt when broken."""

from __future__ import annotations

import functools
import gc
import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hive.domain.cells import close_cell, create_cell, delete_cell, list_cells, ready, update_cell
from hive.domain.workspace import Workspace
from hive.models import Cell
from hive.store import index as state_index
from tests.conftest import copy_repo, git, isolated_env
from tests.inprocess import fork_call, fork_on_terminal, run_hive

HIVE = [sys.executable, "-m", "hive"]
HEAVY = ("typer", "click", "pydantic", "rich", "dulwich", "ruamel", "mcp")


def hive(
    cwd: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return run_hive(args, cwd=cwd, env={**os.environ, "HIVE_AGENT": "alice", **(env or {})})


def ids_of(result: subprocess.CompletedProcess[str]) -> list[str]:
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    return [cell["id"] for cell in json.loads(result.stdout)]


def index_file(repo: Path) -> Path:
    return repo / ".git" / "hive" / state_index.FILE_NAME


def test_schema_version_follows_the_models() -> None:
    schema = json.dumps(Cell.model_json_schema(), sort_keys=True).encode()
    assert hashlib.sha256(schema).hexdigest()[:16] == state_index.MODEL_FINGERPRINT, (
        "the Cell model changed: set MODEL_FINGERPRINT in hive/store/index.py to the new value"
    )
    assert state_index.MODEL_FINGERPRINT in state_index.SCHEMA


def test_plain_git_commands_are_seen_by_the_very_next_command(ws: Workspace, repo: Path) -> None:
    first = create_cell(ws, title="first")
    hive_ids = ids_of(hive(repo, "ready", "--json"))
    assert hive_ids == [first.id]
    # a hand edit committed with plain git: the next command sees the new title
    path = repo / ".hive" / "cells" / first.id.split("-")[1][0] / f"{first.id}.yaml"
    path.write_text(path.read_text().replace("title: first", "title: edited by hand"))
    git(repo, "commit", "-qam", "edit by hand")
    shown = hive(repo, "list", "--json")
    assert [c["title"] for c in json.loads(shown.stdout)] == ["edited by hand"]
    # a branch with another cell, then checkout back and forth
    git(repo, "checkout", "-qb", "side")
    second = create_cell(Workspace(str(repo), actor="alice"), title="second")
    assert set(ids_of(hive(repo, "ready", "--json"))) == {first.id, second.id}
    git(repo, "checkout", "-q", "main")
    assert ids_of(hive(repo, "ready", "--json")) == [first.id]
    git(repo, "merge", "-q", "--ff-only", "side")
    assert set(ids_of(hive(repo, "list", "--json"))) == {first.id, second.id}
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    assert ids_of(hive(repo, "list", "--json")) == [first.id]


def test_a_pull_that_changes_cells_is_seen(ws: Workspace, repo: Path, tmp_path: Path) -> None:
    create_cell(ws, title="before clone")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    assert len(ids_of(hive(clone, "ready", "--json"))) == 1
    later = create_cell(ws, title="after clone", priority=0)
    git(clone, "pull", "-q", "--ff-only")
    assert ids_of(hive(clone, "ready", "--json"))[0] == later.id


def test_directory_option_gives_the_same_answer_before_or_after_the_command(
    ws: Workspace, repo: Path, tmp_path: Path
) -> None:
    create_cell(ws, title="one")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    answers = set()
    for cwd in (repo, elsewhere, repo / ".hive"):
        for args in (("-C", str(repo), "ready", "--json"), ("ready", "-C", str(repo), "--json")):
            result = hive(cwd, *args)
            assert result.returncode == 0, result.stderr
            answers.add(result.stdout)
        listed = hive(cwd, "list", f"-C{repo}", "--json")
        assert listed.returncode == 0, listed.stderr
    assert len(answers) == 1
    # an empty repository elsewhere: -C after the command is not ignored
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    refused = hive(repo, "ready", "-C", str(other), "--json")
    assert refused.returncode == 2 and "hive" in refused.stderr


_DAMAGE_REASON = {
    "garbage": "could not be read",
    "truncated": "",
    "foreign schema": "it was made for another schema",
    "foreign database": "it holds no hive index",
}


@pytest.mark.parametrize("damage", sorted(_DAMAGE_REASON))
def test_a_broken_index_is_rebuilt_with_a_message_never_trusted(
    ws: Workspace, repo: Path, damage: str
) -> None:
    cells = [create_cell(ws, title=f"cell {n}", priority=n % 5) for n in range(6)]
    expected = ids_of(hive(repo, "ready", "--json"))
    assert sorted(expected) == sorted(c.id for c in cells)
    path = index_file(repo)
    ws.state_index.close()
    gc.collect()  # the in-process command's connections, closed as its process would
    if damage == "garbage":
        path.write_bytes(b"this is not a database" * 100)
    elif damage == "truncated":
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 3])
    elif damage == "foreign database":
        path.unlink()
        db = sqlite3.connect(path)
        db.execute("CREATE TABLE other (x)")
        db.commit()
        db.close()
    else:
        db = sqlite3.connect(path)
        db.execute("UPDATE meta SET value = 'hive-index-0-other' WHERE key = 'schema'")
        db.execute("DELETE FROM ready")  # a foreign index's answers must not be served
        db.commit()
        db.close()
    for wal in (Path(f"{path}-wal"), Path(f"{path}-shm")):
        wal.unlink(missing_ok=True)
    result = hive(repo, "ready", "--json")
    assert ids_of(result) == expected
    assert "rebuilt the state index" in result.stderr
    assert _DAMAGE_REASON[damage] in result.stderr
    assert damage == "foreign schema" or "another schema" not in result.stderr
    again = hive(repo, "ready", "--json")
    assert ids_of(again) == expected and again.stderr == ""


@pytest.mark.parametrize("command", [["list", "--all", "--json"], ["ready", "--json"]])
def test_an_index_that_lost_parsed_cells_of_a_state_it_lists_is_rebuilt(
    ws: Workspace, repo: Path, command: list[str]
) -> None:
    """A readable file that lists a state but lacks the parsed rows of its cells (pages
    lost, rows deleted) is damaged: the lean answer is never the empty or short list it
    would give ('no cells', 'showing 0 of 6 cells' with --all); it is rebuilt with a
    notice and the answer is git's."""
    cells = [create_cell(ws, title=f"cell {n}", priority=n % 5) for n in range(6)]
    expected = ids_of(hive(repo, *command))
    assert sorted(expected) == sorted(c.id for c in cells)
    ws.state_index.close()
    gc.collect()  # the in-process command's connections, closed as its process would
    db = sqlite3.connect(index_file(repo))
    db.execute("DELETE FROM blobs WHERE id IS NOT NULL")  # the states and listings stay
    db.commit()
    db.close()
    result = hive(repo, *command)
    assert ids_of(result) == expected
    assert "rebuilt the state index" in result.stderr
    assert "whose parsed rows are missing" in result.stderr
    again = hive(repo, *command)
    assert ids_of(again) == expected and again.stderr == ""


def _closed_index(ws: Workspace, repo: Path) -> Path:
    """The index file alone (its WAL folded in and removed), with no connection open."""
    path = index_file(repo)
    ws.state_index.close()
    gc.collect()  # the in-process commands' connections, closed as their process would
    db = sqlite3.connect(path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    for wal in (Path(f"{path}-wal"), Path(f"{path}-shm")):
        wal.unlink(missing_ok=True)
    return path


def test_damaged_text_or_documents_in_the_index_rebuild_it(ws: Workspace, repo: Path) -> None:
    """Damage SQLite itself does not report: text that is no longer UTF-8 (the sqlite3
    module's own error, which carries no SQLite error code) and a stored cell document
    that no longer parses. Neither is an internal error: the file is rebuilt with a
    notice and the answer is git's."""
    cells = [create_cell(ws, title=f"cell {n}", priority=n % 5) for n in range(4)]
    for damage in (
        "UPDATE dirs SET name = CAST(X'ff80' AS TEXT) || name WHERE is_tree = 0",
        "UPDATE blobs SET json = CAST('{\"id\": ' AS BLOB) WHERE json IS NOT NULL",
    ):
        db = sqlite3.connect(_closed_index(ws, repo))
        db.execute(damage)
        db.commit()
        db.close()
        _stats_rebuild_it(repo, len(cells))


def _stats_rebuild_it(repo: Path, cells: int) -> None:
    """``hive stats`` and ``hive search`` in a process of their own each (this one keeps
    what it read; forked from the tests' fork server, which never opened a repository):
    the full CLI, which reads every file name, and every stored document (search: each
    cell's title holds 'cell')."""
    from tests.hivefork import hive_command

    stats, search = (
        subprocess.run(hive_command(["--json", *args]), cwd=repo, capture_output=True, text=True)
        for args in (["stats"], ["search", "cell"])
    )
    for result in (stats, search):
        assert result.returncode == 0, result.stderr
        assert "internal error" not in result.stderr
    assert "rebuilt the state index" in stats.stderr + search.stderr
    assert json.loads(stats.stdout)["total"] == cells
    assert json.loads(search.stdout)["result"]["total"] == cells


def test_a_damaged_page_that_gives_a_row_of_another_tree_rebuilds_the_index(
    ws: Workspace, repo: Path
) -> None:
    """A damaged b-tree page can hand back a row of a directory that was not asked for
    (its key bytes changed, the record still well formed, so SQLite does not notice):
    the file is rebuilt, never an internal error."""
    cells = [create_cell(ws, title=f"cell {n}") for n in range(40)]
    path = _closed_index(ws, repo)
    data = path.read_bytes()
    damaged = next(_stray_row_damage(repo, path, data), None)
    assert damaged is not None, "no key change made SQLite return a row of another tree"
    path.write_bytes(damaged)
    _stats_rebuild_it(repo, len(cells))


def _stray_row_damage(repo: Path, path: Path, data: bytes) -> Iterator[bytes]:
    """Copies of the index file in which one directory row's key (its tree id) sorts
    lower than it did, such that a lookup of that tree returns it (whether it does
    depends on where SQLite's binary search of the page lands: each is tried)."""
    for line in git(repo, "ls-tree", "HEAD:.hive/cells").splitlines():
        tree, shard = line.split()[2], line.split("\t")[1]
        names = sorted(git(repo, "ls-tree", "--name-only", f"HEAD:.hive/cells/{shard}").split())
        lower = tree[:-1] + ("0" if tree[-1] != "0" else "/")
        for name in names[1:]:
            row = tree.encode() + name.encode()
            if data.count(row) != 1:
                continue
            path.write_bytes(data.replace(row, lower.encode() + name.encode()))
            db = sqlite3.connect(path)
            found = {r[0] for r in db.execute("SELECT tree FROM dirs WHERE tree IN (?)", (tree,))}
            db.close()
            if found - {tree}:
                yield path.read_bytes()


def test_an_index_that_lacks_a_table_is_rebuilt(ws: Workspace, repo: Path) -> None:
    """A file of this schema without one of its tables (dropped by hand, a damaged
    catalog) is rebuilt with a notice, not used as it is: its lean answers would each
    fail and fall back to the slow full path, with no word, for good."""
    cells = [create_cell(ws, title=f"cell {n}", priority=n % 5) for n in range(3)]
    expected = ids_of(hive(repo, "ready", "--json"))
    assert sorted(expected) == sorted(c.id for c in cells)
    db = sqlite3.connect(_closed_index(ws, repo))
    db.execute("DROP TABLE ready")
    db.commit()
    db.close()
    result = hive(repo, "ready", "--json")
    assert ids_of(result) == expected
    assert "rebuilt the state index" in result.stderr
    assert "it lacks tables of its schema" in result.stderr
    again = hive(repo, "ready", "--json")
    assert ids_of(again) == expected and again.stderr == ""


def test_an_index_that_cannot_be_written_is_kept_in_memory_with_a_notice(
    ws: Workspace, repo: Path
) -> None:
    """A directory where the file should be (as a read-only repository would): every
    command still answers and writes, indexing in memory, and says so once."""
    first = create_cell(ws, title="first", priority=0).id
    ws.state_index.close()
    for path in index_file(repo).parent.glob(f"{state_index.FILE_NAME}*"):
        path.unlink()
    index_file(repo).mkdir()
    notice = f"hive: the state index is kept in memory for this command: {index_file(repo)}"
    for args in (
        ["ready", "--json"],
        ["list"],
        ["create", "second"],
        ["update", first, "-p", "1"],
        ["show", first, "--json"],
    ):
        done = hive(repo, *args, env={"HIVE_AGENT": ""})  # a person writes as themselves
        assert done.returncode == 0, (args, done.stderr)
        assert done.stderr.count(notice) == 1 and "internal error" not in done.stderr, args
    assert json.loads(done.stdout)["priority"] == 1
    assert len(ids_of(hive(repo, "list", "--json"))) == 2
    index_file(repo).rmdir()
    assert hive(repo, "list", "--json").stderr == ""  # a file again


def test_killing_a_process_while_it_builds_the_index_leaves_a_usable_index(
    ws: Workspace, repo: Path
) -> None:
    for number in range(300):  # one commit with many cells, so a cold build takes a while
        (repo / f"f{number}").write_text("x")
    create_cell(ws, title="seed")
    plan_cells = [create_cell(ws, title=f"c{n}") for n in range(40)]
    expected = ids_of(hive(repo, "list", "--json", "--all"))
    assert len(expected) == len(plan_cells) + 1
    for delay in (0.05, 0.12, 0.2, 0.3, 0.45):
        ws.state_index.close()
        index_file(repo).unlink()
        child = subprocess.Popen(
            [*HIVE, "list", "--json", "--all"],
            cwd=repo,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(delay)
        child.send_signal(signal.SIGKILL)
        child.wait()
        assert ids_of(hive(repo, "list", "--json", "--all")) == expected


def test_readers_never_see_a_state_older_than_head(ws: Workspace, repo: Path) -> None:
    create_cell(ws, title="start")
    writers = [fork_call(functools.partial(_six_cells, repo, number)) for number in range(4)]
    checked = 0
    while any(writer.poll() is None for writer in writers) or checked < 3:
        head = git(repo, "rev-parse", "HEAD").strip()
        committed = git(repo, "ls-tree", "-r", "--name-only", head, ".hive/cells").split()
        at_head = {Path(name).stem for name in committed}
        seen = set(ids_of(hive(repo, "list", "--json", "--all")))
        assert at_head <= seen, f"missing {at_head - seen} committed at {head}"
        checked += 1
        time.sleep(0.05)  # an in-process reader is quick: leave the writers the CPU
    for writer in writers:
        assert writer.wait(timeout=120) == 0, writer.communicate()[1]
    assert len(ids_of(hive(repo, "list", "--json", "--all"))) == 25


def _six_cells(repo: Path, number: int) -> None:
    """A writer process: six cells, one commit each."""
    ws = Workspace(str(repo), actor=f"w{number}")
    for n in range(6):
        create_cell(ws, title=f"w{number} {n}")


def _modules_after(repo: Path, *args: str) -> tuple[set[str], str]:
    code = (
        "import io, sys\n"
        "from hive.cli.entry import parse, dispatch\n"
        "out = io.StringIO()\n"
        "sys.stdout = io.TextIOWrapper(io.BytesIO())\n"
        f"code = dispatch(parse({list(args)!r}))\n"
        "sys.stdout = sys.__stdout__\n"
        "print(code)\n"
        "print(' '.join(sorted(m.split('.')[0] for m in sys.modules)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=repo, capture_output=True, text=True, check=True
    )
    code_line, modules = result.stdout.splitlines()[-2:]
    return set(modules.split()), code_line


@pytest.mark.parametrize(
    "args",
    [
        ("ready", "--json"),
        ("ready",),
        ("list", "--json"),
        ("list", "-s", "open", "-p", "1"),
        ("--help",),
        ("--version",),
        ("hooks", "run", "pre-commit"),
    ],
)
def test_read_commands_import_no_heavy_module(
    ws: Workspace, repo: Path, args: tuple[str, ...]
) -> None:
    create_cell(ws, title="one")
    ids_of(hive(repo, "ready", "--json"))  # the state is indexed
    modules, code = _modules_after(repo, *args)
    assert code == "0", "answered without the full CLI"
    assert not modules & set(HEAVY), f"{args} imported {sorted(modules & set(HEAVY))}"
    costly = modules & set(READ_START_UP_COSTLY)
    assert not costly, f"{args} imported {sorted(costly)}"


# Standard library modules a lean read does without (each costs a fresh process
# 0.5-4 ms with what it imports): ``re`` (with enum and the regex compiler),
# ``contextlib``, ``datetime`` and ``sqlite3`` (the package: its dbapi2 imports
# datetime; the index uses the C module ``_sqlite3``), ``importlib``/``warnings``,
# ``functools`` with ``collections`` (``_sqlite3`` asks for ``lru_cache`` alone:
# ``store/sqlerrors.py``).
READ_START_UP_COSTLY = (
    *("re", "contextlib", "datetime", "sqlite3", "importlib", "warnings"),
    *("functools", "collections"),
)


# Read commands the full CLI answers: with --json none of them needs rich (a terminal's
# tables), ruamel (YAML round trips, for writes) or the MCP SDK (``hive mcp`` only).
FULL_READS = [
    ["--json", "show", "{a}", "{b}"],
    ["--json", "list", "--parent", "{a_part}"],
    ["--json", "blocked"],
    ["--json", "stats"],
    ["--json", "dep", "tree", "{a}"],
    ["--json", "reservations"],
    ["--json", "doctor"],
    ["--json", "agent", "list"],
    ["--json", "log", "{a}"],
]


def test_full_cli_reads_with_json_import_no_rich_yaml_round_trip_or_mcp(
    ws: Workspace, repo: Path
) -> None:
    """Measured as the issue asks, with ``python -X importtime``: every command of
    FULL_READS in one fresh process (what they import together, each imports at most)."""
    a, b = create_cell(ws, title="a").id, create_cell(ws, title="b").id
    commands = [[part.format(a=a, b=b, a_part=a[:-1]) for part in args] for args in FULL_READS]
    probe = (
        "import json, sys\n"
        "from tests.inprocess import run_hive\n"
        "for args in json.loads(sys.argv[1]):\n"
        "    done = run_hive(args, cwd=sys.argv[2])\n"
        "    assert done.returncode == 0, (args, done.stderr)\n"
    )
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", probe, json.dumps(commands), str(repo)],
        capture_output=True,
        text=True,
        check=False,
        cwd=Path(__file__).resolve().parents[1],
    )
    assert result.returncode == 0, result.stderr[-2000:]
    imported = {
        line.rpartition("|")[2].strip().split(".")[0]
        for line in result.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert "hive" in imported and "typer" in imported  # the full CLI did run
    assert not imported & {"rich", "ruamel", "mcp"}, sorted(imported & {"rich", "ruamel", "mcp"})


def test_past_epics_are_found_decoding_only_the_epics(ws: Workspace, repo: Path) -> None:
    """swarm_decompose's similar epics: the light facts pick the epics; the other
    cells are not decoded (it decoded every cell)."""
    from hive.domain.swarm.decompose import similar_epics

    auth = create_cell(ws, title="auth login flow", type="epic")
    create_cell(ws, title="login form", parent=auth.id)
    create_cell(ws, title="billing export", type="epic")
    for number in range(20):
        create_cell(ws, title=f"auth login task {number}")
    fresh = Workspace(str(repo), actor="bob")
    found = similar_epics(fresh, "auth login flow")
    assert [(epic["id"], epic["subtasks"]) for epic in found] == [(auth.id, 1)]
    assert fresh.cache.decoded == 3  # the two epics and the found one's subtask


def test_cells_are_immutable_so_no_edit_leaks_into_other_readers(ws: Workspace) -> None:
    cell = create_cell(ws, title="fixed")
    with pytest.raises(Exception, match="frozen"):
        cell.title = "changed in memory"  # type: ignore[misc]
    assert list_cells(ws)[0].title == "fixed"


def test_a_write_reads_only_what_it_needs(ws: Workspace, repo: Path) -> None:
    cells = [create_cell(ws, title=f"c{n}") for n in range(30)]
    fresh = Workspace(str(repo), actor="bob")
    update_cell(fresh, cell_id=cells[3].id, priority=0)
    assert fresh.cache.decoded <= 2  # the cell itself (and nothing else) was decoded
    assert ready(fresh, limit=1)[0].id == cells[3].id


def test_a_write_records_its_state_in_one_transaction_diffed_against_its_base(
    ws: Workspace, repo: Path
) -> None:
    """An in-process write records the parsed cell, the new listings and the commit in one
    WAL commit (as a lean write does); its listings are copied from the state it started
    from, so the shards it did not touch are not looked up one by one."""
    cells = [create_cell(ws, title=f"c{n}") for n in range(16)]  # in ~12 shards
    db = ws.state_index.db
    statements: list[str] = []
    db.set_trace_callback(statements.append)
    try:
        update_cell(ws, cell_id=cells[7].id, priority=0)
        close_cell(ws, cell_id=cells[8].id, reason="done")
        delete_cell(ws, cell_id=cells[9].id)
    finally:
        db.set_trace_callback(None)
    assert sum(statement == "COMMIT" for statement in statements) == 3  # one per write
    looked_up = [s for s in statements if s.startswith("SELECT 1 FROM dirs WHERE tree")]
    assert len(looked_up) <= 3 * 3  # per write: the cells tree and the one shard changed
    assert _index_disagreements(repo) == []
    listed = {c.id for c in list_cells(Workspace(str(repo), actor="bob"), status="all")}
    assert listed == {c.id for c in cells} - {cells[9].id}


def test_list_and_ready_show_a_page_unless_all(ws: Workspace, repo: Path) -> None:
    for number in range(55):
        create_cell(ws, title=f"cell {number}")
    assert len(ids_of(hive(repo, "list", "--json"))) == 50
    assert len(ids_of(hive(repo, "list", "--json", "--all"))) == 55
    assert len(ids_of(hive(repo, "ready", "--json"))) == 50
    assert len(ids_of(hive(repo, "ready", "--json", "--all"))) == 55
    human = hive(repo, "list", env={"COLUMNS": "80"})
    assert "showing 50 of 55" in human.stderr
    assert all(len(line) <= 80 for line in human.stdout.splitlines())
    for _ in range(2):  # the ready list computed, then read back from the index
        ready = hive(repo, "ready", "-n", "3")
        assert ready.stderr == "showing 3 of 55 ready cells (--all for every one)\n"
    assert hive(repo, "ready", "--all").stderr == ""
    assert hive(repo, "ready", "-n", "55").stderr == ""


def test_the_quick_hook_leaves_any_possible_violation_to_the_full_check(
    ws: Workspace, repo: Path
) -> None:
    from hive.domain.reservations import reserve

    reserve(ws.for_actor("bob"), paths=["src/**"], reason="mine")
    (repo / "notes.txt").write_text("free\n")
    git(repo, "add", "notes.txt")
    modules, code = _modules_after(repo, "hooks", "run", "pre-commit")
    assert code == "0" and not modules & set(HEAVY)  # nothing reserved is staged
    (repo / "src").mkdir()
    (repo / "src" / "a.py").write_text("x = 1\n")
    git(repo, "add", "src/a.py")
    _, code = _modules_after(repo, "hooks", "run", "pre-commit")
    assert code == "None"  # the full check decides (and names the holder)
    blocked = hive(repo, "hooks", "run", "pre-commit")
    assert blocked.returncode == 1 and "reserved by bob" in blocked.stderr


def test_one_workspace_serves_calls_from_several_threads(ws: Workspace) -> None:
    import threading

    create_cell(ws, title="main thread")
    outcome: list[object] = []

    def other() -> None:
        try:
            outcome.append(create_cell(ws, title="worker thread").id)
            outcome.append(len(list_cells(ws)))
        except Exception as exc:  # the failure the web board met: sqlite3 thread rule
            outcome.append(exc)

    worker = threading.Thread(target=other)
    worker.start()
    worker.join()
    assert len(outcome) == 2 and outcome[1] == 2, outcome
    assert len(list_cells(ws)) == 2


def test_a_forked_child_opens_its_own_connection(tmp_path: Path) -> None:
    """SQLite connections must not cross fork: the child gets a fresh one."""
    index = state_index.StateIndex(str(tmp_path / "state"))
    parent_db = index.db
    pid = os.fork()
    if pid == 0:  # the child: a new connection, never the parent's
        code = 0 if index.db is not parent_db else 1
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    schema = index.db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
    assert schema == (state_index.SCHEMA,)  # still works


# ------------------------------------------------------------------ a large cold build


LARGE = 2_100  # more than the 2,000 from which a progress bar is drawn; several batches


@pytest.fixture(scope="module")
def large(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tracker of LARGE cells in one commit (copied by each test that uses it)."""
    from hive.domain.bulk import create_cells
    from hive.domain.setup import init_hive
    from tests.conftest import make_repo

    root = make_repo(tmp_path_factory.mktemp("large") / "repo")
    ws = Workspace(str(root), actor="alice")
    init_hive(ws, prefix="hv")
    create_cells(ws, specs=[{"title": f"cell {n}", "priority": n % 5} for n in range(LARGE)])
    ws.state_index.close()
    return root


def _copy_without_index(large: Path, tmp_path: Path) -> Path:
    copy = copy_repo(large, tmp_path / "copy")
    for path in (copy / ".git" / "hive").glob(f"{state_index.FILE_NAME}*"):
        path.unlink()
    return copy


def test_a_cold_build_on_a_terminal_draws_a_progress_bar(large: Path, tmp_path: Path) -> None:
    """A corrupt index on a terminal: the notice, then a bar while every cell is indexed
    again (a missing index is built the same way, without the notice: see below)."""
    repo = _copy_without_index(large, tmp_path)
    index_file(repo).write_bytes(b"not a database" * 1000)
    code, seen = fork_on_terminal(["-C", str(repo), "list", "-n", "1"], module="hive")
    assert code == 0 and b"indexing .hive" in seen
    assert b"hive: rebuilt the state index" in seen and b"showing 1 of 2100 cells" in seen
    piped = hive(repo, "list", "-n", "1")  # the index is whole now: no bar, no notice
    assert piped.returncode == 0
    assert piped.stderr == "showing 1 of 2100 cells (--all for every one)\n"


def test_a_cold_build_streams_the_cells_in_batches(large: Path, tmp_path: Path) -> None:
    """Memory stays flat: the cells are read, parsed and stored BATCH at a time (each
    batch is in the database before the next is read), never all held at once."""
    repo = _copy_without_index(large, tmp_path)
    ws = Workspace(str(repo), actor="alice")
    seen: list[tuple[int, int, int]] = []

    def progress(done: int, total: int) -> None:
        stored = _build_progress(index_file(repo))
        seen.append((done, total, stored[0] if stored else -1))

    ws.progress = progress
    assert len(ws.cells().cells) == LARGE
    steps = [*range(state_index.BATCH, LARGE, state_index.BATCH), LARGE]
    assert seen == [(done, LARGE, done) for done in steps]


def _build_progress(path: Path) -> tuple[int, int] | None:
    """(cell versions stored, states marked built) of an index another process builds."""
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=0.05)
        try:
            blobs = db.execute("SELECT count(*) FROM blobs").fetchone()[0]
            states = db.execute("SELECT count(*) FROM states").fetchone()[0]
        finally:
            db.close()
    except sqlite3.Error:
        return None  # not created yet, or being created
    return int(blobs), int(states)


def test_a_process_killed_between_the_batches_of_a_cold_build_leaves_a_usable_index(
    large: Path, tmp_path: Path
) -> None:
    """The kill lands after some batches are stored and before the state is marked
    built (checked, not hoped for): the next command finishes the build and answers
    in full, with no notice, from an index SQLite finds intact."""
    repo = _copy_without_index(large, tmp_path)
    expected = git(repo, "ls-tree", "-r", "--name-only", "HEAD", ".hive/cells").split()
    assert len(expected) == LARGE
    child = subprocess.Popen(
        [*HIVE, "-C", str(repo), "list", "--json", "--all"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    found = None
    deadline = time.monotonic() + 120
    while child.poll() is None and time.monotonic() < deadline:
        found = _build_progress(index_file(repo))
        if found is not None and found[0] >= state_index.BATCH:
            child.send_signal(signal.SIGKILL)
            break
        time.sleep(0.002)
    child.wait()
    assert child.returncode == -signal.SIGKILL, "the build ended before a batch was seen"
    assert found is not None
    stored, built = _build_progress(index_file(repo)) or (0, 0)
    assert state_index.BATCH <= stored < LARGE and built == 0  # killed mid-build
    db = sqlite3.connect(index_file(repo))
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    db.close()
    listed = hive(repo, "list", "--json", "--all")
    assert sorted(ids_of(listed)) == sorted(Path(name).stem for name in expected)
    assert "rebuilt" not in listed.stderr
    assert _build_progress(index_file(repo)) == (LARGE, 1)


@pytest.fixture(scope="module")
def checked_template(
    tmp_path_factory: pytest.TempPathFactory, hive_template: Path
) -> tuple[Path, list[str], str]:
    """What ``test_checks_of_a_write_walk_the_index_not_the_cells`` copies, made once per
    module: thirty cells (the first waiting for the second, the third closed) and an
    epic with an open subtask; the repository, the thirty ids and the epic's."""
    from hive.domain.cells import add_dependency

    with isolated_env(tmp_path_factory):
        root = copy_repo(hive_template, tmp_path_factory.mktemp("checks") / "repo")
        ws = Workspace(str(root), actor="alice")
        made = [create_cell(ws, title=f"c{n}").id for n in range(30)]
        add_dependency(ws, cell_id=made[0], target=made[1])  # first waits for second
        epic = create_cell(ws, title="epic", type="epic").id
        create_cell(ws, title="subtask", parent=epic)
        close_cell(ws, cell_id=made[2])
    return root, made, epic


@pytest.mark.parametrize(
    "write",
    [
        "dep add",
        "dep add making a cycle",
        "close an epic with an open subtask",
        "close blocked",
        "create with a blocker",
        "create a subtask",
        "delete",
        "start",
        "reopen",
    ],
)
def test_checks_of_a_write_walk_the_index_not_the_cells(
    checked_template: tuple[Path, list[str], str], tmp_path: Path, write: str
) -> None:
    """Dependency cycles, close guards and ids are checked on the index's light facts:
    a write decodes the cells it changes and the few its checks name, never all."""
    from hive.domain.cells import add_dependency, close_cell, delete_cell, reopen_cell, start_cell
    from hive.errors import HiveError

    template, ids, epic = checked_template
    repo = copy_repo(template, tmp_path / "repo")
    first, second = ids[0], ids[1]
    fresh = Workspace(str(repo), actor="alice")
    calls = {
        "dep add": lambda: add_dependency(fresh, cell_id=ids[3], target=ids[4]),
        "dep add making a cycle": lambda: add_dependency(fresh, cell_id=second, target=first),
        "close an epic with an open subtask": lambda: close_cell(fresh, cell_id=epic),
        "close blocked": lambda: close_cell(fresh, cell_id=first),
        "create with a blocker": lambda: create_cell(fresh, title="new", deps=[f"blocks:{ids[5]}"]),
        "create a subtask": lambda: create_cell(fresh, title="new", parent=epic),
        "delete": lambda: delete_cell(fresh, cell_id=ids[6]),
        "start": lambda: start_cell(fresh, cell_id=ids[7]),
        "reopen": lambda: reopen_cell(fresh, cell_id=ids[2]),
    }
    refused = write in (
        "dep add making a cycle",
        "close an epic with an open subtask",
        "close blocked",
    )
    head = git(repo, "rev-parse", "HEAD")
    if refused:
        with pytest.raises(HiveError):
            calls[write]()
        assert git(repo, "rev-parse", "HEAD") == head
    else:
        calls[write]()
        assert git(repo, "rev-parse", "HEAD") != head
    assert 1 <= fresh.cache.decoded <= 2, f"{write} decoded {fresh.cache.decoded} of 34 cells"


def _index_facts(repo: Path, head: str, missing: set[str], stderr: str) -> str:
    """What the state index holds for ``head`` (for a reader that missed cells)."""
    cells = git(repo, "rev-parse", f"{head}:.hive/cells").strip()
    db = sqlite3.connect(index_file(repo))
    try:
        commit = db.execute("SELECT * FROM commits WHERE commit_id = ?", (head,)).fetchall()
        state = db.execute("SELECT * FROM states WHERE key = ?", (cells,)).fetchall()
        rows = db.execute("SELECT count(*) FROM dirs WHERE tree = ?", (cells,)).fetchone()
    finally:
        db.close()
    return (
        f"older than {head}: missing {sorted(missing)}; index: commit {commit}, "
        f"state of {cells} {state}, its dirs rows {rows}; reader's stderr {stderr!r}"
    )


def _index_disagreements(repo: Path) -> list[str]:
    """Where the state index disagrees with git: a commit mapped to other trees than
    its own, or a stored listing of a tree that is not that tree's entries."""
    db = sqlite3.connect(index_file(repo))
    try:
        commits = db.execute("SELECT commit_id, hive, cells FROM commits").fetchall()
        listed: dict[str, set[tuple[str, str, int]]] = {}
        for tree, name, sha, is_tree in db.execute("SELECT tree, name, sha, is_tree FROM dirs"):
            listed.setdefault(tree, set())
            if is_tree != 2:  # the row an empty tree is listed by
                listed[tree].add((name, sha, is_tree))
        states = [key for (key,) in db.execute("SELECT key FROM states")]
    finally:
        db.close()
    wrong: list[str] = []
    for commit, hive_tree, cells in commits:
        found = [
            git(repo, "rev-parse", "-q", "--verify", f"{commit}:{path}", check=False).strip()
            or None
            for path in (".hive", ".hive/cells")
        ]
        if [hive_tree, cells] != found:
            wrong.append(f"commit {commit} mapped to {hive_tree}, {cells}; git: {found}")
    for tree, entries in listed.items():
        lines = git(repo, "ls-tree", tree).splitlines()
        truth = set()
        for line in lines:
            meta, name = line.split("\t", 1)
            _mode, kind, sha = meta.split()
            if kind != "commit":
                truth.add((name, sha, int(kind == "tree")))
        if entries != truth:
            wrong.append(f"tree {tree}: index {sorted(entries ^ truth)} differs from git")
    wrong.extend(f"state {key} has no listing" for key in states if key not in listed)
    return wrong


def test_fresh_cli_writers_and_a_reader_at_once(ws: Workspace, repo: Path) -> None:
    """4 processes run ``hive create`` and ``hive update`` (the lean path, each recording
    its state in the index) on one shared cell and new ones while a reader lists: the
    reader never sees less than HEAD, no update is lost, and the rows the writers left
    are those a build from scratch makes."""
    from tests.conftest import assert_clean
    from tests.inprocess import fork_call

    shared = create_cell(ws, title="shared").id
    hive(repo, "list")  # HEAD's state is indexed, as after any earlier command
    environment = {**os.environ, "HIVE_AGENT": "", "HIVE_DEBUG": "1"}  # a traceback if one fails
    rounds = 3

    def writer(number: int) -> None:
        for turn in range(rounds):
            for args in (
                ["create", f"w{number} {turn}"],
                ["update", shared, "--append-notes", f"w{number} {turn}"],
            ):
                done = run_hive(["-C", str(repo), *args], env=environment)
                sys.stderr.write(done.stderr)  # notices (an index rebuilt) too
                if done.returncode != 0:
                    sys.exit(1)

    writers = [fork_call(lambda n=number: writer(n)) for number in range(4)]  # type: ignore[misc]

    def running(forked: Any) -> bool:
        if forked.returncode is None:
            pid, status = os.waitpid(forked.pid, os.WNOHANG)
            if pid:
                forked.returncode = os.waitstatus_to_exitcode(status)
        return forked.returncode is None

    while any([running(forked) for forked in writers]):
        head = git(repo, "rev-parse", "HEAD").strip()
        committed = git(repo, "ls-tree", "-r", "--name-only", head, ".hive/cells").split()
        listed = hive(repo, "list", "--json", "--all")
        assert listed.stderr == "", listed.stderr  # nothing rebuilt, nothing warned
        seen = set(ids_of(listed))
        missing = {Path(name).stem for name in committed} - seen
        assert not missing, (
            _index_facts(repo, head, missing, listed.stderr),
            _index_disagreements(repo),
        )
    said = {number: forked.communicate()[1] for number, forked in enumerate(writers)}
    for forked in writers:
        assert forked.returncode == 0, (said, _index_disagreements(repo))
    assert not any(said.values()), said
    assert _index_disagreements(repo) == []
    titles = {cell["title"] for cell in json.loads(hive(repo, "list", "--json", "--all").stdout)}
    assert titles == {"shared"} | {f"w{n} {t}" for n in range(4) for t in range(rounds)}
    notes = json.loads(hive(repo, "show", shared, "--json").stdout)["notes"].splitlines()
    assert sorted(notes) == sorted(f"w{n} {t}" for n in range(4) for t in range(rounds))
    assert_clean(repo)
    ws.state_index.close()
    db = sqlite3.connect(index_file(repo))
    written = set(db.execute("SELECT * FROM dirs").fetchall())
    db.close()
    for path in index_file(repo).parent.glob(f"{state_index.FILE_NAME}*"):
        path.unlink()
    ids_of(hive(repo, "list", "--json", "--all"))  # HEAD's state built from scratch
    db = sqlite3.connect(index_file(repo))
    rebuilt = set(db.execute("SELECT * FROM dirs").fetchall())
    db.close()
    assert rebuilt <= written


def test_a_command_leaves_no_process_behind(ws: Workspace, repo: Path) -> None:
    """The index is saved by the process that did the work, before it returns: no child
    forked at exit, nothing still running in the command's process group afterwards
    (a killed process group loses nothing)."""
    cell = create_cell(ws, title="one").id
    ws.state_index.close()
    index_file(repo).unlink()  # the first command builds the index
    commands = [
        ["ready", "--json"],
        ["create", "two"],
        ["update", cell, "-p", "0"],
        ["list", "--parent", cell[:-1]],  # the full CLI (resolves a partial id)
        ["--json", "close", cell],
    ]
    for args in commands:
        child = subprocess.Popen(
            [*HIVE, "-C", str(repo), *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own process group, numbered by its pid
            env={**os.environ, "HIVE_AGENT": ""},
        )
        _, err = child.communicate(timeout=120)
        assert child.returncode == 0, (args, err)
        left = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rpartition(")")[2].split()
            except OSError:
                continue  # ended meanwhile
            if int(fields[2]) == child.pid:  # the process group
                left.append(stat.parent.name)
        assert left == [], f"hive {' '.join(args)} left processes {left} running"
    assert json.loads(hive(repo, "show", cell, "--json").stdout)["status"] == "closed"


def test_one_transaction_commits_its_writes_together_or_not_at_all(tmp_path: Path) -> None:
    """A lean write records its new state (parsed cell, listings, commit) in one
    transaction: nothing of it is seen before the end, and an error undoes all of it."""
    index = state_index.StateIndex(str(tmp_path / "state"))
    first, second = "a" * 40, "d" * 40
    with pytest.raises(RuntimeError), index.one_transaction():
        index.remember_commit(first, "b" * 40, "c" * 40)
        raise RuntimeError("midway")
    assert index.trees_of(first) is None
    with index.one_transaction():
        index.remember_commit(first, "b" * 40, "c" * 40)
        index.remember_commit(second, None, None)
        other = sqlite3.connect(index.path)  # another reader sees nothing yet
        assert other.execute("SELECT COUNT(*) FROM commits").fetchone()[0] == 0
        other.close()
    assert index.trees_of(first) == ("b" * 40, "c" * 40)
    assert index.trees_of(second) == (None, None)


def _git_tree_lister(repo: Path) -> Any:
    def list_tree(tree: str) -> list[tuple[str, str, bool]]:
        listing = []
        for line in git(repo, "ls-tree", tree).splitlines():
            meta, name = line.split("\t", 1)
            _, kind, sha = meta.split()
            listing.append((name, sha, kind == "tree"))
        return listing

    return list_tree


@pytest.mark.parametrize("diffed", [False, True], ids=["from-scratch", "diffed-with-base"])
def test_a_rebuild_by_another_process_midway_never_records_a_partial_state(
    ws: Workspace, repo: Path, tmp_path: Path, diffed: bool
) -> None:
    """Another process rebuilds the index (it found the file damaged) while this one
    indexes a state: what this one records is the whole state, never listings that
    point at parsed cells (or a base listing) the rebuild dropped."""
    from hive.store.cellrows import parse_for_index

    made = [create_cell(ws, title=f"cell {n}").id for n in range(3)]
    base = git(repo, "rev-parse", "HEAD:.hive/cells").strip()
    update_cell(ws, cell_id=made[0], title="changed")
    key = git(repo, "rev-parse", "HEAD:.hive/cells").strip()
    list_tree = _git_tree_lister(repo)

    def read_all(wanted: Any) -> Any:
        for sha, path in wanted:
            body = subprocess.run(
                ["git", "-C", str(repo), "cat-file", "blob", sha], capture_output=True, check=True
            ).stdout
            yield sha, path, body

    folder = str(tmp_path / "state")
    index, other = state_index.StateIndex(folder), state_index.StateIndex(folder)
    index.ensure_state(base, list_tree, read_all, parse_for_index)  # parsed before
    rebuilds: list[str] = []

    def read_rebuilding(wanted: Any) -> Any:
        if not rebuilds:  # once, after this process was told which cells are parsed
            other.reset("damaged, as another process found it")
            rebuilds.append(other.notices[-1])
        yield from read_all(wanted)

    index.ensure_state(
        key, list_tree, read_rebuilding, parse_for_index, base=base if diffed else None
    )
    entries = index.entries(key)
    assert sorted(entry.id or "" for entry in entries) == sorted(made)
    assert all(entry.error is None for entry in entries)
    assert rebuilds and index.has_state(key)
    index.close()
    other.close()


def test_readers_never_answer_from_a_state_a_rebuild_dropped(
    ws: Workspace, repo: Path, tmp_path: Path
) -> None:
    """A rebuild by another process between "this state is stored" and the queries
    that read it: the lean queries say "not stored" (the command is left to the full
    path) instead of an empty list, no empty ready list is recorded for the state,
    and a workspace whose state was read before the rebuild still decodes its cells
    (from git, where the index lost them)."""
    made = [create_cell(ws, title=f"cell {n}").id for n in range(3)]
    key = git(repo, "rev-parse", "HEAD:.hive/cells").strip()
    before = ws.cells()  # the state is read; its cells are decoded on use
    folder = str(index_file(repo).parent)
    index, other = state_index.StateIndex(folder), state_index.StateIndex(folder)
    assert index.has_state(key) and len(index.list_rows(key, state_index.ListQuery())[0]) == 3
    other.reset("damaged, as another process found it")
    assert index.list_rows(key, state_index.ListQuery()) is None
    assert index.stored_entries(key) is None and index.entries(key) == []
    index.store_ready(key, [])  # a ready list computed from the dropped state
    assert index.ready(key) is None
    assert sorted(before.cells[cell_id].title for cell_id in made) == [
        "cell 0",
        "cell 1",
        "cell 2",
    ]
    listed = hive(repo, "list", "--json", "--all")
    assert sorted(ids_of(listed)) == sorted(made)
    assert json.loads(hive(repo, "ready", "--json").stdout)[0]["id"] in made
    index.close()
    other.close()


def test_the_count_of_unusable_cell_files_reads_their_own_index(ws: Workspace, repo: Path) -> None:
    """``hive list`` and ``ready`` count the unusable cell files of the state each time:
    a partial index of them (nearly always empty) answers in point lookups, not by
    reading every cell row; a file made before it existed gets it when opened."""
    from hive.store.layout import cell_path

    cells = [create_cell(ws, title=f"cell {n}") for n in range(3)]
    broken = repo / cell_path("hv-brkn01")
    broken.parent.mkdir(exist_ok=True)
    broken.write_text("title: [unclosed\n")
    other_last = "z" if cells[0].id[-1] != "z" else "y"  # another cell's name, never its own
    misnamed = repo / cell_path(cells[0].id).replace(cells[0].id, cells[0].id[:-1] + other_last)
    misnamed.write_bytes((repo / cell_path(cells[0].id)).read_bytes())
    git(repo, "add", ".hive")
    git(repo, "commit", "-qm", "a broken and a misnamed cell file")
    seen = Workspace(str(repo), actor="checker")
    key = seen.cells().key
    problems = seen.state_index.problems(key)
    assert sorted(path for path, _ in problems) == sorted(
        str(path.relative_to(repo)) for path in (broken, misnamed)
    )
    assert seen.state_index.problem_count(key) == 2
    plan = seen.state_index.db.execute(
        "EXPLAIN QUERY PLAN SELECT count(*) FROM dirs c JOIN dirs s INDEXED BY dirs_problems"
        " ON s.tree = c.sha WHERE c.tree = ? AND c.is_tree = 1 AND "
        + state_index._problem_files("s."),
        [key],
    ).fetchall()
    assert any("USING INDEX dirs_problems (tree=?)" in row[3] for row in plan), plan
    path = seen.state_index.path
    seen.state_index.close()
    with sqlite3.connect(path) as db:
        db.execute("DROP INDEX dirs_problems")
    again = Workspace(str(repo), actor="checker")
    assert again.state_index.problem_count(again.cells().key) == 2
    listed = hive(repo, "list")
    assert listed.stderr.count("warning:") == 2, listed.stderr


def test_ready_lists_of_old_states_are_dropped_not_kept_forever(ws: Workspace, repo: Path) -> None:
    """Each write makes a new state, and the first fresh ``hive ready`` of a state stores
    its whole ready list; no list was ever dropped, so the index grew by a list per
    write (57 writes at 10,000 cells: 15 -> 115 MB, every ready slower). At most
    READY_LISTS_KEPT lists stay, and every answer is still the state's own."""
    cells = [create_cell(ws, title=f"cell {n}", priority=n % 4).id for n in range(6)]
    for step in range(3 * state_index.READY_LISTS_KEPT):
        if step % 2 and cells:
            close_cell(ws, cell_id=cells.pop())
        else:
            cells.insert(0, create_cell(ws, title=f"new {step}", priority=step % 4).id)
        expected = [c.id for c in ready(Workspace(str(repo), actor="alice"))]
        assert ids_of(hive(repo, "ready", "--json", "--all")) == expected
        with sqlite3.connect(index_file(repo)) as db:
            whole, derived = db.execute(
                "SELECT sum(base IS NULL), sum(base IS NOT NULL) FROM ready_done"
            ).fetchone()
            keys = db.execute("SELECT count(DISTINCT key) FROM ready").fetchone()[0]
            deltas = db.execute("SELECT count(DISTINCT key) FROM ready_delta").fetchone()[0]
        assert 1 <= whole <= state_index.READY_LISTS_KEPT
        assert derived <= state_index.DERIVED_LISTS_KEPT
        assert keys == whole  # no rows of a list no longer done
        assert deltas <= derived
