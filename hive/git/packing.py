"""A healthy object store: hive packs what it writes, as ``git gc --auto`` would.

Every hive write adds a few loose objects (a blob per changed file, the trees
on its path, a commit). Left alone, a busy swarm leaves tens of thousands of
small files under ``.git/objects``. After each write, ``loose.pack_wanted`` makes
git's own cheap estimate (``too_many_loose_objects``: the entries of
``objects/17`` times 256, compared with ``gc.auto``, default 6,700; ``gc.auto=0``
turns it off) and, when there are too many, :func:`auto_pack` packs the loose
objects into one pack in the writing process itself. When there are more than
``gc.autoPackLimit`` packs (default 50) it also merges them into one, as
``git gc --auto`` (``git repack -d -l -A``) does.

The new pack is built with dulwich's pack writer. Deltas are chosen the way a
history suggests: walking the loose commits newest first, the tree or blob at a
path in the parent commit is stored as a delta against the same path in the
child (the newest version stays whole, so reading HEAD is cheap; chains are at
most :data:`MAX_DEPTH` long). Every delta is checked by applying it.

Safety with concurrent readers and writers (git's rules for ``repack -d``):

* only files whose names are object ids are read (git's and dulwich's
  temporary files are never touched), and only objects whose content matches
  their id are packed;
* the pack is written under a temporary name (``tmp_hive_<pid>_...``), flushed
  to disk, renamed to ``pack-<checksum>.pack`` and then its index is renamed
  into place (git ignores a pack until its ``.idx`` exists), then both are
  checked by reading every object back;
* only then are the loose copies of exactly the objects in the pack deleted,
  so a reader that misses a loose object finds it in the pack;
* one packer at a time (``<common dir>/hive/gc.lock``, not waited for), and
  none while ``git gc`` holds ``gc.pid``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from hive.git.configfile import flag
from hive.git.loose import (
    DEFAULT_GC_AUTO,
    DEFAULT_PACK_LIMIT,
    _is_loose_name,
    _kept,
    gc_settings,
    local_packs,
    loose_in_17,
    parse_commit,
    parse_git_int,
    too_many_loose,
)
from hive.git.packfile import pack_names, read_packed
from hive.git.shared import shared_mode, shared_perm

__all__ = [
    "DEFAULT_GC_AUTO",
    "DEFAULT_PACK_LIMIT",
    "local_packs",
    "loose_in_17",
    "parse_git_int",
    "too_many_loose",
]

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from hive.git.repo import GitRepo

MAX_DEPTH = 50
UNLINK_THREADS = 16
GIT_GC_PID_FRESH = 12 * 3600  # git ignores a gc.pid older than this
_TYPE_NUMBERS = {b"commit": 1, b"tree": 2, b"blob": 3, b"tag": 4}
_TREE_MODE = 0o040000
# Why a repository whose objects are precious is never packed: packing removes the
# loose objects it packed and the packs it merged, which git refuses there too.
PRECIOUS = (
    "this repository keeps every object (extensions.preciousObjects): hive does not"
    " pack it, as packing removes objects"
)


@dataclass(frozen=True)
class GcConfig:
    """``gc.auto`` and ``gc.autoPackLimit`` from git config (0 or less: off)."""

    auto: int = DEFAULT_GC_AUTO
    pack_limit: int = DEFAULT_PACK_LIMIT


@dataclass(frozen=True)
class StoreStats:
    """What ``git count-objects -v`` reports, counted exactly."""

    loose_objects: int
    loose_bytes: int
    packs: int
    kept_packs: int
    pack_bytes: int
    garbage: list[str]
    estimate: int  # git's gc --auto estimate of loose objects (objects/17 x 256)


@dataclass
class PackOutcome:
    """What one packing run did."""

    packed: int = 0
    removed_loose: int = 0
    merged_packs: int = 0
    new_packs: list[str] = field(default_factory=list)
    seconds: float = 0.0
    skipped: str | None = None


# ----------------------------------------------------------------- measuring


def objects_dir(repo: GitRepo) -> str:
    return os.path.join(repo.paths.common_dir, "objects")


def precious(repo: GitRepo) -> bool:
    """Whether the repository's objects are precious (``extensions.preciousObjects``):
    never packed, as packing removes objects (see ``PRECIOUS``)."""
    return flag(repo.paths, "extensions", "preciousObjects")


def gc_config(repo: GitRepo) -> GcConfig:
    auto, pack_limit = gc_settings(repo)
    return GcConfig(auto=auto, pack_limit=pack_limit)


def store_stats(repo: GitRepo) -> StoreStats:
    """Exact loose and pack counts and sizes (disk usage, as ``git count-objects``)."""
    objects = objects_dir(repo)
    loose = loose_bytes = 0
    garbage: list[str] = []
    for number in range(256):
        directory = os.path.join(objects, f"{number:02x}")
        try:
            names = os.listdir(directory)
        except OSError:
            continue
        for name in names:
            full = os.path.join(directory, name)
            if _is_loose_name(name):
                loose += 1
                loose_bytes += _disk_usage(full)
            else:
                garbage.append(os.path.relpath(full, repo.paths.common_dir))
    packs = pack_names(os.path.join(objects, "pack"))
    garbage += _pack_dir_garbage(objects, packs, repo.paths.common_dir)
    return StoreStats(
        loose_objects=loose,
        loose_bytes=loose_bytes,
        packs=len(packs),
        kept_packs=sum(1 for base in packs if _kept(base)),
        pack_bytes=sum(_disk_usage(base + ".pack") + _disk_usage(base + ".idx") for base in packs),
        garbage=sorted(garbage),
        estimate=loose_in_17(objects) * 256,
    )


def _pack_dir_garbage(objects: str, packs: list[str], common: str) -> list[str]:
    pack_dir = os.path.join(objects, "pack")
    known = {os.path.basename(base) for base in packs}
    found = []
    with contextlib.suppress(OSError):
        for name in os.listdir(pack_dir):
            stem, _, suffix = name.rpartition(".")
            if stem in known and suffix in ("pack", "idx", "keep", "rev", "bitmap", "promisor"):
                continue
            if name in ("multi-pack-index",) or name.startswith("multi-pack-index"):
                continue
            found.append(os.path.relpath(os.path.join(pack_dir, name), common))
    return found


def _disk_usage(path: str) -> int:
    try:
        info = os.stat(path)
    except OSError:
        return 0
    return getattr(info, "st_blocks", 0) * 512 or info.st_size


# ----------------------------------------------------------------- deciding


def auto_pack(repo: GitRepo, *, merge_packs: bool, pack_limit: int) -> PackOutcome | None:
    """After a write that ``loose.pack_wanted`` says should pack: pack (None when it
    failed).

    Never raises: a failure is written to ``<common dir>/hive/gc.log`` (``hive doctor``
    shows it) and the write that triggered it has already landed.
    """
    try:
        outcome = pack_objects(repo, merge_packs=merge_packs, pack_limit=pack_limit)
    except Exception as exc:  # a failed pack never fails the write that triggered it
        _log_failure(repo, exc)
        return None
    if outcome.skipped is None:
        clear_failure(repo)
    return outcome


def gc_log_path(repo: GitRepo) -> str:
    return os.path.join(repo.paths.hive_state_dir, "gc.log")


def _log_failure(repo: GitRepo, exc: BaseException) -> None:
    with contextlib.suppress(OSError):
        os.makedirs(repo.paths.hive_state_dir, exist_ok=True)
        stamp = time.strftime("%Y-%m-%d %H:%M:%S")
        with open(gc_log_path(repo), "w", encoding="utf-8") as handle:
            handle.write(f"{stamp} packing failed: {type(exc).__name__}: {exc}\n")


def clear_failure(repo: GitRepo) -> None:
    with contextlib.suppress(OSError):
        os.unlink(gc_log_path(repo))


def git_gc_running(common_dir: str) -> bool:
    """Whether ``git gc`` holds ``gc.pid`` (fresh, and its process alive on this host)."""
    path = os.path.join(common_dir, "gc.pid")
    try:
        age = time.time() - os.stat(path).st_mtime
        with open(path, encoding="utf-8", errors="replace") as handle:
            pid_text, _, host = handle.read().strip().partition(" ")
    except OSError:
        return False
    if age > GIT_GC_PID_FRESH:
        return False
    import socket

    if host.strip() and host.strip() != socket.gethostname():
        return True
    try:
        os.kill(int(pid_text), 0)
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:
        return True
    return True


def pack_objects(
    repo: GitRepo,
    *,
    merge_packs: bool = False,
    pack_limit: int = 1,
    progress: Callable[[str], None] | None = None,
) -> PackOutcome:
    """Pack every loose object; with ``merge_packs``, also merge all packs (not ``.keep``
    ones) into one. Returns at once (``skipped``) when another packer is running."""
    from filelock import FileLock, Timeout

    started = time.monotonic()
    os.makedirs(repo.paths.hive_state_dir, exist_ok=True)
    lock = FileLock(os.path.join(repo.paths.hive_state_dir, "gc.lock"), timeout=0)
    try:
        lock.acquire()
    except Timeout:
        return PackOutcome(skipped="another process is packing")
    try:
        if git_gc_running(repo.paths.common_dir):
            return PackOutcome(skipped="git gc is running")
        if precious(repo):
            return PackOutcome(skipped=PRECIOUS)
        objects = objects_dir(repo)
        _remove_dead_temporaries(os.path.join(objects, "pack"))
        outcome = PackOutcome()
        new = pack_loose_objects(repo, progress=progress)
        if new is not None:
            outcome.new_packs.append(os.path.basename(new.base))
            outcome.packed = new.count
            outcome.removed_loose = _remove_loose(objects, new.shas)
        packs = local_packs(objects)
        if merge_packs and len(packs) > max(pack_limit, 1):
            merged = merge_all_packs(repo, packs, progress=progress)
            outcome.new_packs.append(os.path.basename(merged))
            outcome.merged_packs = len(packs)
        outcome.seconds = time.monotonic() - started
        return outcome
    finally:
        lock.release()


# ----------------------------------------------------------------- loose objects


def _loose_path(objects: str, sha: str) -> str:
    return os.path.join(objects, sha[:2], sha[2:])


def list_loose(objects: str) -> list[str]:
    """Every loose object id (files named like one; temporaries are never listed)."""
    found: list[str] = []
    for number in range(256):
        prefix = f"{number:02x}"
        try:
            names = os.listdir(os.path.join(objects, prefix))
        except OSError:
            continue
        found.extend(prefix + name for name in names if _is_loose_name(name))
    return found


def read_loose_object(objects: str, sha: str) -> tuple[int, bytes] | None:
    """(type number, body) of a loose object whose content matches its id, else None."""
    try:
        with open(_loose_path(objects, sha), "rb") as handle:
            raw = zlib.decompress(handle.read())
    except (OSError, zlib.error):
        return None
    if hashlib.sha1(raw, usedforsecurity=False).hexdigest() != sha:
        return None
    header, _, body = raw.partition(b"\0")
    kind, _, size = header.partition(b" ")
    type_num = _TYPE_NUMBERS.get(kind)
    if type_num is None or not size.isdigit() or int(size) != len(body):
        return None
    return type_num, body


def _remove_loose(objects: str, shas: list[str]) -> int:
    """Delete these loose objects (already in a pack that is in place). Several at once:
    on some filesystems each unlink waits (e.g. ext4 mounted with ``discard``) and the
    waits overlap."""
    from concurrent.futures import ThreadPoolExecutor

    def remove(sha: str) -> int:
        try:
            os.unlink(_loose_path(objects, sha))
        except FileNotFoundError:
            return 0
        return 1

    with ThreadPoolExecutor(max_workers=UNLINK_THREADS) as pool:
        return sum(pool.map(remove, shas, chunksize=64))


# ----------------------------------------------------------------- choosing deltas


_TREE_ENTRY = re.compile(rb"[0-7]+ [^\0]*\0.{20}", re.S)


def _tree_records(body: bytes) -> frozenset[bytes]:
    """The entries of a tree object's body, each as its raw bytes."""
    return frozenset(_TREE_ENTRY.findall(body))


