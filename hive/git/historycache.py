"""The versions of hive files a history holds, remembered between syncs.

``hive sync`` asks, for its branch and for the remote's state, which versions of
``.hive`` files that side's history holds (:func:`hive.git.syncref.history_blobs`:
every version the newest ``limit`` commits that changed ``.hive`` name, ``git log
--raw --full-history -m --max-count=limit``). Read whole, that is one ``git log`` of
the history, which grew with every sync. But what a commit changed (and whether it
changed ``.hive`` at all) is a fact of that commit alone, so the answers are
remembered (``<git common dir>/hive/sync-history-<side>``) and the next sync asks git only
about the commits that came since:

* a history with fewer than ``limit`` such commits: its versions are the union of
  what its commits changed, so a remembered tip's versions plus those of ``git log
  TIP ^REMEMBERED`` are the whole answer while the two stay under ``limit``;
* a longer one (the window of the newest ``limit``): the commits each walk went
  through are remembered with what each changed, and the next walk takes its order
  from ``git rev-list TIP`` (the walk ``git log`` makes, without the diffs) and what
  each commit changed from the new commits' ``git log TIP --not REMEMBERED`` or from
  memory, until ``limit`` commits that changed ``.hive``: the same window, and the
  same versions, as a whole read. A commit the walk meets that is neither new nor
  remembered sends it back to the whole read.

Not used where a commit's history is not all there is to it (a shallow clone,
grafts, replace refs: :func:`hive.git.pathhistory.history_fixed`).
"""

from __future__ import annotations

import marshal
import os
import subprocess
from collections.abc import Callable, Generator

from hive.git.pathhistory import git_output, history_fixed, log_changes, store_atomically
from hive.git.rungit import git_environment
from hive.record import suppress

CACHE_NAME = "sync-history"  # in hive's state directory (never committed)
KEEP = 4  # tips remembered for one side
TRIES = 3  # remembered whole histories asked about, newest first
SPAN = 8  # a window's walk through more than SPAN x limit commits is not remembered
FORMAT = 2
Changes = dict[str, list[str]]  # commit -> the versions its changes name
Facts = dict[str, "list[str] | None"]  # the same, None for a commit that changed nothing
# tip -> (commits that changed the folder, versions of a whole history, a window's walk);
# the versions kept as stored (20 bytes an id) until asked for: a history of 10,000
# cells holds 10,000 of them in each of KEEP entries, and a sync uses one
Entry = tuple[int, "bytes | None", "list[str] | None"]


class _Unknown(Exception):
    """The walk met a commit it knows nothing of."""


