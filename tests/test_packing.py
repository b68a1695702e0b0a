"""A healthy object store: hive packs what it writes (as git gc --auto would), every
reader finds packed objects, and nothing is lost with readers and writers at work."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest

from hive.domain.cells import create_cell, list_cells, ready, show_cell, update_cell
from hive.domain.doctor import diagnose
from hive.domain.history import cell_log
from hive.domain.maintenance import object_store_health, pack_repository
from hive.domain.workspace import Workspace
from hive.git import packfile, packing
from hive.git.loose import hive_tree, pack_wanted, parse_commit, read_object
from tests.conftest import assert_clean, git
from tests.inprocess import fork_call, run_hive

ROOT = Path(__file__).resolve().parent.parent


def count_objects(repo: Path) -> dict[str, int]:
    """``git count-objects -v`` as numbers."""
    out = git(repo, "count-objects", "-v")
    return {key: int(value) for key, value in (line.split(": ") for line in out.splitlines())}


def loose_object(repo: Path, prefix: str, seed: str) -> str:
    """Write one loose blob whose id starts with ``prefix`` (as any git tool would)."""
    number = 0
    while True:
        body = f"{seed} {number}\n".encode()
        raw = b"blob %d\0" % len(body) + body
        sha = hashlib.sha1(raw).hexdigest()
        if sha.startswith(prefix):
            directory = repo / ".git" / "objects" / sha[:2]
            directory.mkdir(exist_ok=True)
            (directory / sha[2:]).write_bytes(zlib.compress(raw))
            return sha
        number += 1


def fill_sample_directory(repo: Path, count: int) -> None:
    """Put ``count`` loose objects into objects/17, git's sample directory."""
    for number in range(count):
        loose_object(repo, "17", f"sample {number}")


def all_cells_readable(ws: Workspace, expected: int) -> None:
    fresh = Workspace(ws.root, actor="bob")
    cells = list_cells(fresh)
    assert len(cells) == expected
    for cell in cells:
        assert show_cell(fresh, cell_id=cell.id).title == cell.title
    assert len(ready(fresh)) == expected
    assert cell_log(fresh, cell_id=cells[0].id)


# ----------------------------------------------------------------- git's estimate


@pytest.mark.parametrize(("in_sample", "expected"), [(27, False), (28, True)])
def test_the_estimate_is_gits_own(repo: Path, in_sample: int, expected: bool) -> None:
    """gc.auto=6700 means more than ceil(6700/256)=27 objects in objects/17, exactly when
    `git gc --auto` decides to repack."""
    objects = str(repo / ".git" / "objects")
    fill_sample_directory(repo, in_sample - packing.loose_in_17(objects))
    assert packing.loose_in_17(objects) == in_sample
    assert packing.too_many_loose(objects, packing.DEFAULT_GC_AUTO) is expected
    git(repo, "config", "gc.autoDetach", "false")
    trace = subprocess.run(
        ["git", "-C", str(repo), "gc", "--auto", "--quiet"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "GIT_TRACE": "1"},
    ).stderr
    assert ("repack" in trace) is expected


def test_git_config_integers() -> None:
    assert packing.parse_git_int("6700", 1) == 6700
    assert packing.parse_git_int("7k", 1) == 7 * 1024
    assert packing.parse_git_int(" 1M ", 1) == 1024 * 1024
    assert packing.parse_git_int("0", 1) == 0
    assert packing.parse_git_int("-1", 1) == -1
    assert packing.parse_git_int("lots", 5) == 5
    assert packing.parse_git_int(None, 5) == 5


# ----------------------------------------------------------------- packing after writes


def test_a_write_packs_when_git_would_and_every_read_still_works(ws: Workspace, repo: Path) -> None:
    git(repo, "config", "gc.auto", "0")
    created = [create_cell(ws, title=f"cell {n}").id for n in range(12)]
    before = count_objects(repo)
    assert before["count"] > 30 and before["packs"] == 0
    git(repo, "config", "gc.auto", "256")  # pack when objects/17 has more than 1
    fill_sample_directory(repo, 2)
    update_cell(ws, cell_id=created[0], priority=0)  # this write packs
    after = count_objects(repo)
    assert after["count"] == 0
    assert after["packs"] == 1
    assert after["in-pack"] >= before["count"] + 2
    assert_clean(repo)
    all_cells_readable(ws, 12)
    head = git(repo, "rev-parse", "HEAD:.hive").strip()
    assert hive_tree(ws.git.paths, git(repo, "rev-parse", "HEAD").strip()) == head
    create_cell(ws, title="after packing")  # writing on top of packed objects
    assert_clean(repo)
    all_cells_readable(ws, 13)