def _parse_records(records: set[bytes] | frozenset[bytes]) -> dict[bytes, tuple[bool, str]]:
    """name -> (is a tree, hex sha) of raw tree entries."""
    parsed: dict[bytes, tuple[bool, str]] = {}
    for record in records:
        space = record.index(b" ")
        nul = record.index(b"\0", space)
        parsed[record[space + 1 : nul]] = (
            int(record[:space], 8) == _TREE_MODE,
            record[nul + 1 :].hex(),
        )
    return parsed


def _commit_fields(body: bytes) -> tuple[str | None, str | None, int]:
    """(tree, first parent, committer time) of a commit body (``loose.parse_commit``;
    nothing for a commit it cannot read: no delta base from it)."""
    found = parse_commit(body)
    if found is None:
        return None, None, 0
    return found.tree, found.parents[0] if found.parents else None, found.time


def _children_first(
    commits: list[tuple[int, str, str, str | None]],
) -> Iterator[tuple[str, str | None]]:
    """(tree, first parent) of each commit, every commit after its children (newest
    first along each line of history; commit times alone tie within a second)."""
    by_sha = {sha: (when, tree, parent) for when, sha, tree, parent in commits}
    waiting = dict.fromkeys(by_sha, 0)
    for _, _, _, parent in commits:
        if parent in waiting:
            waiting[parent] += 1
    ready = sorted((by_sha[sha][0], sha) for sha, count in waiting.items() if count == 0)
    while ready:
        _, sha = ready.pop()
        _, tree, parent = by_sha[sha]
        yield tree, parent
        if parent in waiting:
            waiting[parent] -= 1
            if waiting[parent] == 0:
                ready.append((by_sha[parent][0], parent))
                ready.sort()


