"""What new commits brought: the versions of the files under one directory that commits
reachable from some tips, and not from tips already looked at, wrote.

A ``git pull`` that fast-forwards, a merge that takes a file only one side changed, a
``git reset`` or a fresh clone bring hive files without any hive code (or merge driver)
running; :func:`versions_since` lets hive catch up on what they brought, walking only
the new commits (newest first, as ``git log ^known tips`` would; a commit also reachable
from ``known`` is not looked at, whatever the order the clocks give). It reads objects
with hive's own readers (``hive/git/loose.py``): a commit it cannot read here (a shallow
clone's boundary, a partial clone's missing object) is passed over with its history.
"""

from __future__ import annotations

import heapq

from hive.git.loose import parse_commit, read_object, read_tree

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from collections.abc import Iterator

    from hive.git.loose import CommitFields
    from hive.git.refs import RepoPaths

_NEW, _KNOWN = 1, 2


def versions_since(
    paths: RepoPaths, tips: list[str], known: list[str], directory: str
) -> Iterator[bytes]:
    """The content of every version of a file directly in ``directory`` (a
    repository-relative path) that a commit reachable from ``tips`` and not from
    ``known`` wrote (differs from its first parent's, or the commit has none); each
    version once."""
    walk = _Walk(paths)
    for sha in tips:
        walk.paint(sha, _NEW)
    for sha in known:
        walk.paint(sha, _KNOWN)
    parts = [part.encode("utf-8") for part in directory.strip("/").split("/")]
    given: set[str] = set()
    for commit in walk.new_commits():
        for blob in _written(paths, walk, commit, parts):
            if blob in given:
                continue
            given.add(blob)
            found = read_object(paths, blob)
            if found is not None and found[0] == b"blob":
                yield found[1]


class _Walk:
    """Commits painted new (reachable from the tips) or known, taken newest first."""

    def __init__(self, paths: RepoPaths) -> None:
        self.paths = paths
        self.flags: dict[str, int] = {}
        self.done: dict[str, int] = {}
        self.queue: list[tuple[int, str]] = []
        self.commits: dict[str, CommitFields | None] = {}
        self.directories: dict[str, str | None] = {}

    def commit(self, sha: str) -> CommitFields | None:
        if sha not in self.commits:
            found = read_object(self.paths, sha)
            ok = found is not None and found[0] == b"commit"
            self.commits[sha] = parse_commit(found[1]) if found is not None and ok else None
        return self.commits[sha]

    def directory(self, tree: str, parts: list[bytes]) -> str | None:
        """The tree of the directory ``parts`` below ``tree`` (None when absent)."""
        if tree not in self.directories:
            current: str | None = tree
            for part in parts:
                entries = read_tree(self.paths, current) if current is not None else None
                current = entries.get(part) if entries is not None else None
            self.directories[tree] = current
        return self.directories[tree]

    def paint(self, sha: str, flag: int) -> None:
        before = self.flags.get(sha, 0)
        if before | flag == before:
            return
        info = self.commit(sha)
        if info is None:
            return  # not readable here: passed over with its history
        self.flags[sha] = before | flag
        heapq.heappush(self.queue, (-info.time, sha))

    def new_commits(self) -> Iterator[CommitFields]:
        """The commits only the tips reach, newest first; stops as soon as everything
        still queued is known."""
        while any(self.flags[sha] == _NEW for _, sha in self.queue):
            sha = heapq.heappop(self.queue)[1]
            flag = self.flags[sha]
            if self.done.get(sha) == flag:
                continue
            self.done[sha] = flag
            info = self.commits[sha]
            assert info is not None  # painted: read
            if flag == _NEW:
                yield info
            for parent in info.parents:
                self.paint(parent, flag)


def _written(paths: RepoPaths, walk: _Walk, commit: CommitFields, parts: list[bytes]) -> list[str]:
    """The blobs directly in the directory ``parts`` that ``commit`` has and its first
    parent has not."""
    mine = walk.directory(commit.tree, parts)
    if mine is None:
        return []
    parent = walk.commit(commit.parents[0]) if commit.parents else None
    theirs = walk.directory(parent.tree, parts) if parent is not None else None
    if theirs == mine:
        return []
    entries = read_tree(paths, mine) or {}
    before = (read_tree(paths, theirs) or {}) if theirs is not None else {}
    return [sha for name, sha in entries.items() if before.get(name) != sha]
