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

import marshal
import os
import time

from hive.git.loose import commit_tree, read_object
from hive.git.refs import read_head_fast
from hive.git.worktree import blob_sha_of
from hive.record import suppress

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from collections.abc import Callable

    from hive.git.refs import RepoPaths

TREE_MODE = 0o40000
_NO_BLOB = "0" * 40
# Options no user setting can change: no following of renames, root commits shown, paths
# literal (a cell id is never a glob, but a path handed in might be).
# Each commit's header line (``commit SHA``) before its changes.
_LOG_TABLE = (
    *("-c", "log.follow=false", "-c", "log.showRoot=true", "--literal-pathspecs", "log"),
    *("--format=commit %H", "--raw", "--no-abbrev", "--no-renames", "--no-color"),
    *("--full-history", "-m"),
)
HIVE_PREFIX = ".hive/"
TABLES_DIR = "merge-versions"  # in hive's state directory (.git/hive): see LooseHistory
TABLE_SECONDS = 600  # a table older than this is not used (and removed)

__all__ = ["LooseHistory", "Unreadable", "blob_sha_of", "changed_blobs_by_git", "versions_table"]


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


def merge_bases(root: str, first: str, second: str) -> list[str] | None:
    """The merge bases of two commits (``git merge-base --all``: none when they share
    no history); None when git cannot answer."""
    from hive.errors import GitError
    from hive.git.rungit import run_git

    try:
        done = run_git(root, "merge-base", "--all", first, second)
    except GitError:  # no usable git
        return None
    if done.returncode not in (0, 1):
        return None
    return done.stdout.split() if done.returncode == 0 else []


def versions_table(root: str, tip: str, *, limit: int) -> dict[str, list[str]] | None:
    """:func:`changed_blobs_by_git` for every file under ``.hive`` at once (one ``git
    log`` of the folder; each file's changes counted per commit, as the log of the file
    alone counts them); None when git cannot answer or names a path quoted."""
    table = changes_table(root, [tip])
    if table is None:
        return None
    return {
        path: list(dict.fromkeys(blob for _, versions in entries[:limit] for blob in versions))
        for path, entries in table.items()
    }


def changed_blobs_by_git(root: str, tip: str, path: str, *, limit: int) -> list[str] | None:
    """The versions of the files at ``path`` (a file or a folder) that the newest
    ``limit`` commits changing them name, newest first, from ``git log --raw``; None
    when git cannot answer.

    ``--full-history -m``: every commit that changed them on any line of history,
    merges diffed against each parent (a merged version is a version the side had).
    Each change names the version before and after it; both were in the history."""
    changes = log_changes(root, tip, path, limit=limit)
    if changes is None:
        return None
    found: dict[str, None] = {}  # an ordered set, newest first
    for blobs in changes.values():
        found.update(dict.fromkeys(blobs))
    return list(found)


def log_changes(
    root: str, tip: str, path: str, *, limit: int, exclude: list[str] | None = None
) -> dict[str, list[str]] | None:
    """The newest ``limit`` commits that changed ``path`` (a file or a folder) in
    ``tip``'s history, in ``git log``'s order, each with the versions its changes name
    (:func:`changed_blobs_by_git`); without the history of the commits in ``exclude``
    (the commits since them); None when git cannot answer."""
    excluded = ("--not", *exclude) if exclude else ()
    output = git_output(root, *_LOG_TABLE, f"--max-count={limit}", tip, *excluded, "--", path)
    if output is None:
        return None
    found: dict[str, dict[str, None]] = {}  # commit -> an ordered set of versions
    versions: dict[str, None] = {}
    for line in output.splitlines():
        if line.startswith("commit "):  # (-m: a merge's header before each parent's diff)
            versions = found.setdefault(line[7:], {})
            continue
        if not line.startswith(":"):
            continue
        fields = line.split("\t", 1)[0].split()
        if len(fields) < 4:
            return None
        _add_versions(versions, fields)
    return {commit: list(blobs) for commit, blobs in found.items()}


def changes_table(root: str, tips: list[str]) -> dict[str, list[tuple[str, list[str]]]] | None:
    """For every file under ``.hive`` in the history of ``tips`` (one ``git log`` of the
    folder, as :func:`versions_table` reads it), the commits that changed it in the
    log's order, each with the versions its changes name (after, then before); None
    when git cannot answer or names a path quoted. The versions a file had in one
    commit's history are those of its entries by that commit's ancestors
    (:func:`parents_table`)."""
    if not tips:
        return {}
    output = git_output(root, *_LOG_TABLE, *tips, "--", HIVE_PREFIX.rstrip("/"))
    if output is None:
        return None
    found: dict[str, list[tuple[str, list[str]]]] = {}
    commit = ""
    for line in output.splitlines():
        if line.startswith("commit "):
            commit = line[7:]  # (-m: a merge's header before each parent's diff)
            continue
        if not line.startswith(":"):
            continue
        head, _, path = line.partition("\t")
        fields = head.split()
        if len(fields) < 4 or not commit or path.startswith('"'):
            return None
        entries = found.setdefault(path, [])
        if not entries or entries[-1][0] != commit:
            entries.append((commit, []))
        versions = dict.fromkeys(entries[-1][1])
        _add_versions(versions, fields)
        entries[-1] = (commit, list(versions))
    return found