class _DeltaPlanner:
    """Pairs each loose tree or blob with the next newer version at the same path."""

    def __init__(self, objects: str, types: dict[str, int]) -> None:
        self.objects = objects
        self.types = types
        self.base: dict[str, str] = {}  # older object -> the newer one it is a delta of
        self.depth: dict[str, int] = {}
        self.is_base: set[str] = set()
        self._trees: dict[str, frozenset[bytes] | None] = {}

    def body(self, sha: str) -> bytes | None:
        if sha in self.types:
            found = read_loose_object(self.objects, sha)
            return None if found is None else found[1]
        packed = read_packed(self.objects, sha)
        return None if packed is None else packed[1]

    def tree(self, sha: str) -> frozenset[bytes] | None:
        if sha not in self._trees:
            if len(self._trees) > 512:
                self._trees.clear()
            body = self.body(sha)
            self._trees[sha] = None if body is None else _tree_records(body)
        return self._trees[sha]

    def plan(self, commits: list[tuple[int, str, str, str | None]]) -> dict[str, str]:
        """``commits``: (time, sha, tree, parent); returns older -> newer delta bases."""
        for tree, parent in _children_first(commits):
            if parent is None:
                continue
            parent_body = self.body(parent)
            if parent_body is None:
                continue
            old_tree, _, _ = _commit_fields(parent_body)
            if old_tree is not None:
                self._pair_trees(tree, old_tree)
        return self.base

    def _pair_trees(self, new: str, old: str) -> None:
        pending = [(new, old)]
        while pending:
            newer, older = pending.pop()
            if newer == older or newer not in self.types:
                continue
            self._link(older, newer)
            new_records, old_records = self.tree(newer), self.tree(older)
            if new_records is None or old_records is None:
                continue
            before = _parse_records(old_records - new_records)  # only what changed
            for name, (is_tree, sha) in _parse_records(new_records - old_records).items():
                previous = before.get(name)
                if previous is None or previous[0] != is_tree:
                    continue
                if is_tree:
                    pending.append((sha, previous[1]))
                else:
                    self._link(previous[1], sha)

    def _link(self, older: str, newer: str) -> None:
        """Store ``older`` as a delta of ``newer`` when that is safe and useful."""
        if (
            older == newer
            or older not in self.types
            or newer not in self.types
            or older in self.base
            or older in self.is_base  # its own depth is settled: keep chains bounded
            or self.types[older] != self.types[newer]
        ):
            return
        depth = self.depth.get(newer, 0) + 1
        if depth > MAX_DEPTH or self._in_chain(newer, older):
            return
        self.base[older] = newer
        self.depth[older] = depth
        self.is_base.add(newer)

    def _in_chain(self, start: str, wanted: str) -> bool:
        current: str | None = start
        for _ in range(MAX_DEPTH + 2):
            if current is None:
                return False
            if current == wanted:
                return True
            current = self.base.get(current)
        return True


