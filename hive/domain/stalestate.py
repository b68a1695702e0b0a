"""Whether a sync commit names a remote state older than the branch's version of a file
(``hive doctor``'s audit, beside :mod:`hive.domain.syncaudit`).

A ``hive sync`` names the remote state it fetched, the newest there is. When this
branch's version of a file is one a later state recorded (a state that has the named
one among its ancestors), the branch is ahead of that state for the file: a real sync
merges it against that state's version or a newer one, so it keeps the branch's
version as it is. A hand commit shaped as a sync could otherwise name an older state
(alice's cell closed there, reopened and claimed by her since) and write the merge of
the two versions against no common version (closed beats open): a clean merge, so it
closed alice's cell unseen.
"""

from __future__ import annotations

from hive.domain.syncaudit import SyncCommits
from hive.domain.workspace import Workspace


class LaterStates:
    """Which later states recorded a version, over an audit. Where the state table
    holds the state history whole (:meth:`SyncCommits.later_states`), only the states
    descending from the named one are read (their trees, once a state and file), and
    only when a state commit's change named the version at all (the table's changes:
    a state recording it has one among its ancestors); ancestry is the table's parents.
    Else every state's tree is read once a file, and each state recording the version
    is walked back to the named one (``GitRepo.is_ancestor``)."""

    def __init__(self, ws: Workspace, syncs: SyncCommits) -> None:
        self._ws = ws
        self._syncs = syncs  # its versions of (state, file), read once for both audits
        self._recorded: dict[str, dict[str, list[str]]] = {}  # path -> blob -> states
        self._blobs: dict[tuple[str, str], str | None] = {}  # (state, path) -> blob

    def ahead_of(self, state: str, path: str, old: str | None) -> bool:
        """Whether ``old``, the branch's version of ``path`` before a sync of ``state``,
        is one that ``state``'s history never had and a later state recorded (one that
        has ``state`` among its ancestors)."""
        if old is None or old in self._syncs.versions(state, path):
            return False  # (before the walk of every state: the common answer)
        later = self._syncs.later_states(state)
        if later is None:  # the state history beyond the table: each state's tree read
            recorded = [s for s in self._recording(path).get(old, []) if s != state]
            return any(self._ws.git.is_ancestor(state, sha) for sha in recorded)
        if not self._syncs.states_naming(path, old):
            return False  # no state commit made or left that version: none recorded it
        return any(self._blob(sha, path) == old for sha in later)

    def _blob(self, state: str, path: str) -> str | None:
        key = (state, path)
        if key not in self._blobs:
            git = self._ws.git
            self._blobs[key] = git.lookup_path(git.commit_tree(state), path)
        return self._blobs[key]

    def _recording(self, path: str) -> dict[str, list[str]]:
        if path not in self._recorded:
            found: dict[str, list[str]] = {}
            for state in self._syncs.states():
                blob = self._blob(state, path)
                if blob is not None:
                    found.setdefault(blob, []).append(state)
            self._recorded[path] = found
        return self._recorded[path]
