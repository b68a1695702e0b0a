"""Reading a few objects, and writing loose ones, without importing dulwich.

A fresh CLI process that only needs to know *which* ``.hive`` tree HEAD has
(to find a cached answer) would otherwise pay for importing dulwich. hive
writes its commits and trees as loose objects, so the path from HEAD's commit
to ``.hive`` is usually three small zlib files; once hive (or git) has packed
them they are read from the pack (``hive/git/packfile.py``). Packs are looked up
first and the loose store second; a packer may move a loose object into a new
pack between the two looks (the pack lands before the loose file goes), so a
miss lists the pack directory afresh and looks in the packs once more, as git
does. Anything else (alternates, a malformed object) returns ``None`` and the caller
takes the ordinary path.

Writing (``write_loose``) follows git: the compressed object goes to a
temporary file in its ``objects/xx/`` directory, named ``tmp_obj_...`` (which
``git fsck`` ignores and ``git gc`` prunes), and is renamed to its final name,
so a process killed at any moment never leaves a file that ``git fsck``
reports. The temporary name carries the writer's owner tag, so recovery
(``hive/git/recovery.py``) removes those of writers that died.
"""

from __future__ import annotations

import itertools
import os
import zlib

from hive.git import killpoints
from hive.git.owners import owner_tag
from hive.git.packfile import pack_names, read_packed
from hive.git.refs import RepoPaths
from hive.git.sha import sha1
from hive.git.shared import make_directories, share_descriptor, shared_perm
from hive.record import Frozen

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from hive.git.repo import GitRepo

TMP_PREFIX = "tmp_obj_hive-"
LOOSE_COMPRESSION = 1  # git's default core.looseCompression (best speed)
_SERIAL = itertools.count()


def read_loose(paths: RepoPaths, sha: str) -> tuple[bytes, bytes] | None:
    """(type, body) of a loose object, or None when it is not a readable loose object."""
    if len(sha) != 40:
        return None
    path = os.path.join(paths.common_dir, "objects", sha[:2], sha[2:])
    try:
        with open(path, "rb") as handle:
            raw = zlib.decompress(handle.read())
    except (OSError, zlib.error):
        return None
    header, _, body = raw.partition(b"\0")
    kind, _, size = header.partition(b" ")
    if not size.isdigit() or int(size) != len(body):
        return None
    return kind, body


def read_object(paths: RepoPaths, sha: str) -> tuple[bytes, bytes] | None:
    """(type, body) of a packed or loose object, or None when it cannot be read here.
    The packs are asked first: a lookup in their (mapped) indexes costs less than the
    failed ``open`` of a loose path, and most objects of a clone are packed."""
    if len(sha) != 40:
        return None
    objects = os.path.join(paths.common_dir, "objects")
    found = read_packed(objects, sha)
    if found is None:
        found = read_loose(paths, sha)
    if found is None:  # packed (and its loose file deleted) since the packs were listed
        found = read_packed(objects, sha, rescan=True)
    return found


class CommitFields(Frozen):
    """A commit object's header and message, as :func:`parse_commit` reads them."""

    _fields = ("tree", "parents", "author", "time", "message")

    def __init__(
        self, tree: str, parents: tuple[str, ...], author: str, time: int, message: bytes
    ) -> None:
        self.tree = tree
        self.parents = parents
        self.author = author  # name <email>, as dulwich reads it (up to its ``>``)
        self.time = time  # the committer's
        self.message = message


def parse_commit(body: bytes) -> CommitFields | None:
    """A commit object's body as dulwich reads it (the tree, the parents, the author up
    to its ``>``, the committer's time, the message after the first blank line), or
    None for anything unusual (the caller then asks dulwich, or does without)."""
    header, blank, message = body.partition(b"\n\n")
    if not blank or not header.startswith(b"tree "):
        return None
    tree = header[5:45].decode("ascii", errors="replace")
    parents: list[str] = []
    author: bytes | None = None
    time: int | None = None
    for line in header.split(b"\n")[1:]:
        if line.startswith(b"parent "):
            parent = line[7:].decode("ascii", errors="replace")
            if len(parent) != 40:
                return None
            parents.append(parent)
        elif line.startswith(b"author "):
            author = line[7:]
        elif line.startswith(b"committer "):
            value = line[10:]
            end = value.rfind(b"> ")
            stamp = value[end + 2 :].split(b" ")
            if end < 0 or len(stamp) != 2 or not stamp[0].isdigit():
                return None
            time = int(stamp[0])
    if len(tree) != 40 or author is None or time is None or author.rfind(b"> ") < 0:
        return None
    name = author[: author.rfind(b"> ") + 1].decode("utf-8", errors="replace")
    return CommitFields(tree, tuple(parents), name, time, message)


