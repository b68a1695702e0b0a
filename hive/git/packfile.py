"""Reading objects from git pack files without importing dulwich.

hive packs its loose objects once there are many of them (``hive/git/packing.py``,
as ``git gc --auto`` does), so the commit HEAD points at and its trees are often
in a pack. A fresh CLI process that only needs HEAD's ``.hive`` tree reads it
here: the ``.idx`` (version 2) is searched by binary search over a memory map,
the object is inflated from the ``.pack``, and ``OFS_DELTA``/``REF_DELTA``
chains (as written by git or by hive) are resolved. Every object read is checked
against its id; anything this reader does not understand returns ``None`` so the
caller takes the ordinary (dulwich) path.

Pack files are immutable and named by their content, so an index opened once is
kept per process; a pack that disappears (replaced by a consolidated pack) makes
the lookup list the pack directory again.
"""

from __future__ import annotations

import _thread  # loaded by every interpreter (threading is not: lean paths avoid it)
import itertools
import mmap
import os
import struct
import zlib

from hive.git.sha import sha1
from hive.record import suppress

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from collections import OrderedDict
else:
    try:  # collections.OrderedDict itself (``collections`` re-exports the C class),
        # without the package's imports (``operator``, ``keyword``, ``reprlib``: ~1 ms
        # of a fresh process that needs nothing else of it, the pre-commit hook)
        from _collections import OrderedDict
    except ImportError:  # an implementation without it
        from collections import OrderedDict

OBJECT_TYPES = {1: b"commit", 2: b"tree", 3: b"blob", 4: b"tag"}
OFS_DELTA = 6
REF_DELTA = 7
MAX_DELTA_CHAIN = 10_000
_IDX_MAGIC = b"\377tOc"
_FANOUT = 8
_READ_CHUNK = 65536


class PackError(ValueError):
    """A pack or index this reader cannot use (the caller falls back)."""


class PackIndex:
    """One ``.idx`` file (version 2), memory-mapped."""

    def __init__(self, path: str) -> None:
        self.path = path
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size < _FANOUT + 1024 + 40:
                raise PackError(f"{path}: too short")
            self._map = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        if self._map[:4] != _IDX_MAGIC or int.from_bytes(self._map[4:8], "big") != 2:
            raise PackError(f"{path}: not a version 2 pack index")
        self.count = self._fanout(255)
        self._names = _FANOUT + 1024
        self._offsets = self._names + 24 * self.count
        self._large = self._offsets + 4 * self.count

    def _fanout(self, byte: int) -> int:
        start = _FANOUT + 4 * byte
        return int.from_bytes(self._map[start : start + 4], "big")

    def position(self, raw_sha: bytes) -> int | None:
        """Where ``raw_sha`` is in the sorted name table, or None."""
        first = raw_sha[0]
        low = self._fanout(first - 1) if first else 0
        high = self._fanout(first)
        names = self._names
        while low < high:
            middle = (low + high) // 2
            start = names + 20 * middle
            found = self._map[start : start + 20]
            if found == raw_sha:
                return middle
            if found < raw_sha:
                low = middle + 1
            else:
                high = middle
        return None

    def offset(self, raw_sha: bytes) -> int | None:
        """The offset of ``raw_sha`` in the pack, or None when this pack lacks it."""
        position = self.position(raw_sha)
        if position is None:
            return None
        start = self._offsets + 4 * position
        value = int.from_bytes(self._map[start : start + 4], "big")
        if value & 0x80000000:
            large = self._large + 8 * (value & 0x7FFFFFFF)
            value = int.from_bytes(self._map[large : large + 8], "big")
        return value

    def tables(self) -> tuple[bytes, tuple[int, ...], list[int]]:
        """(the name table: 20 bytes an object, the CRC-32 of each entry, the offset of
        each entry), in name order."""
        count, data = self.count, self._map
        crcs_at = self._names + 20 * count
        crcs = struct.unpack(f">{count}L", data[crcs_at : crcs_at + 4 * count])
        offsets = list(struct.unpack(f">{count}L", data[self._offsets : self._large]))
        for position, value in enumerate(offsets):
            if value & 0x80000000:
                large = self._large + 8 * (value & 0x7FFFFFFF)
                offsets[position] = int.from_bytes(data[large : large + 8], "big")
        return data[self._names : crcs_at], crcs, offsets

    def names(self) -> list[bytes]:
        """Every object id in this index (raw, sorted)."""
        start = self._names
        return [self._map[start + 20 * n : start + 20 * n + 20] for n in range(self.count)]

    def close(self) -> None:
        with suppress(Exception):
            self._map.close()


_INDEXES: dict[str, PackIndex] = {}


