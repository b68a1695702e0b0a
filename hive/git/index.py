"""Fast, surgical reads and updates of git's index file (``.git/index``).

hive changes a handful of files per write; rewriting the whole index through a
general parser costs more than the rest of the write put together at 10,000
cells. This module splices the changed entries into the raw bytes instead:

* one cheap pass collects the offset of every entry (names are not decoded),
* entries are found by binary search on their raw path bytes (git sorts by
  ``memcmp`` of the path, then by stage),
* the new file is the untouched byte runs (views of the old file, never copied)
  plus the new entries, hashed and written piece by piece under git's own
  ``index.lock`` protocol so a concurrent ``git add`` never interleaves.

Versions 2 and 3 are handled here. Extensions: the cache tree (``TREE``) is kept
with the changed directories invalidated, resolve-undo (``REUC``) is kept, every
other optional extension (untracked cache, fsmonitor, offset tables) is dropped,
which git treats as "not cached". Index version 4 (path compression) and the
required extensions of split or sparse indexes fall back to dulwich's parser.
"""

from __future__ import annotations

import errno
import os
import stat
import struct
from bisect import bisect_left

from hive.errors import GitError, LockTimeout
from hive.git import killpoints
from hive.git.owners import owner_tag
from hive.git.sha import hasher as sha_hasher
from hive.git.shared import share_descriptor
from hive.record import Frozen, Record, suppress
from hive.waits import Backoff

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from typing import Any

_HEADER = struct.Struct(">4sLL")
_STAT = struct.Struct(">LLLLLLLLLL")
_FLAGS = struct.Struct(">H")
_ENTRY_FIXED = 62  # ten 32-bit stat fields, 20-byte sha, 16-bit flags
_NAME_MASK = 0x0FFF
_EXTENDED_FLAG = 0x4000
_SKIP_WORKTREE = 0x4000  # in the extended flags (index version 3 and later)
_STAGE_SHIFT = 12
_SHA_SIZE = 20
_KEPT_EXTENSIONS = (b"TREE", b"REUC")


class IndexUpdate(Frozen):
    """Set ``path`` to blob ``sha`` (hex, as bytes), or remove it when ``sha`` is None;
    ``skip_worktree``: the entry has git's skip-worktree bit (sparse checkout: no file
    in the working tree)."""

    _fields = ("path", "sha", "mode", "stat", "skip_worktree")

    def __init__(
        self,
        path: str,
        sha: bytes | None,
        mode: int = 0o100644,
        stat: os.stat_result | None = None,
        skip_worktree: bool = False,
    ) -> None:
        self.path = path
        self.sha = sha
        self.mode = mode
        self.stat = stat
        self.skip_worktree = skip_worktree


class IndexEntry(Frozen):
    """One index entry, as much of it as hive needs (``sha`` is hex bytes)."""

    _fields = (
        "path",
        "sha",
        "mode",
        "stage",
        "size",
        "mtime_ns",
        "ctime_ns",
        "ino",
        "dev",
        "skip_worktree",
    )

    def __init__(
        self,
        path: str,
        sha: bytes,
        mode: int,
        stage: int,
        size: int,
        mtime_ns: int,
        ctime_ns: int,
        ino: int,
        dev: int,
        skip_worktree: bool = False,
    ) -> None:
        self.path = path
        self.sha = sha
        self.mode = mode
        self.stage = stage
        self.size = size
        self.mtime_ns = mtime_ns
        self.ctime_ns = ctime_ns
        self.ino = ino
        self.dev = dev
        self.skip_worktree = skip_worktree  # sparse checkout: not in the working tree


class _Unsupported(Exception):
    """This index needs the general (slow) parser."""


class _Parsed(Record):
    """An index file read: its bytes, version and entry offsets."""

    _fields = ("data", "version", "offsets", "names")

    def __init__(
        self,
        data: bytes,
        version: int,
        offsets: list[int],
        names: list[bytes] | None = None,
    ) -> None:
        self.data = data
        self.version = version
        self.offsets = offsets  # start of each entry, plus the end of the entry table
        self.names = names

    def name_at(self, position: int) -> bytes:
        start = self.offsets[position]
        flags = _FLAGS.unpack_from(self.data, start + 60)[0]
        begin = start + _ENTRY_FIXED + (2 if flags & _EXTENDED_FLAG else 0)
        length = flags & _NAME_MASK
        if length == _NAME_MASK:
            length = self.data.index(b"\0", begin) - begin
        return self.data[begin : begin + length]

    def all_names(self) -> list[bytes]:
        if self.names is None:
            self.names = [self.name_at(i) for i in range(len(self.offsets) - 1)]
        return self.names

    def find(self, name: bytes) -> tuple[int, int]:
        """The range of entry positions holding ``name`` (all stages)."""
        names = _LazyNames(self)
        low = bisect_left(names, name)
        high = low
        count = len(self.offsets) - 1
        while high < count and self.name_at(high) == name:
            high += 1
        return low, high

    @property
    def extensions_start(self) -> int:
        return self.offsets[-1]


