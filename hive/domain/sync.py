"""``hive sync [REMOTE]``: exchange hive's state with a git remote.

What travels is hive's own refs, never your branch or your other files:

* ``refs/hive/state``: the hive files (cells, reservations, outcomes) as of
  each clone's last sync. Each commit's tree holds just ``.hive``; a sync that
  joined two clones' states has both as parents, so the common ancestor of
  any two states is known and a three-way merge can tell "changed here" from
  "changed there";
* ``refs/hive/mail``: the swarm mail log (see :mod:`hive.domain.mail`).

Syncs in one repository take turns (``GitRepo.sync_lock``, held across the
whole loop; writes never take it): two at once would each fetch and merge, then
find ``refs/hive/state`` moved by the other, again and again. A sync, in one
loop (retried from the fetch when the push is rejected because another clone
pushed first; never forced):

1. fetch the remote's ``refs/hive/*`` into ``refs/hive-remotes/<remote>/*``;
2. merge the remote state into this branch's ``.hive/``: the three-way merge
   of (common ancestor, this branch, remote state), file by file and field by
   field (:mod:`hive.domain.merge`), committed as one hive commit that
   touches only ``.hive/`` files and names the remote state it merged
   (``Hive-Sync-State:``, which ``hive doctor``'s audit checks it against:
   :mod:`hive.domain.syncaudit`); exclusive reservations that now overlap
   across clones are settled (earliest grant wins, the other is marked as
   yielded) in the same commit;
3. record the merged state on ``refs/hive/state`` (parents: ours and theirs, and
   when it sends files, a commit naming the versions of hive files this branch
   had that the remote's history lacks: :func:`_seen_parent`);
4. join the mail logs (a merge commit when both sides wrote), and tell both
   holders of a newly contested reservation by mail;
5. push ``refs/hive/state`` and ``refs/hive/mail``.

Because the merge is three-way against the state both clones last agreed on,
a field this clone did not change takes the remote's value: stale local state
never overwrites newer remote state.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache, partial

from hive.domain.mergecore import HISTORY_LIMIT, is_mergeable_path
from hive.domain.syncorder import cells_adding_edges
from hive.errors import GitError
from hive.git.gitconfig import GitConfig, git_available
from hive.git.refs import HeadRef
from hive.git.remote import (
    HIVE_REFS,
    MAIL_REF,
    PUSH_REFSPEC,
    STATE_REF,
    STATE_TRAILER,
    check_hive_refs,
    check_remote,
    fetch_refs,
    fetch_refspec,
    move_tracking_refs,
    push_refs,
    refspec_remote,
    shown_remote,
    stale_fetch_refspecs,
    take_handed_over_fetch,
    tracking_ref,
)
from hive.git.repo import Change, GitRepo, Identity, Plan, Snapshot, format_message
from hive.git.state import check_git_state
from hive.git.syncref import (
    FileSides,
    differing_files,
    file_at,
    history_blobs,
    hive_tree,
    merge_base,
    move_ref,
    path_versions,
    seen_commit,
    state_commit,
)
from hive.store.layout import CELLS_DIR, CONFIG_PATH, HIVE_DIR, cell_id_from_path

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:  # pydantic's models: imported where used (the lean sync never needs them)
    from typing import Any

    from hive.domain.workspace import Workspace
    from hive.models.reservation import Contest
    from hive.models.results import SyncResult

Progress = Callable[[str, int, int], None]
BaseOf = Callable[[str | None, str | None], str | None]  # two commits -> their merge base
SYNC_ATTEMPTS = 8


def configure_remotes(
    ws: Workspace, only: str | None = None, config: GitConfig | None = None
) -> dict[str, bool]:
    """Make plain ``git fetch``/``git push`` of each remote carry ``refs/hive/*``.

    fetch: ``+refs/hive/*:refs/hive-remotes/<remote>/*`` (tracking refs, never
    hive's own); push: ``refs/hive/*:refs/hive/*`` (never forced). A remote with
    no push refspec yet also gets ``HEAD`` first, so ``git push`` keeps pushing
    the current branch. Returns the remotes that are configured, each with whether
    this call changed its configuration.
    """
    if not git_available():
        return {}
    config = config or GitConfig(ws.root)  # one read of git's config for all the remotes
    names = [only] if only else config.remotes()
    changed: dict[str, bool] = {}
    for name in names:
        fetch_key = f"remote.{name}.fetch"
        changed[name] = config.add_value(fetch_key, fetch_refspec(name))
        for stale in stale_fetch_refspecs(name, config.get_all(fetch_key)):
            changed[name] = config.remove_value(fetch_key, stale) or changed[name]
            _follow_rename(ws, config, refspec_remote(stale), name)
        push_key = f"remote.{name}.push"
        pushed = config.get_all(push_key)
        if PUSH_REFSPEC not in pushed:
            if not pushed:
                config.add_value(push_key, "HEAD")
            config.add_value(push_key, PUSH_REFSPEC)
            changed[name] = True
    return changed


def _follow_rename(ws: Workspace, config: GitConfig, old: str, new: str) -> None:
    """The tracking refs of ``old``, a remote ``git remote rename`` renamed to ``new``
    (its stale refspec said so), moved to ``new``'s: doctor and the sync audit saw
    a remote that was gone. Left alone when ``old`` names a remote again, which fetches
    into them."""
    if old in config.remotes() and fetch_refspec(old) in config.get_all(f"remote.{old}.fetch"):
        return
    move_tracking_refs(ws.root, old, new)


class Merged:
    """One file both sides changed, merged: its content, the conflict records the merge
    added (``{field, kept, other}``, JSON's values), and when nothing valid could be
    built (``clean`` False: ``content`` is this side's), why."""

    __slots__ = ("clean", "conflicts", "content", "message")

    def __init__(
        self,
        content: bytes,
        conflicts: list[dict[str, Any]],
        clean: bool = True,
        message: str = "",
    ) -> None:
        self.content = content
        self.conflicts = conflicts
        self.clean = clean
        self.message = message


class Uncommon(Exception):
    """The lean sync (``hive/cli/lean_sync.py``) leaves the rest of this sync to the
    full one: raised after a round's fetch, before that round writes anything;
    ``carried``: what the earlier rounds did (:func:`run_rounds` goes on from it)."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.carried: dict[str, Any] = {}


class Syncing:
    """Who syncs, and how a sync meets its rarer cases. The full sync's is
    :class:`WorkspaceSyncing` (a Workspace: every case); the lean sync's (no pydantic)
    raises :class:`Uncommon` where a case needs pydantic's models: a reservation
    contest to settle (and mail to send about it)."""

    git: GitRepo
    root: str

    def identity(self) -> Identity:
        raise NotImplementedError

    def trailers(self, event: str) -> list[tuple[str, str]]:
        raise NotImplementedError

    def lock_timeout(self) -> float:
        raise NotImplementedError

    def merge(self, path: str, base: bytes | None, mine: bytes, other: bytes) -> Merged:
        """Both sides changed the file since the base: ``merge.merge_file``, by the rules
        without the models (``mergecore.merge_plain_records``, git's merge driver's lean
        path) when they give the file (the same bytes and records), so a sync that
        merges a cell edited on both sides imports no pydantic; else by the models."""
        from hive.domain.mergecore import merge_plain_records

        plain = merge_plain_records(path, base, mine, other)
        if plain is not None:
            return Merged(plain[0], plain[1])
        from hive.domain.merge import merge_file

        outcome = merge_file(path, base, mine, other)
        records = [record.model_dump(mode="json") for record in outcome.conflicts]
        return Merged(outcome.content, records, outcome.clean, outcome.message)

    def settle(self, snap: Snapshot, changes: list[Change]) -> tuple[list[Change], list[Contest]]:
        """``contest.settle_contests`` of the state ``changes`` lead to (in the plan)."""
        raise NotImplementedError

    def join_mail(self, theirs: str, remote: str) -> int:
        """``maillog.join_log``: the messages received."""
        raise NotImplementedError

    def edges_added(self, cell_ids: list[str]) -> None:
        """The plan's merged files add ordering edges to these cells
        (``syncorder.cells_adding_edges``): called before anything is written."""

    def cycles(self, cell_ids: list[str]) -> list[list[str]]:
        """The dependency cycles through these cells in the merged branch (committed),
        each as ``doctor`` names it (``graph.cycles_through``)."""
        raise NotImplementedError

    def notify(self, contested: list[Contest]) -> None:
        raise NotImplementedError


class WorkspaceSyncing(Syncing):
    """The full sync's: a Workspace answers everything."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.git = ws.git
        self.root = ws.root

    def identity(self) -> Identity:
        return self.ws.identity()

    def trailers(self, event: str) -> list[tuple[str, str]]:
        return self.ws.trailers(event)

    def lock_timeout(self) -> float:
        return self.ws.lock_timeout()

    def settle(self, snap: Snapshot, changes: list[Change]) -> tuple[list[Change], list[Contest]]:
        from hive.domain.contest import settle_contests

        return settle_contests(self.ws, snap, changes)

    def join_mail(self, theirs: str, remote: str) -> int:
        from hive.domain.maillog import join_log

        return join_log(self.ws, theirs, remote)

    def cycles(self, cell_ids: list[str]) -> list[list[str]]:
        from hive.domain.graph import cycles_through
        from hive.errors import HiveError

        try:  # a report only: doctor names what keeps it from being read
            index = self.ws.cells()
            return cycles_through(index, {c: index.cells[c] for c in cell_ids if c in index.cells})
        except HiveError:
            return []

    def notify(self, contested: list[Contest]) -> None:
        _notify(self.ws, contested)


def sync(
    ws: Workspace, *, remote: str | None = None, progress: Progress | None = None
) -> SyncResult:
    """Fetch, merge and push hive's state and mail with ``remote`` (None: the branch's
    upstream remote, else the only one, else origin: ``GitConfig.default_remote``; see
    the module doc)."""
    from hive.models.results import SyncResult

    given = None if remote is None else check_remote(remote)
    if not git_available():
        raise GitError("hive sync needs the git program (it talks to remotes through it)")
    ws.config()  # an initialised hive
    head = ws.git.head()
    check_git_state(ws.git.paths, head)  # before talking to the remote
    with ws.git.sync_lock(ws.lock_timeout()):  # syncs in one repository take turns
        config = GitConfig(ws.root)
        name = given or config.default_remote(head.ref, "hive sync")
        if name in config.remotes():
            configure_remotes(ws, only=name, config=config)
        # Pushing elsewhere than the fetch reads (a fork): the tracking refs say nothing
        # of what the push destination has, so every hive ref is pushed.
        everything = config.pushes_elsewhere(name)
        named = name in config.remotes()
        done = run_rounds(WorkspaceSyncing(ws), name, progress, everything=everything, named=named)
        return SyncResult(**done)


def run_rounds(
    sy: Syncing, name: str, progress: Progress | None, *, everything: bool, named: bool
) -> dict[str, Any]:
    """The sync's rounds under its lock (fetch, merge, record, mail, push; again from
    the fetch when the push is rejected): what ``SyncResult`` holds. A round the lean
    sync handed over (``remote.hand_over_fetch``) goes on from its fetch and its
    earlier rounds. ``everything``: the remote pushes elsewhere than it fetches from;
    ``named``: a remote of git's config (not a URL or a path)."""
    report = progress or (lambda phase, done, total: None)
    carried = take_handed_over_fetch(sy.root, name)
    totals: dict[str, Any] = {"received": 0, "mail": 0, "conflicts": [], "unresolved": []}
    totals["contested"], totals["cycles"] = [], []
    totals = (carried or {}).get("totals", totals)
    commit: str | None = (carried or {}).get("commit")
    first: int = (carried or {}).get("attempt", 1)
    for attempt in range(first, SYNC_ATTEMPTS + 1):
        report("fetching", 0, 3)
        if attempt > first or carried is None or not carried["fetched"]:
            check_hive_refs(sy.git, None)  # git's fetch stops at a local ref naming no object
            fetch_refs(sy.root, name, HIVE_REFS, tracking_ref(name, "*"))
        check_hive_refs(sy.git, name)
        report("merging", 1, 3)
        base_of = cache(partial(merge_base, sy.git))  # a pair of states walked once a round
        try:
            pushed_here = _merge_pushed_here(sy, name, base_of)
            merged = _merge_state(sy, name, base_of)
        except Uncommon as exc:
            exc.carried = {"totals": totals, "commit": commit, "attempt": attempt}
            raise
        commit = merged.get("commit") or pushed_here.get("commit") or commit
        totals["received"] += pushed_here.get("received", 0)
        totals["conflicts"] = totals["conflicts"] + pushed_here.get("conflicts", [])
        totals["cycles"] = totals["cycles"] + pushed_here.get("cycles", [])
        for key in ("conflicts", "unresolved", "contested", "cycles"):
            totals[key] = totals[key] + merged[key]
        totals["received"] += merged["received"]
        totals["mail"] += _merge_mail(sy, name)
        sy.notify(merged["contested"])
        if not merged["recorded"]:
            continue  # something else moved refs/hive/state meanwhile (not a sync: they take turns)
        report("pushing", 2, 3)
        refs = [r for r in (STATE_REF, MAIL_REF) if _to_push(sy, name, r, everything)]
        rejected = push_refs(sy.root, name, refs)
        if not rejected:
            if not (everything or named):
                _remember_push(sy, name, refs)
            report("done", 3, 3)
            return {
                "remote": shown_remote(name),
                "attempts": attempt,
                "commit": commit,
                "state": sy.git.ref_value(STATE_REF),
                "received_cells": totals["received"],
                "sent_cells": merged["sent"],
                "mail_received": totals["mail"],
                "conflicts": totals["conflicts"],
                "unresolved": totals["unresolved"],
                "contested": totals["contested"],
                "cycles": totals["cycles"],
            }
    raise GitError(
        f"{shown_remote(name)}'s hive refs kept moving while syncing ({SYNC_ATTEMPTS} tries);"
        " try again"
    )


def _remember_push(sy: Syncing, remote: str, refs: list[str]) -> None:
    """After a push to a URL (or a path) the remote accepted: its tracking refs say
    what it now holds, as git's push says it of a named remote (whose fetch refspec,
    ``remote.fetch_refspec``, maps hive's refs). git keeps no tracking refs for a URL,
    so the next sync found them behind what it had pushed (and the lean sync,
    ``hive/cli/lean_sync.py``, left it to the full one). Each moves from what this
    round's fetch set (compare-and-swap: one moved meanwhile is left to the next fetch,
    which sets them all again, forced)."""
    for ref in refs:
        tracking = tracking_ref(remote, ref.removeprefix("refs/hive/"))
        pushed, fetched = sy.git.ref_value(ref), sy.git.ref_value(tracking)
        if pushed is not None and pushed != fetched:
            head = HeadRef(ref=tracking, commit=fetched)
            message = f"hive sync: pushed to {shown_remote(remote)}"
            sy.git.swap_ref(head, pushed, sy.identity(), message, sy.lock_timeout())


def _to_push(sy: Syncing, remote: str, ref: str, everything: bool) -> bool:
    """Whether to push ``ref``: it exists here and (unless ``everything``) differs from
    what this attempt's fetch found on ``remote`` (the tracking refs mirror the remote's:
    the fetch prunes them), so a sync with nothing to send makes no push."""
    local = sy.git.ref_value(ref)
    if local is None or everything:
        return local is not None
    return local != sy.git.ref_value(tracking_ref(remote, ref.removeprefix("refs/hive/")))


# ------------------------------------------------------------------ cells and files


def _merge_pushed_here(ws: Syncing, remote: str, base_of: BaseOf) -> dict[str, Any]:
    """Bring into this branch what this clone's STATE_REF holds and the remote's state
    lacks: another clone wrote it (``hive sync ../this-clone``, or a plain ``git push``
    with the refspecs ``hive init`` adds). Merging the remote's state alone took that
    state as the base both sides agreed on and made it a parent of the next one,
    without its files: its edits were dropped, here and then in the clone that wrote
    them. A state this clone recorded itself is its branch's, or older: nothing to do.
    What it merged: :func:`_merge_state`'s answer ({} when nothing). Whether the
    remote's state holds this one is the merge base's question (``base_of``: this one
    is the base), which the merge of the remote's state asks next."""
    git = ws.git
    local = git.ref_value(STATE_REF)
    theirs = git.ref_value(tracking_ref(remote, "state"))
    if local is None or local == theirs or base_of(local, theirs) == local:
        return {}
    return _merge_state(ws, f"{STATE_REF} (another clone's sync)", base_of, theirs=local)


def _merge_state(
    ws: Syncing, remote: str, base_of: BaseOf, *, theirs: str | None = None
) -> dict[str, Any]:
    """Merge the remote state (``theirs``: that commit instead, when it holds a hive:
    else nothing is done) into this branch (one commit) and record it on STATE_REF (not
    when ``theirs`` is given). Only the files that differ between this branch's
    ``.hive`` and the remote state's are read (:func:`syncref.differing_files`): a
    sync's cost follows what changed, not the number of cells. ``base_of``: the merge
    base of two commits (:func:`syncref.merge_base`, each pair asked once a round)."""
    git = ws.git
    given = theirs is not None
    theirs = theirs if given else git.ref_value(tracking_ref(remote, "state"))
    their_tree = hive_tree(git, theirs)
    hiveless = theirs is not None and not _holds_a_hive(git, their_tree)
    if hiveless and given:
        return {}  # not a hive's state: nothing to bring
    local = git.ref_value(STATE_REF)
    base = base_of(local, theirs)
    base_tree = hive_tree(git, base)
    notes: list[str] = []
    if hiveless:
        # Not a state any hive writes (every one holds its config): rewritten by hand or
        # by another tool. Nothing is taken from it, so nothing here is removed for it
        # (the config and the reservation files were: "no hive yet" afterwards), and the
        # push sends this clone's state back over it.
        their_tree = base_tree = None
        notes.append(
            f"{shown_remote(remote)}'s {STATE_REF} held no hive ({CONFIG_PATH} missing):"
            " taken as empty, nothing removed here; this sync sends this clone's files"
        )
    found: dict[str, Any] = {}
    histories: list[_History] = []

    def plan(snap: Snapshot) -> Plan:
        ours = _hive_tree_of(git, snap)
        sides = {} if hiveless else differing_files(git, ours, their_tree, HIVE_DIR)
        had = _History(ws, theirs=theirs, ours=snap.head.commit)
        histories[:] = [had]
        changes, details = _merged_changes(ws, snap, sides, base_tree, had)
        _raise_sequence(ws, changes)
        adding = cells_adding_edges(snap, changes)
        if adding:
            ws.edges_added(adding)
        found.clear()
        found.update(details, adding=adding)
        cells = sorted({cid for c in changes if (cid := cell_id_from_path(c.path))})
        trailers = [("Hive-Cell", cid) for cid in cells]
        trailers += ws.trailers("sync")
        if theirs is not None:  # what the audit checks this commit's changes against
            trailers.append((STATE_TRAILER, theirs))
        subject = f"hive: sync {len(cells)} cell(s) from {shown_remote(remote)}"
        return Plan(changes=changes, message=format_message(subject, trailers))

    written = git.transact(plan, author=ws.identity(), lock_timeout=ws.lock_timeout())
    head = written.commit
    adding = found.get("adding") if found.get("changed") else None
    done = {
        "commit": head if found.get("changed") else None,
        "received": found.get("received", 0),
        "conflicts": found.get("conflicts", []),
        "cycles": ws.cycles(adding) if adding else [],
    }
    if given:  # recorded with the remote's state, by the merge that follows
        return done
    merged_tree = hive_tree(git, head)
    # what the merged files hold that the remote state's do not: what this sync sends
    sending = {
        path: mine
        for path, (other, mine) in differing_files(git, their_tree, merged_tree, HIVE_DIR).items()
        if mine is not None
    }
    seen = (
        _seen_parent(ws, histories[0], sending, theirs, remote) if sending and histories else None
    )
    parents = [sha for sha in (local, theirs, seen) if sha is not None]
    state = _next_state(ws, (local, theirs), merged_tree, parents, remote, base_of)
    recorded = move_ref(
        git,
        STATE_REF,
        local,
        state,
        ws.identity(),
        f"hive sync: {shown_remote(remote)}",
        ws.lock_timeout(),
    )
    sent = sum(1 for path in sending if path.startswith(CELLS_DIR + "/"))
    return {
        **done,
        "sent": sent,
        "unresolved": notes + found.get("unresolved", []),
        "contested": found.get("contested", []),
        "recorded": recorded,
    }


def _holds_a_hive(git: GitRepo, hive: str | None) -> bool:
    """Whether a state's ``.hive`` tree is a hive's (it holds the config)."""
    name = CONFIG_PATH.removeprefix(HIVE_DIR + "/")
    return hive is not None and git.lookup_path(hive, name) is not None


def _hive_tree_of(git: GitRepo, snap: Snapshot) -> str | None:
    """The ``.hive`` tree of the snapshot (HEAD's commit: no index overlay)."""
    return None if snap.tree is None else git.lookup_path(snap.tree, HIVE_DIR, want_tree=True)


def _raise_sequence(ws: Syncing, changes: list[Change]) -> None:
    """Reservation ids that came from another clone are never given again here (a
    merge may have renumbered one above any this clone granted). Under the write lock."""
    from hive.domain.reservecore import raise_sequence

    raise_sequence(ws.git.paths.hive_state_dir, ((c.path, c.content) for c in changes))


def _next_state(
    ws: Syncing,
    states: tuple[str | None, str | None],
    merged_tree: str | None,
    parents: list[str],
    remote: str,
    base_of: BaseOf,
) -> str:
    """The new STATE_REF commit: theirs or ours (``states``: this clone's, the remote's)
    when one already says it all: its tree is the merged one and every other parent is
    its ancestor (its merge base with it, ``base_of``: the pair of states was asked)."""
    git = ws.git
    local, theirs = states
    for candidate in (theirs, local):
        if candidate is None or hive_tree(git, candidate) != merged_tree:
            continue
        others = [p for p in parents if p != candidate]
        if all(base_of(other, candidate) == other for other in others):
            return candidate
    subject = f"hive: state after sync with {shown_remote(remote)}"
    message = format_message(subject, ws.trailers("sync"))
    return state_commit(git, merged_tree, parents, message, ws.identity())


def _seen_parent(
    ws: Syncing, had: _History, sending: dict[str, str], theirs: str | None, remote: str
) -> str | None:
    """A commit naming the versions of hive files this branch had (its newest
    ``HISTORY_LIMIT`` changes) that the remote state's history lacks, other than the
    ones sent (a cell another clone created, pushed with its branch and this clone
    pulled, then edited); None when there are none. A parent of the new state, it
    tells the clone that created the cell its version is older than the one sent
    here, not an edit of its own: without it that clone merged the two with no
    common version, and every field this clone changed was a conflict. ``sending``:
    the merged files that differ from the remote state's (every other merged file is
    the remote state's, a version its history holds: no need to list them all). Made
    on ``theirs`` (:func:`syncref.seen_commit`), so reading the new state's history
    costs what changed, not a line per hive file."""
    unseen = had.blobs("ours") - had.blobs("theirs") - set(sending.values())
    if not unseen:
        return None
    message = format_message(
        f"hive: versions of hive files this branch had, for {shown_remote(remote)}",
        ws.trailers("sync"),
    )
    return seen_commit(ws.git, sorted(unseen), message, ws.identity(), on=theirs)


class _History:
    """Whether a side already had a version of a file (it is in that side's history).

    The three-way merge base is the state both clones last agreed on; a clone
    that never synced has none, and a file can also reach a branch by ``git
    pull``. A version one side already had is older than that side's own, so
    the newer one is taken as it is: a stale copy is never merged as an edit
    (no spurious conflicts, no resurrected labels). Read lazily, once per side.
    """

    def __init__(self, ws: Syncing, *, theirs: str | None, ours: str | None) -> None:
        self._git = ws.git
        self._tips = {"theirs": theirs, "ours": ours}
        self._blobs: dict[str, set[str]] = {}

    def had(self, side: str, blob: str) -> bool:
        return blob in self.blobs(side)

    def blobs(self, side: str) -> set[str]:
        """Every version of a hive file in ``side``'s history (read once)."""
        if side not in self._blobs:
            tip = self._tips[side]
            self._blobs[side] = history_blobs(self._git, tip, limit=HISTORY_LIMIT, side=side)
        return self._blobs[side]

    def common(self, path: str) -> str | None:
        """The newest version of ``path`` in this clone's history that the other side
        also had: the base for a file the last agreed state does not hold (it reached
        a branch by ``git pull``, then both sides changed it)."""
        versions = path_versions(self._git, self._tips["ours"], path, limit=HISTORY_LIMIT)
        return next((blob for blob in versions if self.had("theirs", blob)), None)


def _merged_changes(
    ws: Syncing,
    snap: Snapshot,
    sides: FileSides,
    base_tree: str | None,
    had: _History,
) -> tuple[list[Change], dict[str, Any]]:
    """The changes that bring this branch's ``.hive/`` to the merged state. ``sides``:
    each file whose version here (``mine``) differs from the remote state's
    (``other``); a file both hold in one version is left as it is, so no other file
    is looked at. ``base_tree``: the ``.hive`` tree of the state both last agreed on."""
    read = ws.git.read_blob
    changes: list[Change] = []
    conflicts: list[dict[str, Any]] = []
    unresolved: list[str] = []
    for path in sorted(sides):
        mine, other = sides[path]
        original = file_at(ws.git, base_tree, path.removeprefix(HIVE_DIR + "/"))
        # This branch holds a version older than the state and never had the newer one
        # (it was synced on another branch since, or reset): a stale copy, never an
        # edit to send. A branch that had the newer one and went back (git revert)
        # chose the older one.
        stale = (
            mine is not None
            and mine not in (original, other)
            and (other is None or other == original)
            and had.had("theirs", mine)
            and (other is None or not had.had("ours", other))
        )
        if other is None and (mine == original or stale) and not path.startswith(CELLS_DIR + "/"):
            changes.append(Change(path, None))  # they removed it (all released), we kept it
            continue
        # A file the state has and this branch never had in that version (a worktree or
        # a branch made before it): not removed here (cell files never are; a branch
        # that removed it had the version), just never brought.
        missing = (
            mine is None
            and other is not None
            and other == original
            and (path.startswith(CELLS_DIR + "/") or not had.had("ours", other))
        )
        # The state's version came from a sync on another branch (another worktree shares
        # the state ref) and this branch never had it: it is no base for this branch's
        # edit; both changed the file since the version they share.
        foreign = (
            mine is not None
            and other is not None
            and mine != other
            and other == original
            and not stale
            and not had.had("ours", other)
        )
        if (
            mine == other
            or other is None
            or (other == original and not (stale or missing or foreign))
        ):
            continue  # nothing new there (cell files are never removed: tombstones are)
        if mine is None:  # new there, or changed there after we removed it
            changes.append(Change(path, read(other)))
            continue
        if mine == original or had.had("theirs", mine):  # ours is a version they had
            changes.append(Change(path, read(other)))
            continue
        if had.had("ours", other):  # theirs is a version this clone had: ours is newer
            continue
        if not is_mergeable_path(path):
            unresolved.append(f"{path}: changed on both sides; kept this clone's version")
            continue
        original = had.common(path) if foreign else (original or had.common(path))
        outcome = ws.merge(path, read(original) if original else None, read(mine), read(other))
        if not outcome.clean:
            unresolved.append(outcome.message or f"{path}: could not merge")
            continue
        if outcome.content != read(mine):
            changes.append(Change(path, outcome.content))
        cell = cell_id_from_path(path)
        where = {"cell": cell} if cell else {"cell": None, "file": path}
        conflicts += [{**where, **record} for record in outcome.conflicts]
    # cell files received, as "sent" counts them (reservation and config files travel too)
    received = sum(change.path.startswith(CELLS_DIR + "/") for change in changes)
    changes, contested = ws.settle(snap, changes)  # the whole list, losers' files rewritten
    details = {
        "changed": bool(changes),
        "received": received,
        "conflicts": conflicts,
        "unresolved": unresolved,
        "contested": contested,
    }
    return changes, details


# ------------------------------------------------------------------ mail


def _merge_mail(ws: Syncing, remote: str) -> int:
    """Join the remote mail log into ours; the number of messages received."""
    theirs = ws.git.ref_value(tracking_ref(remote, "mail"))
    if theirs is None:
        return 0
    return ws.join_mail(theirs, remote)


def _notify(ws: Workspace, contested: list[Contest]) -> None:
    """Tell both holders of each newly contested reservation, once (keyed notices)."""
    from hive.domain.mail import post_notice

    for contest in contested:
        post_notice(
            ws,
            key=contest.key,
            to=[contest.kept.agent, contest.yielded.agent],
            subject=f"reservation contested across clones: {contest.yielded.path_pattern}",
            body=contest.explanation(),
        )
