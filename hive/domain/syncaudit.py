"""Whether a commit that says it is a ``hive sync`` commit is one (``hive doctor``'s audit).

The commit of a ``hive sync`` (:mod:`hive.domain.sync`) brings another clone's state
into this branch, as a merge commit does: the changes it makes to a cell another agent
claimed were made on that clone, by hive, and are no breach here. Its trailers
(``Hive-Event: sync``) anyone can write by hand, so the audit recognises one by what it
is. A sync commit

* has one parent and changes nothing outside ``.hive/`` (a sync touches only hive's
  files);
* names the remote state it merged (``Hive-Sync-State: <commit>``, :data:`STATE_TRAILER`),
  and that commit is a state commit (no ``.hive/seen``) of this repository's state
  history: reachable from ``refs/hive/state`` or a tracking ref
  ``refs/hive-remotes/<remote>/state``;
* leaves each file it changes (:meth:`SyncCommits.brought`) as that state's version,
  where this branch's version is one the state's history had (taken as it was), or as
  the clean three-way merge of this branch's version and the state's against a version
  both histories had, or none when they share none (``merge.merge_file``); a
  reservation file may differ from those by entries marked yielded to an earlier
  overlapping grant (:mod:`hive.domain.contest`, which the sync settles in the same
  commit).

A hand commit that edits another's claimed cell under ``Hive-Event: sync`` makes a
version the remote state never had, so it stays a breach, also once a later ``hive
sync`` has recorded its tree on ``refs/hive/state``. A sync commit made before hive
named the state it merged carries no ``Hive-Sync-State``: it is compared as any commit.
"""

from __future__ import annotations

from datetime import UTC, datetime

from hive.domain.auditfiles import AuditFiles
from hive.domain.workspace import Workspace
from hive.errors import HiveError
from hive.git.remote import STATE_REF, TRACKING_PREFIX
from hive.git.remote import STATE_TRAILER as STATE_TRAILER  # one definition, read by the lean sync
from hive.git.repo import CommitInfo
from hive.models.reservation import ReservationFile
from hive.store.layout import HIVE_DIR

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from hive.domain.merge import MergeOutcome

STATE_WALK_LIMIT = 20_000  # state commits read, at most, to find the states named
BASES_TRIED = 8  # common versions tried as the base of a merged file (newest first)
_SEEN = HIVE_DIR + "/seen"


