"""``hive doctor`` reads only what git does not already know to be unchanged: a cell
file the git index calls unchanged since it was staged (stat data, git's racy-timestamp
rule) and staged as HEAD's blob is not read, and a packed object whose bytes match its
pack index's CRC-32s is not inflated. Everything else is read and checked as before."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from hive.domain.cells import create_cell
from hive.domain.doctor import diagnose
from hive.domain.workspace import Workspace
from hive.git.index import IndexUpdate, update_index
from hive.store.layout import cell_path
from tests.conftest import git

UNLOADABLE = b"[d"  # the first two bytes of "id: ...": an unclosed flow sequence


def _edit_in_place_same_size(path: Path) -> None:
    """A hand edit that keeps the size (and the inode) and makes the file unloadable."""
    content = path.read_bytes()
    assert content.startswith(b"id")
    with open(path, "r+b") as handle:
        handle.write(UNLOADABLE)


def _past_tick(scratch: Path, after_ns: int) -> None:
    """Return once the filesystem's clock has moved past ``after_ns`` (file times come
    from a coarse clock: an edit within the same tick as the write keeps its ctime)."""
    scratch.write_bytes(b"")
    while scratch.stat().st_ctime_ns <= after_ns:
        os.utime(scratch)


def _uncommitted(ws: Workspace) -> list[str]:
    return [p.path or "" for p in diagnose(ws).problems if p.kind == "corrupt-uncommitted"]


def _index_written(repo: Path, ns: int) -> None:
    os.utime(repo / ".git" / "index", ns=(ns, ns))


def test_a_same_size_edit_with_its_mtime_restored_is_still_read(ws: Workspace, repo: Path) -> None:
    cell = create_cell(ws, title="edited by hand")
    relative = cell_path(cell.id)
    path = repo / relative
    before = path.stat()
    # the index written well after the file: its entry is not racy, only its stat counts
    _index_written(repo, before.st_mtime_ns + 10**9)
    assert _uncommitted(ws) == []
    _past_tick(repo.parent / "scratch", before.st_ctime_ns)
    _edit_in_place_same_size(path)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # the mtime as it was
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (
        before.st_size,
        before.st_mtime_ns,
        before.st_ino,
    )
    # the ctime cannot be restored: doctor sees the change (to the nanosecond; git's
    # default build compares seconds)
    assert _uncommitted(ws) == [relative]


def test_a_racy_entry_is_read_as_git_reads_it(ws: Workspace, repo: Path) -> None:
    """An edit within the timestamp tick the index was written in leaves the entry's
    stat data as recorded (git calls the entry racy and compares the content)."""
    cell = create_cell(ws, title="racy")
    relative = cell_path(cell.id)
    path = repo / relative
    committed = git(repo, "rev-parse", f"HEAD:{relative}").strip()
    _edit_in_place_same_size(path)
    # the index records the edited file's stat data with the committed blob: what an
    # index written in the same tick as an edit holds
    update_index(
        str(repo / ".git" / "index"), [IndexUpdate(relative, committed.encode(), stat=path.stat())]
    )
    modified = path.stat().st_mtime_ns
    _index_written(repo, modified + 10**9)  # written a second later: the stat data holds
    assert git(repo, "diff-files", "--name-only", "--", relative).strip() == ""  # git trusts it too
    assert _uncommitted(ws) == []
    # written later, but in the second of the edit: racy by git's rule (which compares
    # seconds), and so read
    _index_written(repo, modified // 10**9 * 10**9 + 999_999_999)
    assert git(repo, "diff-files", "--name-only", "--", relative).split() == [relative]
    assert _uncommitted(ws) == [relative]
    _index_written(repo, modified)  # in the very tick of the edit: racy too
    assert _uncommitted(ws) == [relative]


def test_an_untracked_or_restaged_cell_file_is_read(ws: Workspace, repo: Path) -> None:
    cell = create_cell(ws, title="staged edit")
    relative = cell_path(cell.id)
    path = repo / relative
    _edit_in_place_same_size(path)
    git(repo, "add", relative)  # stat-clean now, but not HEAD's blob
    _index_written(repo, path.stat().st_mtime_ns + 10**9)
    stray = repo / ".hive" / "cells" / relative.split("/")[-2] / "hv-zzzzzz.yaml"
    stray.write_bytes(b"[unclosed\n")  # in no index entry
    assert sorted(_uncommitted(ws)) == sorted([relative, str(stray.relative_to(repo))])


# ------------------------------------------------------------------ packed objects


def _pack_entries(repo: Path) -> dict[str, tuple[int, int, str | None]]:
    """id -> (offset, size in the pack, delta base id or None) of every packed object."""
    (idx,) = (repo / ".git" / "objects" / "pack").glob("*.idx")
    out = subprocess.run(
        ["git", "verify-pack", "-v", str(idx)], capture_output=True, text=True, check=True
    ).stdout
    found: dict[str, tuple[int, int, str | None]] = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 5 and len(parts[0]) == 40 and parts[1] in ("blob", "tree", "commit"):
            base = parts[6] if len(parts) > 6 else None
            found[parts[0]] = (int(parts[4]), int(parts[3]), base)
    return found


def _damage(repo: Path, offset: int, size: int) -> None:
    """Flip a byte inside a pack entry's compressed data."""
    (pack,) = (repo / ".git" / "objects" / "pack").glob("*.pack")
    os.chmod(pack, 0o644)
    with open(pack, "r+b") as handle:
        handle.seek(offset + size - 2)
        byte = handle.read(1)
        handle.seek(offset + size - 2)
        handle.write(bytes([byte[0] ^ 0xFF]))