def test_gc_auto_zero_turns_packing_off(ws: Workspace, repo: Path) -> None:
    git(repo, "config", "gc.auto", "0")
    fill_sample_directory(repo, 40)
    create_cell(ws, title="no packing")
    assert count_objects(repo)["packs"] == 0
    health = object_store_health(ws)
    assert health.gc_auto == 0
    assert health.loose_objects == count_objects(repo)["count"]


def test_packing_starts_just_past_the_threshold(ws: Workspace, repo: Path) -> None:
    objects = str(repo / ".git" / "objects")
    fill_sample_directory(repo, 27 - packing.loose_in_17(objects))
    assert packing.loose_in_17(objects) == 27  # default gc.auto: 27 is not more than 27
    ws.git.pack_if_needed()
    assert count_objects(repo)["packs"] == 0
    loose_object(repo, "17", "one more")
    ws.git.pack_if_needed()
    assert count_objects(repo)["packs"] == 1 and count_objects(repo)["count"] == 0


def test_one_decision_whether_to_pack(ws: Workspace, repo: Path) -> None:
    """``pack_wanted`` decides for the write path and the packer alike: nothing, pack the
    loose objects, or merge the packs too (with the limit git config gives)."""
    objects = str(repo / ".git" / "objects")
    fill_sample_directory(repo, 27 - packing.loose_in_17(objects))
    assert pack_wanted(ws.git) is None  # 27 is not more than ceil(6700 / 256)
    loose_object(repo, "17", "one more")
    assert pack_wanted(ws.git) == (False, 50)
    git(repo, "config", "gc.auto", "0")
    assert pack_wanted(ws.git) is None
    git(repo, "config", "--unset", "gc.auto")
    for number in range(3):
        create_cell(ws, title=f"pack {number}")
        git(repo, "repack", "-d", "-q")
    git(repo, "config", "gc.autoPackLimit", "2")
    assert pack_wanted(ws.git) == (True, 2)
    ws.git.pack_if_needed()
    assert count_objects(repo)["packs"] == 1 and pack_wanted(ws.git) is None


def test_one_commit_parser_reads_commits_as_git_does(ws: Workspace, repo: Path) -> None:
    """``loose.parse_commit`` serves history (``GitRepo.commit_info``) and the packer's
    delta planning: tree, parents, author and time as git reports them."""
    create_cell(ws, title="by hive")
    git(repo, "checkout", "-q", "-b", "side")
    git(repo, "commit", "-q", "--allow-empty", "-m", "side\n\nbody ü")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "side", "-m", "a merge")
    for sha in git(repo, "rev-list", "HEAD").split():
        found = read_object(ws.git.paths, sha)
        assert found is not None and found[0] == b"commit"
        fields = parse_commit(found[1])
        assert fields is not None
        shown = git(repo, "show", "-s", "--format=%T|%P|%an <%ae>|%ct|%B", sha)
        tree, parents, author, when, message = shown.split("|", 4)
        assert (fields.tree, fields.parents) == (tree, tuple(parents.split()))
        assert (fields.author, fields.time) == (author, int(when))
        assert fields.message.decode().rstrip("\n") == message.rstrip("\n")
        first = fields.parents[0] if fields.parents else None
        assert packing._commit_fields(found[1]) == (tree, first, int(when))
        assert ws.git.commit_info(sha).parents == fields.parents
    assert parse_commit(b"tree " + b"0" * 40 + b"\nparent abc\n\nmessage") is None
    assert parse_commit(b"no header at all") is None