class _LazyNames:
    """A sequence view of entry names for ``bisect`` (decodes only what it touches;
    ``bisect`` needs only ``len`` and indexing)."""

    def __init__(self, parsed: _Parsed) -> None:
        self._parsed = parsed

    def __len__(self) -> int:
        return len(self._parsed.offsets) - 1

    def __getitem__(self, position: Any) -> Any:
        return self._parsed.name_at(position)


def _parse(data: bytes) -> _Parsed:
    if len(data) < _HEADER.size + _SHA_SIZE:
        raise GitError("the git index is truncated")
    signature, version, count = _HEADER.unpack_from(data, 0)
    if signature != b"DIRC":
        raise GitError("the git index is not an index file (bad signature)")
    if version not in (2, 3):
        raise _Unsupported(f"index version {version}")
    checksum = data[-_SHA_SIZE:]
    offsets = _known_offsets(checksum)
    if offsets is None or len(offsets) != count + 1:
        offsets = _entry_offsets(data, count)
        _remember_offsets(checksum, offsets)
    return _Parsed(data=data, version=version, offsets=offsets)


# Entry offsets by the index's trailing checksum (which names its content): a
# process that reads the index it just wrote, or reads it twice, walks it once.
# The offsets of an index hive wrote are kept as the function that computes them
# from the old ones: a fresh process, which never reads its index again, skips it.
_OFFSETS: dict[bytes, list[int] | Callable[[], list[int]]] = {}


def _remember_offsets(checksum: bytes, offsets: list[int] | Callable[[], list[int]]) -> None:
    if checksum == b"\0" * _SHA_SIZE:
        return  # index.skipHash: no checksum to key on
    if len(_OFFSETS) >= 4:
        _OFFSETS.pop(next(iter(_OFFSETS)))
    _OFFSETS[checksum] = offsets


def _known_offsets(checksum: bytes) -> list[int] | None:
    """The entry offsets of the index whose checksum is ``checksum``, when known."""
    found = _OFFSETS.get(checksum)
    if found is None or isinstance(found, list):
        return found
    offsets = found()
    _OFFSETS[checksum] = offsets
    return offsets


def _entry_offsets(data: bytes, count: int) -> list[int]:
    offsets = [0] * (count + 1)
    offset = _HEADER.size
    unpack = _FLAGS.unpack_from
    for position in range(count):
        offsets[position] = offset
        flags = unpack(data, offset + 60)[0]
        fixed = _ENTRY_FIXED + (2 if flags & _EXTENDED_FLAG else 0)
        length = flags & _NAME_MASK
        if length == _NAME_MASK:
            length = data.index(b"\0", offset + fixed) - offset - fixed
        offset += (fixed + length + 8) & ~7
    if offset > len(data) - _SHA_SIZE:
        raise GitError("the git index is truncated")
    offsets[count] = offset
    return offsets


def _decode_entry(data: bytes, start: int, name: bytes) -> IndexEntry:
    ctime_s, ctime_n, mtime_s, mtime_n, dev, ino, mode, _uid, _gid, size = _STAT.unpack_from(
        data, start
    )
    sha = data[start + 40 : start + 60].hex().encode()
    flags = _FLAGS.unpack_from(data, start + 60)[0]
    extended = _FLAGS.unpack_from(data, start + 62)[0] if flags & _EXTENDED_FLAG else 0
    return IndexEntry(
        path=name.decode("utf-8", "surrogateescape"),
        sha=sha,
        mode=mode,
        stage=(flags >> _STAGE_SHIFT) & 3,
        size=size,
        mtime_ns=mtime_s * 10**9 + mtime_n,
        ctime_ns=ctime_s * 10**9 + ctime_n,
        ino=ino,
        dev=dev,
        skip_worktree=bool(extended & _SKIP_WORKTREE),
    )