def _packed_cells(ws: Workspace, repo: Path) -> dict[str, str]:
    """Cells with similar files, packed by git (which stores most as deltas): id -> blob."""
    cells = [
        create_cell(ws, title=f"packed cell {n}", description="shared text\n" * 40)
        for n in range(6)
    ]
    git(repo, "repack", "-a", "-d", "-q")
    return {c.id: git(repo, "rev-parse", f"HEAD:{cell_path(c.id)}").strip() for c in cells}


def test_packed_cells_are_whole_by_crc_and_damage_is_still_found(ws: Workspace, repo: Path) -> None:
    blobs = _packed_cells(ws, repo)
    fresh = Workspace(str(repo))
    # ids that are no object id (an in-memory cell's) are never whole
    named = [*blobs.values(), "mem:" + "a" * 36, "not hex"]
    assert fresh.git.blobs_known_whole(named) == set(blobs.values())
    assert diagnose(fresh).problems == []
    victim = next(iter(blobs))
    offset, size, _ = _pack_entries(repo)[blobs[victim]]
    _damage(repo, offset, size)
    damaged = Workspace(str(repo))
    whole = damaged.git.blobs_known_whole(list(blobs.values()))
    assert blobs[victim] not in whole
    corrupt = [p for p in diagnose(damaged).problems if p.kind == "corrupt"]
    assert victim in [p.cell for p in corrupt]
    assert all("cannot be read" in p.message for p in corrupt)


def test_a_delta_whose_base_is_damaged_is_not_whole(ws: Workspace, repo: Path) -> None:
    blobs = _packed_cells(ws, repo)
    entries = _pack_entries(repo)
    deltas = {cid: entries[sha][2] for cid, sha in blobs.items() if entries[sha][2]}
    assert deltas, "git stored none of the similar cell files as a delta"
    victim, base = next(iter(deltas.items()))
    assert base is not None
    offset, size, _ = entries[base]
    _damage(repo, offset, size)
    damaged = Workspace(str(repo))
    assert blobs[victim] not in damaged.git.blobs_known_whole(list(blobs.values()))
    corrupt = [p.cell for p in diagnose(damaged).problems if p.kind == "corrupt"]
    assert victim in corrupt


def test_a_dangling_symlink_among_the_cells_is_reported_not_a_crash(
    ws: Workspace, repo: Path
) -> None:
    cell = create_cell(ws, title="beside a symlink")
    link = (repo / cell_path(cell.id)).parent / "hv-gone.yaml"
    link.symlink_to("nowhere.yaml")
    report = diagnose(ws)
    assert [(p.kind, p.path) for p in report.problems] == [
        ("symlink", ".hive/cells/" + link.parent.name + "/hv-gone.yaml")
    ]


def test_an_index_hive_cannot_read_makes_doctor_read_every_file(ws: Workspace, repo: Path) -> None:
    # git's split index in version 4 (which dulwich, hive's fallback reader, cannot
    # read): the stat data is only a shortcut, so every cell file is read instead
    cell = create_cell(ws, title="split index")
    git(repo, "update-index", "--index-version", "4")
    git(repo, "update-index", "--split-index")
    assert diagnose(ws).problems == []
    (repo / cell_path(cell.id)).write_bytes(UNLOADABLE)
    assert _uncommitted(ws) == [cell_path(cell.id)]
