"""Blobs read at once by ``git cat-file --batch`` (``hive/git/catfile.py``): the bytes
hive's own object reader gives, or None; and a fresh clone's first command, which
reads every cell file that way, indexes exactly what the writes indexed."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from hive.domain.bulk import create_cells
from hive.domain.setup import init_hive
from hive.domain.workspace import Workspace
from hive.git.catfile import AT_ONCE, parse_batch, read_blobs_at_once
from hive.git.loose import read_object
from hive.git.refs import discover
from tests.conftest import git, make_repo
from tests.inprocess import run_hive


def _blobs(repo: Path) -> list[str]:
    listed = git(repo, "ls-tree", "-r", "HEAD").splitlines()
    return [line.split()[2] for line in listed if line.split()[1] == "blob"]


def _packed_repo(path: Path) -> Path:
    """Files of similar text (git stores most as deltas), an empty and a binary one."""
    repo = make_repo(path)
    for number in range(80):
        (repo / f"f{number:02}.txt").write_text(f"line {number}\n" + "same text\n" * 30)
    (repo / "empty").write_bytes(b"")
    (repo / "binary").write_bytes(bytes(range(256)) + b"\n\n\x00")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "files")
    git(repo, "repack", "-a", "-d", "-q")
    return repo


def test_the_bytes_are_those_hives_reader_gives(tmp_path: Path) -> None:
    repo = _packed_repo(tmp_path / "repo")
    paths = discover(str(repo))
    shas = _blobs(repo)
    found = read_blobs_at_once(paths, shas)
    assert found is not None and len(found) == len(set(shas)) > AT_ONCE
    for sha in shas:
        own = read_object(paths, sha)
        assert own is not None and found[sha] == own[1]
    assert b"" in found.values() and any(b"\x00" in body for body in found.values())


def test_anything_but_every_blob_is_none(tmp_path: Path) -> None:
    repo = _packed_repo(tmp_path / "repo")
    paths = discover(str(repo))
    shas = _blobs(repo)
    tree = git(repo, "rev-parse", "HEAD^{tree}").strip()
    assert read_blobs_at_once(paths, [*shas, "0" * 40]) is None  # missing
    assert read_blobs_at_once(paths, [*shas, tree]) is None  # not a blob


def test_replace_refs_do_not_change_the_bytes(tmp_path: Path) -> None:
    """git cat-file honours ``refs/replace`` unless told not to; hive's reader never does."""
    repo = _packed_repo(tmp_path / "repo")
    shas = [git(repo, "rev-parse", f"HEAD:f0{number}.txt").strip() for number in (0, 1)]
    git(repo, "replace", shas[0], shas[1])
    assert git(repo, "cat-file", "-p", shas[0]) == git(repo, "cat-file", "-p", shas[1])
    found = read_blobs_at_once(discover(str(repo)), shas[:2])
    own = read_object(discover(str(repo)), shas[0])
    assert found is not None and own is not None and found[shas[0]] == own[1] != found[shas[1]]


def test_output_that_does_not_parse_is_none() -> None:
    sha = "a" * 40
    assert parse_batch(f"{sha} blob 3\nabc\n".encode(), [sha]) == {sha: b"abc"}
    for output in (
        f"{sha} blob 3\nabcd\n",  # longer than said
        f"{sha} blob 3\nabc",  # cut short
        f"{sha} blob 3\nabc\nmore",  # something after
        f"{sha} tree 3\nabc\n",  # another type
        f"{sha} missing\n",
        f"{'b' * 40} blob 3\nabc\n",  # another object
        f"{sha} blob x\nabc\n",
        "",
    ):
        assert parse_batch(output.encode(), [sha]) is None, output


def test_a_fresh_clones_first_command_indexes_what_the_writes_did(tmp_path: Path) -> None:
    """More cells than AT_ONCE, packed as a clone has them: with the index deleted, the
    first ``hive ready`` (the lean path's cold build) stores the same cell rows and
    answers the same as the index the writes kept."""
    repo = make_repo(tmp_path / "repo")
    ws = Workspace(str(repo))
    init_hive(ws)
    specs = [{"title": f"cell {number}", "priority": number % 5} for number in range(150)]
    create_cells(ws, specs=specs)
    git(repo, "repack", "-a", "-d", "-q")
    index = repo / ".git" / "hive" / "index.sqlite3"

    def answer_and_rows() -> tuple[str, list[tuple[object, ...]]]:
        done = run_hive(["ready", "--json", "--all"], cwd=repo)
        assert done.returncode == 0, done.stderr
        with sqlite3.connect(index) as db:
            rows = db.execute("SELECT * FROM blobs ORDER BY blob").fetchall()
        return done.stdout, rows

    warm = answer_and_rows()
    for path in index.parent.glob("index.sqlite3*"):
        path.unlink()
    cold = answer_and_rows()
    assert len(cold[1]) >= 150 and cold == warm


@pytest.mark.parametrize(
    "times",
    [
        {},
        {"started_at": "2026-11-28T10:00:00.120Z", "closed_at": "2026-11-28T11:00:00.000Z"},
        {"created_at": "2026-01-02T03:04:05.123456Z", "deleted_at": "2026-11-28T12:00:00.999Z"},
        {"created_at": "0999-01-02T03:04:05.123Z"},  # a year strftime does not pad
    ],
)
def test_the_plain_reader_indexes_each_time_as_the_model_does(times: dict[str, str]) -> None:
    """The JSON a cold build stores gives each time as the file spells it, which the
    plain reader checked is how hive spells it: the model's bytes, for every kind."""
    from hive.store.celldoc import plain_cell
    from hive.store.cellrows import parse_for_index
    from hive.store.cells import parse_for_index as parse_with_model
    from hive.store.yamlfast import fast_loads

    fields = {
        "id": "hv-abc",
        "title": "a cell",
        "status": "closed" if "closed_at" in times else "open",
        "created_at": "2026-11-28T09:00:00.001Z",
        "updated_at": "2026-11-28T09:30:00.010Z",
        **times,
    }
    text = "".join(
        f'{key}: "{value}"\n' if key.endswith("_at") else f"{key}: {value}\n"
        for key, value in fields.items()
    )
    data = text.encode()
    plain_read = plain_cell(fast_loads(text)) is not None
    assert plain_read == (not times.get("created_at", "").startswith("0"))
    plain, model = parse_for_index(data, "cells/hv-abc.yaml"), parse_with_model(data, "x")
    assert plain == model and plain.json == model.json