def test_a_write_below_the_thresholds_does_not_load_the_packer(ws: Workspace, repo: Path) -> None:
    """Whether to pack is decided before the packer is imported (its imports are a
    fresh write's largest), so only a write that will pack pays for them."""
    fill_sample_directory(repo, 5)  # some loose objects in git's sample directory
    probe = (
        "import sys\n"
        "from hive.cli import entry\n"
        "assert entry.dispatch(entry.parse(['-C', sys.argv[1], 'create', 'probe'])) == 0\n"
        "print('hive.git.packing' in sys.modules, 'dataclasses' in sys.modules)\n"
    )
    ws.cells()  # HEAD's state is indexed: the lean path writes
    found = subprocess.run(
        [sys.executable, "-c", probe, str(repo)], capture_output=True, text=True, check=False
    )
    assert found.returncode == 0, found.stderr
    assert found.stdout.split()[-2:] == ["False", "False"]
    assert count_objects(repo)["packs"] == 0


def test_too_many_packs_are_merged(ws: Workspace, repo: Path) -> None:
    for number in range(4):
        create_cell(ws, title=f"pack {number}")
        git(repo, "repack", "-d", "-q")  # git makes one pack per round
    assert count_objects(repo)["packs"] == 4
    git(repo, "config", "gc.autoPackLimit", "3")
    create_cell(ws, title="the write that merges")
    stats = count_objects(repo)
    assert stats["packs"] == 1 and stats["count"] == 0
    assert_clean(repo)
    all_cells_readable(ws, 5)


def test_kept_packs_are_neither_counted_nor_merged(ws: Workspace, repo: Path) -> None:
    create_cell(ws, title="kept")
    git(repo, "repack", "-d", "-q")
    pack_dir = repo / ".git" / "objects" / "pack"
    kept = next(pack_dir.glob("*.pack"))
    kept.with_suffix(".keep").write_text("")
    for number in range(2):
        create_cell(ws, title=f"other {number}")
        git(repo, "repack", "-d", "-q")
    git(repo, "config", "gc.autoPackLimit", "1")
    create_cell(ws, title="merge")
    assert kept.exists()
    assert len(list(pack_dir.glob("*.pack"))) == 2
    assert_clean(repo)


def test_packs_made_by_hive_are_valid_for_git(ws: Workspace, repo: Path) -> None:
    ids = [create_cell(ws, title=f"cell {n}").id for n in range(20)]
    for number, cell_id in enumerate(ids):
        update_cell(ws, cell_id=cell_id, description=f"version {number}\n" * 20)
    report = pack_repository(ws)
    assert report.packed > 100 and report.removed_loose == report.packed
    assert report.store.loose_objects == 0 and report.store.packs == 1
    pack = next((repo / ".git" / "objects" / "pack").glob("*.idx"))
    verify = git(repo, "verify-pack", "-v", str(pack))
    assert "chain length = 1:" in verify  # cell files and trees are stored as deltas
    assert_clean(repo)
    all_cells_readable(ws, 20)
    # every object git knows is readable without dulwich, deltas resolved
    listing = git(repo, "cat-file", "--batch-all-objects", "--batch-check").split("\n")
    for line in filter(None, listing):
        sha, kind, size = line.split()
        found = read_object(ws.git.paths, sha)
        assert found is not None and found[0].decode() == kind and len(found[1]) == int(size)


def git_objects(repo: Path) -> list[tuple[str, str, bytes]]:
    """(id, type, content) of every object, as git reads it: one process."""
    batch = subprocess.run(
        ["git", "-C", str(repo), "cat-file", "--batch-all-objects", "--batch"],
        capture_output=True,
        check=True,
    ).stdout
    found = []
    position = 0
    while position < len(batch):
        header_end = batch.index(b"\n", position)
        sha, kind, size = batch[position:header_end].decode().split()
        found.append((sha, kind, batch[header_end + 1 : header_end + 1 + int(size)]))
        position = header_end + 1 + int(size) + 1  # the content, then a newline
    return found


def test_the_pack_reader_resolves_gits_own_deep_deltas(ws: Workspace, repo: Path) -> None:
    ids = [create_cell(ws, title=f"cell {n}").id for n in range(5)]
    for number in range(30):
        update_cell(ws, cell_id=ids[number % 5], append_notes=f"note {number}")
    git(repo, "repack", "-a", "-d", "-f", "-q", "--depth=50", "--window=50")
    assert count_objects(repo)["count"] == 0
    objects = str(repo / ".git" / "objects")
    checked = 0
    for sha, kind, body in git_objects(repo):
        found = packfile.read_packed(objects, sha)
        assert found is not None and found[0].decode() == kind
        assert found[1] == body
        checked += 1
    assert checked > 100  # 35 commits with their trees and blobs
    assert packfile.read_packed(objects, "0" * 40) is None
    assert read_object(ws.git.paths, "0" * 40) is None
    all_cells_readable(ws, 5)