def _read(index_path: str) -> bytes | None:
    try:
        with open(index_path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


# ---------------------------------------------------------------------- reads


def read_entries(index_path: str, prefix: str = "") -> dict[str, IndexEntry]:
    """Every entry whose path starts with ``prefix`` (all stages; last stage wins)."""
    return keyed_entries(index_path, prefix)[1]()


def keyed_entries(
    index_path: str, prefix: str = ""
) -> tuple[bytes | None, Callable[[], dict[str, IndexEntry]]]:
    """The index's content key (its trailing checksum; None where it has none:
    ``index.skipHash``, no index) and :func:`read_entries` of those very bytes, to be
    called only when what was made of that content before is not at hand."""
    data = _read(index_path)
    if data is None:
        return None, dict
    checksum = data[-_SHA_SIZE:]
    key = checksum if len(data) > _SHA_SIZE and checksum != b"\0" * _SHA_SIZE else None
    return key, lambda: _entries_in(data, index_path, prefix)


def _entries_in(data: bytes, index_path: str, prefix: str) -> dict[str, IndexEntry]:
    try:
        parsed = _parse(data)
    except _Unsupported:
        return _slow_read(index_path, prefix)
    raw_prefix = prefix.encode()
    names = _LazyNames(parsed)
    position = bisect_left(names, raw_prefix)
    found: dict[str, IndexEntry] = {}
    for current in range(position, len(names)):
        name = parsed.name_at(current)
        if not name.startswith(raw_prefix):
            break
        entry = _decode_entry(data, parsed.offsets[current], name)
        found[entry.path] = entry
    return found


_SECONDS_WRAP = 2**32 * 10**9  # the index keeps 32 bits of seconds


def index_mtime_ns(index_path: str) -> int | None:
    """When the index file was last written (None: no index), for :func:`stat_clean`."""
    try:
        return os.stat(index_path).st_mtime_ns
    except OSError:
        return None


def stat_clean(info: os.stat_result, entry: IndexEntry, written_ns: int | None) -> bool:
    """Whether the working-tree file whose ``lstat`` is ``info`` still holds the blob
    ``entry`` staged, by git's own rule, without reading it: a regular file whose
    mtime, ctime, size and inode are those the index recorded (32 bits of each, as git
    keeps them; the times to the nanosecond, stricter than git's default build, which
    compares seconds), at stage 0, and not *racy*. An entry is racy, as git's default
    build decides it, when its file was modified in the second the index was written
    (``written_ns``) or later: an edit made soon after the stat data was recorded can
    leave it unchanged, so git compares such a file's content, and so must the caller."""
    return (
        entry.stage == 0
        and not entry.skip_worktree
        and written_ns is not None
        and entry.mtime_ns // 10**9 < written_ns // 10**9
        and stat.S_ISREG(info.st_mode)
        and info.st_mtime_ns % _SECONDS_WRAP == entry.mtime_ns
        and info.st_ctime_ns % _SECONDS_WRAP == entry.ctime_ns
        and info.st_size & 0xFFFFFFFF == entry.size
        and info.st_ino & 0xFFFFFFFF == entry.ino
    )


def lookup_entries(index_path: str, paths: Iterable[str]) -> dict[str, IndexEntry]:
    """The entries of exactly ``paths`` (missing paths are absent from the result)."""
    data = _read(index_path)
    if data is None:
        return {}
    return _lookup_in(data, index_path, paths)


def _lookup_in(data: bytes, index_path: str, paths: Iterable[str]) -> dict[str, IndexEntry]:
    try:
        parsed = _parse(data)
    except _Unsupported:
        wanted = set(paths)
        return {p: e for p, e in _slow_read(index_path, "").items() if p in wanted}
    found: dict[str, IndexEntry] = {}
    for path in paths:
        raw = path.encode()
        low, high = parsed.find(raw)
        for position in range(low, high):
            found[path] = _decode_entry(data, parsed.offsets[position], raw)
    return found


# --------------------------------------------------------------------- writes


def update_index(
    index_path: str, updates: Sequence[IndexUpdate], *, lock_timeout: float = 10.0
) -> None:
    """Apply ``updates`` to the index under git's ``index.lock`` protocol."""
    if not updates:
        return
    with IndexLock(index_path, lock_timeout) as lock:
        lock.apply(updates)


class IndexLock:
    """git's ``index.lock``, held across a whole hive write.

    Entering takes the lock and checks that the index can be updated (a format
    hive cannot write is refused here, before anything is committed); ``apply``
    writes the updated index and renames it into place; leaving without
    ``apply`` releases the lock and leaves the index untouched.

    With ``twin`` (hive's write path: ``<git dir>/hive-index.lock``) the lock
    is taken by hard-linking that file, which holds the owner's tag, to
    ``index.lock``: ``index.lock`` never exists without a twin that names its
    owner, so a lock left by a hive process that died is recognised (same
    file as the twin) and recovered, and a lock any other process holds never
    is. The twin stays until the lock is released or the write is over (its
    presence is what tells the next command to look for work to recover).
    """

    def __init__(
        self,
        index_path: str,
        timeout: float = 10.0,
        *,
        twin: str | None = None,
        lock_path: str | None = None,
        advice: str = "",
        perm: int = 0,
    ) -> None:
        self.index_path = index_path
        self.advice = advice  # how to wait longer, added to a LockTimeout's message
        self.perm = perm  # hive.git.shared.shared_perm: the new index's mode
        # ``lock_path``: a private temporary file instead of git's lock, for the one
        # caller allowed to (the pre-commit hook, whose parent git holds index.lock)
        self.lock_path = lock_path or index_path + ".lock"
        self.timeout = timeout
        self.twin = twin
        # True while an intent record depends on the twin: leaving keeps it for recovery.
        self.keep_twin = False
        self._descriptor = -1
        self._data: bytes | None = None
        self._fast = True

    def __enter__(self) -> IndexLock:
        killpoints.reached("before-index-lock")
        try:
            self._descriptor = _acquire(self.lock_path, self.timeout, self.twin, self.keep_twin)
        except LockTimeout as held:
            if not self.advice:
                raise
            raise LockTimeout(f"{held}; {self.advice}") from None
        share_descriptor(self.perm, self._descriptor)  # the lock becomes the index
        killpoints.reached("after-index-lock")
        try:
            self._data = _read(self.index_path)
            self._fast = _check_writable(self.index_path, self._data)
        except BaseException:
            self._release()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._release()

    def lookup(self, paths: Iterable[str]) -> dict[str, IndexEntry]:
        """The entries of ``paths`` in the index as it was when the lock was taken."""
        if self._data is None:
            return {}
        return _lookup_in(self._data, self.index_path, paths)

    def apply(self, updates: Sequence[IndexUpdate]) -> None:
        """Write ``updates`` into the index (the lock is consumed by the rename)."""
        if self._descriptor < 0:
            raise GitError("the index lock is not held")
        if not updates:
            self._release_lock()
            return
        if self._fast:
            pieces = _spliced(self._data, updates)
        else:
            pieces = [_slow_content(self.index_path, updates)]
        descriptor, self._descriptor = self._descriptor, -1
        try:
            os.ftruncate(descriptor, 0)
            os.lseek(descriptor, 0, os.SEEK_SET)
            for piece in pieces:
                _write_all(descriptor, piece)
        except BaseException:
            os.close(descriptor)
            _unlink_quietly(self.lock_path)
            raise
        os.close(descriptor)
        killpoints.reached("index-written")
        os.replace(self.lock_path, self.index_path)
        killpoints.reached("after-index")

    def _release(self) -> None:
        self._release_lock()
        if self.twin is not None and not self.keep_twin:
            _unlink_quietly(self.twin)
            self.twin = None

    def _release_lock(self) -> None:
        if self._descriptor >= 0:
            os.close(self._descriptor)
            self._descriptor = -1
            _unlink_quietly(self.lock_path)


def _write_all(descriptor: int, data: bytes | memoryview) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(descriptor, view) :]


