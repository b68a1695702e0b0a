"""Reading a few objects without importing dulwich.

A fresh CLI process that only needs to know *which* ``.hive`` tree HEAD has
(to find a cached answer) would otherwise pay for importing dulwich. hive
writes its commits and trees as loose objects, so the path from HEAD's commit
to ``.hive`` is usually three small zlib files; once hive (or git) has packed
them they are read from the pack (``hive/git/packfile.py``). Loose objects are
looked up first and packs second: an object is only ever removed from the loose
store after the pack holding it is in place, so this order never misses one.
Anything else (alternates, a malformed object) returns ``None`` and the caller
takes the ordinary path.
"""

from __future__ import annotations

import os
import zlib

from hive.git.packfile import read_packed
from hive.git.refs import RepoPaths


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
    """(type, body) of a loose or packed object, or None when it cannot be read here."""
    found = read_loose(paths, sha)
    if found is None and len(sha) == 40:
        found = read_packed(os.path.join(paths.common_dir, "objects"), sha)
    return found


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