def pack_names(pack_dir: str) -> list[str]:
    """Base paths (without suffix) of the packs in ``pack_dir`` that have an index."""
    try:
        names = set(os.listdir(pack_dir))
    except OSError:
        return []
    return sorted(
        os.path.join(pack_dir, name[: -len(".idx")])
        for name in names
        if name.endswith(".idx") and name[: -len(".idx")] + ".pack" in names
    )


# The pack names of a directory, by its mtime (a pack added or removed changes it):
# reading many objects lists the directory once, not once per object.
_NAMES: dict[str, tuple[int, list[str]]] = {}


def _current_packs(pack_dir: str) -> list[str]:
    try:
        stamp = os.stat(pack_dir).st_mtime_ns
    except OSError:
        return []
    cached = _NAMES.get(pack_dir)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    names = pack_names(pack_dir)
    _NAMES[pack_dir] = (stamp, names)
    return names


# Packs mapped into memory, like their indexes: reading an object is no system call
# (a pack never changes; one deleted by a repack stays readable while mapped). Each
# mapping gets a serial number that is never reused: the delta base cache is keyed
# by it, so an entry can never be returned for another pack (a pack re-mapped after
# a repack, even under the same name, gets a new serial).
_PACKS: dict[str, tuple[mmap.mmap, int]] = {}
_SERIALS = itertools.count()
# _PACKS and _INDEXES are changed under this lock (threads of hive serve share them);
# a mapping dropped from them is never closed by hand, only when no reader holds it
_MAPS_LOCK = _thread.allocate_lock()


def _pack(base: str) -> tuple[mmap.mmap, int]:
    found = _PACKS.get(base)
    if found is not None:
        return found
    with open(base + ".pack", "rb") as handle:
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    with _MAPS_LOCK:
        found = _PACKS.get(base)  # another thread mapped it meanwhile: ours is dropped
        if found is None:
            if len(_PACKS) > 64:
                _forget_bases()
                _PACKS.clear()  # each mapping is unmapped when its last reader lets go
            found = _PACKS[base] = (mapped, next(_SERIALS))
    return found


def _index(base: str) -> PackIndex:
    found = _INDEXES.get(base)
    if found is not None:
        return found
    index = PackIndex(base + ".idx")
    with _MAPS_LOCK:
        found = _INDEXES.get(base)
        if found is None:
            if len(_INDEXES) > 256:
                _INDEXES.clear()
            found = _INDEXES[base] = index
    return found


def read_packed(objects_dir: str, sha: str, *, rescan: bool = False) -> tuple[bytes, bytes] | None:
    """(type, body) of the packed object ``sha`` (hex), or None when no pack here has it
    (or a pack is in a form this reader does not handle). ``rescan`` lists the pack
    directory even when its mtime is the one last seen (a pack added within the same
    timestamp tick leaves the mtime unchanged)."""
    try:
        raw_sha = bytes.fromhex(sha)
    except ValueError:
        return None
    if len(raw_sha) != 20:
        return None
    pack_dir = os.path.join(objects_dir, "pack")
    if rescan:
        _NAMES.pop(pack_dir, None)
    for _attempt in range(3):
        try:
            return _find(pack_dir, raw_sha)
        except FileNotFoundError:
            _forget_missing()  # a pack was replaced while we looked: list again
        except (OSError, PackError, zlib.error, ValueError, IndexError):
            return None
    return None


def _forget_missing() -> None:
    """Forget the packs and indexes whose files are gone (a repack replaced them): the
    next read lists the directory again. A mapping is not closed here: a thread may be
    reading it (hive serve); it is unmapped when its last reader lets go."""
    _NAMES.clear()
    _forget_bases()
    with _MAPS_LOCK:
        for base in [base for base in _PACKS if not os.path.exists(base + ".pack")]:
            del _PACKS[base]
        for base in [base for base in _INDEXES if not os.path.exists(base + ".idx")]:
            del _INDEXES[base]


def _find(pack_dir: str, raw_sha: bytes) -> tuple[bytes, bytes] | None:
    for base in _current_packs(pack_dir):
        offset = _index(base).offset(raw_sha)
        if offset is not None:
            kind, body = _read_at(*_pack(base), offset, pack_dir)
            if _object_id(kind, body) != raw_sha:
                raise PackError(f"{base}.pack: object {raw_sha.hex()} does not match its id")
            return kind, body
    return None


def _object_id(kind: bytes, body: bytes) -> bytes:
    header = kind + b" " + str(len(body)).encode("ascii") + b"\0"
    return sha1(header + body, usedforsecurity=False).digest()


