"""What ``hive swarm run`` writes about a subtask, each step one commit.

- :func:`claim_for_worker`: the subtask is claimed for the worker's agent, with
  the worker's log (and worktree) linked from the cell.
- :func:`block_subtask`: a worker that failed (crashed, timed out, exited
  without ``swarm_complete``, or whose branch does not merge): the cell is
  blocked with the reason and the log, the agent's reservations are released
  and a failure outcome is recorded, all in one commit.
- :func:`requeue_subtask`: an interrupted worker's subtask is open again for the
  next run (reservations released; no outcome: nobody failed).
- :func:`release_worker`: a worker that exited still holding reservations (its
  subtask closed or deleted by someone else, or closed without ``swarm_complete``)
  has them released, so nothing outlives it until its reservations expire; a subtask
  closed so is marked ``completed`` in ``swarm_run`` (``swarm_complete`` marks it in
  its own commit).
- :func:`merge_subtask`: with worktree isolation, the worker's branch is merged
  into the current branch in one commit, or not at all when it conflicts.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from hive.domain.cells import get_cell
from hive.domain.graph import open_blockers
from hive.domain.outcomes import outcome_change
from hive.domain.permissions import require_task_grant
from hive.domain.reservations import load_all, release_change
from hive.domain.reservecore import folds_case
from hive.domain.swarm.complete import build_outcome, ran_to_completion
from hive.domain.workspace import MixedPlan, Workspace
from hive.errors import AlreadyClaimed, BlockedByDependency, Conflict
from hive.git.merge import MergeResult, merge_commits
from hive.git.repo import Change, Plan, Snapshot, format_message
from hive.models import Cell, utc_now
from hive.models.outcome import Outcome
from hive.models.reservation import Reservation
from hive.store.cache import CellIndex

RUNNER = "hive swarm run"


def _note(cell: Cell, text: str, now: datetime) -> str:
    line = f"[{now:%Y-%m-%d %H:%M}Z] {RUNNER}: {text}"
    return (cell.notes.rstrip("\n") + "\n" if cell.notes else "") + line


def _with_run_info(cell: Cell, **info: Any) -> dict[str, Any]:
    """The cell's metadata with ``swarm_run`` updated (who ran it, the log, the worktree)."""
    metadata = dict(cell.metadata)
    current = dict(metadata.get("swarm_run") or {})
    current.update({key: value for key, value in info.items() if value is not None})
    metadata["swarm_run"] = current
    return metadata


def run_info(cell: Cell) -> dict[str, Any]:
    """What the runner recorded on ``cell`` (empty when no runner dispatched it)."""
    info = cell.metadata.get("swarm_run")
    return dict(info) if isinstance(info, dict) else {}


def claim_for_worker(
    ws: Workspace,
    *,
    cell_id: str,
    agent: str,
    log: str,
    worktree: str | None = None,
    branch: str | None = None,
) -> Cell:
    """Claim ``cell_id`` for ``agent`` (refused unless it is open, unblocked and not
    someone else's), linking the worker's log and worktree from the cell."""

    def plan(snap: Snapshot, index: CellIndex) -> tuple[list[Cell], str, str, Any]:
        cell = get_cell(index, cell_id)
        if cell.status != "open":
            raise Conflict(f"{cell.id} is {cell.status}, not open", id=cell.id)
        if cell.assignee and cell.assignee != agent:
            raise AlreadyClaimed(f"{cell.id} is assigned to {cell.assignee}", id=cell.id)
        blockers = open_blockers(cell, index)
        if blockers:
            raise BlockedByDependency(
                f"{cell.id} waits for {', '.join(blockers)}", id=cell.id, blockers=blockers
            )
        require_task_grant(ws, cell, agent)
        now = utc_now()
        where = f"; worktree {worktree} on branch {branch}" if worktree else ""
        claimed = cell.model_copy(
            update={
                "status": "in_progress",
                "assignee": agent,
                "started_at": now,
                "updated_at": now,
                "notes": _note(cell, f"started worker {agent} (log: {log}{where})", now),
                "metadata": _with_run_info(
                    cell,
                    agent=agent,
                    log=log,
                    worktree=worktree,
                    branch=branch,
                    state="running",
                    assigned_before=cell.assignee or "",
                ),
            }
        )
        return [claimed], claimed.id, claimed.title, claimed

    claimed: Cell = ws.for_actor(agent).write(plan, event="start").result
    return claimed