def parents_table(root: str, tips: list[str], *, limit: int) -> dict[str, list[str]] | None:
    """Each commit of the history of ``tips`` (at most ``limit``, ``git rev-list
    --parents``) with its parents; None when git cannot answer. A parent that is no key
    was beyond the limit."""
    if not tips:
        return {}
    output = git_output(root, "rev-list", "--parents", f"--max-count={limit}", *tips)
    if output is None:
        return None
    table: dict[str, list[str]] = {}
    for line in output.splitlines():
        commit, *parents = line.split()
        table[commit] = parents
    return table


def _add_versions(found: dict[str, None], fields: list[str]) -> None:
    """The two versions a ``git log --raw`` change line names (its fields before the
    tab), after the change then before it, into the ordered set ``found``; none for
    a side where the file did not exist."""
    for blob in (fields[3], fields[2]):
        if blob != _NO_BLOB:
            found.setdefault(blob)


class LooseHistory:
    """``RepoHistory``'s answers without dulwich, or :class:`Unreadable`.

    git starts a driver per file, and each asks ``git log`` about its own file in both
    histories (~20 ms of git's CPU each at 2,000 commits). So the second process that
    asks about a commit (``tables``: during a merge of two files or more) asks git once
    about every file under ``.hive`` (:func:`versions_table`) and leaves the answer in
    ``.git/hive/merge-versions/`` for the next ones, which read it instead of running
    git. A commit's history does not change, but a shallow clone deepened, grafts or
    replace refs would change it: with any of those no table is kept, and a table is
    used for :data:`TABLE_SECONDS` only."""

    def __init__(self, paths: RepoPaths, *, tables: bool = True) -> None:
        self.paths = paths
        self.tables = tables and history_fixed(paths.common_dir)

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
        if self.tables and path.startswith(HIVE_PREFIX):
            table = self._table(commit, limit)
            if table is not None:
                return table.get(path, [])
        found = changed_blobs_by_git(self.paths.root, commit, path, limit=limit)
        if found is None:
            raise Unreadable(path)
        return found

    def read_blob(self, sha: str) -> bytes:
        found = read_object(self.paths, sha)
        if found is None or found[0] != b"blob":
            raise Unreadable(sha)
        return found[1]

    def _table(self, commit: str, limit: int) -> dict[str, list[str]] | None:
        """The versions table of ``commit``: read, built now (the second asker), or None
        (the first asker, which leaves an empty file to say so; or no place for it)."""
        folder = os.path.join(self.paths.hive_state_dir, TABLES_DIR)
        name = os.path.join(folder, f"{commit}-{limit}")
        try:
            with open(name, "rb") as handle:
                data = handle.read()
                fresh = time.time() - os.fstat(handle.fileno()).st_mtime < TABLE_SECONDS
        except OSError:
            data, fresh = b"", False
        if fresh and data:
            return _loaded(data)  # (None when git could not build it: "-")
        if not fresh:
            _mark(folder, name)
            return None
        table = versions_table(self.paths.root, commit, limit=limit)
        store_atomically(name, b"-" if table is None else marshal.dumps(table))
        return table

    def _tree_items(self, tree: str) -> dict[bytes, tuple[int, str]]:
        found = read_object(self.paths, tree)
        if found is None or found[0] != b"tree":
            raise Unreadable(tree)
        return parse_tree(found[1])


def history_fixed(common_dir: str) -> bool:
    """Whether a commit's history is all there is to it here: not a shallow clone, no
    grafts, no replace refs (each can change what ``git log`` walks)."""
    for part in ("shallow", os.path.join("info", "grafts"), os.path.join("refs", "replace")):
        if os.path.lexists(os.path.join(common_dir, part)):
            return False
    try:
        with open(os.path.join(common_dir, "packed-refs"), "rb") as handle:
            return b" refs/replace/" not in handle.read()
    except OSError:
        return True


def _loaded(data: bytes) -> dict[str, list[str]] | None:
    try:
        table = marshal.loads(data)
    except (EOFError, ValueError, TypeError):  # "-": git could not build it
        return None
    if not isinstance(table, dict):
        return None
    if not all(isinstance(versions, list) for versions in table.values()):
        return None
    return table


def _mark(folder: str, name: str) -> None:
    """Leave an empty table at ``name`` (the next asker builds it); old tables go."""
    with suppress(OSError):
        os.makedirs(folder, exist_ok=True)
        _remove_old(folder)
        store_atomically(name, b"")


def store_atomically(name: str, data: bytes) -> None:
    """``data`` in the file ``name``, whole or not at all (a temporary file, renamed)."""
    temp = f"{name}.tmp-{os.getpid()}"
    try:
        with open(temp, "wb") as handle:
            handle.write(data)
        os.replace(temp, name)
    except OSError:
        with suppress(OSError):
            os.unlink(temp)


def _remove_old(folder: str) -> None:
    now = time.time()
    for entry in os.scandir(folder):
        with suppress(OSError):
            if now - entry.stat().st_mtime >= TABLE_SECONDS:
                os.unlink(entry.path)


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