# Objects that deltas were applied to, by (pack serial, offset), least recently used
# first: git writes chains up to 50 deltas deep (and hive writes cell files as deltas
# against shared bases), so reading many objects must resolve each base once, not once
# per object that needs it. Bounded by bytes, like git's own delta base cache
# (core.deltaBaseCacheLimit, 96 MiB): an entry-count bound that is too small for
# thousands of chains resolves the same chains again and again.
_BASES: OrderedDict[tuple[int, int], tuple[bytes, bytes]] = OrderedDict()
_BASES_LIMIT = 64 * 1024 * 1024
_BASES_SIZE = [0]  # the bytes held in _BASES
DELTAS_APPLIED = [0]  # deltas applied by this process (a measure, read by tests)
_BASES_LOCK = _thread.allocate_lock()  # threads (hive serve) share the cache: no torn LRU


def _read_at(pack: mmap.mmap, serial: int, offset: int, pack_dir: str) -> tuple[bytes, bytes]:
    """The object at ``offset``, with its delta chain resolved (every object of the
    chain is remembered, so objects sharing it are not resolved again: reading every
    object of a pack applies about one delta per deltified object)."""
    deltas: list[tuple[int, bytes]] = []  # (position, delta), object first
    position = offset
    for _ in range(MAX_DELTA_CHAIN):
        with _BASES_LOCK:
            cached = _BASES.get((serial, position))
            if cached is not None:
                _BASES.move_to_end((serial, position))
        if cached is not None:
            return cached[0], _resolved(serial, cached[0], cached[1], deltas)
        type_num, data_start, base = _entry_header(pack, position)
        data = _inflate(pack, data_start)
        if type_num in OBJECT_TYPES:
            kind = OBJECT_TYPES[type_num]
            if deltas:
                _remember_base(serial, position, kind, data)
            return kind, _resolved(serial, kind, data, deltas)
        deltas.append((position, data))
        if isinstance(base, int):
            position = base
        elif isinstance(base, bytes):
            found = _find(pack_dir, base)
            if found is None:
                raise PackError(f"delta base {base.hex()} is missing")
            return found[0], _resolved(serial, found[0], found[1], deltas)
        else:
            raise PackError(f"unknown pack entry type {type_num}")
    raise PackError("delta chain too long")


def _resolved(serial: int, kind: bytes, body: bytes, deltas: list[tuple[int, bytes]]) -> bytes:
    # Every object of the chain is kept, the one asked for too: git's packs order
    # chains either way (fast-import deltas each blob against the one before it), so
    # the next object read is often this one's delta.
    for position, delta in reversed(deltas):
        body = apply_delta(body, delta)
        DELTAS_APPLIED[0] += 1
        _remember_base(serial, position, kind, body)
    return body


def _remember_base(serial: int, position: int, kind: bytes, body: bytes) -> None:
    size = len(body)
    if size > _BASES_LIMIT // 4:
        return
    key = (serial, position)
    with _BASES_LOCK:
        previous = _BASES.pop(key, None)
        if previous is not None:
            _BASES_SIZE[0] -= len(previous[1])
        while _BASES and _BASES_SIZE[0] + size > _BASES_LIMIT:
            _BASES_SIZE[0] -= len(_BASES.popitem(last=False)[1][1])
        _BASES[key] = (kind, body)
        _BASES_SIZE[0] += size


def _forget_bases() -> None:
    with _BASES_LOCK:
        _BASES.clear()
        _BASES_SIZE[0] = 0


def _entry_header(pack: mmap.mmap, position: int) -> tuple[int, int, int | bytes | None]:
    """(type, where the zlib data starts, delta base offset or id) of one pack entry."""
    head = pack[position : position + 32]  # a slice, not seek/read: threads share the map
    byte = head[0]
    type_num = (byte >> 4) & 7
    cursor = 1
    while byte & 0x80:
        byte = head[cursor]
        cursor += 1
    base: int | bytes | None = None
    if type_num == OFS_DELTA:
        byte = head[cursor]
        cursor += 1
        distance = byte & 0x7F
        while byte & 0x80:
            byte = head[cursor]
            cursor += 1
            distance = ((distance + 1) << 7) | (byte & 0x7F)
        base = position - distance
    elif type_num == REF_DELTA:
        base = bytes(head[cursor : cursor + 20])
        cursor += 20
    return type_num, position + cursor, base


def _inflate(pack: mmap.mmap, start: int) -> bytes:
    """The zlib stream at ``start``, read by slices (no shared file position: the web
    board's threads read the same map at once)."""
    inflater = zlib.decompressobj()
    parts: list[bytes] = []
    cursor = start
    while not inflater.eof:
        chunk = pack[cursor : cursor + _READ_CHUNK]
        if not chunk:
            raise PackError("truncated pack entry")
        cursor += len(chunk)
        parts.append(inflater.decompress(chunk))
    return b"".join(parts)


def _delta_size(delta: bytes, position: int) -> tuple[int, int]:
    size = shift = 0
    while True:
        byte = delta[position]
        position += 1
        size |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return size, position


