"""A test hook for crash-safety tests: kill the process at a named point of a write.

``HIVE_TEST_KILL_AT=<point>`` makes the process SIGKILL itself when the write
path reaches ``<point>``; ``<point>@N`` waits for the Nth time. The points are
listed in ``POINTS`` (docs/architecture.md, "Crash safety"). The variable is
read at each point (so a test can set it in a forked child); unset, a point
costs one dictionary lookup. Never set it outside tests.
"""

from __future__ import annotations

import os

POINTS = (
    "before-index-lock",  # hive's write lock held, git's index.lock not yet taken
    "index-lock-twin",  # the twin of index.lock written, index.lock not yet linked
    "after-index-lock",  # index.lock held
    "object-tmp",  # a loose object written to its temporary name, not renamed
    "after-objects",  # blobs, trees and the commit written
    "mid-intent",  # half of the intent record written
    "after-intent",  # the intent record written, the ref not moved
    "ref-locked",  # <ref>.lock holds the new commit, not renamed
    "after-ref-swap",  # the branch moved, its reflog not yet written
    "after-reflog",  # the branch moved and logged; working tree and index not updated
    "worktree-tmp",  # a working-tree file written to its temporary name
    "mid-worktree",  # after each working-tree file is in place
    "index-written",  # the new index written into index.lock, not renamed
    "after-index",  # the index renamed into place, the intent not yet cleared
    "after-intent-cleared",  # the intent cleared, index.lock's twin not yet removed
    "rollback-ref",  # a failed write: the ref moved back, files not yet restored
)

_SEEN: dict[str, int] = {}


def armed(point: str) -> bool:
    """True when ``HIVE_TEST_KILL_AT`` names ``point`` (for points that stage a partial write)."""
    wanted = os.environ.get("HIVE_TEST_KILL_AT")
    return wanted is not None and wanted.partition("@")[0] == point


def reached(point: str) -> None:
    """SIGKILL this process if ``HIVE_TEST_KILL_AT`` names ``point`` (a test hook)."""
    wanted = os.environ.get("HIVE_TEST_KILL_AT")
    if not wanted:
        return
    name, _, nth = wanted.partition("@")
    if name != point:
        return
    count = _SEEN.get(point, 0) + 1
    _SEEN[point] = count
    if count >= (int(nth) if nth.isdigit() else 1):
        import signal

        os.kill(os.getpid(), signal.SIGKILL)