def _release_all(
    ws: Workspace, snap: Snapshot, agent: str
) -> tuple[list[Reservation], Change | None]:
    """The agent's active reservations and the change that releases them all."""
    mine = load_all(ws, snap).get(agent)
    if mine is None or not mine.reservations:
        return [], None
    now = utc_now()
    return [r for r in mine.reservations if r.active(now)], release_change(agent, [], ws)


def _not_the_workers(cell: Cell, agent: str) -> bool:
    """The subtask is no longer the worker's to settle: closed or deleted meanwhile, or
    taken from it (reassigned, or put back by retiring the worker's identity)."""
    return cell.is_closed or cell.is_deleted or cell.assignee != agent


@dataclass
class Settled:
    """What a block or requeue found: the cell after it (``changed`` False: it was
    closed, deleted or taken from the worker meanwhile, and is left as it is)."""

    cell: Cell
    released: list[Reservation] = field(default_factory=list)
    outcome_id: str | None = None
    changed: bool = True


def block_subtask(
    ws: Workspace,
    *,
    cell_id: str,
    agent: str,
    reason: str,
    log: str | None = None,
    files_touched: Sequence[str] = (),
    record_outcome: bool = True,
    duration_seconds: float | None = None,
) -> Settled:
    """Block ``cell_id`` because its worker failed: reason and log on the cell, the
    agent's reservations released, a failure outcome recorded; one commit, the
    runner's (``ws``), naming the worker. A cell closed, deleted or taken from the
    worker meanwhile is left alone (``changed`` is False)."""

    def plan(snap: Snapshot, index: CellIndex) -> MixedPlan:
        cell = get_cell(index, cell_id, allow_deleted=True)
        if _not_the_workers(cell, agent):
            return MixedPlan([], cell.id, cell.title, Settled(cell, changed=False))
        now = utc_now()
        released, release = _release_all(ws, snap, agent)
        blocked = _blocked(cell, reason, log, now)
        files = [release] if release is not None else []
        outcome_id = None
        if record_outcome:
            touched = list(files_touched)
            fold = folds_case(ws.git.paths)
            outcome = _failure(
                index, blocked, agent, touched, released, now, reason, duration_seconds, fold
            )
            files.append(outcome_change(outcome))
            outcome_id = outcome.id
        settled = Settled(blocked, released, outcome_id)
        return MixedPlan(
            [blocked], blocked.id, blocked.title, settled, files, trailers=_worker(agent)
        )

    result: Settled = ws.write_mixed(plan, event="block").result
    return result


def _blocked(cell: Cell, reason: str, log: str | None, now: datetime) -> Cell:
    """``cell`` blocked: the reason and the log in its notes and its run info."""
    text = f"blocked: {reason}" + (f" (log: {log})" if log else "")
    return cell.model_copy(
        update={
            "status": "blocked",
            "updated_at": now,
            "notes": _note(cell, text, now),
            "metadata": _with_run_info(cell, state="blocked", reason=reason, log=log),
        }
    )


def _failure(
    index: CellIndex,
    blocked: Cell,
    agent: str,
    touched: list[str],
    released: list[Reservation],
    now: datetime,
    reason: str,
    duration_seconds: float | None,
    fold_case: bool,
) -> Outcome:
    """The failed outcome of a blocked subtask's worker, ``reason`` its summary."""
    return build_outcome(
        index,
        blocked,
        agent,
        touched,
        released,
        now,
        summary=reason,
        evaluation=None,
        error_count=1,
        retry_count=0,
        success=False,
        duration_seconds=duration_seconds,
        fold_case=fold_case,
    ).model_copy(update={"source": "swarm_run"})