def fast_import_cells(repo: Path, count: int) -> None:
    """``count`` similar cell-like files in one commit, written by ``git fast-import``:
    it stores each blob as a delta against the one before, in chains 50 deep. The
    repository's first objects are packed first: every object is in a pack."""
    git(repo, "repack", "-a", "-d", "-q")
    stream = [b"commit refs/heads/bulk\ncommitter t <t@t> 0 +0000\ndata 5\nbulk\n"]
    for number in range(count):
        body = (f"id: hv-{number:05}\ntitle: bulk cell {number}\n" + "text\n" * 40).encode()
        stream.append(b"M 100644 inline cells/%05d.yaml\ndata %d\n%s\n" % (number, len(body), body))
    subprocess.run(
        ["git", "-C", str(repo), "fast-import", "--quiet"], input=b"".join(stream), check=True
    )


def deltified_objects(repo: Path) -> tuple[int, int]:
    """How many objects of the repository's packs git stores as deltas; the longest chain."""
    count = deepest = 0
    for index in (repo / ".git" / "objects" / "pack").glob("*.idx"):
        for line in git(repo, "verify-pack", "-v", str(index)).splitlines():
            count += len(line.split()) == 7  # id type size size-in-pack offset depth base-id
            if line.startswith("chain length = "):
                deepest = max(deepest, int(line.split()[3].rstrip(":")))
    return count, deepest


def read_every_object(repo: Path) -> int:
    """Read every object with the pack reader (in id order, as git lists them), check
    it against git's own reading; the number of deltas applied."""
    objects = str(repo / ".git" / "objects")
    before = packfile.DELTAS_APPLIED[0]
    for sha, kind, body in git_objects(repo):
        found = packfile.read_packed(objects, sha)
        assert found == (kind.encode(), body)
    return packfile.DELTAS_APPLIED[0] - before


def test_reading_a_deep_delta_pack_applies_each_delta_about_once(repo: Path) -> None:
    fast_import_cells(repo, 600)
    git(repo, "prune-packed")
    deltified, deepest = deltified_objects(repo)
    assert deltified > 500 and deepest == 50
    # each deltified object needs its delta once; chains are not resolved again and again
    # (reading in id order visits the chains in no order: 3,700 deltas before the fix)
    applied = read_every_object(repo)
    assert deltified <= applied <= deltified + deltified // 20
    assert read_every_object(repo) == 0  # read again: every object is remembered
    # a repack replaces the pack (other offsets): nothing remembered is returned for it
    git(repo, "repack", "-a", "-d", "-f", "-q", "--depth=50", "--window=250")
    deltified, deepest = deltified_objects(repo)
    assert deltified > 500  # git picks other bases: chains are short now
    assert deltified <= read_every_object(repo) <= deltified + deltified // 20