def commit_tree(paths: RepoPaths, commit: str) -> str | None:
    """The root tree of a commit."""
    found = read_object(paths, commit)
    if found is None or found[0] != b"commit" or not found[1].startswith(b"tree "):
        return None
    return found[1][5:45].decode("ascii")


def tree_entry(paths: RepoPaths, tree: str, name: bytes) -> str | None:
    """The sha of ``name`` in a tree (None when absent or unreadable here)."""
    found = read_object(paths, tree)
    if found is None or found[0] != b"tree":
        return None
    body = found[1]
    position = 0
    while position < len(body):
        space = body.index(b" ", position)
        nul = body.index(b"\0", space)
        if body[space + 1 : nul] == name:
            return body[nul + 1 : nul + 21].hex()
        position = nul + 21
    return None


def hive_tree(paths: RepoPaths, commit: str) -> str | None:
    """The sha of the ``.hive`` tree of ``commit`` (None when it cannot be read here)."""
    root = commit_tree(paths, commit)
    return None if root is None else tree_entry(paths, root, b".hive")


def read_tree(paths: RepoPaths, tree: str) -> dict[bytes, str] | None:
    """name -> sha of a tree (None when it cannot be read here)."""
    found = read_object(paths, tree)
    if found is None or found[0] != b"tree":
        return None
    body = found[1]
    entries: dict[bytes, str] = {}
    position = 0
    while position < len(body):
        space = body.index(b" ", position)
        nul = body.index(b"\0", space)
        entries[body[space + 1 : nul]] = body[nul + 1 : nul + 21].hex()
        position = nul + 21
    return entries


def tree_entries(paths: RepoPaths, commit: str) -> tuple[str | None, str | None, bool] | None:
    """(``.hive`` tree, ``.hive/cells`` tree, whether ``.hive/config.yaml`` exists) of
    ``commit`` from loose objects or packs; None when an object on the way cannot be
    read here."""
    root_tree = commit_tree(paths, commit)
    if root_tree is None:
        return None
    root = read_tree(paths, root_tree)
    if root is None:
        return None
    hive = root.get(b".hive")
    if hive is None:
        return None, None, False
    listing = read_tree(paths, hive)
    if listing is None:
        return None
    return hive, listing.get(b"cells"), b"config.yaml" in listing


_HEX = frozenset("0123456789abcdef")


def _is_loose_name(name: str) -> bool:
    return len(name) == 38 and _HEX.issuperset(name)


def loose_in_17(objects: str) -> int:
    """Loose objects in ``objects/17`` (git's sample directory)."""
    try:
        return sum(1 for name in os.listdir(os.path.join(objects, "17")) if _is_loose_name(name))
    except OSError:
        return 0


def nothing_to_pack(objects: str) -> bool:
    """True when no packing threshold can be crossed (``gc.auto`` >= 1 needs two loose
    objects in ``objects/17``; merging needs two packs): the common case of
    ``packing.auto_pack``, two directory listings, decided without importing it."""
    return loose_in_17(objects) <= 1 and len(pack_names(os.path.join(objects, "pack"))) <= 1


# git's defaults for gc.auto and gc.autoPackLimit. Deciding whether to pack needs only
# these and a few directory listings, so it is made here (``pack_wanted``) without
# importing the packer (``hive/git/packing.py``).
DEFAULT_GC_AUTO = 6700
DEFAULT_PACK_LIMIT = 50