def requeue_subtask(ws: Workspace, *, cell_id: str, agent: str, reason: str) -> Settled:
    """Put an interrupted subtask back to open (its earlier assignee, if any), releasing
    the agent's reservations; one commit. A cell closed, deleted or taken from the
    worker meanwhile is left alone."""

    def plan(snap: Snapshot, index: CellIndex) -> MixedPlan:
        cell = get_cell(index, cell_id, allow_deleted=True)
        if _not_the_workers(cell, agent):
            return MixedPlan([], cell.id, cell.title, Settled(cell, changed=False))
        now = utc_now()
        released, release = _release_all(ws, snap, agent)
        before = str(run_info(cell).get("assigned_before") or "") or None
        reopened = cell.model_copy(
            update={
                "status": "open",
                "assignee": before,
                "started_at": None,
                "updated_at": now,
                "notes": _note(cell, f"requeued: {reason}", now),
                "metadata": _with_run_info(cell, state="requeued", reason=reason),
            }
        )
        files = [release] if release is not None else []
        return MixedPlan(
            [reopened],
            reopened.id,
            reopened.title,
            Settled(reopened, released),
            files,
            trailers=_worker(agent),
        )

    result: Settled = ws.write_mixed(plan, event="requeue").result
    return result


def release_worker(ws: Workspace, *, cell_id: str, agent: str) -> list[Reservation]:
    """Release what the exited worker ``agent`` still holds and mark its subtask
    ``completed`` when it was closed without ``swarm_complete`` (one commit, the
    runner's, naming the worker); nothing is written when neither is needed. The
    commit is a ``release`` when it releases something, else a ``settle``: decided
    inside the transaction, on the state it saw."""

    def plan(snap: Snapshot, index: CellIndex) -> MixedPlan:
        released, release = _release_all(ws, snap, agent)
        cell = index.cells.get(cell_id)
        title = cell.title if cell is not None else ""
        marked = _marked_completed(cell)
        files = [release] if released and release is not None else []
        if not files and marked is None:
            return MixedPlan([], cell_id, title, [])
        cells = [marked] if marked is not None else []
        event = "release" if files else "settle"
        return MixedPlan(
            cells, cell_id, title, released, files, trailers=_worker(agent), event=event
        )

    result: list[Reservation] = ws.write_mixed(plan, event="settle").result
    return result


def _marked_completed(cell: Cell | None) -> Cell | None:
    """``cell``, closed while a runner's worker ran it (closed otherwise than by
    ``swarm_complete``, which says so itself: ``hive close``, by the worker or anyone),
    with its ``swarm_run.state`` ``completed``; None when there is nothing to say."""
    if cell is None or cell.is_deleted or not cell.is_closed:
        return None
    metadata = ran_to_completion(cell.metadata)
    if metadata is cell.metadata:
        return None
    return cell.model_copy(update={"metadata": metadata, "updated_at": utc_now()})


def _worker(agent: str) -> list[tuple[str, str]]:
    """The runner blocks or requeues a worker's subtask: the commit is the runner's
    (author and ``Hive-Agent``), and names the worker it settles (``Hive-Worker``)."""
    return [("Hive-Worker", agent)]


MAX_SCANNED_FILES = 5000


