"""The lean write path (``hive/cli/lean_write.py``): ``hive create``/``update``/``close``
in a fresh process without typer, pydantic, rich, ruamel or dulwich.

Every answer it gives must be exactly the full CLI's: the same file, the same commit
(message, trailers, author; with the clock and the id generator fixed, the same
commit id), the same git index row, the same state index rows and the same output.
Everything it does not handle exactly is deferred (``dispatch`` returns None and
nothing is written) to the full CLI.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import signal
import sqlite3
import subprocess
import sys
import zlib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic_core import to_json

from hive.cli import entry
from hive.domain.cells import close_cell, create_cell, start_cell, update_cell
from hive.domain.setup import init_hive
from hive.domain.workspace import Workspace
from hive.jsontext import inert_bytes
from hive.models import CELL_TYPES, DEPENDENCY_TYPES, STATUSES, Cell, Comment
from hive.store import celldoc
from hive.store.cells import decode_cell, encode_cell, parsed_cell
from hive.store.yamlfast import fast_loads
from tests.conftest import agent_env, assert_clean, credential, git, isolated_env, make_repo
from tests.conftest import copy_repo as copy_template
from tests.gitchecks import assert_fsck_clean, commits_shown, rev_parse
from tests.inprocess import run_hive
from tests.templates import without_sample_hooks

FIXED_NOW = datetime(2026, 11, 25, 3, 4, 5, 678000, tzinfo=UTC)
FIXED_EPOCH = 1795575845


# ------------------------------------------------------------------ fixtures


@pytest.fixture(scope="module")
def built_base(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    with isolated_env(tmp_path_factory):
        return build_base(tmp_path_factory.mktemp("built") / "base")


@pytest.fixture
def base(built_base: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    """A copy of ``build_base``'s repository (built once for the module), this test's own."""
    root = tmp_path / "base"
    copy_template(built_base["root"], root)
    return {"root": root, "ids": dict(built_base["ids"])}


def build_base(root: Path) -> dict[str, Any]:
    """A repository with a few cells: open, claimed by someone else, closed, blocked
    (by an open and by a closed cell), an epic with a child, one with comments, and
    three with ids chosen to share prefixes (``SHARED``), the first deleted; with the
    prefixes of ``PREFIXES`` (of open's id, with and without ``hv-``, past the deleted
    cell, and one two live cells share)."""
    without_sample_hooks(make_repo(root))
    ws = Workspace(str(root), actor="alice")
    init_hive(ws, prefix="hv")
    ids: dict[str, str] = {}
    ids["open"] = create_cell(ws, title="open one", labels=["a", "b"], description="x\ny\n").id
    ids["claimed"] = create_cell(ws, title="claimed by bob").id
    start_cell(ws.for_actor("bob"), cell_id=ids["claimed"])
    ids["closed"] = create_cell(ws, title="closed one").id
    close_cell(ws, cell_id=ids["closed"], reason="done")
    ids["blocked"] = create_cell(ws, title="waits", deps=[f"blocks:{ids['open']}"]).id
    ids["freed"] = create_cell(ws, title="was waiting", deps=[f"blocks:{ids['closed']}"]).id
    ids["epic"] = create_cell(ws, title="an epic", type="epic").id
    create_cell(ws, title="its child", parent=ids["epic"])
    ids["mine"] = create_cell(ws, title="claimed by me", assignee="Test User").id
    update_cell(ws.for_actor("Test User"), cell_id=ids["mine"], status="in_progress")
    from hive.domain.annotate import add_comment

    ids["commented"] = create_cell(ws, title="with a comment").id
    add_comment(ws, cell_id=ids["commented"], text="hello")
    ids.update(create_shared(ws))
    ids.update(prefix=ids["open"][:-1], hash_prefix=ids["open"][3:-1], **PREFIXES)
    ids["open_upper"] = ids["open"].upper()
    Workspace(str(root)).cells()  # the state index knows HEAD's state
    return {"root": root, "ids": ids}


# Cells with ids that share prefixes: "zzq0a" begins a deleted cell's and a live
# one's (it names the live one), "zzq0" two live cells' (ambiguous).
SHARED = {"gone": "zzq0a0", "shared": "zzq0a1", "sibling": "zzq0b1"}
PREFIXES = {"past_gone": "zzq0a", "ambiguous": "zzq0", "gone_hash": "zzq0a0"}


def create_shared(ws: Workspace) -> dict[str, str]:
    """The cells of ``SHARED`` (their ids drawn as given), the first one deleted."""
    import hive.store.ids
    from hive.domain.cells import delete_cell

    drawn = iter(SHARED.values())
    real = hive.store.ids.random_part
    hive.store.ids.random_part = lambda n: next(drawn)
    try:
        ids = {name: create_cell(ws, title=f"{name} one").id for name in SHARED}
    finally:
        hive.store.ids.random_part = real
    delete_cell(ws, cell_id=ids["gone"])
    return ids


@pytest.fixture
def frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    """One clock and one id sequence for both paths (so their commits are identical)."""
    import time

    import hive.cli.lean_write
    import hive.domain.cells

    monkeypatch.setattr(hive.domain.cells, "utc_now", lambda: FIXED_NOW)
    monkeypatch.setattr(hive.cli.lean_write, "utc_now", lambda: FIXED_NOW)
    monkeypatch.setattr(time, "time", lambda: float(FIXED_EPOCH))
    reset_ids(monkeypatch)


def twin(base: dict[str, Any], tmp_path: Path, name: str) -> Path:
    copy = tmp_path / name
    copy_template(base["root"], copy)
    return copy


def lean_run(root: Path, args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[Any, str]:
    code = entry.dispatch(entry.parse(["-C", str(root), *args]))
    captured = capsys.readouterr()
    lean_run.err = captured.err  # type: ignore[attr-defined]
    return code, captured.out


def full_run(root: Path, args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[Any, str]:
    from hive.cli.main import run

    with pytest.raises(SystemExit) as stopped:
        run(entry.parse(["-C", str(root), *args]).argv())
    captured = capsys.readouterr()
    full_run.err = captured.err  # type: ignore[attr-defined]
    return stopped.value.code, captured.out


def reset_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    import hive.store.ids

    counter = itertools.count()
    monkeypatch.setattr(
        hive.store.ids, "random_part", lambda n: f"{next(counter):0{n}d}"[-n:].replace("1", "z")
    )


def index_rows(root: Path, head: str, blob: str) -> list[Any]:
    db = sqlite3.connect(root / ".git" / "hive" / "index.sqlite3")
    try:
        return [
            db.execute("SELECT * FROM blobs WHERE blob = ?", (blob,)).fetchall(),
            db.execute("SELECT hive, cells FROM commits WHERE commit_id = ?", (head,)).fetchall(),
        ]
    finally:
        db.close()


def outcome(root: Path) -> dict[str, Any]:
    """What a write leaves: HEAD, its message, the index rows, the changed files (HEAD,
    its message and its files asked of one ``git show``)."""
    [(shown, changed)] = commits_shown(root, "%H%n%an <%ae>%n%B", "HEAD")
    head, message = shown.split("\n", 1)
    files = {path: (root / path).read_bytes() for path in changed if (root / path).exists()}
    staged = git(root, "ls-files", "-s", "--", *changed) if changed else ""
    blobs = [line.split()[1] for line in staged.splitlines()]
    return {
        "head": head,
        "message": message,
        "files": files,
        "staged": staged,
        "index": [index_rows(root, head, blob) for blob in blobs],
        "status": git(root, "status", "--porcelain"),
    }


# ------------------------------------------------------------------ same results


COMMANDS = {
    "create": ["create", "a plain title"],
    "create-all": [
        "create",
        "  Ünïcode  title ",
        "-t",
        "bug",
        "-p",
        "P0",
        "-d",
        "multi\nline\n",
        "-l",
        "a",
        "-l",
        "b",
        "-l",
        "a",
        "--assignee",
        "bob",
        "--json",
    ],
    "create-options-first": ["--json", "create", "--type=chore", "-p", "4", "first"],
    "create-comma-labels": ["--json", "create", "tagged", "-l", "x,y", "-l", " z ,x"],
    "update-comma-labels": [
        "--json",
        "update",
        "{open}",
        "--add-label",
        "c,d",
        "--remove-label",
        "a,b",
    ],
    "update-priority": ["update", "{open}", "-p", "1"],
    "update-many": [
        "update",
        "{mine}",
        "-s",
        "blocked",
        "--title",
        "renamed",
        "--append-notes",
        "note",
        "--add-label",
        "x",
        "--remove-label",
        "a",
        "-t",
        "feature",
        "-d",
        "new text",
    ],
    "update-take": ["update", "{open}", "-s", "in_progress", "--assignee", "Test User"],
    "update-clear-assignee": ["update", "{mine}", "--assignee", ""],
    "update-close": ["update", "{open}", "-s", "closed", "--json"],
    "update-reopen": ["update", "{closed}", "-s", "open"],
    "update-closed-again": ["update", "{closed}", "-s", "closed"],
    "update-nothing": ["update", "{open}"],
    "update-same": ["update", "{open}", "-s", "open", "--title", "open one", "--add-label", "a"],
    "close": ["close", "{open}", "-r", "done", "--json"],
    "close-freed": ["close", "{freed}"],
    "close-mine": ["close", "{mine}", "--reason=finished"],
    # ids by prefix, resolved as the full path resolves them
    "update-by-prefix": ["update", "{prefix}", "-p", "1"],
    "update-by-hash-prefix": ["update", "{hash_prefix}", "-s", "in_progress", "--json"],
    "update-past-deleted": ["update", "{past_gone}", "--title", "kept"],
    "close-by-hash-prefix": ["close", "{hash_prefix}", "-r", "done"],
    "close-past-deleted": ["close", "hv-{past_gone}", "--json"],
    "update-upper-case": ["update", "HV-{past_gone}", "-p", "1"],
    "close-upper-case": ["close", "{open_upper}"],
}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_lean_and_full_paths_give_the_same_result(
    name: str,
    built_base: dict[str, Any],
    tmp_path: Path,
    frozen: None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Twins of the module's repository (only read here): the same output and outcome."""
    base = built_base
    args = [part.format(**base["ids"]) for part in COMMANDS[name]]
    lean_repo, full_repo = twin(base, tmp_path, "lean"), twin(base, tmp_path, "full")
    reset_ids(monkeypatch)
    code, lean_out = lean_run(lean_repo, args, capsys)
    assert code == 0, "the lean path deferred a form it should handle"
    reset_ids(monkeypatch)
    full_code, full_out = full_run(full_repo, args, capsys)
    assert full_code == 0
    assert lean_out == full_out
    lean, full = outcome(lean_repo), outcome(full_repo)
    assert lean == full
    assert lean["status"] == ""
    [before] = rev_parse(base["root"], "HEAD")
    changes = name not in ("update-nothing", "update-same", "update-closed-again")
    if changes:
        assert lean["head"] != before
    else:  # no commit: nothing asked, or only what the cell already has
        assert lean["head"] == before
    if args[0] == "update" and "--json" not in args:  # and it says which
        assert ("nothing to change in " in lean_out) is not changes, (name, lean_out)
        assert lean_out.startswith("updated ") is changes, (name, lean_out)
    assert_fsck_clean(lean_repo)  # the status is checked above


