"""The versions of hive files a history holds, remembered between syncs.

``hive sync`` asks, for its branch and for the remote's state, which versions of
``.hive`` files that side's history holds (:func:`hive.git.syncref.history_blobs`:
every version the newest ``limit`` commits that changed ``.hive`` name). Read whole,
that is one ``git log --raw`` of the history, which grows with every sync. But a
commit's history never changes, so the answer for a tip whose history has fewer than
``limit`` such commits is remembered (``<git common dir>/hive/sync-history``); the next
sync's tip usually descends from a remembered one, and then only the commits that
came since are read (``git log TIP ^REMEMBERED``): the versions of a history are the
union, over its commits, of what each commit changed, so the remembered answer plus
the new commits' is the whole answer, the same as reading everything, as long as
the two together stay within ``limit`` commits (beyond it the window of the newest
``limit`` depends on commit dates, and the history is read whole, as before).

Not used where a commit's history is not all there is to it (a shallow clone,
grafts, replace refs: :func:`hive.git.pathhistory.history_fixed`).
"""

from __future__ import annotations

import marshal
import os

from hive.git.pathhistory import git_output, history_changes, history_fixed, store_atomically
from hive.record import suppress

CACHE_NAME = "sync-history"  # in hive's state directory (never committed)
KEEP = 6  # tips remembered (a sync walks two: its branch and the remote's state)
TRIES = 3  # remembered tips asked about, newest first, before reading the history whole
FORMAT = 1


class HistoryCache:
    """Remembered ``(commits, versions)`` of tips whose histories are read whole, for
    one repository and one ``limit``."""

    def __init__(self, root: str, common_dir: str, state_dir: str, *, limit: int) -> None:
        self.root = root
        self.limit = limit
        self.path = os.path.join(state_dir, CACHE_NAME)
        self.usable = history_fixed(common_dir)

    def versions(self, tip: str, folder: str) -> tuple[int, set[str]] | None:
        """The number of commits that changed ``folder`` in ``tip``'s history and every
        version they name, when that history has fewer than ``limit`` of them and a
        remembered tip it descends from answers most of it (the rest read from git);
        None otherwise (the caller reads the history whole, then :meth:`remember`)."""
        if not self.usable:
            return None
        entries = self._load()
        if tip in entries:
            count, blobs = entries[tip]
            return count, _unpacked(blobs)
        for known in list(reversed(entries))[:TRIES]:
            count, blobs = entries[known]
            if not _is_ancestor(self.root, known, tip):
                continue
            room = self.limit - count
            walked = history_changes(self.root, tip, folder, limit=room, exclude=known)
            if walked is None or walked[0] >= room:
                return None  # the whole history reaches the window's edge: read it whole
            total, found = count + walked[0], _unpacked(blobs) | set(walked[1])
            self.remember(tip, total, found)
            return total, found
        return None

    def remember(self, tip: str, count: int, blobs: set[str]) -> None:
        """Keep ``tip``'s answer (only a history with fewer than ``limit`` commits that
        changed the folder: a whole answer) among the newest :data:`KEEP`."""
        if not self.usable or count >= self.limit or any(len(b) != 40 for b in blobs):
            return  # (ids of another length than SHA-1's: not packed, not remembered)
        entries = self._load()
        entries.pop(tip, None)
        entries[tip] = (count, _packed(blobs))
        while len(entries) > KEEP:
            del entries[next(iter(entries))]
        with suppress(OSError):
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
        store_atomically(self.path, marshal.dumps((FORMAT, self.limit, entries)))

    def _load(self) -> dict[str, tuple[int, bytes]]:
        """The remembered tips, oldest first (empty when none, or not for this limit)."""
        try:
            with open(self.path, "rb") as handle:
                loaded = marshal.loads(handle.read())
        except (OSError, EOFError, ValueError, TypeError):
            return {}
        if not (isinstance(loaded, tuple) and len(loaded) == 3):
            return {}
        version, limit, entries = loaded
        if version != FORMAT or limit != self.limit or not isinstance(entries, dict):
            return {}
        return entries


def _packed(blobs: set[str]) -> bytes:
    return b"".join(bytes.fromhex(blob) for blob in sorted(blobs))


def _unpacked(data: bytes) -> set[str]:
    return {data[start : start + 20].hex() for start in range(0, len(data), 20)}


def _is_ancestor(root: str, ancestor: str, descendant: str) -> bool:
    """Whether ``ancestor`` is in ``descendant``'s history (``git merge-base
    --is-ancestor``; False when git cannot answer)."""
    if ancestor == descendant:
        return True
    return git_output(root, "merge-base", "--is-ancestor", ancestor, descendant) is not None