def uncommitted_in_scope(ws: Workspace, patterns: Sequence[str]) -> list[str]:
    """Files matching ``patterns`` whose working-tree content differs from HEAD (edited,
    added or deleted and not committed): what a failed worker left behind in a shared
    working tree. Looks at no more than MAX_SCANNED_FILES files."""
    from hive.domain.globs import glob_matches
    from hive.domain.reservecore import literal_prefix
    from hive.git.repo import blob_sha_of

    snap = ws.snapshot()
    found: set[str] = set()
    seen = 0
    for pattern in dict.fromkeys(patterns):
        prefix = literal_prefix(pattern)
        base = prefix.rsplit("/", 1)[0] if "/" in prefix else ""
        start = os.path.join(ws.root, base) if base else ws.root
        tracked = snap.listing(base) if base else {}
        candidates = set(path for path in tracked if glob_matches(pattern, path))
        if os.path.isfile(os.path.join(ws.root, pattern)):
            candidates.add(pattern)
        for directory, dirs, names in os.walk(start):
            dirs[:] = [d for d in dirs if d not in (".git", ".hive")]
            for name in names:
                relative = os.path.relpath(os.path.join(directory, name), ws.root)
                relative = relative.replace(os.sep, "/")
                if glob_matches(pattern, relative):
                    candidates.add(relative)
                seen += 1
            if seen > MAX_SCANNED_FILES:
                break
        for path in candidates:
            full = os.path.join(ws.root, path)
            try:
                with open(full, "rb") as handle:
                    current: str | None = blob_sha_of(handle.read())
            except OSError:
                current = None
            if current != snap.blob_sha(path):
                found.add(path)
    return sorted(found)


def _merge_hive_file(
    path: str, base: bytes | None, ours: bytes | None, theirs: bytes | None
) -> bytes | None:
    """A ``.hive/`` file both sides changed, merged field by field as git's merge driver
    does (a cell commented on the current branch and closed on the worker's keeps
    both); None for other files, and for a hive file no side of which parses."""
    from hive.domain.merge import is_mergeable_path, merge_file

    if not is_mergeable_path(path):
        return None
    merged = merge_file(path, base, ours, theirs)
    return merged.content if merged.clean else None


def merge_subtask(ws: Workspace, *, cell_id: str, branch: str, agent: str) -> MergeResult:
    """Merge ``branch`` into the current branch in one commit (the working tree and
    index follow, as for every hive write), the runner's (author and ``Hive-Agent``)
    naming the worker (``Hive-Worker``). ``.hive/`` files both sides changed are
    merged field by field. With other conflicts nothing is written and the result
    lists them."""
    ref = f"refs/heads/{branch}"

    def theirs() -> str | None:
        return ws.git.ref_value(ref)

    return _merge_in(ws, theirs, f"hive: merge {branch} ({cell_id})", cell_id, agent)


def refresh_kept_branch(ws: Workspace, *, cell_id: str, commit: str, agent: str) -> MergeResult:
    """Merge ``commit`` (the tip of the branch the run works on) into the branch of a
    kept worktree (``ws``: opened there) before the subtask resumes in it, so its worker
    finds its own earlier work, the current claim and what landed meanwhile. As
    :func:`merge_subtask`: one commit or, with conflicts, nothing written."""
    return _merge_in(
        ws, lambda: commit, f"hive: resume {cell_id} on its kept branch", cell_id, agent
    )


def _merge_in(
    ws: Workspace, theirs_of: Callable[[], str | None], subject: str, cell_id: str, agent: str
) -> MergeResult:
    """Merge the commit ``theirs_of`` names (read under the lock) into ``ws``'s branch."""

    def plan(snap: Snapshot) -> Plan:
        theirs = theirs_of()
        if theirs is None or snap.head.commit is None:
            raise Conflict(f"{subject}: a side has no commits to merge")
        merged = merge_commits(ws.git, snap.head.commit, theirs, resolve=_merge_hive_file)
        if merged.conflicts or merged.up_to_date:
            return Plan(changes=[], message="", result=merged)
        message = format_message(
            subject, [("Hive-Merge", cell_id), *ws.trailers("merge"), *_worker(agent)]
        )
        return Plan(changes=merged.changes, message=message, result=merged, extra_parents=[theirs])

    result: MergeResult = ws.git.transact(
        plan, author=ws.identity(), lock_timeout=ws.lock_timeout()
    ).result
    return result
