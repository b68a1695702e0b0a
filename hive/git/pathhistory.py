"""The history of one ``.hive`` file, as git's merge driver asks about it.

:class:`hive.git.syncref.RepoHistory` answers through :class:`~hive.git.repo.GitRepo` (dulwich where
hive's own readers cannot). :class:`LooseHistory` answers the same questions without
importing dulwich (a merge driver process is started once per file both sides
changed): hive's loose and pack readers (``hive/git/loose.py``) and the real ``git
log``; whatever it cannot read raises :class:`Unreadable`, and the caller then asks
``RepoHistory``, which reads everything. Both give the same answers where both
answer (``tests/test_merge_driver_lean.py``).
"""

from __future__ import annotations

from hive.git.loose import commit_tree, read_object
from hive.git.refs import read_head_fast
from hive.git.worktree import blob_sha_of

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from collections.abc import Callable

    from hive.git.refs import RepoPaths

TREE_MODE = 0o40000
_NO_BLOB = "0" * 40
# Options no user setting can change: no following of renames, root commits shown, paths
# literal (a cell id is never a glob, but a path handed in might be).
_LOG_VERSIONS = (
    *("-c", "log.follow=false", "-c", "log.showRoot=true", "--literal-pathspecs", "log"),
    *("--format=", "--raw", "--no-abbrev", "--no-renames", "--no-color"),
    *("--full-history", "-m"),
)

__all__ = ["LooseHistory", "Unreadable", "blob_sha_of", "changed_blobs_by_git"]


class Unreadable(Exception):
    """:class:`LooseHistory` cannot answer here (an object only dulwich reads, no usable
    ``git``): the caller asks ``hive.git.syncref.RepoHistory`` instead."""


def git_output(root: str, *args: str) -> str | None:
    """What the real ``git`` prints for ``args`` in ``root``; None when it cannot answer
    (no usable git, or it failed): the callers then read the objects themselves."""
    from hive.errors import GitError
    from hive.git.rungit import run_git

    try:
        result = run_git(root, *args)
    except GitError:
        return None
    return result.stdout if result.returncode == 0 else None


def changed_blobs_by_git(root: str, tip: str, path: str, *, limit: int) -> list[str] | None:
    """The versions of the files at ``path`` (a file or a folder) that the newest
    ``limit`` commits changing them name, newest first, from ``git log --raw``; None
    when git cannot answer.

    ``--full-history -m``: every commit that changed them on any line of history,
    merges diffed against each parent (a merged version is a version the side had).
    Each change names the version before and after it; both were in the history."""
    output = git_output(root, *_LOG_VERSIONS, f"--max-count={limit}", tip, "--", path)
    if output is None:
        return None
    found: dict[str, None] = {}  # an ordered set, newest first
    for line in output.splitlines():
        if not line.startswith(":"):
            continue
        fields = line.split("\t", 1)[0].split()
        if len(fields) < 4:
            return None
        for blob in (fields[3], fields[2]):  # after the change, then before it
            if blob != _NO_BLOB:
                found.setdefault(blob)
    return list(found)


class LooseHistory:
    """``RepoHistory``'s answers without dulwich, or :class:`Unreadable`."""

    def __init__(self, paths: RepoPaths) -> None:
        self.paths = paths

    def head_commit(self) -> str | None:
        head = read_head_fast(self.paths)
        if head is None:
            raise Unreadable("HEAD")
        return head.commit

    def blob_at(self, commit: str, path: str) -> str | None:
        tree = commit_tree(self.paths, commit)
        if tree is None:
            raise Unreadable(commit)
        return lookup_path(self._tree_items, tree, path)

    def versions(self, commit: str, path: str, *, limit: int) -> list[str]:
        found = changed_blobs_by_git(self.paths.root, commit, path, limit=limit)
        if found is None:
            raise Unreadable(path)
        return found

    def read_blob(self, sha: str) -> bytes:
        found = read_object(self.paths, sha)
        if found is None or found[0] != b"blob":
            raise Unreadable(sha)
        return found[1]

    def _tree_items(self, tree: str) -> dict[bytes, tuple[int, str]]:
        found = read_object(self.paths, tree)
        if found is None or found[0] != b"tree":
            raise Unreadable(tree)
        return parse_tree(found[1])


def lookup_path(
    items: Callable[[str], dict[bytes, tuple[int, str]]],
    tree: str,
    path: str,
    *,
    want_tree: bool = False,
) -> str | None:
    """The sha at ``path`` below ``tree`` (a blob, or a tree if ``want_tree``), each tree
    on the way read by ``items`` (name -> (mode, sha))."""
    current = tree
    parts = [p for p in path.split("/") if p]
    for position, part in enumerate(parts):
        entry = items(current).get(part.encode())
        if entry is None:
            return None
        mode, sha = entry
        is_tree = mode == TREE_MODE
        if position == len(parts) - 1:
            return sha if is_tree == want_tree else None
        if not is_tree:
            return None
        current = sha
    return current if want_tree else None


def parse_tree(body: bytes) -> dict[bytes, tuple[int, str]]:
    """name -> (mode, sha) of a tree object's body."""
    items: dict[bytes, tuple[int, str]] = {}
    position = 0
    while position < len(body):
        space = body.index(b" ", position)
        nul = body.index(b"\0", space)
        items[body[space + 1 : nul]] = (
            int(body[position:space], 8),
            body[nul + 1 : nul + 21].hex(),
        )
        position = nul + 21
    return items