# ----------------------------------------------------------------- writing packs


@dataclass(frozen=True)
class NewPack:
    """A pack written and put in place."""

    base: str  # path without .pack/.idx
    count: int
    shas: list[str]


def pack_loose_objects(
    repo: GitRepo, *, progress: Callable[[str], None] | None = None
) -> NewPack | None:
    """Write every (valid) loose object into one new pack; the loose copies stay.

    Returns None when there is nothing to pack.
    """
    objects = objects_dir(repo)
    types: dict[str, int] = {}
    commits: list[tuple[int, str, str, str | None]] = []
    for sha in list_loose(objects):
        found = read_loose_object(objects, sha)
        if found is None:
            continue  # not an object (or corrupt): never packed, never deleted
        types[sha] = found[0]
        if found[0] == 1:
            tree, parent, when = _commit_fields(found[1])
            if tree is not None:
                commits.append((when, sha, tree, parent))
    if not types:
        return None
    if progress:
        progress(f"packing {len(types)} loose objects")
    bases = _DeltaPlanner(objects, types).plan(commits)
    records = _records(objects, types, bases)
    base = _write_pack(repo, len(types), records)
    return NewPack(base=base, count=len(types), shas=list(types))


def _records(objects: str, types: dict[str, int], bases: dict[str, str]) -> Iterator[object]:
    """Pack records, every delta right after the chain it hangs from (bases first)."""
    from dulwich.pack import UnpackedObject, apply_delta, create_delta

    dependents: dict[str, list[str]] = {}
    for older, newer in bases.items():
        dependents.setdefault(newer, []).append(older)
    roots = [sha for sha in types if sha not in bases]
    for root in roots:
        stack: list[tuple[str, bytes | None]] = [(root, None)]
        while stack:
            sha, base_body = stack.pop()
            found = read_loose_object(objects, sha)
            if found is None:
                raise OSError(f"loose object {sha} disappeared or changed while packing")
            type_num, body = found
            record = UnpackedObject(type_num, sha=bytes.fromhex(sha), decomp_chunks=[body])
            if base_body is not None:
                delta = b"".join(create_delta(base_body, body))
                if len(delta) < len(body) // 2 and b"".join(apply_delta(base_body, delta)) == body:
                    record = UnpackedObject(
                        type_num,
                        sha=bytes.fromhex(sha),
                        delta_base=bytes.fromhex(bases[sha]),
                        decomp_chunks=[delta],
                    )
            yield record
            stack.extend((child, body) for child in dependents.get(sha, ()))