def _check_writable(index_path: str, data: bytes | None) -> bool:
    """True when the fast splicer handles this index, False when dulwich must;
    a clear ``GitError`` when neither can write it (split or sparse indexes)."""
    if data is None:
        return True
    try:
        _kept_extensions(_parse(data), ())
        return True
    except _Unsupported:
        pass
    try:
        _load_dulwich(index_path)
    except Exception as exc:  # dulwich raises many types for formats it cannot read
        raise _unsupported("update", index_path, exc) from None
    return False


def _unsupported(action: str, index_path: str, exc: Exception) -> GitError:
    """Neither hive's reader nor dulwich's can ``action`` (read, update) this index."""
    return GitError(
        f"hive cannot {action} this repository's index ({index_path}: "
        f"{type(exc).__name__}); split and sparse indexes are not supported: run "
        "'git update-index --no-split-index' or 'git sparse-checkout init --no-sparse-index'"
    )


def _acquire(lock_path: str, timeout: float, twin: str | None, keep_twin: bool) -> int:
    """Take ``lock_path`` (via ``twin`` when given); the descriptor writes the lock's content.

    When the lock cannot be taken the twin is removed, unless ``keep_twin``
    (recovery: an intent still depends on it)."""
    descriptor = -1
    if twin is not None:
        # A new file every time: a twin left by a write killed after its rename is
        # a hard link to .git/index itself, and must never be written through.
        _unlink_quietly(twin)
        descriptor = os.open(twin, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o666)
        os.write(descriptor, owner_tag().encode("ascii"))
        killpoints.reached("index-lock-twin")
    try:
        return _take(lock_path, timeout, twin, descriptor)
    except BaseException:
        if descriptor >= 0:
            os.close(descriptor)
            if not keep_twin:
                _unlink_quietly(twin or "")
        raise