def too_many_loose(objects: str, auto: int) -> bool:
    """git's ``too_many_loose_objects``: more than ceil(auto/256) objects in ``objects/17``."""
    if auto <= 0:
        return False
    return loose_in_17(objects) > (auto + 255) // 256


def local_packs(objects: str) -> list[str]:
    """Base paths of the packs hive may merge (and counts for ``gc.autoPackLimit``): no
    ``.keep``, and not fetched from a promisor remote (a partial clone's ``.promisor``
    packs may name objects the clone does not have; merged into a plain pack those
    links are broken for ``git fsck``)."""
    return [
        base
        for base in pack_names(os.path.join(objects, "pack"))
        if not _kept(base) and not os.path.exists(base + ".promisor")
    ]


def _kept(base: str) -> bool:
    return os.path.exists(base + ".keep")


def gc_settings(repo: GitRepo) -> tuple[int, int]:
    """``gc.auto`` and ``gc.autoPackLimit`` from git config (git's defaults when unset;
    0 or less: off)."""
    return (
        parse_git_int(repo.config_value("gc", "auto"), DEFAULT_GC_AUTO),
        parse_git_int(repo.config_value("gc", "autoPackLimit"), DEFAULT_PACK_LIMIT),
    )


def pack_wanted(repo: GitRepo) -> tuple[bool, int] | None:
    """Whether a write should be followed by packing, as ``git gc --auto`` decides: None
    (the common case, two directory listings and no config read), else ``(merge_packs,
    pack_limit)``: whether there are more than ``gc.autoPackLimit`` packs to merge too.
    Decided without importing the packer (``hive/git/packing.py``), which only a write
    that will pack loads."""
    objects = os.path.join(repo.paths.common_dir, "objects")
    if nothing_to_pack(objects):
        return None
    auto, limit = gc_settings(repo)
    if auto <= 0:
        return None
    many_packs = 0 < limit < len(local_packs(objects))
    if not many_packs and not too_many_loose(objects, auto):
        return None
    return many_packs, limit


def parse_git_int(value: str | None, default: int) -> int:
    """A git config integer (``6700``, ``7k``, ``1m``, ``-1``); ``default`` when unset/bad."""
    if value is None:
        return default
    text = value.strip().lower()
    scale = {"k": 1024, "m": 1024**2, "g": 1024**3}.get(text[-1:], 1)
    if scale != 1:
        text = text[:-1]
    try:
        return int(text) * scale
    except ValueError:
        return default


def object_path(paths: RepoPaths, sha: str) -> str:
    return os.path.join(paths.common_dir, "objects", sha[:2], sha[2:])


def write_loose(paths: RepoPaths, kind: bytes, body: bytes, sha: str | None = None) -> str:
    """Store one object as a loose object (if it is not loose already); return its sha.

    ``sha`` may be given when the caller already knows it. Like git and dulwich,
    an existing loose object only has its mtime refreshed (so ``gc`` does not
    prune it before the new commit references it).
    """
    raw = kind + b" " + str(len(body)).encode("ascii") + b"\0" + body
    if sha is None:
        sha = sha1(raw, usedforsecurity=False).hexdigest()
    path = object_path(paths, sha)
    try:
        os.utime(path)
        return sha
    except FileNotFoundError:
        pass
    except PermissionError:
        return sha  # there, owned by another user of a shared repository
    directory = os.path.dirname(path)
    temp = os.path.join(directory, f"{TMP_PREFIX}{owner_tag()}-{next(_SERIAL)}")
    try:
        descriptor = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444)
    except FileNotFoundError:
        make_directories(paths, directory)
        descriptor = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444)
    try:
        _write_all(descriptor, zlib.compress(raw, LOOSE_COMPRESSION))
        share_descriptor(shared_perm(paths), descriptor)  # core.sharedRepository's mode
    except BaseException:
        os.close(descriptor)
        os.unlink(temp)
        raise
    os.close(descriptor)
    killpoints.reached("object-tmp")
    try:
        os.replace(temp, path)
    except PermissionError:  # Windows: the object appeared meanwhile, read-only
        os.unlink(temp)
        if not os.path.exists(path):
            raise
    return sha


def _write_all(descriptor: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(descriptor, view) :]