def write_blobs_pack(
    repo: GitRepo, contents: list[tuple[str, bytes | None]]
) -> dict[str, str | None]:
    """Store many new blobs as one pack (what ``git fast-import`` does) instead of a
    loose file each; path -> blob id (None for a deletion). The pack and its index are
    in place before this returns, so a commit may refer to them."""
    from dulwich.pack import UnpackedObject

    blobs: dict[str, str | None] = {}
    records: dict[str, UnpackedObject] = {}
    for path, content in contents:
        if content is None:
            blobs[path] = None
            continue
        raw = b"blob " + str(len(content)).encode("ascii") + b"\0" + content
        digest = hashlib.sha1(raw, usedforsecurity=False).digest()
        blobs[path] = digest.hex()
        records.setdefault(digest.hex(), UnpackedObject(3, sha=digest, decomp_chunks=[content]))
    if records:
        _write_pack(repo, len(records), iter(records.values()))
    return blobs


def _temp_name(pack_dir: str, suffix: str) -> str:
    import secrets

    return os.path.join(pack_dir, f"tmp_hive_{os.getpid()}_{secrets.token_hex(4)}{suffix}")


def _write_pack(repo: GitRepo, count: int, records: Iterator[object]) -> str:
    """Write ``records`` as a pack plus index, put both in place, check every object."""
    from dulwich.pack import write_pack_data, write_pack_index

    pack_dir = os.path.join(objects_dir(repo), "pack")
    os.makedirs(pack_dir, exist_ok=True)
    temp_pack = _temp_name(pack_dir, ".pack")
    temp_idx = _temp_name(pack_dir, ".idx")
    try:
        with open(temp_pack, "wb") as handle:
            entries, checksum = write_pack_data(
                handle.write,
                records,  # type: ignore[arg-type]
                repo.dulwich.object_store.object_format,
                num_records=count,
            )
            handle.flush()
            os.fsync(handle.fileno())
        rows = sorted((sha, offset, crc) for sha, (offset, crc) in entries.items())
        with open(temp_idx, "wb") as handle:
            write_pack_index(handle, rows, checksum, version=2)
            handle.flush()
            os.fsync(handle.fileno())
        base = os.path.join(pack_dir, f"pack-{checksum.hex()}")
        mode = shared_mode(shared_perm(repo.paths), 0o444)  # git's, shared or not
        for path in (temp_pack, temp_idx):
            os.chmod(path, mode)
        os.replace(temp_pack, base + ".pack")  # git ignores a pack until its index exists
        os.replace(temp_idx, base + ".idx")
        _fsync_directory(pack_dir)
    finally:
        for path in (temp_pack, temp_idx):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
    verify_pack(repo, base, count)
    return base