def apply_delta(base: bytes, delta: bytes) -> bytes:
    """git's delta format: copy ranges of ``base`` and insert literal bytes."""
    source_size, position = _delta_size(delta, 0)
    target_size, position = _delta_size(delta, position)
    if source_size != len(base):
        raise PackError("delta does not apply to its base")
    out = bytearray()
    end = len(delta)
    while position < end:
        op = delta[position]
        position += 1
        if op & 0x80:
            offset = size = 0
            for bit in range(4):
                if op & (1 << bit):
                    offset |= delta[position] << (8 * bit)
                    position += 1
            for bit in range(3):
                if op & (0x10 << bit):
                    size |= delta[position] << (8 * bit)
                    position += 1
            out += base[offset : offset + (size or 0x10000)]
        elif op:
            out += delta[position : position + op]
            position += op
        else:
            raise PackError("invalid delta opcode 0")
    if len(out) != target_size:
        raise PackError("delta produced the wrong size")
    return bytes(out)


# ---------------------------------------------------------------- checking entries

# A pack holding many more objects than are asked about is searched one id at a time
# (its tables are not turned into lookups: a monorepo's pack of millions of objects
# would cost more than reading the few objects asked about).
_TABLE_FACTOR = 8


def sound_in_packs(objects_dir: str, shas: list[str]) -> set[str]:
    """The blobs among ``shas`` (hex ids) whose pack entries are whole: the entry, and
    each delta base it needs, has the CRC-32 the pack's index recorded when the pack was
    made (``git index-pack`` computes them while it checks every object), and its chain
    ends in a blob. Checking them costs a CRC of their compressed bytes instead of
    inflating and resolving them. Objects not listed here (loose, in no pack here,
    damaged, with a delta base in another pack) must be read to be checked."""
    wanted = {raw: sha for sha in shas if (raw := _raw_id(sha)) is not None}
    sound: set[str] = set()
    for base in _current_packs(os.path.join(objects_dir, "pack")):
        if not wanted:
            break
        try:
            entries = _PackEntries(base, len(wanted))
            found = entries.sound(wanted)
        except (OSError, PackError, ValueError, IndexError):
            continue
        for raw in found:
            sound.add(wanted.pop(raw))
    return sound


def _raw_id(sha: str) -> bytes | None:
    """The 20 bytes of a hex object id (None for anything else)."""
    try:
        raw = bytes.fromhex(sha)
    except ValueError:
        return None
    return raw if len(raw) == 20 else None


class _PackEntries:
    """One pack's entries as its index describes them: id, offset, CRC-32 and where
    each ends (the next entry's offset, or the pack's trailing checksum)."""

    def __init__(self, base: str, wanted: int) -> None:
        self.index = _index(base)
        self.pack = _pack(base)[0]
        self.names: dict[bytes, int] = {}
        self.offsets: list[int] = []
        self.crcs: tuple[int, ...] = ()
        self.ends: dict[int, int] = {}
        self.at: dict[int, int] = {}
        if self.index.count > _TABLE_FACTOR * wanted + 100_000:
            return  # see _TABLE_FACTOR: these objects are read instead
        names, self.crcs, self.offsets = self.index.tables()
        ordered = sorted(self.offsets)
        self.ends = dict(zip(ordered, [*ordered[1:], len(self.pack) - 20], strict=True))
        self.at = {offset: position for position, offset in enumerate(self.offsets)}
        self.names = {names[20 * n : 20 * n + 20]: n for n in range(self.index.count)}

    def sound(self, wanted: dict[bytes, str]) -> list[bytes]:
        checked: dict[int, bool] = {}
        found = []
        for raw in wanted:
            position = self.names.get(raw)
            if position is not None and self._chain_sound(position, checked):
                found.append(raw)
        return found

    def _chain_sound(self, position: int, checked: dict[int, bool]) -> bool:
        """Whether the entry at ``position`` and its delta bases are whole, ending in a
        blob (``checked``: the answer by position, so shared bases are checked once)."""
        chain: list[int] = []
        answer = False
        for _ in range(MAX_DELTA_CHAIN):
            known = checked.get(position)
            if known is not None:
                answer = known
                break
            chain.append(position)
            offset = self.offsets[position]
            if zlib.crc32(self.pack[offset : self.ends[offset]]) != self.crcs[position]:
                break
            type_num, _start, base = _entry_header(self.pack, offset)
            if type_num == OFS_DELTA and isinstance(base, int) and base in self.at:
                position = self.at[base]
            elif type_num == REF_DELTA and isinstance(base, bytes) and base in self.names:
                position = self.names[base]
            else:
                answer = OBJECT_TYPES.get(type_num) == b"blob"
                break
        for seen in chain:
            checked[seen] = answer
        return answer