def test_an_agent_with_its_credential_writes_as_itself(
    base: dict[str, Any],
    tmp_path: Path,
    frozen: None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    credential(base["root"], "worker")  # registered before the twins are made
    lean_repo, full_repo = twin(base, tmp_path, "lean"), twin(base, tmp_path, "full")
    for key, value in agent_env(base["root"], "worker", {}).items():
        monkeypatch.setenv(key, value)
    args = ["create", "by an agent"]
    reset_ids(monkeypatch)
    assert lean_run(lean_repo, args, capsys)[0] == 0
    reset_ids(monkeypatch)
    assert full_run(full_repo, args, capsys)[0] == 0
    lean = outcome(lean_repo)
    assert lean == outcome(full_repo)
    assert lean["message"].startswith("worker <worker@hive.local>\n")
    assert "Hive-Agent: worker" in lean["message"]
    assert "Hive-Identity" not in lean["message"]


# ------------------------------------------------------------------ deferring


DEFERRED = {
    "parent": ["create", "child", "--parent", "{epic}"],
    "dep": ["create", "x", "--dep", "blocks:{open}"],
    "files": ["create", "x", "--files", "src/*.py"],
    "from": ["create", "--from", "cells.jsonl"],
    "help": ["create", "--help"],
    "attached-short-value": ["create", "x", "-p1"],
    "twice": ["create", "x", "-p", "1", "-p", "2"],
    "no-title": ["create"],
    "blank-title": ["create", "   "],
    "bad-priority": ["create", "x", "-p", "9"],
    "control-title": ["create", "a\x1bb"],
    "ambiguous-id": ["update", "{ambiguous}", "-p", "1"],
    "ambiguous-close": ["close", "hv-{ambiguous}"],
    "deleted-by-prefix": ["close", "{gone_hash}"],  # its whole hash: the deleted cell
    "deleted-id": ["update", "{gone}", "-p", "1"],
    "spaces-around": ["update", " {open}", "-p", "1"],
    "unknown-id": ["update", "hv-nothere", "-p", "1"],
    "unknown-prefix": ["close", "zzz"],
    "force": ["update", "{claimed}", "-s", "open", "--force", "--reason", "r"],
    "not-owner": ["update", "{claimed}", "-s", "open"],
    "not-owner-close": ["close", "{claimed}"],
    "not-owner-priority": ["update", "{claimed}", "-p", "0"],
    "several-ids": ["close", "{open}", "{freed}"],
    "blocked-close": ["close", "{blocked}"],
    "blocked-update-close": ["update", "{blocked}", "-s", "closed"],
    "epic-close": ["close", "{epic}"],
    "closed-close": ["close", "{closed}"],
    "comments": ["update", "{commented}", "-p", "0"],
    "bad-status": ["update", "{open}", "-s", "nope"],
}


@pytest.mark.parametrize("name", sorted(DEFERRED))
def test_what_the_lean_path_cannot_answer_exactly_is_deferred(
    name: str, base: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    root = base["root"]
    head = git(root, "rev-parse", "HEAD")
    code, out = lean_run(root, [part.format(**base["ids"]) for part in DEFERRED[name]], capsys)
    assert code is None
    assert out == ""
    assert git(root, "rev-parse", "HEAD") == head
    assert_clean(root)


IDENTITY_COMMANDS = {
    "create": ["create", "x"],
    "create-blank-title": ["create", "   "],  # the model's check, after who acts
    "update": ["update", "{open}", "-p", "1"],
    "update-unknown": ["update", "hv-nothere", "-p", "1"],  # looked up after who acts
    "close": ["close", "{open}", "-r", "done"],
}


@pytest.mark.parametrize("as_json", [False, True])
@pytest.mark.parametrize("command", sorted(IDENTITY_COMMANDS))
def test_an_identity_it_cannot_prove_is_refused_by_the_lean_path_as_by_the_full_cli(
    command: str,
    as_json: bool,
    base: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``hive --actor NAME create ...`` without NAME's credential (or with a token of
    nobody, of another agent, or a claim that is no agent name): the full CLI's
    refusal, output and exit code, from the lean path; nothing is written."""
    root = base["root"]
    args = ["--json"] * as_json + [
        part.format(**base["ids"]) for part in IDENTITY_COMMANDS[command]
    ]
    head = git(root, "rev-parse", "HEAD")
    worker = credential(root, "worker")
    situations = [
        ({}, ["--actor", "mallory"], "needs its credential"),
        ({"HIVE_AGENT": "mallory"}, [], "needs its credential"),
        ({"HIVE_AGENT_TOKEN": "not-a-credential"}, [], "not the credential of any agent"),
        ({"HIVE_AGENT_TOKEN": worker}, ["--actor", "mallory"], "you are worker"),
        ({}, ["--actor", "no/name"], "invalid agent name"),
    ]
    for env, claim, said in situations:
        with monkeypatch.context() as scoped:
            for key, value in env.items():
                scoped.setenv(key, value)
            lean = lean_run(root, [*claim, *args], capsys), lean_run.err  # type: ignore[attr-defined]
            assert lean[0][0] is not None, f"the lean path deferred {env} {claim}"
            full = full_run(root, [*claim, *args], capsys)
        assert lean == (full, full_run.err), (env, claim)  # type: ignore[attr-defined]
        assert said in lean[1] and lean[0][0] in (2, 5)
    assert git(root, "rev-parse", "HEAD") == head
    assert_clean(root)


PARAMETERS_FIRST = {  # refused by the parameter model before the full CLI asks who acts
    "empty-title": ["create", ""],
    "long-title": ["create", "t" * 501],
    "long-id": ["update", "h" * 201, "-p", "1"],
    "long-new-title": ["update", "{open}", "--title", "t" * 501],
    "many-labels": ["update", "{open}", *["--add-label", "l"] * 51],
    "long-reason": ["close", "{open}", "-r", "r" * 5001],
}


@pytest.mark.parametrize("name", sorted(PARAMETERS_FIRST))
def test_a_bad_parameter_is_worded_before_an_unproven_identity(
    name: str,
    base: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The lean path refuses a claimed identity only where the full CLI would come to
    it: a parameter the model refuses first is left to the full CLI, which names it."""
    root = base["root"]
    args = ["--actor", "mallory", *(part.format(**base["ids"]) for part in PARAMETERS_FIRST[name])]
    assert lean_run(root, args, capsys) == (None, "")
    code, _ = full_run(root, args, capsys)
    assert code == 2 and "credential" not in full_run.err  # type: ignore[attr-defined]


def test_unusual_repositories_are_deferred_or_refused_as_by_the_full_cli(
    base: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = base["root"]
    for path in (root / ".git" / "hive").glob("index.sqlite3*"):
        path.unlink()  # a fresh clone: the state is not indexed yet
    assert lean_run(root, ["create", "x"], capsys)[0] is None
    Workspace(str(root)).cells()
    git(root, "checkout", "-q", "--detach")  # not allowed: refused as the full CLI refuses it
    assert lean_run(root, ["create", "x"], capsys) == full_run(root, ["create", "x"], capsys)
    assert lean_run.err == full_run.err and "HEAD is detached" in lean_run.err  # type: ignore[attr-defined]
    git(root, "checkout", "-q", "--orphan", "unborn")  # an unborn branch: no hive there
    assert lean_run(root, ["create", "x"], capsys) == full_run(root, ["create", "x"], capsys)
    assert lean_run.err == full_run.err and "hive init" in lean_run.err  # type: ignore[attr-defined]
    git(root, "checkout", "-q", "-f", "main")
    os.environ["HIVE_AUTOCOMMIT"] = "0"
    try:
        assert lean_run(root, ["create", "x"], capsys)[0] is None
    finally:
        del os.environ["HIVE_AUTOCOMMIT"]
    assert lean_run(root, ["create", "handled"], capsys)[0] == 0


def test_a_refusal_of_the_transaction_is_reported_like_the_full_cli(
    base: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    root = base["root"]
    (root / ".git" / "MERGE_HEAD").write_text(git(root, "rev-parse", "HEAD"))
    code, out = lean_run(root, ["--json", "create", "mid-merge"], capsys)
    assert code == 4
    assert json.loads(out)["code"] == "git_state"
    assert lean_run.err.startswith("error: ")  # type: ignore[attr-defined]
    assert "git merge --abort" in lean_run.err  # type: ignore[attr-defined]


# ------------------------------------------------------------------ fresh processes


def hive_process(root: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``hive`` as a process of its own (to be killed)."""
    return subprocess.run(
        [sys.executable, "-m", "hive", "-C", str(root), *args],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, **env},
    )


# Standard modules whose import is a sizeable share of a ~40 ms write (compiled
# dataclass methods, json's patterns, ...): the lean write path does without them.
START_UP_COSTLY = (
    *("dataclasses", "typing", "json", "threading", "heapq", "hashlib", "weakref"),
    *("re", "contextlib", "sqlite3", "importlib", "warnings"),  # sqlite3: the package
)


def add_sample_objects(root: Path, count: int) -> None:
    """Put ``count`` unreferenced loose blobs into ``objects/17``, git's sample directory
    for ``gc --auto`` (the objects of any write land there by chance)."""
    sample = root / ".git" / "objects" / "17"
    sample.mkdir(exist_ok=True)
    for number in itertools.count():
        if count == 0:
            return
        raw = b"blob %d\0sample %d\n" % (len(b"sample %d\n" % number), number)
        sha = hashlib.sha1(raw).hexdigest()
        if sha.startswith("17") and not (sample / sha[2:]).exists():
            (sample / sha[2:]).write_bytes(zlib.compress(raw))
            count -= 1


@pytest.mark.parametrize("in_sample", [0, 20])
def test_a_fresh_write_imports_no_heavy_module(base: dict[str, Any], in_sample: int) -> None:
    """Also when ``objects/17`` holds loose objects, below ``gc.auto``'s threshold (27
    there): deciding that no packing is due imports nothing."""
    add_sample_objects(base["root"], in_sample)
    probe = (
        "import sys\n"
        "from hive.cli import entry\n"
        "for args in (['create', 'probe'], ['update', sys.argv[1], '-p', '3'],"
        " ['close', sys.argv[1][3:-1]]):\n"  # a prefix, resolved lean
        "    assert entry.dispatch(entry.parse(['-C', sys.argv[2], *args])) == 0, args\n"
        "heavy = ('typer', 'click', 'pydantic', 'pydantic_core', 'rich', 'ruamel', 'dulwich',"
        f" 'filelock', *{START_UP_COSTLY!r})\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & set(heavy)))\n"
    )
    found = subprocess.run(
        [sys.executable, "-c", probe, base["ids"]["open"], str(base["root"])],
        capture_output=True,
        text=True,
        check=False,
    )
    assert found.returncode == 0, found.stderr
    assert found.stdout.splitlines()[-1] == "[]"
    assert git(base["root"], "count-objects", "-v").count("packs: 0") == 1  # nothing packed


KILL_POINTS = ["after-objects", "after-intent", "after-reflog", "worktree-tmp", "index-written"]


@pytest.mark.parametrize("point", KILL_POINTS)
def test_a_lean_write_killed_midway_is_settled_by_the_next_command(
    base: dict[str, Any], point: str
) -> None:
    root = base["root"]
    (root / "work.txt").write_text("the user's staged work\n")
    git(root, "add", "work.txt")
    before = git(root, "rev-parse", "HEAD").strip()
    killed = hive_process(root, "update", base["ids"]["open"], "-p", "0", HIVE_TEST_KILL_AT=point)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    listed = run_hive(["-C", str(root), "list", "--json"])  # the next command
    assert listed.returncode == 0, listed.stderr
    assert "hive: recovered an interrupted write" in listed.stderr
    landed = git(root, "rev-parse", "HEAD").strip() != before
    assert landed == (point not in ("after-objects", "after-intent"))
    shown = json.loads(run_hive(["-C", str(root), "show", base["ids"]["open"], "--json"]).stdout)
    assert shown["priority"] == (0 if landed else 2)
    assert git(root, "status", "--porcelain") == "A  work.txt\n"
    git(root, "commit", "-qm", "user commit")
    assert git(root, "show", "--name-only", "--format=", "HEAD").split() == ["work.txt"]
    assert_clean(root)


# ------------------------------------------------------------------ cell documents


def test_celldoc_names_match_the_models() -> None:
    assert celldoc.CELL_TYPES == CELL_TYPES
    assert celldoc.STATUSES == STATUSES
    assert celldoc.DEPENDENCY_TYPES == DEPENDENCY_TYPES
    assert tuple(Cell.model_fields) == celldoc.MODEL_FIELDS


_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
_short = st.text(
    st.characters(min_codepoint=32, max_codepoint=0x2FF, blacklist_categories=("Cc",)),
    min_size=1,
    max_size=12,
)
_times = st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
).map(lambda value: value.replace(microsecond=value.microsecond // 1000 * 1000))
_exact_times = st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
)
_json_plain = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_short, inner, max_size=3),
    max_leaves=6,
)


# The strategies a cell is drawn from, built once: a strategy built per example is
# validated again per example (about a quarter of this test's time).
_titles = (
    st.text(st.characters(min_codepoint=32, blacklist_categories=("Cs", "Cc")), min_size=1)
    .map(lambda text: text.replace("\u2028", "").replace("\u2029", "").strip()[:300])
    .filter(bool)
)
_cell_ids = st.sampled_from(["hv-abc123", "hv-abc123.x1y2", "bd-wisp-0385z"])
_types = st.sampled_from(CELL_TYPES)
_statuses = st.sampled_from(STATUSES)
_priorities = st.integers(0, 4)
_labels = st.lists(_short, max_size=3)
_assignees = st.none() | _short
_parents = st.none() | st.just("hv-abc999")
_dependencies = st.lists(st.tuples(st.sampled_from(DEPENDENCY_TYPES), _short), max_size=3)
_files_owned = st.lists(_short, max_size=2)
_created_by = st.sampled_from(["", "alice"])
_optional_times = st.none() | _times
_optional_exact_times = st.none() | _exact_times
_optional_texts = st.none() | _text
_metadata = st.dictionaries(_short, _json_plain, max_size=3)


@st.composite
def cells(draw: st.DrawFn) -> Cell:
    title = draw(_titles)
    return Cell(
        id=draw(_cell_ids),
        title=title,
        description=draw(_text),
        type=draw(_types),
        status=draw(_statuses),
        priority=draw(_priorities),
        labels=draw(_labels),
        assignee=draw(_assignees),
        parent=draw(_parents),
        dependencies=[{"type": kind, "target": target} for kind, target in draw(_dependencies)],
        files_owned=draw(_files_owned),
        design=draw(_text),
        notes=draw(_text),
        created_at=draw(_exact_times),
        created_by=draw(_created_by),
        updated_at=draw(_times),
        started_at=draw(_optional_times),
        closed_at=draw(_optional_exact_times),
        close_reason=draw(_optional_texts),
        deleted_at=draw(_optional_times),
        metadata=draw(_metadata),
    )


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(cells())
def test_plain_cells_are_exactly_what_the_model_makes(written: Cell) -> None:
    stored = encode_cell(written)
    cell = decode_cell(stored, "cell.yaml")  # what the full path reads back
    mapping = fast_loads(stored.decode("utf-8"))
    assert mapping is not None
    plain = celldoc.plain_cell(mapping)
    assert plain == cell.model_dump()
    assert celldoc.encode(plain) == encode_cell(cell) == stored
    printed = inert_bytes(to_json(cell, indent=2))  # what the full CLI prints (emit_json)
    assert celldoc.json_of(plain) == printed
    # without pydantic_core loaded (a lean write) the JSON is printed in Python: same bytes
    assert celldoc.printed_by_python(plain) == printed
    assert celldoc.parsed(plain) == parsed_cell(cell)


def test_the_plain_reader_declines_what_the_model_would_change() -> None:
    cell = Cell(id="hv-a", title="t", created_at=FIXED_NOW, updated_at=FIXED_NOW)
    good = fast_loads(encode_cell(cell).decode())
    assert celldoc.plain_cell(good) is not None
    comment = Comment(id="c1", text="hi", created_at=FIXED_NOW)
    declined = [
        {**good, "comments": [comment.model_dump(mode="json")]},
        {**good, "metadata": {"ratio": 0.5}},
        {**good, "priority": "2"},
        {**good, "priority": True},
        {**good, "created_at": "2026-11-25T03:04:05Z"},
        {**good, "unknown": 1},
        {**good, "dependencies": [{"target": "hv-b"}]},
        {key: value for key, value in good.items() if key != "updated_at"},
    ]
    for mapping in declined:
        assert celldoc.plain_cell(mapping) is None, mapping


# ------------------------------------------------------------------ mail state (no pickles)


def test_the_mail_state_is_saved_in_the_state_index_as_json(ws: Workspace, repo: Path) -> None:
    import hive.domain.identity as identity
    import hive.domain.mail as mail
    import hive.domain.maillog as maillog

    for name in ("alice", "bob"):
        identity.mail_init(Workspace(str(repo), actor=name, session=f"s-{name}"), agent_name=name)
    sender = Workspace(str(repo), actor="alice")
    sent = mail.send_message(sender, to=["bob"], subject="s", body="b", thread_id="t1")
    reader = Workspace(str(repo), actor="bob")
    mail.read_message(reader, message_id=sent.message_id)
    mail.ack_message(reader, message_id=sent.message_id)
    replayed = mail._state(Workspace(str(repo), actor="bob", persist_cache=False))
    saved = Workspace(str(repo), actor="bob").state_index.mail_state()
    assert saved is not None
    tip = git(repo, "rev-parse", mail.MAIL_REF).strip()
    assert replayed.tip == tip
    state = maillog.state_from_json(json.loads(saved[1]))
    assert state is not None
    assert maillog.state_from_json(maillog.state_to_json(replayed)) == replayed
    loaded = maillog.load_persisted(Workspace(str(repo), actor="bob"))
    assert loaded is not None and loaded.tip == saved[0]
    assert [m.id for m in mail.inbox(Workspace(str(repo), actor="bob"))] == [sent.message_id]
    assert not list((repo / ".git" / "hive").glob("mail.cache*"))
    assert not any(
        b"pickle" in path.read_bytes() for path in Path(mail.__file__).parent.glob("*.py")
    )


def test_a_saved_mail_state_of_another_tip_is_not_trusted(ws: Workspace, repo: Path) -> None:
    import hive.domain.identity as identity
    import hive.domain.mail as mail
    import hive.domain.maillog as maillog

    identity.mail_init(Workspace(str(repo), actor="alice", session="s-a"), agent_name="alice")
    index = Workspace(str(repo), actor="alice").state_index
    found = index.mail_state()
    assert found is not None
    index.store_mail_state("0" * 40, found[1])  # a row whose tip does not match its state
    assert maillog.load_persisted(Workspace(str(repo), actor="alice")) is None
    index.store_mail_state(found[0], b"not json")
    assert maillog.load_persisted(Workspace(str(repo), actor="alice")) is None
    assert [a.name for a in mail.list_agents(Workspace(str(repo), actor="alice"))] == ["alice"]


def test_a_config_the_model_refuses_is_deferred(
    base: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    root = base["root"]
    config = root / ".hive" / "config.yaml"
    assert "coordinators: []\n" in config.read_text()
    config.write_text(config.read_text().replace("coordinators: []\n", "coordinators: 5\n"))
    git(root, "commit", "-qam", "odd config")
    Workspace(str(root)).cells()  # the state is indexed: only the config can defer
    assert lean_run(root, ["create", "x"], capsys)[0] is None
    config.write_text(config.read_text().replace("coordinators: 5\n", "coordinators:\n  - ann\n"))
    git(root, "commit", "-qam", "good config")
    Workspace(str(root)).cells()
    assert lean_run(root, ["create", "x"], capsys)[0] == 0


# ------------------------------------------------------------------ git config without dulwich


CONFIGS = {
    "plain": "[user]\n\tname = Ann Example\n\temail = ann@example.com\n",
    "twice": "[user]\n\tname = first\n[core]\n\tbare = false\n[user]\n\tname = second\n",
    "case": "[User]\n\tNAME = Cased\n[gc]\n\tautoPackLimit = 7\n",
    "subsection": '[remote "origin"]\n\tname = not-the-user\n[user]\n\temail = e@x\n',
    "spaces": "[user]\n  name   =   spaced out  \n; a comment\n# another\n",
    "quoted": '[user]\n\tname = "quoted # name"\n',
    "include": "[include]\n\tpath = other\n[user]\n\tname = maybe\n",
    "comment-after": "[user]\n\tname = ann # note\n",
    "empty": "[user]\n\tname =\n",
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_git_config_values_are_dulwichs(name: str, repo: Path) -> None:
    from hive.git.configfile import Unsure, config_value
    from hive.git.repo import GitRepo

    with open(repo / ".git" / "config", "a") as handle:
        handle.write(CONFIGS[name])
    opened = GitRepo.discover(str(repo))
    stack = opened._config_stack()
    for section, key in (("user", "name"), ("user", "email"), ("gc", "autopacklimit")):
        try:
            expected: str | None = stack.get((section.encode(),), key.encode()).decode()
        except KeyError:
            expected = None
        try:
            found = config_value(opened.paths, section, key)
        except Unsure:
            assert name in ("quoted", "include", "comment-after"), (section, key)
            continue
        assert found == expected, (section, key)
        assert opened.config_value(section, key) == expected


@pytest.mark.usefixtures("frozen")  # one clock and id sequence: the same commits
@pytest.mark.parametrize("enabled", ["true", "false"])
def test_a_worktrees_own_config_is_read_as_git_reads_it(
    enabled: str,
    base: dict[str, Any],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``extensions.worktreeConfig`` (which ``git sparse-checkout`` turns on): each
    worktree's ``config.worktree`` is read after the repository's, as git reads it, when
    the extension is true (and not at all when false); a lean write there is answered,
    by the identity git gives, as by the full CLI (it used to defer every write)."""
    from hive.git.configfile import config_value
    from hive.git.refs import discover

    monkeypatch.delenv("GIT_AUTHOR_NAME")  # git puts it before any config
    root = base["root"]
    git(root, "config", "extensions.worktreeConfig", enabled)
    (root / ".git" / "config.worktree").write_text("[user]\n\tname = Main Tree\n")
    side = tmp_path / "side"
    git(root, "worktree", "add", "-q", str(side), "-b", "side")
    (root / ".git" / "worktrees" / "side" / "config.worktree").write_text(
        "[user]\n\tname = Side Tree\n\temail = side@example.com\n"
    )
    for place in (root, side):
        for key in ("name", "email"):
            said = git(place, "config", "--get", f"user.{key}", check=False).strip() or None
            assert config_value(discover(str(place)), "user", key) == said, (place, key)
    lean_repo, full_repo = twin(base, tmp_path, "lean"), twin(base, tmp_path, "full")
    for copy in (lean_repo, full_repo):
        git(copy, "config", "extensions.worktreeConfig", enabled)
        (copy / ".git" / "config.worktree").write_text("[user]\n\tname = Main Tree\n")
    reset_ids(monkeypatch)
    code, out = lean_run(lean_repo, ["create", "in a sparse checkout"], capsys)
    assert code == 0, "the lean path deferred"
    reset_ids(monkeypatch)
    assert full_run(full_repo, ["create", "in a sparse checkout"], capsys) == (0, out)
    assert outcome(lean_repo) == outcome(full_repo)
    name = "Main Tree" if enabled == "true" else "Test User"
    assert git(lean_repo, "log", "-1", "--format=%an").strip() == name


def test_a_git_config_file_changed_after_it_was_read_is_read_again(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Parsed files are kept by their stat: a change of the same size, with its
    modification time set back, still shows (the change time moved); a file changed
    less than a second before it was read is not kept at all."""
    from hive.git import configfile
    from hive.git.refs import discover

    paths = discover(str(repo))
    config = repo / ".git" / "config"
    original = config.read_text()
    config.write_text(original + "[user]\n\tname = alice\n")
    # changed just now: not kept (a window of a day, not a second: a loaded machine may
    # take longer than that from the write to the read)
    monkeypatch.setattr(configfile, "_SETTLED_NS", 86_400 * 10**9)
    assert configfile.config_value(paths, "user", "name") == "alice"
    assert str(config) not in configfile._READ
    monkeypatch.setattr(configfile, "_SETTLED_NS", -(10**12))  # everything counts as settled
    assert configfile.config_value(paths, "user", "name") == "alice"
    assert str(config) in configfile._READ
    settled = config.stat().st_mtime_ns
    config.write_text(original + "[user]\n\tname = bobby\n")  # the same size
    os.utime(config, ns=(settled, settled))
    assert configfile.config_value(paths, "user", "name") == "bobby"


# ------------------------------------------------------------------ the cold build


def index_dump(root: Path) -> list[list[Any]]:
    db = sqlite3.connect(root / ".git" / "hive" / "index.sqlite3")
    try:
        return [
            db.execute("SELECT * FROM blobs ORDER BY blob").fetchall(),
            db.execute("SELECT * FROM dirs ORDER BY tree, name").fetchall(),
            db.execute("SELECT key FROM states ORDER BY key").fetchall(),
            db.execute("SELECT * FROM commits ORDER BY commit_id").fetchall(),
            db.execute("SELECT * FROM dependents ORDER BY target, blob").fetchall(),
        ]
    finally:
        db.close()


def test_a_fresh_clone_is_indexed_by_the_lean_process_as_by_the_full_path(
    base: dict[str, Any], tmp_path: Path
) -> None:
    """`hive ready --json` with no index (not on a terminal) builds it without the models:
    the same rows as the full path's build, and no heavy module imported."""
    root = base["root"]
    clean = make_repo(tmp_path / "clean")
    writer = Workspace(str(clean), actor="alice")
    init_hive(writer, prefix="hv")
    first = create_cell(writer, title="one", labels=["x"], description="a\nb\n")
    create_cell(writer, title="two", deps=[f"blocks:{first.id}"], type="epic", priority=0)
    close_cell(writer, cell_id=first.id, reason="done")
    for path in (clean / ".git" / "hive").glob("index.sqlite3*"):
        path.unlink()
    assert probe_build(clean).stderr.splitlines()[-1] == "[]"  # comments would need the model
    (root / ".hive" / "cells" / "x").mkdir(parents=True, exist_ok=True)
    (root / ".hive" / "cells" / "x" / "hv-xbroken.yaml").write_text("id: [unclosed\n")
    git(root, "add", ".hive")
    git(root, "commit", "-qm", "a broken cell file")
    git(root, "repack", "-a", "-d", "-q")  # as a clone leaves it
    lean_repo, full_repo = twin(base, tmp_path, "lean"), twin(base, tmp_path, "full")
    for repo in (lean_repo, full_repo):
        for path in (repo / ".git" / "hive").glob("index.sqlite3*"):
            path.unlink()
    built = probe_build(lean_repo)
    assert built.returncode == 0, built.stderr
    # the broken file is read by the model (pydantic), every other cell by the plain reader
    assert built.stderr.splitlines()[-1] in ("['pydantic']", "['pydantic', 'typing']")
    Workspace(str(full_repo)).cells()
    assert index_dump(lean_repo) == index_dump(full_repo)
    shown = run_hive(["-C", str(lean_repo), "list", "--json"])
    assert json.loads(shown.stdout) and "hv-xbroken.yaml" in shown.stderr


def probe_build(root: Path) -> subprocess.CompletedProcess[str]:
    """A fresh process answering ``hive ready --json``; stderr ends with the heavy
    modules it imported."""
    probe = (
        "import sys\n"
        "from hive.cli import entry\n"
        "assert entry.dispatch(entry.parse(['-C', sys.argv[1], 'ready', '--json'])) == 0\n"
        "heavy = ('typer', 'click', 'pydantic', 'rich', 'dulwich', 'filelock', 'typing')\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & set(heavy)), file=sys.stderr)\n"
    )
    return subprocess.run(
        [sys.executable, "-c", probe, str(root)], capture_output=True, text=True, check=False
    )


# ------------------------------------------------------------------ the diffed index


def test_a_lean_write_indexes_its_state_as_a_full_build_does(
    base: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The listings a lean write stores (copied from its base state where the trees
    share entries) are the rows a build from scratch stores for the same trees."""
    root = twin(base, tmp_path, "diffed")
    ids = base["ids"]
    writes = [
        ["create", "new one", "-l", "x"],
        ["update", ids["open"], "-p", "0", "--title", "renamed"],
        ["close", ids["freed"], "-r", "done"],
        ["create", "second"],
    ]
    for args in writes:
        assert lean_run(root, args, capsys)[0] == 0, args
    written = index_dump(root)
    for path in (root / ".git" / "hive").glob("index.sqlite3*"):
        path.unlink()
    Workspace(str(root)).cells()  # HEAD's state built from scratch by the full path
    rebuilt = {tuple(row) for row in index_dump(root)[1]}
    trees = {row[0] for row in rebuilt}
    assert len(trees) > 2
    assert {tuple(row) for row in written[1] if row[0] in trees} == rebuilt


# ------------------------------------------------------------------ show


@pytest.mark.parametrize(
    "which",
    [
        *("open", "claimed", "closed", "blocked", "freed", "epic", "mine"),
        *("prefix", "hash_prefix", "past_gone", "gone_hash"),  # by prefix (a deleted cell)
        "open_upper",
    ],
)
@pytest.mark.parametrize("as_json", [False, True])
def test_show_gives_the_full_clis_output(
    base: dict[str, Any],
    which: str,
    as_json: bool,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    root = base["root"]
    args = ["show", base["ids"][which], *(["--json"] if as_json else [])]
    code, lean_out = lean_run(root, args, capsys)
    assert code == 0, "answered by the lean path"
    assert full_run(root, args, capsys) == (0, lean_out)


def test_every_prefix_resolves_on_the_lean_path_as_on_the_full_path(
    base: dict[str, Any],
) -> None:
    """``lean_write.find`` names, for each prefix of each id of the state (with and
    without ``hv-``, in either case: ambiguous ones, one past a deleted cell, an epic's with its
    child's), the cell the full path's ``resolve_id`` names, and nothing where that
    raises."""
    from hive.cli.lean import open_state
    from hive.cli.lean_write import find
    from hive.domain.cells import resolve_id
    from hive.errors import HiveError

    root = base["root"]
    state = open_state(entry.parse(["-C", str(root), "show", "x"]))
    assert state is not None
    index = Workspace(str(root)).cells()
    known = sorted(index.known_ids())
    assert len(known) == 12 and base["ids"]["gone"] in known
    tried = {cell_id[:n] for cell_id in known for n in range(1, len(cell_id) + 1)}
    tried |= {typed[3:] for typed in tried if len(typed) > 3}
    tried |= {typed.upper() for typed in tried}
    answered = set()
    for typed in sorted(tried):
        try:
            expected: str | None = resolve_id(index, typed)
        except HiveError:
            expected = None
        found = find(state.index, state.key, typed)
        assert (found.id if found else None) == expected, typed
        answered.add(expected)
    assert set(known) <= answered


def test_show_defers_what_it_cannot_print_exactly(
    base: dict[str, Any], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = base["root"]
    ids = base["ids"]
    monkeypatch.delenv("COLUMNS", raising=False)
    for args in (
        ["show", ids["commented"]],  # comments: the model's
        ["show", ids["ambiguous"]],  # a prefix of two live cells
        ["show", "zzz"],  # a prefix of none
        ["show", ids["open"], ids["closed"]],  # several
        ["show", "hv-nothere"],  # an error to word
    ):
        assert lean_run(root, args, capsys)[0] is None, args
    monkeypatch.setenv("COLUMNS", "80")  # rich lays the text out
    assert lean_run(root, ["show", ids["open"]], capsys)[0] is None


@pytest.mark.parametrize("as_json", [False, True])
def test_show_prints_unusual_text_as_the_full_cli(
    base: dict[str, Any],
    tmp_path: Path,
    as_json: bool,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Markup-like brackets, non-ASCII text, blank lines, every text block, a deleted
    blocker: the same bytes as rich prints them piped."""
    from hive.domain.cells import delete_cell

    monkeypatch.delenv("COLUMNS", raising=False)
    root = twin(base, tmp_path, "texts")
    ws = Workspace(str(root), actor="alice")
    gone = create_cell(ws, title="to delete").id
    shown = create_cell(
        ws,
        title="[bold]not bold[/bold] \\[x] — naïve 日本",
        description="first\n\n  indented [red]\nlast\n",
        notes="n1\nn2",
        labels=["z", "é"],
        files=["src/a.py", "docs/*.md"],
        deps=[f"blocks:{gone}", f"blocks:{base['ids']['open']}", f"related:{base['ids']['freed']}"],
        parent=base["ids"]["epic"],
        priority=0,
        type="bug",
    ).id
    delete_cell(ws, cell_id=gone)
    # the epic lists it as a subtask, open as a cell it blocks: its title in their rows
    for cell_id in (shown, gone, base["ids"]["epic"], base["ids"]["open"]):
        args = ["show", cell_id, *(["--json"] if as_json else [])]
        code, lean_out = lean_run(root, args, capsys)
        assert code == 0, "answered by the lean path"
        assert full_run(root, args, capsys) == (0, lean_out)


def test_a_fresh_show_imports_no_heavy_module(base: dict[str, Any]) -> None:
    probe = (
        "import io, sys\n"
        "from hive.cli import entry\n"
        "sys.stdout = io.TextIOWrapper(io.BytesIO())\n"
        "for args in (['show', sys.argv[1]], ['show', sys.argv[1][:-1], '--json'],"
        " ['show', sys.argv[1][3:-2]]):\n"  # by prefixes too
        "    assert entry.dispatch(entry.parse(['-C', sys.argv[2], *args])) == 0, args\n"
        "sys.stdout = sys.__stdout__\n"
        "heavy = ('typer', 'click', 'pydantic', 'pydantic_core', 'rich', 'ruamel', 'dulwich',"
        f" 'filelock', *{START_UP_COSTLY!r})\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & set(heavy)))\n"
    )
    env = {key: value for key, value in os.environ.items() if key != "COLUMNS"}
    found = subprocess.run(
        [sys.executable, "-c", probe, base["ids"]["blocked"], str(base["root"])],
        capture_output=True,
        text=True,
        check=False,
        env=env,
        cwd=Path(__file__).parent.parent,
    )
    assert found.returncode == 0, found.stderr
    assert found.stdout.splitlines()[-1] == "[]"


def test_a_long_lived_process_saves_the_mail_state_every_so_many_commits(
    ws: Workspace, repo: Path
) -> None:
    """An MCP server sending message after message does not rewrite the whole saved
    mail state (all messages, as JSON) on every send: it saves it once it is
    PERSIST_AFTER commits behind; a fresh process catches up on the rest."""
    import hive.domain.identity as identity
    import hive.domain.mail as mail
    import hive.domain.maillog as maillog

    server = Workspace(str(repo), actor="alice", session="s-a")
    identity.mail_init(server, agent_name="alice")
    saved = server.state_index.mail_state()
    assert saved is not None  # nothing was saved before: the first state is
    for number in range(maillog.PERSIST_AFTER - 1):
        mail.send_message(server, to=["alice"], subject=f"note {number}", body="hello")
    assert server.state_index.mail_state() == saved  # not rewritten on every send
    fresh = Workspace(str(repo), actor="alice")
    assert len(maillog.state_of(fresh).messages) == maillog.PERSIST_AFTER - 1  # caught up
    mail.send_message(server, to=["alice"], subject="one more", body="hello")
    tip = git(repo, "rev-parse", mail.MAIL_REF).strip()
    now = server.state_index.mail_state()
    assert now is not None and now[0] == tip  # PERSIST_AFTER behind: saved