def verify_pack(repo: GitRepo, base: str, count: int) -> None:
    """Check the pack's checksum, then index it again from its content (every delta
    resolved, every object id computed) and compare with the index written."""
    from dulwich.pack import Pack, PackIndexer

    pack = Pack(base, object_format=repo.dulwich.object_store.object_format)
    try:
        pack.check_length_and_checksum()
        pack.data.check()
        found = sorted((sha, offset) for sha, offset, _ in PackIndexer.for_pack_data(pack.data))
        written = sorted((sha, offset) for sha, offset, _ in pack.index.iterentries())
        if len(found) != count or found != written:
            raise OSError(f"{base}.pack does not match its index; nothing was removed")
    finally:
        pack.close()


def _fsync_directory(path: str) -> None:
    with contextlib.suppress(OSError):
        descriptor = os.open(path, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


def merge_all_packs(
    repo: GitRepo, packs: list[str], *, progress: Callable[[str], None] | None = None
) -> str:
    """One pack with every object of ``packs`` (deltas reused), then the old packs go."""
    from dulwich.pack import Pack, generate_unpacked_objects

    store = repo.dulwich.object_store
    wanted: dict[str, None] = {}
    for base in packs:
        pack = Pack(base, object_format=store.object_format)
        try:
            wanted.update((sha.decode("ascii"), None) for sha in pack)
        finally:
            pack.close()
    if progress:
        progress(f"merging {len(packs)} packs ({len(wanted)} objects)")
    ids = [(sha.encode("ascii"), None) for sha in wanted]
    records = generate_unpacked_objects(store, ids, reuse_deltas=True, deltify=False)  # type: ignore[arg-type]
    merged = _write_pack(repo, len(ids), records)
    _remove_multi_pack_index(os.path.dirname(merged))  # it names packs about to go
    for base in packs:
        if base != merged:
            _remove_pack(base)
    return merged


def _remove_multi_pack_index(pack_dir: str) -> None:
    """Drop a multi-pack-index, as ``git repack -d`` does when it deletes packs (git reads
    the packs' own indexes without it; ``git maintenance`` writes a new one)."""
    for name in os.listdir(pack_dir):
        if name.startswith("multi-pack-index"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(pack_dir, name))


def _remove_pack(base: str) -> None:
    """Delete a pack, its index first (so nobody starts reading it)."""
    for suffix in (".idx", ".pack", ".rev", ".bitmap"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(base + suffix)


def _remove_dead_temporaries(pack_dir: str) -> None:
    """Temporary packs left by a hive process that died while packing."""
    try:
        names = os.listdir(pack_dir)
    except OSError:
        return
    for name in names:
        if not name.startswith("tmp_hive_"):
            continue
        pid_text = name.split("_")[2]
        if pid_text.isdigit() and int(pid_text) != os.getpid() and not _alive(int(pid_text)):
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(pack_dir, name))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True