class HistoryCache:
    """Remembered answers for one repository, one side of a sync (``side``: the
    branch's history or the remote state's), one folder and one ``limit``."""

    def __init__(
        self, root: str, common_dir: str, state_dir: str, *, limit: int, side: str = ""
    ) -> None:
        self.root = root
        self.limit = limit
        # one file per side (a branch, the remote state): the tips of one side's walks
        # descend from each other, and asking about the other side's costs a whole walk
        self.path = os.path.join(state_dir, f"{CACHE_NAME}-{side}" if side else CACHE_NAME)
        self.usable = history_fixed(common_dir)

    def versions(self, tip: str, folder: str) -> tuple[int, set[str]] | None:
        """The number of commits that changed ``folder`` in ``tip``'s newest ``limit``
        and every version they name; None when git cannot answer."""
        if not self.usable:
            return _total(log_changes(self.root, tip, folder, limit=self.limit))
        entries, facts = self._load(folder)
        found = self._remembered(tip, folder, entries, facts)
        if found is None:
            found = self._whole(tip, folder)
            if found is None:
                return None
        count, versions, walked = found
        entries.pop(tip, None)
        if walked is None:
            entries[tip] = (count, _packed(versions), None)
        elif len(walked) <= SPAN * self.limit:
            entries[tip] = (count, None, list(walked))
            facts.update(walked)
        self._store(folder, entries, facts)
        return count, versions

    # ------------------------------------------------------------------ the answers

    def _remembered(
        self, tip: str, folder: str, entries: dict[str, Entry], facts: Facts
    ) -> tuple[int, set[str], Facts | None] | None:
        """From memory and the new commits, or None (read whole)."""
        if tip in entries:
            count, versions, walked = entries[tip]
            if versions is not None:
                return count, set(_unpacked(versions)), None
            if walked is not None and all(commit in facts for commit in walked):
                kept = {commit: facts[commit] for commit in walked}
                return count, _union(kept), kept
        whole = [t for t, entry in reversed(entries.items()) if entry[1] is not None]
        for known in whole[:TRIES]:
            if not _is_ancestor(self.root, known, tip):
                continue
            count, versions, _ = entries[known]
            room = self.limit - count
            changes = log_changes(self.root, tip, folder, limit=room, exclude=[known])
            if changes is None:
                return None
            if len(changes) < room:
                held = set(_unpacked(versions or b""))
                return count + len(changes), held | _union(changes), None
            break  # the history passed the window's edge since: a window's walk
        if not any(entry[2] is not None for entry in entries.values()):
            return None
        return self._window(tip, folder, list(entries), facts)

    def _window(
        self, tip: str, folder: str, known: list[str], facts: Facts
    ) -> tuple[int, set[str], Facts | None] | None:
        """The window of ``tip`` walked with the facts of remembered walks and those of
        the commits since them."""
        new = git_output(self.root, "rev-list", tip, "--not", *known)
        changes = log_changes(self.root, tip, folder, limit=self.limit, exclude=known)
        if new is None or changes is None or len(changes) >= self.limit:
            return None
        fresh: Facts = dict.fromkeys(new.split())
        fresh.update(changes)

        def fact(commit: str) -> list[str] | None:
            if commit in fresh:
                return fresh[commit]
            if commit in facts:
                return facts[commit]
            raise _Unknown(commit)

        return self._walk(tip, fact)

    def _whole(self, tip: str, folder: str) -> tuple[int, set[str], Facts | None] | None:
        """Read whole: ``git log`` of the newest ``limit`` commits that changed the
        folder; a full window is then walked (``git rev-list``) for the commits between
        them, which changed nothing there."""
        changes = log_changes(self.root, tip, folder, limit=self.limit)
        if changes is None:
            return None
        if len(changes) < self.limit:
            return len(changes), _union(changes), None
        walked = self._walk(tip, lambda commit: changes.get(commit))
        if walked is None or walked[2] is None or set(changes) - set(walked[2]):
            return len(changes), _union(changes), None  # (not the log's order: not kept)
        return walked

    def _walk(
        self, tip: str, fact: Callable[[str], list[str] | None]
    ) -> tuple[int, set[str], Facts | None] | None:
        """Walk ``tip``'s history in git's order until ``limit`` commits that changed the
        folder (None: a commit unknown to ``fact``, or git failed)."""
        walked: Facts = {}
        count = 0
        commits = _rev_list(self.root, tip)
        try:
            for commit in commits:
                walked[commit] = found = fact(commit)
                count += found is not None
                if count >= self.limit:
                    break
        except (_Unknown, OSError):
            return None
        finally:
            commits.close()
        changed = {commit: blobs for commit, blobs in walked.items() if blobs is not None}
        return count, _union(changed), (walked if count >= self.limit else None)

    # ------------------------------------------------------------------ the file

    def _store(self, folder: str, entries: dict[str, Entry], facts: Facts) -> None:
        """The newest :data:`KEEP` answers, with the facts their walks need (no other)."""
        while len(entries) > KEEP:
            del entries[next(iter(entries))]
        needed = {c for _, _, walked in entries.values() for c in walked or ()}
        packed_facts = {c: _packed_or_none(facts[c]) for c in needed if c in facts}
        packed = {
            tip: (count, versions, _packed_or_none(walked))
            for tip, (count, versions, walked) in entries.items()
        }
        with suppress(OSError):
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
        data = marshal.dumps((FORMAT, self.limit, folder, packed, packed_facts))
        store_atomically(self.path, data)

    def _load(self, folder: str) -> tuple[dict[str, Entry], Facts]:
        """The remembered answers (oldest first) and facts; empty when none, or for
        another limit or folder."""
        try:
            with open(self.path, "rb") as handle:
                version, limit, where, packed, packed_facts = marshal.loads(handle.read())
            if (version, limit, where) != (FORMAT, self.limit, folder):
                return {}, {}
            entries: dict[str, Entry] = {
                tip: (count, _checked(versions), _unpacked_or_none(walked))
                for tip, (count, versions, walked) in packed.items()
            }
            facts: Facts = {c: _unpacked_or_none(blobs) for c, blobs in packed_facts.items()}
        except (OSError, EOFError, ValueError, TypeError):
            return {}, {}
        return entries, facts


def _total(changes: Changes | None) -> tuple[int, set[str]] | None:
    return None if changes is None else (len(changes), _union(changes))


def _union(changes: dict[str, list[str]] | Facts) -> set[str]:
    found: set[str] = set()
    for blobs in changes.values():
        found.update(blobs or ())
    return found


def _packed(ids: list[str] | set[str]) -> bytes:
    """Object ids (40 hex digits each) as stored, 20 bytes each (one conversion for
    them all: per id, 10,000 took ~10 ms)."""
    return bytes.fromhex("".join(ids))


def _unpacked(data: bytes) -> list[str]:
    text = data.hex()
    return [text[start : start + 40] for start in range(0, len(text), 40)]


def _checked(data: bytes | None) -> bytes | None:
    """Stored ids, as they are: a whole number of ids, else ValueError (unreadable)."""
    if data is not None and (not isinstance(data, bytes) or len(data) % 20):
        raise ValueError("not a list of object ids")
    return data


def _packed_or_none(ids: list[str] | None) -> bytes | None:
    return None if ids is None else _packed(ids)


def _unpacked_or_none(data: bytes | None) -> list[str] | None:
    return None if data is None else _unpacked(data)


def _is_ancestor(root: str, ancestor: str, descendant: str) -> bool:
    """Whether ``ancestor`` is in ``descendant``'s history (``git merge-base
    --is-ancestor``; False when git cannot answer)."""
    if ancestor == descendant:
        return True
    return git_output(root, "merge-base", "--is-ancestor", ancestor, descendant) is not None


def _rev_list(root: str, tip: str) -> Generator[str, None, None]:
    """``git rev-list TIP``, one commit at a time as git walks (stopped when the caller
    stops: a long history is not listed whole); OSError when git fails."""
    with subprocess.Popen(
        ["git", "-C", root, "rev-list", tip],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=git_environment(),
        text=True,
    ) as process:
        stream = process.stdout
        if stream is None:
            raise OSError("git rev-list: no output")
        try:
            for line in stream:
                yield line.strip()
        except GeneratorExit:
            process.kill()  # the caller has what it needs
            raise
        if process.wait() != 0:
            raise OSError(f"git rev-list {tip} failed")