def test_the_delta_base_cache_is_bounded_by_bytes(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast_import_cells(repo, 300)
    limit = 20_000  # about 70 of these objects
    monkeypatch.setattr(packfile, "_BASES_LIMIT", limit)
    packfile._forget_bases()
    assert read_every_object(repo) > deltified_objects(repo)[0]  # too small: chains again
    held = sum(len(body) for _kind, body in packfile._BASES.values())
    assert held == packfile._BASES_SIZE[0] and limit // 2 < held <= limit
    packfile._forget_bases()


def test_corrupt_loose_objects_are_never_packed_or_deleted(ws: Workspace, repo: Path) -> None:
    create_cell(ws, title="one")
    bogus = repo / ".git" / "objects" / "ab" / ("c" * 38)
    bogus.parent.mkdir(exist_ok=True)
    bogus.write_bytes(zlib.compress(b"blob 3\0xyz"))  # content does not match the name
    temp = repo / ".git" / "objects" / "ab" / "tmp_obj_abcdef"
    temp.write_bytes(b"being written")
    pack_repository(ws)
    assert bogus.exists() and temp.exists()
    assert count_objects(repo)["count"] == 1


def test_a_dead_packers_temporary_files_are_removed(ws: Workspace, repo: Path) -> None:
    create_cell(ws, title="one")
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    dead = int(done.stdout)
    pack_dir = repo / ".git" / "objects" / "pack"
    pack_dir.mkdir(exist_ok=True)
    left = pack_dir / f"tmp_hive_{dead}_abcd.pack"
    left.write_bytes(b"PACK half written")
    mine = pack_dir / f"tmp_hive_{os.getpid()}_abcd.pack"  # a live process's: kept
    mine.write_bytes(b"PACK")
    assert object_store_health(ws).garbage
    pack_repository(ws)
    assert not left.exists() and mine.exists()
    mine.unlink()
    assert object_store_health(ws).garbage == []


def test_packing_waits_for_nobody_and_skips_while_another_packs(ws: Workspace, repo: Path) -> None:
    from filelock import FileLock

    create_cell(ws, title="one")
    with FileLock(str(repo / ".git" / "hive" / "gc.lock")):
        report = pack_repository(ws)
    assert report.skipped == "another process is packing"
    assert count_objects(repo)["packs"] == 0
    (repo / ".git" / "gc.pid").write_text(f"{os.getpid()} {os.uname().nodename}")
    assert pack_repository(ws).skipped == "git gc is running"
    (repo / ".git" / "gc.pid").unlink()
    assert pack_repository(ws).skipped is None


def test_a_failed_packing_never_fails_the_write_and_is_reported(
    ws: Workspace, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    git(repo, "config", "gc.auto", "256")
    fill_sample_directory(repo, 2)

    def disk_full(*args: object, **kwargs: object) -> str:
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as patch:
        patch.setattr(packing, "_write_pack", disk_full)
        cell = create_cell(ws, title="lands anyway")
    assert show_cell(ws, cell_id=cell.id).title == "lands anyway"
    health = object_store_health(ws)
    assert health.last_failure and "No space left on device" in health.last_failure
    assert any("packing failed" in w and "hive gc" in w for w in health.warnings)
    assert count_objects(repo)["count"] > 2 and count_objects(repo)["packs"] == 0
    assert_clean(repo)
    create_cell(ws, title="packs now")
    assert object_store_health(ws).last_failure is None
    assert count_objects(repo)["count"] == 0


# ----------------------------------------------------------------- concurrency

PACKING_SECONDS = 5  # the writer writes and packs this long, while the readers read


def _reader(repo_dir: str, started: int, stop: Path) -> None:
    """Read every cell file at HEAD, through a kept and a fresh repository, over and
    over until ``stop`` exists; one byte on ``started`` after the first round."""
    from hive.git.repo import GitRepo

    kept = GitRepo.discover(repo_dir)
    rounds = 0
    while rounds == 0 or not stop.exists():
        for repo in (kept, GitRepo.discover(repo_dir)):
            head = repo.head().commit
            tree = repo.commit_tree(head)
            cells = repo.lookup_path(tree, ".hive/cells", want_tree=True)
            files = repo.tree_listing(cells, ".hive/cells")
            for path, sha in files.items():
                assert repo.read_blob(sha).startswith(b"id: "), path
            assert hive_tree(repo.paths, head) == repo.lookup_path(tree, ".hive", want_tree=True)
        if rounds == 0:
            os.write(started, b"!")
        rounds += 1
    print(rounds)


def test_readers_never_miss_an_object_while_writers_pack(
    ws: Workspace, repo: Path, tmp_path: Path
) -> None:
    git(repo, "config", "gc.auto", "0")  # this test packs by itself, as often as it can
    for number in range(10):
        create_cell(ws, title=f"seed {number}")
    stop = tmp_path / "stop"
    started, reading = os.pipe()
    readers = [  # forked: processes of their own, reading while this one writes and packs
        fork_call(lambda: _reader(str(repo), reading, stop)) for _ in range(2)
    ]
    os.close(reading)
    assert len(os.read(started, 1)) == 1 and len(os.read(started, 1)) == 1  # both read
    os.close(started)
    packs = 0
    # at least PACKING_SECONDS and at least two packs, which a loaded machine took longer
    # than that for (a bound only for a failure: packing that never packs)
    until, bound = time.monotonic() + PACKING_SECONDS, time.monotonic() + 120
    while (time.monotonic() < until or packs < 2) and time.monotonic() < bound:
        for number in range(3):
            create_cell(ws, title=f"more {packs} {number}")
        report = pack_repository(ws)
        packs += report.packed > 0
    stop.write_text("")  # the readers end with the writer
    for reader in readers:
        out, err = reader.communicate(timeout=60)
        assert reader.returncode == 0, err
        assert int(out) > 0
    assert packs >= 2
    assert_clean(repo)


def test_an_object_packed_after_the_reader_listed_the_packs_is_found(
    ws: Workspace, repo: Path
) -> None:
    """The reader's window: it lists the packs (none has the object), a packer (here git)
    packs the loose objects and deletes them, then the reader looks in the loose store.
    The pack directory's mtime is set back to the one the reader saw, as when both
    changes fall in one timestamp tick, so only a rescan on the miss finds the object."""
    git(repo, "config", "gc.auto", "0")
    create_cell(ws, title="packed under the reader")
    head = git(repo, "rev-parse", "HEAD").strip()
    objects = repo / ".git" / "objects"
    (objects / "pack").mkdir(exist_ok=True)
    assert packfile.read_packed(str(objects), head) is None  # the packs are listed
    seen = os.stat(objects / "pack")
    git(repo, "repack", "-d", "-q")  # packs the loose objects and deletes them
    assert not (objects / head[:2] / head[2:]).exists()
    os.utime(objects / "pack", ns=(seen.st_atime_ns, seen.st_mtime_ns))
    assert hive_tree(ws.git.paths, head) == git(repo, "rev-parse", "HEAD:.hive").strip()


def _packing_writer(repo: str, worker: int, count: int) -> None:
    ws = Workspace(repo, actor=f"agent{worker}", persist_cache=False)
    for number in range(count):
        create_cell(ws, title=f"w{worker}-{number}")
        if number % 4 == worker % 4:
            pack_repository(ws)  # packers collide on purpose (one runs, the others skip)


def test_concurrent_writers_that_pack_lose_nothing(ws: Workspace, repo: Path) -> None:
    import multiprocessing

    git(repo, "config", "gc.auto", "256")
    context = multiprocessing.get_context("fork")
    procs = [context.Process(target=_packing_writer, args=(str(repo), n, 16)) for n in range(4)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(240)
        assert proc.exitcode == 0
    titles = {c.title for c in list_cells(Workspace(str(repo), persist_cache=False))}
    assert titles == {f"w{w}-{n}" for w in range(4) for n in range(16)}
    assert int(git(repo, "rev-list", "--count", "HEAD")) == 2 + 64
    assert count_objects(repo)["packs"] >= 1
    assert_clean(repo)


# ----------------------------------------------------------------- doctor and hive gc


def test_doctor_reports_the_store_and_hive_gc_fixes_it(ws: Workspace, repo: Path) -> None:
    git(repo, "config", "gc.auto", "20")
    for number in range(30):
        loose_object(repo, "", f"by another tool {number}")  # loose, not written by hive
    report = diagnose(ws)
    assert report.ok  # the tracker itself is fine
    health = report.objects
    assert health is not None and not health.healthy
    assert health.loose_objects == count_objects(repo)["count"]
    assert health.loose_size // 1024 == count_objects(repo)["size"]
    assert any("more than gc.auto=20" in w and "hive gc" in w for w in health.warnings)

    shown = run_hive(["-C", str(repo), "doctor"], module="hive.cli.main")
    assert shown.exit_code == 0 and "warning" in shown.stdout and "hive gc" in shown.stdout
    fixed = run_hive(["-C", str(repo), "gc", "--json"], module="hive.cli.main")
    assert fixed.exit_code == 0, fixed.stdout
    assert '"packed"' in fixed.stdout and '"healthy": true' in fixed.stdout
    assert count_objects(repo)["count"] == 0
    again = run_hive(["-C", str(repo), "doctor", "--json"], module="hive.cli.main")
    assert '"healthy": true' in again.stdout
    assert_clean(repo)


def test_doctor_warns_about_too_many_packs(ws: Workspace, repo: Path) -> None:
    git(repo, "config", "gc.auto", "0")
    git(repo, "config", "gc.autoPackLimit", "2")
    for number in range(3):
        create_cell(ws, title=f"pack {number}")
        git(repo, "repack", "-d", "-q")
    health = object_store_health(ws)
    assert health.packs == 3
    assert any("gc.autoPackLimit=2" in w for w in health.warnings)
    pack_repository(ws)
    assert object_store_health(ws).packs == 1


def test_merging_packs_drops_a_multi_pack_index_naming_them(ws: Workspace, repo: Path) -> None:
    for number in range(3):
        create_cell(ws, title=f"pack {number}")
        git(repo, "repack", "-d", "-q")
    git(repo, "multi-pack-index", "write")
    pack_dir = repo / ".git" / "objects" / "pack"
    assert (pack_dir / "multi-pack-index").exists()
    pack_repository(ws)
    assert not (pack_dir / "multi-pack-index").exists()
    assert count_objects(repo)["packs"] == 1
    assert_clean(repo)
    all_cells_readable(ws, 3)


@pytest.mark.parametrize(
    "args", [("ready", "--json"), ("list", "--json"), ("hooks", "run", "pre-commit")]
)
def test_the_lean_paths_read_packed_objects_without_dulwich(
    ws: Workspace, repo: Path, args: tuple[str, ...]
) -> None:
    from hive.domain.reservations import reserve
    from tests.test_state_index import HEAVY, _modules_after, hive, ids_of

    create_cell(ws, title="one")
    reserve(ws, paths=["src/**"], reason="mine")
    ids_of(hive(repo, "ready", "--json"))  # the state is indexed
    pack_repository(ws)
    assert count_objects(repo)["count"] == 0  # HEAD's commit and trees are packed now
    modules, code = _modules_after(repo, *args)
    assert code == "0", "answered without the full CLI"
    assert not modules & set(HEAVY), f"{args} imported {sorted(modules & set(HEAVY))}"


def test_threads_reading_one_pack_at_once_each_get_every_object(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The web board's threads read the same mapped pack at once: each read takes its
    own slices of the map (no shared file position), so every object reads whole in
    every thread (a read garbled by another thread's seek failed its id check)."""
    import threading

    fast_import_cells(repo, 300)
    git(repo, "prune-packed")
    objects = str(repo / ".git" / "objects")
    expected = [(sha, (kind.encode(), body)) for sha, kind, body in git_objects(repo)]
    wrong: list[str] = []
    monkeypatch.setattr(packfile, "_BASES_LIMIT", 0)  # every read inflates its whole chain

    def reader() -> None:
        for _round in range(2):
            wrong.extend(
                sha for sha, found in expected if packfile.read_packed(objects, sha) != found
            )

    threads = [threading.Thread(target=reader) for _ in range(4)]
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads take turns as often as they can
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(switch)
    assert wrong == []


def test_a_mapping_a_reader_holds_is_never_closed_under_it(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The web board's threads share the mapped packs: when one thread's read filled the
    table (more than 64 packs) or found a pack gone, it closed every mapping it dropped,
    and another thread still slicing one of them read 'mmap closed' (the object then
    read as missing); it also iterated the table while others added to it ('dictionary
    changed size during iteration', seen in a full run). A dropped mapping now stays
    readable for the reader holding it."""
    fast_import_cells(repo, 20)
    pack_dir = repo / ".git" / "objects" / "pack"
    (base,) = packfile.pack_names(str(pack_dir))
    monkeypatch.setattr(packfile, "_PACKS", {})
    held, _serial = packfile._pack(base)  # a reader in another thread holds this map
    for number in range(65):  # other repositories' packs fill the table
        other = tmp_path / f"other{number}.pack"
        other.write_bytes(b"PACK" + bytes(number + 1))
        packfile._pack(str(other)[: -len(".pack")])
    assert base not in packfile._PACKS  # the table was emptied past 64
    assert held[:4] == b"PACK"  # ... and the held map is still readable
    monkeypatch.setattr(packfile, "_PACKS", {})
    held, _serial = packfile._pack(base)
    moved = tmp_path / "moved.pack"
    os.rename(base + ".pack", moved)  # a repack removed it
    packfile._forget_missing()
    os.rename(moved, base + ".pack")
    assert base not in packfile._PACKS
    assert held[:4] == b"PACK"
