"""``hive import beads`` reads, converts and writes its records one at a time (no list
of records or of cell models is held): the trees, reports and commit messages are those
the whole-list import made (its tree ids are pinned here), and the state index rows the
streamed write stores are those a rebuild from git makes."""

from __future__ import annotations

import json
from pathlib import Path

from hive.domain.beads import import_beads
from hive.domain.workspace import Workspace
from tests.conftest import beads_export, git
from tests.inprocess import run_hive

# `git rev-parse HEAD:.hive/cells` after each import below, made by the import that held
# every record and cell in lists (before the streamed one); the last three re-pinned when
# the cells of the 163-record file (times written in -07:00) gained the times as written
# (`metadata.beads._times`, so that an export gives them back byte for byte)
TREES = {
    "fresh 704": "fb0aecf5baa5aab70148bb331d7e629f887fa15f",
    "163 more": "407881c96aa8fe787b11f2629ac38b0112e7aded",
    "--update": "c4aae96c185ed231187d99727fcdf658d14c4329",
    "--overwrite": "5e5502257226c2d43b8511f0d6f45e0a589bada5",
}


def _variant(tmp: Path, name: str, edit: str) -> str:
    """The 704-record export with some records edited: ``newer`` (a later or earlier
    ``updated_at``, or none) or ``other`` (a longer description)."""
    lines = beads_export("issues-2026-02-27.jsonl").read_text().splitlines()
    out = []
    for number, line in enumerate(lines):
        record = json.loads(line)
        if edit == "newer" and number % 7 == 0:
            record["title"] += " (newer)"
            record["updated_at"] = "2030-01-01T00:00:00Z"
        elif edit == "newer" and number % 11 == 0:
            record["title"] += " (older)"
            record["updated_at"] = "2001-01-01T00:00:00Z"
        elif edit == "newer" and number % 13 == 0:
            record["title"] += " (undated)"
            record.pop("updated_at", None)
        elif edit == "other" and number % 5 == 0:
            record["description"] = (record.get("description") or "") + "\nmore"
        out.append(json.dumps(record))
    path = tmp / name
    path.write_text("\n".join(out) + "\n")
    return str(path)


def _cells_tree(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD:.hive/cells").strip()


def test_streamed_imports_make_the_trees_the_whole_list_import_made(
    ws: Workspace, repo: Path, tmp_path: Path
) -> None:
    fresh = import_beads(ws, path=str(beads_export("issues-2026-02-27.jsonl")))
    assert (fresh.records, fresh.imported, len(fresh.warnings)) == (704, 704, 2)
    assert _cells_tree(repo) == TREES["fresh 704"]
    # the imported cells are not kept as models by the importing process
    assert len(ws.reader.cache.by_blob) < 10
    more = import_beads(ws, path=str(beads_export("issues-2025-10-19.jsonl")))
    assert (more.imported, more.skipped, more.differing_ids) == (160, 3, ["bd-1", "bd-10", "bd-2"])
    assert _cells_tree(repo) == TREES["163 more"]
    newer = _variant(tmp_path, "newer.jsonl", "newer")
    untouched = import_beads(ws, path=newer)
    assert (untouched.imported, untouched.updated, untouched.differing) == (0, 0, 198)
    assert _cells_tree(repo) == TREES["163 more"]
    updated = import_beads(ws, path=newer, update=True)
    assert (updated.updated, updated.kept) == (101, 97)
    assert _cells_tree(repo) == TREES["--update"]
    overwritten = import_beads(ws, path=_variant(tmp_path, "other.jsonl", "other"), overwrite=True)
    assert overwritten.updated > 0
    assert _cells_tree(repo) == TREES["--overwrite"]
    assert git(repo, "status", "--porcelain") == ""


def test_the_rows_a_streamed_import_stores_are_a_rebuilds(ws: Workspace, repo: Path) -> None:
    done = run_hive(
        ["-C", str(repo), "import", "beads", str(beads_export("issues-2026-02-27.jsonl"))]
    )
    assert done.exit_code == 0, done.output
    warm = run_hive(["-C", str(repo), "list", "--all", "--json"], module="hive.cli.main")
    index = repo / ".git" / "hive" / "index.sqlite3"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{index}{suffix}").unlink(missing_ok=True)
    rebuilt = run_hive(["-C", str(repo), "list", "--all", "--json"], module="hive.cli.main")
    assert warm.exit_code == rebuilt.exit_code == 0
    assert len(json.loads(warm.output)) == 704
    assert warm.output == rebuilt.output
