"""History from commit trailers: which commits touched a cell."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from hive.domain.cells import resolve_id
from hive.domain.workspace import Workspace
from hive.errors import NotFound
from hive.git.repo import CommitInfo
from hive.models.identity import AuditEntry
from hive.models.results import LogEntry
from hive.store.layout import HIVE_DIR, cell_path

if TYPE_CHECKING:
    from hive.domain.auditfiles import AuditFiles
    from hive.domain.oldsyncs import OlderSyncs
    from hive.domain.stalestate import LaterStates
    from hive.domain.syncaudit import SyncCommits
    from hive.models.reservation import Reservation


def cell_log(
    ws: Workspace, *, cell_id: str | None = None, limit: int | None = None
) -> list[LogEntry]:
    """hive commits (newest first), only those that touched ``cell_id`` if an id is given.

    hive's own commits name their cells in ``Hive-Cell:`` trailers. A commit
    without hive trailers (one of yours, carrying cell changes staged with
    ``HIVE_AUTOCOMMIT=0``) counts for a cell when it changed the cell's file.
    """
    wanted = None
    known = True
    if cell_id is not None:
        try:
            wanted = resolve_id(ws.cells(), cell_id)
        except NotFound:  # a cell that no longer exists may still have history
            wanted, known = cell_id.strip().lower(), False
    entries: list[LogEntry] = []
    for commit in ws.git.iter_commits():
        trailers = commit.trailers()
        cells = trailers.get("Hive-Cell", [])
        by_hive = "Hive-Event" in trailers or bool(cells)
        if wanted is None and not by_hive:
            continue
        if wanted is not None and wanted not in cells:
            if by_hive or not _changed_file(ws, commit, cell_path(wanted)):
                continue
            cells = [wanted]
        entries.append(
            LogEntry(
                commit=commit.sha,
                time=commit.time,
                author=commit.author,
                subject=commit.subject,
                cells=cells,
                agent=_first(trailers.get("Hive-Agent")),
                event=_first(trailers.get("Hive-Event")),
            )
        )
        if limit is not None and len(entries) >= limit:
            break
    if not known and not entries:
        raise NotFound(f"no cell {cell_id!r} and no hive commits mention it")
    return entries


def _changed_file(ws: Workspace, commit: CommitInfo, path: str) -> bool:
    """Whether ``commit`` changed ``path`` compared with each of its parents."""
    trees = [ws.git.commit_tree(sha) for sha in (commit.sha, *commit.parents)]
    if len(trees) > 1 and _same_hive_dir(ws, trees):
        return False  # most of your commits do not touch .hive/ at all: one tree read
    blob, *before = (ws.git.lookup_path(tree, path) for tree in trees)
    if not before:
        return blob is not None
    return all(blob != old for old in before)


def _same_hive_dir(ws: Workspace, trees: list[str]) -> bool:
    hive_dirs = {ws.git.lookup_path(tree, HIVE_DIR, want_tree=True) for tree in trees}
    return len(hive_dirs) == 1


# (path, its blob in the parent, its blob in the commit): None where there is no file
Changed = tuple[str, str | None, str | None]


def _first(values: list[str] | None) -> str | None:
    return values[0] if values else None


def audit_log(
    ws: Workspace,
    *,
    limit: int | None = None,
    scan: int | None = None,
    commits: Iterable[CommitInfo] | None = None,
) -> list[AuditEntry]:
    """Overrides (``Hive-Override`` trailers, forced reservations, mail overrides) and
    commits whose ``Hive-Agent`` (hive's, or any commit claiming an agent) names no
    identity registered here (and is not a person's) or an agent other than the
    commit's author (a person's author is git's, which may differ): newest first.

    Commits made by hand (a process editing .hive/ files and writing trailers
    itself) show up here when the name they claim was never registered. ``commits``:
    the history already read, newest first (:func:`latest_commits`), else HEAD's.
    """
    from hive.domain.identity import known_names
    from hive.domain.mail import mail_overrides
    from hive.domain.maillog import MAIL_REF

    known = known_names(ws)
    found: list[AuditEntry] = []
    for number, commit in enumerate(ws.git.iter_commits() if commits is None else commits):
        if scan is not None and number >= scan:
            break
        trailers = commit.trailers()
        if "Hive-Event" not in trailers and "Hive-Agent" not in trailers:
            continue  # not a hive commit, nor one that claims to be an agent's
        found += _audit_commit(commit, trailers, known)
        if limit is not None and len(found) >= limit:
            break
    for event in mail_overrides(ws):
        found.append(
            AuditEntry(
                commit=str(event.get("commit", "")),
                time=int(event.get("time", 0)),
                author=str(event.get("by", "")),
                subject=f"mail override: {event.get('action')} {event.get('target')}",
                agent=str(event.get("by", "")),
                kind="override",
                detail=str(event.get("trailer", "")),
                ref=MAIL_REF,
            )
        )
    found.sort(key=lambda entry: entry.time, reverse=True)
    return found[:limit] if limit is not None else found


def _audit_commit(
    commit: CommitInfo, trailers: dict[str, list[str]], known: set[str]
) -> list[AuditEntry]:
    agent = _first(trailers.get("Hive-Agent"))
    kind = _first(trailers.get("Hive-Identity")) or "agent"
    base = {
        "commit": commit.sha,
        "time": commit.time,
        "author": commit.author,
        "subject": commit.subject,
        "agent": agent,
    }
    found = [
        AuditEntry(**base, kind="override", detail=text)
        for text in trailers.get("Hive-Override", [])
    ]
    if not found:
        found += [
            AuditEntry(**base, kind="override", detail=f"forced over {text}")
            for text in trailers.get("Hive-Overrides", [])
        ]
    if agent and kind != "person" and agent not in known:
        found.append(
            AuditEntry(
                **base,
                kind="unregistered",
                detail=f"Hive-Agent {agent} is not an identity registered in this repository"
                + (" (an unregistered tool caller)" if kind == "unregistered" else ""),
            )
        )
    author_name = commit.author.split(" <", 1)[0]
    # a person's commit carries git's author (GIT_AUTHOR_NAME, author.name, then
    # user.name, then git's guess: hive/git/ident.py) and names the person by user.name
    # (or the login name): the two may differ, so only an agent's is compared
    if agent and kind != "person" and author_name != agent:
        found.append(
            AuditEntry(
                **base,
                kind="author-mismatch",
                detail=f"Hive-Agent {agent} but the commit's author is {author_name}",
            )
        )
    return found


def latest_commits(ws: Workspace, limit: int) -> list[CommitInfo]:
    """HEAD's latest ``limit`` commits, newest first: one walk the audits share."""
    return list(ws.git.iter_commits(limit=limit))


def hand_edits(
    ws: Workspace, *, limit: int, commits: list[CommitInfo] | None = None
) -> list[tuple[str, str]]:
    """(commit, subject) of the latest ``limit`` commits (of ``commits`` when given:
    :func:`latest_commits`) that changed .hive/ without hive's trailers (a hive write
    always carries them)."""
    found = []
    for commit in (latest_commits(ws, limit) if commits is None else commits)[:limit]:
        if "Hive-Event" in commit.trailers() or len(commit.parents) > 1:
            continue
        trees = [ws.git.commit_tree(sha) for sha in (commit.sha, *commit.parents)]
        dirs = [ws.git.lookup_path(tree, HIVE_DIR, want_tree=True) for tree in trees]
        changed = dirs[0] is not None if len(dirs) == 1 else dirs[0] != dirs[1]
        if changed:
            found.append((commit.sha, commit.subject))
    return found


def merge_edits(
    ws: Workspace,
    *,
    limit: int,
    commits: list[CommitInfo] | None = None,
    syncs: SyncCommits | None = None,
) -> list[tuple[str, str]]:
    """(commit, subject) of each merge among the latest ``limit`` commits (of
    ``commits`` when given: :func:`latest_commits`) that left ``.hive/config.yaml`` as
    neither parent's version nor a merge of theirs (:func:`hive.domain.mergeaudit.
    config_made`): edited by hand during the merge, where :func:`hand_edits`, which
    skips merges (they bring both sides' changes), does not look. ``syncs``: the
    audit's reader of the state history, shared with :func:`claim_breaches`."""
    from hive.domain.mergeaudit import config_made

    return [
        (commit.sha, commit.subject)
        for commit, reader in _merges(ws, limit, commits, syncs)
        if config_made(reader, commit)
    ]


def merge_state_edits(
    ws: Workspace,
    *,
    limit: int,
    commits: list[CommitInfo] | None = None,
    syncs: SyncCommits | None = None,
) -> list[tuple[str, str]]:
    """(commit, "paths (subject)") of each merge, as :func:`merge_edits` finds the
    config, that left unclaimed cells, the project memory or permission decisions as a
    version neither parent had nor a merge of theirs makes (:func:`hive.domain.
    mergeaudit.state_made`; claimed cells are :func:`claim_breaches`')."""
    from hive.domain.mergeaudit import state_made

    found = []
    for commit, reader in _merges(ws, limit, commits, syncs):
        made = state_made(reader, commit)
        if made:
            found.append((commit.sha, f"{', '.join(made)} ({commit.subject})"))
    return found


def _merges(
    ws: Workspace, limit: int, commits: list[CommitInfo] | None, syncs: SyncCommits | None
) -> Iterator[tuple[CommitInfo, SyncCommits]]:
    """Each two-parent merge among the latest ``limit`` commits, with the audit's reader
    of the state history (``syncs``, made at the first merge when not given)."""
    from hive.domain.syncaudit import SyncCommits

    for commit in (latest_commits(ws, limit) if commits is None else commits)[:limit]:
        if len(commit.parents) == 2:
            syncs = SyncCommits(ws) if syncs is None else syncs
            yield commit, syncs


def reserved_changes(
    ws: Workspace, *, limit: int, commits: list[CommitInfo] | None = None
) -> list[tuple[str, str]]:
    """(commit, what it changed) for each of the latest ``limit`` commits (of
    ``commits`` when given: :func:`latest_commits`) that changed a file outside .hive/
    under another agent's exclusive reservation, active at the commit's time in its
    parent, without a ``Hive-Override`` trailer: what the pre-commit hook refuses, in
    commits no hook checked (``--no-verify``, a clone without hive's hooks), which a
    fast-forward merge or a pull brings without running one. Merges are left out: what
    they bring is each side's commits, audited themselves (and ``git merge`` runs
    hive's pre-merge-commit hook)."""
    from hive.domain.ownership import configured_coordinators
    from hive.domain.reservecore import folds_case
    from hive.errors import HiveError

    try:
        runners = set(configured_coordinators(ws))
    except HiveError:  # a config that cannot be read (doctor reports it): no coordinators
        runners = set()
    fold = folds_case(ws.git.paths)
    found = []
    for commit in (latest_commits(ws, limit) if commits is None else commits)[:limit]:
        trailers = commit.trailers()
        if len(commit.parents) != 1 or "Hive-Override" in trailers:
            continue  # (an override is recorded: hive doctor lists it as one)
        # an agent's own git commit names it (the commit-msg hook's Hive-Committer)
        actor = _first(trailers.get("Hive-Committer")) or _actor(commit, trailers, runners)
        blocked = _reserved_in(ws, commit, commit.parents[0], actor, fold)
        if blocked:
            found.append((commit.sha, _reserved_change(actor, blocked)))
    return found


def _reserved_in(
    ws: Workspace, commit: CommitInfo, parent: str, actor: str, fold: bool
) -> list[tuple[str, Reservation]]:
    """The files ``commit`` changed against ``parent`` that another agent's exclusive
    reservation, active in ``parent`` at the commit's time, keeps from ``actor``."""
    from datetime import UTC, datetime

    from hive.domain.reservations import active_reservations, blocked_paths, load_reservations
    from hive.git.refs import HeadRef

    git = ws.git
    snap = git.snapshot_at(HeadRef(None, parent))
    at = datetime.fromtimestamp(commit.time, UTC)
    held = active_reservations(load_reservations(ws, snap).files, at)
    if not any(r.exclusive and r.agent != actor for r in held):
        return []  # (the trees are not compared)
    changed = git.paths_between(snap.tree, git.commit_tree(commit.sha))
    return blocked_paths(held, actor, changed, fold)


def _reserved_change(actor: str, blocked: list[tuple[str, Reservation]]) -> str:
    path, item = blocked[0]
    more = f" (and {len(blocked) - 1} more files)" if len(blocked) > 1 else ""
    cell = f" for {item.cell}" if item.cell else ""
    return (
        f"{actor} changed {path}{more} while {item.agent} had it reserved{cell}"
        f" ({item.path_pattern}, until {item.expires_at:%Y-%m-%d %H:%M:%S}Z)"
    )


def claim_breaches(
    ws: Workspace,
    *,
    limit: int,
    commits: list[CommitInfo] | None = None,
    unfetched: list[tuple[str, str]] | None = None,
    syncs: SyncCommits | None = None,
) -> list[tuple[str, str]]:
    """(commit, what it did) for each of the latest ``limit`` commits (of ``commits``
    when given: :func:`latest_commits`; a merge of two only where it made a claimed cell
    neither parent had nor merging them makes: :mod:`hive.domain.mergeaudit`) that
    changed another holder's reservations (:func:`_reservations_taken`) or changed or
    deleted a cell claimed, in its parent, by someone other than the commit's
    agent (:func:`_actor`), beyond comments
    added, without a ``Hive-Override`` trailer: what hive's own writes refuse, made by
    hand past the hook (``--no-verify``) or under trailers written by hand. What a
    ``hive sync`` commit brings from another clone's state, as a merge would, is no
    breach: such a commit is recognised by what it is, not by its trailers
    (:mod:`hive.domain.syncaudit`; one an older hive made, naming no state:
    :mod:`hive.domain.oldsyncs`). ``unfetched``, when given, takes instead (commit, what
    it is) for each sync commit this clone cannot check (the states not fetched yet).
    ``syncs``: the audit's reader of the state history, shared with :func:`merge_edits`."""
    from hive.domain.mergeaudit import merge_breaches
    from hive.domain.oldsyncs import OlderSyncs
    from hive.domain.ownership import configured_coordinators
    from hive.domain.stalestate import LaterStates
    from hive.domain.syncaudit import SyncCommits
    from hive.errors import HiveError

    try:
        runners = set(configured_coordinators(ws))
    except HiveError:  # a config that cannot be read (doctor reports it): no coordinators
        runners = set()
    syncs = SyncCommits(ws) if syncs is None else syncs
    older = OlderSyncs(ws, syncs)
    later = LaterStates(ws, syncs)
    found = []
    for commit in (latest_commits(ws, limit) if commits is None else commits)[:limit]:
        if len(commit.parents) not in (1, 2):
            continue
        trailers = commit.trailers()
        if "Hive-Override" in trailers:
            continue  # recorded: hive doctor lists it as an override
        actor = _actor(commit, trailers, runners)
        if len(commit.parents) == 2:  # what it brings is the parents'; what it makes is not
            found += [(commit.sha, what) for what in merge_breaches(ws, commit, actor, syncs)]
            continue
        taken = [
            *(
                (f"{actor} changed {cell_id} (claimed by {owner})", change)
                for cell_id, owner, change in _cells_taken(syncs, commit, actor)
            ),
            *(
                (f"{actor} changed the reservations of {holder}", change)
                for holder, change in _reservations_taken(syncs.files, commit, actor)
            ),
        ]
        states = _sync_sources(syncs, older, commit, trailers) if taken else []
        missing = _unfetched_state(syncs, trailers) if taken and not states else None
        if missing is not None and unfetched is not None:
            unfetched.append((commit.sha, missing))
            continue
        found += [
            (commit.sha, what)
            for what, change in taken
            if not any(_synced(ws, syncs, later, commit, state, change) for state in states)
        ]
    return found


def _synced(
    ws: Workspace,
    syncs: SyncCommits,
    later: LaterStates,
    commit: CommitInfo,
    state: str,
    change: Changed,
) -> bool:
    """Whether the sync commit ``commit`` of ``state`` made ``change`` as a sync does: the
    state's version brought, or merged (:meth:`SyncCommits.brought`), each yield mark it
    made naming a grant the branch or the state held (:mod:`hive.domain.yieldaudit`),
    and the branch's version not one a later state recorded (:mod:`hive.domain.stalestate`:
    a sync of an older state keeps it)."""
    from hive.domain.yieldaudit import yields_made_up

    path, old, new = change
    return (
        syncs.brought(commit, state, *change)
        and not yields_made_up(syncs.files, commit, state, path, new)
        and not later.ahead_of(state, path, old)
    )


def _unfetched_state(syncs: SyncCommits, trailers: dict[str, list[str]]) -> str | None:
    """What a commit under a sync's trailers is, when this clone cannot check it against
    the remote state it merged: it does not have the state it names, or has no state
    history at all (no hive refs fetched yet: a local ``git clone`` copies every object,
    the states too; the state refs are read once over the audit, ``SyncCommits.tips``);
    else None (also for a name that is no commit id: a hand commit's trailer, audited as
    any commit)."""
    from hive.domain.syncaudit import STATE_TRAILER
    from hive.git.refs import is_sha

    named = trailers.get(STATE_TRAILER, [])
    if trailers.get("Hive-Event") != ["sync"] or len(named) > 1:
        return None
    fetched = bool(syncs.tips())
    if not named:  # an older hive's: checked against the states, once there are some
        return None if fetched else "a hive sync of an older hive (naming no remote state)"
    state = named[0].strip().lower()
    if not is_sha(state):
        return None  # no commit id (hive names the state in full): no fetch brings it
    if fetched and syncs.ws.git.has_object(state):
        return None
    return f"a hive sync of remote state {state[:10]}"


def _sync_sources(
    syncs: SyncCommits, older: OlderSyncs, commit: CommitInfo, trailers: dict[str, list[str]]
) -> list[str]:
    """The remote state ``commit`` merged when it is a sync commit (the one it names, or
    those an older hive's sync may have merged: :mod:`hive.domain.oldsyncs`), else none."""
    named = syncs.source(commit, trailers)
    return [named] if named is not None else older.sources(commit, trailers)


def _actor(commit: CommitInfo, trailers: dict[str, list[str]], runners: set[str]) -> str:
    """Who made ``commit``: its ``Hive-Agent`` (else its author), or the worker a
    runner's commit settles (``Hive-Worker``) when a person or a coordinator, who may
    run a swarm, made it: an agent naming another as its worker is no runner."""
    agent = _first(trailers.get("Hive-Agent")) or commit.author.split(" <", 1)[0]
    worker = _first(trailers.get("Hive-Worker"))
    runner = _first(trailers.get("Hive-Identity")) == "person" or agent in runners
    return worker if worker and runner else agent


def _reservations_taken(
    files: AuditFiles, commit: CommitInfo, actor: str
) -> list[tuple[str, Changed]]:
    """The holders other than ``actor`` whose reservation files ``commit`` changed (each
    with the file's change): an entry still active at the commit's time released, or an
    entry made or changed in their name (their own expired entries pruned are no
    breach). Each version is decoded once over the audit (``files``)."""
    from datetime import UTC, datetime

    from hive.domain.reservecore import RESERVATIONS_DIR, reservation_path

    ws = files.ws
    new_tree, old_tree = (ws.git.commit_tree(sha) for sha in (commit.sha, commit.parents[0]))
    old_dir = ws.git.lookup_path(old_tree, RESERVATIONS_DIR, want_tree=True)
    new_dir = ws.git.lookup_path(new_tree, RESERVATIONS_DIR, want_tree=True)
    if old_dir == new_dir:
        return []
    if new_dir is None:
        names = [path.rsplit("/", 1)[-1] for path in ws.git.tree_listing(str(old_dir), "")]
    else:
        names = ws.git.paths_between(old_dir, new_dir)
    moment = datetime.fromtimestamp(commit.time, UTC)
    holders: list[tuple[str, Changed]] = []
    own = reservation_path(actor)  # a file holds its agent's reservations alone
    for name in names:
        path = f"{RESERVATIONS_DIR}/{name}"
        if path == own:
            continue
        shas = (ws.git.lookup_path(old_tree, path), ws.git.lookup_path(new_tree, path))
        old, new = (None if sha is None else files.reservation_file(sha, path) for sha in shas)
        if any(
            sha is not None and data is None for sha, data in zip(shas, (old, new), strict=True)
        ):
            continue  # a file that does not parse is reported as corrupt
        either = old if old is not None else new
        if either is None or either.agent == actor:
            continue
        kept = [] if old is None else old.reservations
        after = [] if new is None else new.reservations
        released = any(item.active(moment) and item not in after for item in kept)
        if released or any(item not in kept for item in after):
            holders.append((either.agent, (path, *shas)))
    return holders


def _cells_taken(
    syncs: SyncCommits, commit: CommitInfo, actor: str
) -> list[tuple[str, str, Changed]]:
    """(cell, its assignee, the file's change) of each cell ``commit`` changed beyond
    comments or deleted while someone other than ``actor`` had it claimed in the parent
    (each version decoded once over the audit: :class:`hive.domain.auditfiles.AuditFiles`)."""
    from hive.store.layout import CELLS_DIR

    git, files = syncs.ws.git, syncs.files
    new_tree, old_tree = (git.commit_tree(sha) for sha in (commit.sha, commit.parents[0]))
    new_cells = git.lookup_path(new_tree, CELLS_DIR, want_tree=True)
    old_cells = git.lookup_path(old_tree, CELLS_DIR, want_tree=True)
    if old_cells is None or old_cells == new_cells:
        return []  # (no cells folder left: every cell file deleted, each compared)
    taken: list[tuple[str, str, Changed]] = []
    for name in git.paths_between(old_cells, new_cells):
        path = f"{CELLS_DIR}/{name}"
        old_sha = git.lookup_path(old_tree, path)
        new_sha = git.lookup_path(new_tree, path)
        if old_sha is None or old_sha == new_sha or files.plainly_not_taken(old_sha, path, actor):
            continue
        found = files.taken(old_sha, new_sha, path, actor)
        if found is not None:
            taken.append((found[0].id, found[1], (path, old_sha, new_sha)))
    return taken