class SyncCommits:
    """The audit's reading of sync commits over one walk (state history read once)."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.files = AuditFiles(ws)  # the versions of cells and reservation files, decoded once
        self._reached: dict[str, None] = {}  # the state commits walked, in walk order
        self._pending: list[str] | None = None
        self._versions: dict[tuple[str, str], list[str]] = {}
        self._states: _StateTable | None = None
        self._tips: list[str] | None = None

    def source(self, commit: CommitInfo, trailers: dict[str, list[str]]) -> str | None:
        """The remote state ``commit`` merged when it is shaped as hive's sync commit
        (see the module doc), else None: it is audited as any commit."""
        named = trailers.get(STATE_TRAILER, [])
        if trailers.get("Hive-Event") != ["sync"] or len(commit.parents) != 1 or len(named) != 1:
            return None
        state = named[0].strip().lower()
        if not self._only_hive_changed(commit) or not self._in_state_history(state):
            return None
        git = self.ws.git
        return None if git.lookup_path(git.commit_tree(state), _SEEN, want_tree=True) else state

    def brought(
        self, commit: CommitInfo, state: str, path: str, old: str | None, new: str | None
    ) -> bool:
        """Whether ``commit`` (a sync of ``state``) changed ``path`` from ``old`` to
        ``new`` as a sync does: the state's version taken, or merged with this branch's
        (a reservation file: then entries marked yielded, as the sync settles them)."""
        git = self.ws.git
        theirs = git.lookup_path(git.commit_tree(state), path)
        taken = old is None or old in self.versions(state, path)
        if new == theirs and taken:
            return True
        if new is None:
            return False
        made = git.read_blob(new)
        before = [git.read_blob(sha) for sha in (theirs if taken else None, old) if sha]
        if any(
            content == made or settled_from(self.ws, commit, path, content, made)
            for content in before
        ):
            return True
        if old is None or theirs is None:
            return False
        return self._merged(commit, state, path, (old, theirs, new))

    def _merged(
        self, commit: CommitInfo, state: str, path: str, sides: tuple[str, str, str]
    ) -> bool:
        """Whether ``new`` is a clean merge of ``old`` and ``theirs`` (``sides``) against
        a version both histories had (:meth:`common_versions`: the one a sync merges
        against is most often the first), or against none when they share none: a sync
        merges without a base only then (``sync._History.common``), and a merge without
        one takes either side's edits where the two differ. A cell is merged from its
        decoded versions (:class:`AuditFiles`), until one matches; another file by
        ``merge_file``, its result compared with ``new`` or (a reservation file)
        settled from it."""
        from hive.domain.mergecore import is_cell_path

        old, theirs, new = sides

        def matches(outcome: MergeOutcome, made: bytes) -> bool:
            return outcome.clean and (
                outcome.content == made
                or settled_from(self.ws, commit, path, outcome.content, made)
            )

        bases: list[str | None] = [*self.common_versions(state, commit.parents[0], path)]
        return self.merges_to(
            path, bases or [None], [(old, theirs)], new, decoded=is_cell_path(path), by=matches
        )

    def common_versions(self, first: str, second: str, path: str) -> list[str]:
        """The versions of ``path`` both ``first``'s and ``second``'s histories had, in
        ``first``'s order (newest first), the newest :data:`BASES_TRIED`: the bases an
        audit tries for a file merged from the two sides."""
        shared = set(self.versions(second, path))
        return [v for v in self.versions(first, path) if v in shared][:BASES_TRIED]

    def merges_to(
        self,
        path: str,
        bases: list[str | None],
        pairs: list[tuple[str, str]],
        new: str,
        *,
        decoded: bool,
        by: Callable[[MergeOutcome, bytes], bool],
    ) -> bool:
        """Whether hive's merge of a pair of versions of ``path`` (each of ``pairs``, in
        that order) against one of ``bases`` (in order; None: no base) is ``new``.
        ``decoded``: the versions are merged decoded first (:meth:`AuditFiles.merges_to`,
        with the first pair: its answer, when it has one, is the base's); else, and where
        a version does not decode, by ``merge.merge_file``, whose outcome ``by`` judges
        against the content of ``new``."""
        from hive.domain.merge import merge_file

        read = self.ws.git.read_blob
        made: list[bytes] = []  # read once, when a merge_file outcome is compared
        for base in bases:
            if decoded:
                decided = self.files.merges_to(path, base, *pairs[0], new)
                if decided is not None:
                    if decided:
                        return True
                    continue
            made = made or [read(new)]
            for a, b in pairs:
                try:
                    outcome = merge_file(path, read(base) if base else None, read(a), read(b))
                except HiveError:  # a version that does not parse: no merge hive made
                    continue
                if by(outcome, made[0]):
                    return True
        return False

    def _only_hive_changed(self, commit: CommitInfo) -> bool:
        git = self.ws.git
        new, old = (git.tree_items(git.commit_tree(sha)) for sha in (commit.sha, commit.parents[0]))
        hive = HIVE_DIR.encode()
        return {k: v for k, v in new.items() if k != hive} == {
            k: v for k, v in old.items() if k != hive
        }

    def states(self) -> list[str]:
        """The state commits reachable from the state refs (:func:`state_tips`; at most
        :data:`STATE_WALK_LIMIT`), the walk :meth:`source` began finished: one walk of
        the state history over the audit, shared by ``stalestate`` and ``oldsyncs``."""
        self._walk_states(until=None)
        return list(self._reached)

    def later_states(self, state: str) -> set[str] | None:
        """The state commits that have ``state`` among their ancestors, from the state
        table's parents; None when the table does not hold the state history whole
        (the caller then walks the commits)."""
        return self._table().later(state) if self._table().whole() is not None else None

    def states_naming(self, path: str, blob: str) -> bool:
        """Whether a state commit changed ``path`` from or to ``blob`` (the state table's
        changes; answered only where it holds the state history whole)."""
        return self._table().changes_naming(path, blob)

    def _in_state_history(self, sha: str) -> bool:
        """Whether ``sha`` is reachable from a state ref (walked lazily, only as far as
        it takes, at most :data:`STATE_WALK_LIMIT` commits over the audit)."""
        self._walk_states(until=sha)
        return sha in self._reached

    def _walk_states(self, until: str | None) -> None:
        """Go on walking the state history until ``until`` is reached (None: to the end).
        Where the state table holds the state history whole (the first time, one
        ``git rev-list`` over the state refs and HEAD that the audit reads for the
        versions anyway), its commits are the walk's: the same commits, since a walk
        within :data:`STATE_WALK_LIMIT` reaches them all; else the commits are read one
        by one, as far as the limit."""
        git = self.ws.git
        if self._pending is None:
            whole = self._table().whole()
            self._pending = [] if whole is not None else list(self.tips())
            self._reached = dict.fromkeys(whole or ())
        while (until is None or until not in self._reached) and self._pending:
            if len(self._reached) >= STATE_WALK_LIMIT:
                break
            here = self._pending.pop()
            if here not in self._reached:
                self._reached[here] = None
                self._pending.extend(git.parents_of(here))

    def _table(self) -> _StateTable:
        if self._states is None:
            self._states = _StateTable(self.ws, self.tips())
        return self._states

    def tips(self) -> list[str]:
        """The tips of the state history (:func:`state_tips`), read once over the audit."""
        if self._tips is None:
            self._tips = state_tips(self.ws)
        return self._tips

    def versions(self, tip: str, path: str) -> list[str]:
        """The versions ``path`` had in ``tip``'s history, newest first (read once over
        the audit: ``syncref.path_versions``, one ``git log``)."""
        from hive.domain.mergecore import HISTORY_LIMIT
        from hive.git.syncref import path_versions

        key = (tip, path)
        if key not in self._versions:
            found = self._table().versions(tip, path, HISTORY_LIMIT)
            if found is None:  # not a state, or beyond what the table read
                found = path_versions(self.ws.git, tip, path, limit=HISTORY_LIMIT)
            self._versions[key] = found
        return self._versions[key]


class _StateTable:
    """The versions of every ``.hive`` file in the state history and this branch's,
    read by two ``git`` processes for the whole audit (one ``git log`` of ``.hive`` over
    the state tips and HEAD, one ``git rev-list --parents``) instead of a ``git log`` for
    each (state or parent, file) a sync commit asks about: with hundreds of sync commits
    those were most of ``hive doctor``. Where it holds the state history whole (every
    ancestor of each state tip: :meth:`whole`), the state commits and their descendants
    are answered from it too."""

    def __init__(self, ws: Workspace, tips: list[str]) -> None:
        from hive.git.pathhistory import changes_table, history_fixed, parents_table

        head = ws.git.head().commit  # the branch's versions too (a sync commit's parent)
        self._tips = tips  # (state_tips)
        tips = [*self._tips, *([head] if head else [])]
        root = ws.git.root
        self._parents = parents_table(root, tips, limit=STATE_WALK_LIMIT)
        self._changes = changes_table(root, tips) if self._parents else None
        self._ancestors: dict[str, set[str] | None] = {}
        # git's graph is the one hive reads commit by commit only without grafts, replace
        # refs or a shallow boundary (GitRepo.parents_of): else the states are walked
        self._fixed = history_fixed(ws.git.paths.common_dir)
        self._whole: list[str] | None = None
        self._whole_read = False
        self._state_set: set[str] = set()
        self._children: dict[str, list[str]] | None = None
        self._later: dict[str, set[str]] = {}

    def whole(self) -> list[str] | None:
        """The state history (every commit reachable from a state tip), when the table
        holds all of it (then at most :data:`STATE_WALK_LIMIT` commits, which the
        walk of :class:`SyncCommits` would reach whole too); else None."""
        if not self._whole_read:
            self._whole_read = True
            readable = self._fixed and self._changes is not None  # (the changes: LaterStates)
            self._whole = self._read_whole() if readable else None
            self._state_set = set(self._whole or ())
        return self._whole

    def _read_whole(self) -> list[str] | None:
        found: dict[str, None] = {}
        for tip in self._tips:
            ancestry = self._ancestry(tip)
            if ancestry is None:
                return None
            found.update(dict.fromkeys(ancestry))
        return list(found)

    def later(self, state: str) -> set[str]:
        """The commits of the state history that descend from ``state`` (the table's
        parents turned round, walked once per state asked about)."""
        if state not in self._later:
            self.whole()
            if self._children is None:
                self._children = {}
                for commit in self._state_set:
                    for parent in (self._parents or {}).get(commit, []):
                        self._children.setdefault(parent, []).append(commit)
            found: set[str] = set()
            pending = list(self._children.get(state, []))
            while pending:
                here = pending.pop()
                if here not in found:
                    found.add(here)
                    pending.extend(self._children.get(here, []))
            self._later[state] = found
        return self._later[state]

    def changes_naming(self, path: str, blob: str) -> bool:
        """Whether a commit of the state history changed ``path`` from or to ``blob``."""
        self.whole()
        return any(
            blob in versions and commit in self._state_set
            for commit, versions in (self._changes or {}).get(path, [])
        )

    def versions(self, tip: str, path: str, limit: int) -> list[str] | None:
        """``syncref.path_versions(tip, path)`` for a state ``tip`` the table read whole,
        else None: the versions ``path``'s newest ``limit`` changes by ``tip``'s ancestors
        name, newest first."""
        mine = self._ancestry(tip)
        if mine is None or self._changes is None:
            return None
        found: dict[str, None] = {}
        counted = 0
        for commit, versions in self._changes.get(path, []):
            if commit in mine:
                counted += 1
                if counted > limit:
                    break
                found.update(dict.fromkeys(versions))
        return list(found)

    def _ancestry(self, tip: str) -> set[str] | None:
        """``tip`` and its ancestors, or None when the table does not hold them all."""
        if tip not in self._ancestors:
            parents = self._parents or {}
            reached: set[str] | None = set()
            pending = [tip]
            while pending and reached is not None:
                here = pending.pop()
                if here in reached:
                    continue
                if here not in parents:
                    reached = None  # beyond the table's limit, or no state
                    break
                reached.add(here)
                pending.extend(parents[here])
            self._ancestors[tip] = reached
        return self._ancestors[tip]


def state_tips(ws: Workspace) -> list[str]:
    """The tips of the state history: ``refs/hive/state`` and each tracking
    ``refs/hive-remotes/<remote>/state`` (not a fetched mail log: no state)."""
    git = ws.git
    tracking = git.refs_under(TRACKING_PREFIX)
    tips = [git.ref_value(STATE_REF)]
    tips += [sha for ref, sha in tracking.items() if ref.endswith("/state")]
    return [tip for tip in tips if tip is not None]


def settled_from(ws: Workspace, commit: CommitInfo, path: str, before: bytes, after: bytes) -> bool:
    """Whether the reservation file ``after`` is ``before`` with entries marked yielded to
    an earlier overlapping grant of another agent, as ``contest.settle_contests`` marks
    them among the reservation files of ``commit`` at its time."""
    from hive.domain.contest import find_contests
    from hive.domain.reservations import decode_file
    from hive.domain.reservecore import RESERVATIONS_DIR

    if not path.startswith(RESERVATIONS_DIR + "/"):
        return False
    try:
        old, new = decode_file(before, path), decode_file(after, path)
    except HiveError:
        return False
    if old.agent != new.agent or len(old.reservations) != len(new.reservations):
        return False
    marked = []
    for was, now in zip(old.reservations, new.reservations, strict=True):
        if was == now:
            continue
        if was.yielded_to is not None or was != now.model_copy(update={"yielded_to": None}):
            return False
        marked.append(now)
    files = {**_reservation_files(ws, commit), path: old}
    moment = datetime.fromtimestamp(commit.time, UTC)
    won = {(c.yielded.id, c.kept.id, c.kept.agent) for c in find_contests(files, moment)}
    return all(
        item.yielded_to is not None
        and (item.id, item.yielded_to.reservation_id, item.yielded_to.holder) in won
        for item in marked
    )


def _reservation_files(ws: Workspace, commit: CommitInfo) -> dict[str, ReservationFile]:
    """The readable reservation files of ``commit``."""
    from hive.domain.reservations import decode_file
    from hive.domain.reservecore import RESERVATIONS_DIR

    git = ws.git
    tree = git.lookup_path(git.commit_tree(commit.sha), RESERVATIONS_DIR, want_tree=True)
    files: dict[str, ReservationFile] = {}
    for name, sha in ({} if tree is None else git.tree_listing(tree, "")).items():
        path = f"{RESERVATIONS_DIR}/{name}"
        try:
            files[path] = decode_file(git.read_blob(sha), path)
        except HiveError:
            continue
    return files
