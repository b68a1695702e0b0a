"""The remote state a sync commit of an older hive merged (``hive doctor``'s audit).

A hive before ``Hive-Sync-State`` (:data:`hive.domain.syncaudit.STATE_TRAILER`) wrote
sync commits that do not name the remote state they merged, so the audit compared
them as any commit: every honest sync that brought another agent's edit of its
claimed cell was a ``not-owner`` warning. Such a sync recorded its merged ``.hive``
tree on ``refs/hive/state`` at once: the remote state itself, when it took it whole,
or a new state commit whose parents are the local state before and the remote one.
So the states it may have merged are those recording its tree, and their parents;
each is then checked as a named one is (:class:`hive.domain.syncaudit.SyncCommits`).

A state recording a commit's tree that was made after the commit (by a later ``hive
sync`` of a hand commit under a sync trailer) merged nothing into it: a state
recording the tree counts only when strictly older than the commit, and a parent
of one only when not newer (dates are git's, which a forger writing its own may
set: see docs/security.md).
"""

from __future__ import annotations

from hive.domain.syncaudit import STATE_TRAILER, SyncCommits
from hive.domain.workspace import Workspace
from hive.git.repo import CommitInfo
from hive.git.syncref import hive_tree


class OlderSyncs:
    """The states an older hive's sync commits merged, read once over an audit."""

    def __init__(self, ws: Workspace, syncs: SyncCommits) -> None:
        self._ws = ws
        self._syncs = syncs
        self._recording: dict[str, list[str]] | None = None  # .hive tree -> its states

    def sources(self, commit: CommitInfo, trailers: dict[str, list[str]]) -> list[str]:
        """The remote states ``commit`` may have merged when it is a sync commit that
        names none (shaped as hive's, checked as :meth:`SyncCommits.source` checks a
        named one); none for any other commit."""
        if trailers.get("Hive-Event") != ["sync"] or STATE_TRAILER in trailers:
            return []
        if len(commit.parents) != 1:
            return []
        found: list[str] = []
        for state in self._candidates(commit):
            named = {**trailers, STATE_TRAILER: [state]}
            if state not in found and self._syncs.source(commit, named) == state:
                found.append(state)
        return found

    def _candidates(self, commit: CommitInfo) -> list[str]:
        git = self._ws.git
        tree = hive_tree(git, commit.sha)
        candidates: list[str] = []
        for state in self._states_recording().get(tree or "", []):
            info = git.commit_info(state)
            if info.time < commit.time:
                candidates.append(state)
            candidates += [p for p in info.parents if git.commit_info(p).time <= commit.time]
        return candidates

    def _states_recording(self) -> dict[str, list[str]]:
        """Each ``.hive`` tree of the state history (:meth:`SyncCommits.states`, the
        audit's one walk), with the state commits that record it."""
        if self._recording is None:
            git = self._ws.git
            recording: dict[str, list[str]] = {}
            for state in self._syncs.states():
                tree = hive_tree(git, state)
                if tree is not None:
                    recording.setdefault(tree, []).append(state)
            self._recording = recording
        return self._recording