def _take(lock_path: str, timeout: float, twin: str | None, descriptor: int) -> int:
    backoff = Backoff(timeout)
    while True:
        try:
            if twin is None:
                return os.open(lock_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            os.link(twin, lock_path)
            return descriptor
        except FileExistsError:
            if not backoff.pause():
                raise LockTimeout(
                    f"{lock_path} exists: another git process held the index for more"
                    f" than {timeout:g}s (remove the file if no git process is running)"
                ) from None
        except OSError as error:
            if error.errno == errno.ENOENT:
                raise GitError(f"cannot lock the index: {error}") from None
            if twin is None or error.errno not in _NO_HARD_LINKS:
                raise
            return _take_without_links(lock_path, timeout, twin, descriptor)


_NO_HARD_LINKS = (errno.EPERM, errno.ENOTSUP, errno.EXDEV, errno.EMLINK, errno.ENOSYS)


def _take_without_links(lock_path: str, timeout: float, twin: str, descriptor: int) -> int:
    """No hard links here: create the lock itself, then record its inode in the twin."""
    lock = _take(lock_path, timeout, None, -1)
    info = os.fstat(lock)
    os.ftruncate(descriptor, 0)
    os.lseek(descriptor, 0, os.SEEK_SET)
    os.write(descriptor, f"{owner_tag()} ino={info.st_dev}:{info.st_ino}".encode("ascii"))
    os.close(descriptor)
    return lock


def lock_owned_by_twin(lock_path: str, twin: str) -> bool:
    """True when ``lock_path`` is the lock hive took through ``twin``."""
    try:
        lock = os.stat(lock_path)
        same = os.stat(twin)
    except OSError:
        return False
    if (lock.st_dev, lock.st_ino) == (same.st_dev, same.st_ino):
        return True
    try:
        with open(twin, "rb") as handle:
            recorded = handle.read(200).partition(b" ino=")[2]
    except OSError:
        return False
    return recorded == f"{lock.st_dev}:{lock.st_ino}".encode("ascii")


def _unlink_quietly(path: str) -> None:
    with suppress(FileNotFoundError):
        os.unlink(path)


def _spliced(data: bytes | None, updates: Sequence[IndexUpdate]) -> list[bytes | memoryview]:
    """The updated index file as pieces to write in order: the unchanged runs of
    entries are views of ``data`` (a 10,000-cell index is ~1 MB: no piece is copied,
    the checksum is computed over the pieces), the checksum last."""
    if data is None:
        parsed = _Parsed(data=_HEADER.pack(b"DIRC", 2, 0), version=2, offsets=[_HEADER.size])
        extensions = b""
    else:
        parsed = _parse(data)
        extensions = _kept_extensions(parsed, updates)
    final = {update.path.encode(): update for update in updates}
    removals: list[tuple[int, int, bytes]] = []  # (low, high, replacement)
    for raw in sorted(final):
        low, high = parsed.find(raw)
        update = final[raw]
        replacement = b"" if update.sha is None else _encode_entry(raw, update)
        if low == high and not replacement:
            continue
        removals.append((low, high, replacement))
    if not removals and data is not None:
        return [data]
    body, count = _assemble(parsed, removals)
    # an entry with extended flags (skip-worktree) needs version 3, as git writes it
    version = max(parsed.version, 3 if any(u.skip_worktree for u in updates) else 2)
    pieces = [_HEADER.pack(b"DIRC", version, count), *body, extensions]
    hasher = sha_hasher(sum(len(piece) for piece in pieces))
    for piece in pieces:
        hasher.update(piece)
    checksum: bytes = hasher.digest()
    old_offsets = parsed.offsets
    _remember_offsets(checksum, lambda: _new_offsets(old_offsets, removals))
    return [*pieces, checksum]


def _assemble(
    parsed: _Parsed, edits: list[tuple[int, int, bytes]]
) -> tuple[list[bytes | memoryview], int]:
    """The new entry table as pieces (views of the unchanged runs, the new entries),
    and how many entries it holds."""
    view = memoryview(parsed.data)
    offsets = parsed.offsets
    pieces: list[bytes | memoryview] = []
    count = 0
    cursor = 0
    for low, high, replacement in edits:
        pieces.append(view[offsets[cursor] : offsets[low]])
        count += low - cursor
        if replacement:
            pieces.append(replacement)
            count += 1
        cursor = high
    pieces.append(view[offsets[cursor] : offsets[-1]])
    count += len(offsets) - 1 - cursor
    return pieces, count


def _new_offsets(offsets: list[int], edits: list[tuple[int, int, bytes]]) -> list[int]:
    """Where the entries of the table :func:`_assemble` made start (plus its end)."""
    found: list[int] = []
    position = _HEADER.size  # where the next piece starts in the new file
    cursor = 0
    for low, high, replacement in edits:
        delta = position - offsets[cursor]
        found.extend([offset + delta for offset in offsets[cursor:low]])
        position += offsets[low] - offsets[cursor]
        if replacement:
            found.append(position)
            position += len(replacement)
        cursor = high
    delta = position - offsets[cursor]
    found.extend([offset + delta for offset in offsets[cursor:-1]])
    found.append(position + offsets[-1] - offsets[cursor])
    return found


def _encode_entry(name: bytes, update: IndexUpdate) -> bytes:
    assert update.sha is not None
    info = update.stat
    fields: tuple[int, ...] = (0, 0, 0, 0, 0, 0)
    if info is not None:
        ctime, mtime = info.st_ctime_ns, info.st_mtime_ns
        fields = (ctime // 10**9, ctime % 10**9, mtime // 10**9, mtime % 10**9)
        fields += (info.st_dev, info.st_ino)
    ids = (info.st_uid, info.st_gid, info.st_size) if info is not None else (0, 0, 0)
    packed = _STAT.pack(
        *(value & 0xFFFFFFFF for value in fields),
        update.mode,
        *(value & 0xFFFFFFFF for value in ids),
    )
    flags = min(len(name), _NAME_MASK)
    extended = b""
    if update.skip_worktree:
        flags |= _EXTENDED_FLAG
        extended = _FLAGS.pack(_SKIP_WORKTREE)
    entry = packed + bytes.fromhex(update.sha.decode()) + _FLAGS.pack(flags) + extended + name
    padding = 8 - (len(entry) % 8)
    return entry + b"\0" * padding


# ----------------------------------------------------------------- extensions


def _kept_extensions(parsed: _Parsed, updates: Sequence[IndexUpdate]) -> bytes:
    data = parsed.data
    offset = parsed.extensions_start
    end = len(data) - _SHA_SIZE
    kept: list[bytes] = []
    while offset + 8 <= end:
        signature = data[offset : offset + 4]
        size = struct.unpack_from(">L", data, offset + 4)[0]
        payload = data[offset + 8 : offset + 8 + size]
        offset += 8 + size
        if signature == b"TREE":
            tree = _invalidated_tree(payload, [u.path for u in updates])
            kept.append(signature + struct.pack(">L", len(tree)) + tree)
        elif signature in _KEPT_EXTENSIONS:
            kept.append(signature + struct.pack(">L", size) + payload)
        elif not b"A"[0] <= signature[0] <= b"Z"[0]:
            raise _Unsupported(f"required index extension {signature!r}")
    return b"".join(kept)


def _invalidated_tree(payload: bytes, paths: Sequence[str]) -> bytes:
    """The cache-tree with every directory that contains one of ``paths`` invalidated."""
    dirty = {b""}
    for path in paths:
        parts = path.encode().split(b"/")[:-1]
        for depth in range(1, len(parts) + 1):
            dirty.add(b"/".join(parts[:depth]))
    out: list[bytes] = []
    _rewrite_tree(payload, 0, b"", dirty, out)
    return b"".join(out)


def _rewrite_tree(
    payload: bytes, offset: int, parent: bytes, dirty: set[bytes], out: list[bytes]
) -> int:
    nul = payload.index(b"\0", offset)
    name = payload[offset:nul]
    newline = payload.index(b"\n", nul)
    entry_count_text, subtree_text = payload[nul + 1 : newline].split(b" ")
    entry_count = int(entry_count_text)
    subtrees = int(subtree_text)
    offset = newline + 1
    full = parent + b"/" + name if parent else name
    sha = b""
    if entry_count >= 0:
        sha = payload[offset : offset + _SHA_SIZE]
        offset += _SHA_SIZE
    if full in dirty:
        out.append(name + b"\0-1 " + subtree_text + b"\n")
    else:
        out.append(name + b"\0" + entry_count_text + b" " + subtree_text + b"\n" + sha)
    for _ in range(subtrees):
        offset = _rewrite_tree(payload, offset, full, dirty, out)
    return offset


# ------------------------------------------------------------ slow fallback


def _load_dulwich(index_path: str) -> Any:
    from dulwich.index import Index

    return Index(index_path, read=os.path.exists(index_path))


def _slow_read(index_path: str, prefix: str) -> dict[str, IndexEntry]:
    """The entries of an index the fast reader declines, read by dulwich; a GitError
    naming the way out where dulwich cannot read it either (git's split index in
    version 4)."""
    try:
        index = _load_dulwich(index_path)
    except Exception as exc:  # dulwich raises many types for formats it cannot read
        raise _unsupported("read", index_path, exc) from None
    found: dict[str, IndexEntry] = {}
    for name, value in index.items():
        path = name.decode("utf-8", "surrogateescape")
        if not path.startswith(prefix) or not hasattr(value, "sha"):
            continue
        mtime = value.mtime if isinstance(value.mtime, tuple) else (int(value.mtime), 0)
        ctime = value.ctime if isinstance(value.ctime, tuple) else (int(value.ctime), 0)
        sha = value.sha if len(value.sha) == 40 else value.sha.hex().encode()
        found[path] = IndexEntry(
            path=path,
            sha=bytes(sha),
            mode=value.mode,
            stage=0,
            size=value.size,
            mtime_ns=mtime[0] * 10**9 + mtime[1],
            ctime_ns=ctime[0] * 10**9 + ctime[1],
            ino=value.ino,
            dev=value.dev,
            skip_worktree=bool(getattr(value, "extended_flags", 0) & _SKIP_WORKTREE),
        )
    return found


def _slow_content(index_path: str, updates: Sequence[IndexUpdate]) -> bytes:
    """The updated index, made by dulwich on a private copy (index v4 and the like)."""
    import shutil

    from dulwich.index import IndexEntry as DulwichEntry

    copy = f"{index_path}.hive-tmp-{owner_tag()}"
    try:
        shutil.copyfile(index_path, copy)
        index = _load_dulwich(copy)
        for update in updates:
            key = update.path.encode()
            if update.sha is None:
                if key in index:
                    del index[key]
                continue
            info = update.stat
            index[key] = DulwichEntry(
                ctime=(int(info.st_ctime), info.st_ctime_ns % 10**9) if info else (0, 0),
                mtime=(int(info.st_mtime), info.st_mtime_ns % 10**9) if info else (0, 0),
                dev=(info.st_dev & 0xFFFFFFFF) if info else 0,
                ino=(info.st_ino & 0xFFFFFFFF) if info else 0,
                mode=update.mode,
                uid=info.st_uid if info else 0,
                gid=info.st_gid if info else 0,
                size=info.st_size if info else 0,
                sha=update.sha,  # type: ignore[arg-type]
                extended_flags=_SKIP_WORKTREE if update.skip_worktree else 0,
            )
        index.write()
        with open(copy, "rb") as handle:
            return handle.read()
    finally:
        _unlink_quietly(copy)
        _unlink_quietly(copy + ".lock")
