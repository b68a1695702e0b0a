"""``swarm_complete``: close the cell, release the agent's reservations, record the
outcome and (optionally) commit the agent's touched files, all in one commit.

Everything that can fail is checked before anything is written: the cell
(exists, open, not someone else's), the touched paths (inside the repository,
regular files), the evaluation and the verification gate. The write itself is
one transaction (lock + compare-and-swap, re-planned on a moved HEAD), so the
repository either has all of it or none of it.
"""

from __future__ import annotations

import json
import os
import shlex
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from hive.domain.cells import get_cell
from hive.domain.globs import path_matches
from hive.domain.graph import open_blockers
from hive.domain.limits import check_text
from hive.domain.outcomes import new_outcome_id, outcome_change
from hive.domain.ownership import OwnerGuard, check_owner, record_overrides
from hive.domain.process import run_killable
from hive.domain.reservations import (
    conflict_detail,
    files_held_by_others,
    held_message,
    load_all,
    problems_error,
    release_change,
)
from hive.domain.reservecore import GLOB_CHARS, folds_case
from hive.domain.swarm.verify import verify_settings
from hive.domain.workspace import MixedPlan, Workspace
from hive.errors import (
    BlockedByDependency,
    Conflict,
    CorruptFile,
    GateFailed,
    InvalidInput,
    NotFound,
    NotYourIdentity,
    PathOutsideRepository,
    ReservationConflict,
)
from hive.git.ignores import ignored_untracked
from hive.git.repo import Change, Snapshot
from hive.models import Cell, utc_now
from hive.models.outcome import Outcome
from hive.models.reservation import Reservation
from hive.models.swarm import CompleteResult, GateRun
from hive.store.cache import CellIndex
from hive.store.cells import decode_cell
from hive.store.layout import cell_path, in_git_dir, is_hive_dir

MAX_TOUCHED_FILES = 1000
MAX_FILE_BYTES = 50 * 1024 * 1024
GATE_OUTPUT_LIMIT = 20_000
EXECUTABLE = 0o100755
REGULAR = 0o100644


@dataclass(frozen=True)
class _Completion:
    """What ``swarm_complete`` checked and read before taking the write lock."""

    agent: str
    cell: Cell
    summary: str
    evaluation: dict[str, Any] | None
    error_count: int
    retry_count: int
    touched: list[str]
    file_changes: list[Change]
    own_files: list[str]  # what the agent's own commits for the cell changed
    gate: list[GateRun]
    gate_state: str
    force: bool
    reason: str | None


def swarm_complete(
    ws: Workspace,
    *,
    cell_id: str,
    summary: str,
    project_key: str | None = None,
    files_touched: Sequence[str] | None = None,
    evaluation: str | dict[str, Any] | None = None,
    error_count: int = 0,
    retry_count: int = 0,
    run_gate: bool = True,
    agent_name: str | None = None,
    force: bool = False,
    reason: str | None = None,
) -> CompleteResult:
    """Finish ``cell_id`` as the acting agent: one commit, or nothing at all.

    ``agent_name``, when given, must be the acting identity (``not_your_identity``
    otherwise). A claimed cell is completed by its assignee; a coordinator or a
    person may complete someone else's with ``force`` and a ``reason`` (recorded).
    ``evaluation`` is the agent's self-evaluation: an object like ``{"passed":
    true, "notes": "..."}``, a string holding such JSON, or plain text (kept as
    notes; it cannot fail the completion). ``passed: false`` changes nothing.
    """
    agent = acting_as(ws, agent_name, "completing a cell")
    check_project(ws, project_key)
    summary = _check_summary(summary)
    if error_count < 0 or retry_count < 0:
        raise InvalidInput("error_count and retry_count must be >= 0")
    checked = check_evaluation(evaluation)
    touched = normalize_touched(ws.root, files_touched or [])
    refuse_ignored(ws.root, touched)
    cell = _completable_cell(ws, cell_id, force=force, reason=reason)
    gate = run_verification(ws, touched) if run_gate else []
    completion = _Completion(
        agent=agent,
        cell=cell,
        summary=summary,
        evaluation=checked,
        error_count=error_count,
        retry_count=retry_count,
        touched=touched,
        file_changes=_touched_changes(ws, touched),
        # the agent's own commits for the cell, read before the write lock is taken
        own_files=own_commit_files(ws, ws.git.head().commit, cell),
        gate=gate,
        gate_state="skipped" if not run_gate else ("passed" if gate else "none"),
        force=force,
        reason=reason,
    )
    return _write_completion(ws, completion)


def _completable_cell(ws: Workspace, cell_id: str, *, force: bool, reason: str | None) -> Cell:
    """The cell to complete, refused when it is not open work the caller may finish."""
    cell = get_cell(ws.cells(), cell_id)
    _check_completable(cell)
    check_owner(
        ws, owner=cell.assignee, action="complete", target=cell.id, force=force, reason=reason
    )
    return cell


def _touched_changes(ws: Workspace, touched: list[str]) -> list[Change]:
    """The changes committing the working-tree state of the ``touched`` files."""
    kept = kept_modes(ws, touched)
    return [touched_change(ws.root, path, kept_mode=kept.get(path)) for path in touched]


def _write_completion(ws: Workspace, completion: _Completion) -> CompleteResult:
    """The completion's one commit (re-planned on a moved HEAD), overrides recorded."""
    guards: list[OwnerGuard] = []

    def plan(snap: Snapshot, index: CellIndex) -> MixedPlan:
        guard = OwnerGuard(ws, snap, force=completion.force, reason=completion.reason)
        guards[:] = [guard]
        return _completion_plan(ws, completion, snap, index, guard)

    written = ws.write_mixed(plan, event="complete")
    if guards and guards[0].overrides:
        record_overrides(ws, guards[0].overrides, written.commit)
    completed: CompleteResult = written.result
    return completed.model_copy(update={"commit": written.commit})


def _completion_plan(
    ws: Workspace, completion: _Completion, snap: Snapshot, index: CellIndex, guard: OwnerGuard
) -> MixedPlan:
    """The commit closing the cell at ``snap``: cell, outcome, files, reservations."""
    current = _cell_to_close(ws, completion, snap, index, guard)
    now = utc_now()
    _refuse_reserved(ws, snap, completion.agent, completion.touched, guard, now)
    # Completing someone else's cell (an override) releases what its assignee
    # reserved for it, not the caller's own reservations.
    agent = completion.agent
    worker = current.assignee if current.assignee and current.assignee != agent else agent
    released, kept = _reservations_to_release(
        ws, snap, worker, current.id, now, only_this_cell=worker != agent
    )
    closed = _closed(current, completion.summary, now)
    fold = folds_case(ws.git.paths)
    outcome = _completion_outcome(index, completion, closed, released + kept, now, fold)
    files = [outcome_change(outcome), *completion.file_changes]
    if released:
        files.append(release_change(worker, kept, ws))
    result = CompleteResult(
        cell=closed,
        commit=None,
        released=released,
        outcome=outcome,
        files_committed=completion.touched,
        gate=completion.gate,
        gate_skipped=GATE_SKIPPED if completion.gate_state == "skipped" else None,
    )
    return MixedPlan(
        cells=[closed],
        subject_id=closed.id,
        title=closed.title,
        result=result,
        files=files,
        trailers=guard.trailers(),
        body=commit_body(completion.summary, completion.touched),
    )


def _cell_to_close(
    ws: Workspace, completion: _Completion, snap: Snapshot, index: CellIndex, guard: OwnerGuard
) -> Cell:
    """The cell as it is at ``snap``, checked again under the lock: still open, the
    caller's to finish, no open blocker, every touched deletion a file HEAD has."""
    current = get_cell(index, completion.cell.id)
    _check_completable(current)
    guard.check(owner=current.assignee, action="complete", target=current.id)
    blockers = open_blockers(current, index)
    if blockers:
        raise BlockedByDependency(
            f"{current.id} is blocked by open {', '.join(blockers)}; they must close first",
            id=current.id,
            blockers=blockers,
        )
    _refuse_unknown_deletions(snap, completion.file_changes)
    return current


def _completion_outcome(
    index: CellIndex,
    completion: _Completion,
    closed: Cell,
    reservations: list[Reservation],
    now: datetime,
    fold_case: bool,
) -> Outcome:
    """The outcome record of the completion: the touched files and the agent's own
    (``fold_case``: this clone compares files with reservations case folded)."""
    return build_outcome(
        index,
        closed,
        completion.agent,
        list(dict.fromkeys([*completion.own_files, *completion.touched])),
        reservations,
        now,
        summary=completion.summary,
        evaluation=completion.evaluation,
        error_count=completion.error_count,
        retry_count=completion.retry_count,
        gate=completion.gate_state,
        fold_case=fold_case,
    )


MAX_BODY = 4000
OWN_COMMITS_LIMIT = 1000  # commits read at most looking for the agent's own
CLAIM_EVENTS = ("start", "update", "progress")  # hive writes that set a cell's started_at


def own_commit_files(ws: Workspace, head: str | None, cell: Cell) -> list[str]:
    """The files the agent's own commits for ``cell`` changed (commits carrying its
    ``Hive-Cell`` trailer, as ``hive review`` shows them), hive's own files left out.
    History is read from ``head`` back to the commit that claimed the cell (a branch
    merged in: back to the claim's time), at most OWN_COMMITS_LIMIT commits: never
    the whole history."""
    since = int((cell.started_at or cell.created_at).timestamp())  # commit times: seconds
    pending = [head] if head else []
    seen = set(pending)
    found: list[str] = []
    while pending and len(seen) <= OWN_COMMITS_LIMIT:
        info = ws.git.commit_info(pending.pop())
        trailers = info.trailers()
        if cell.id in trailers.get("Hive-Cell", []):
            if trailers.get("Hive-Event", [""])[0] in CLAIM_EVENTS and (
                info.time <= since or _sets_started_at(ws, info.sha, info.parents, cell)
            ):
                continue  # the claim: the agent's work for the cell came after it
            found += _files_outside_hive(ws, info.sha)
        if info.time < since:
            continue  # older than the claim (a branch that was merged in)
        for parent in info.parents:
            if parent not in seen:
                seen.add(parent)
                pending.append(parent)
    return sorted(set(found))


def _sets_started_at(ws: Workspace, sha: str, parents: Sequence[str], cell: Cell) -> bool:
    """Commit ``sha`` is the claim though its second is later than ``started_at``'s (the
    claim was stamped in one second and committed in the next: a loaded machine): it
    set the cell's ``started_at`` to the value it has now. Else its parents, older
    than the claim, would be read too (an earlier commit's files taken for the
    agent's)."""
    if cell.started_at is None:
        return False
    mine = _started_at(ws, sha, cell.id)
    return mine == cell.started_at and (not parents or _started_at(ws, parents[0], cell.id) != mine)


def _started_at(ws: Workspace, commit: str, cell_id: str) -> datetime | None:
    """The ``started_at`` of cell ``cell_id`` as commit ``commit`` holds it (None: not
    there, not started, or a file that does not read)."""
    path = cell_path(cell_id)
    blob = ws.git.lookup_path(ws.git.commit_tree(commit), path)
    if blob is None:
        return None
    try:
        return decode_cell(ws.git.read_blob(blob), path).started_at
    except CorruptFile:
        return None


_TREE_MODE = 0o40000


def _files_outside_hive(ws: Workspace, sha: str) -> list[str]:
    """The files outside ``.hive/`` commit ``sha`` changed against its first parent.
    One whose root tree differs from its parent's in the ``.hive`` directory only (a
    hive write: the claim too, when its commit's second is later than the claim's
    ``started_at``) changed none: told from the two root trees by hive's own readers,
    without the diff (dulwich's, imported for it: a forked swarm worker did so only
    when the claim straddled a second)."""
    parents = ws.git.parents_of(sha)
    if parents:
        new, old = (ws.git.tree_items(ws.git.commit_tree(commit)) for commit in (sha, parents[0]))
        changed = {name for name in new.keys() | old.keys() if new.get(name) != old.get(name)}
        hive = [side[b".hive"][0] for side in (new, old) if b".hive" in side]
        if changed <= {b".hive"} and all(mode == _TREE_MODE for mode in hive):
            return []
    return [path for path in ws.git.changed_paths(sha) if not path.startswith(".hive/")]


def commit_body(summary: str, touched: Sequence[str]) -> str:
    """The summary (and the files committed) for the commit message body; a long
    summary is cut there (the outcome record keeps it whole)."""
    text = summary.strip()
    if len(text) > MAX_BODY:
        text = text[:MAX_BODY].rstrip() + "\n[summary cut; the whole of it is in the outcome]"
    if touched:
        text += "\n\nFiles: " + ", ".join(touched[:50]) + (" ..." if len(touched) > 50 else "")
    return text


# ------------------------------------------------------------------ checks


def check_project(ws: Workspace, project_key: str | None) -> None:
    """A project key must be this repository (or a directory inside it)."""
    check_project_path(ws.root, project_key, field="project_key")


def check_project_path(root: str, given: str | None, *, field: str) -> None:
    """``given`` (``project_path``, ``project_key``), when given, must be the repository
    at ``root`` or a directory inside it: a path that does not exist, or lies elsewhere,
    is an error naming ``field`` (one rule for every tool that takes one)."""
    if not given:
        return
    if "\0" in given:  # no path holds one (realpath would raise ValueError)
        raise InvalidInput(f"{field} {given!r} holds a NUL character: not a path", field=field)
    path = os.path.join(root, os.path.expanduser(given))
    if not os.path.isdir(path):
        raise InvalidInput(
            f"{field} {given!r} does not exist; give this repository's path ({root})",
            field=field,
        )
    real, real_root = os.path.realpath(path), os.path.realpath(root)
    if real != real_root and not real.startswith(real_root + os.sep):
        raise InvalidInput(
            f"{field} {given!r} is not this repository ({root}); give its path, or start"
            " the tool server in that project instead",
            field=field,
        )


def _check_summary(summary: str) -> str:
    cleaned = (summary or "").strip()
    if not cleaned:
        raise InvalidInput("summary must not be empty: say what was done")
    if len(cleaned) > 20_000:
        raise InvalidInput(f"summary is too long ({len(cleaned)} > 20000 characters)")
    return check_text(cleaned, "summary")


def check_evaluation(evaluation: str | dict[str, Any] | None) -> dict[str, Any] | None:
    """The self-evaluation as an object; raise GateFailed when it says ``passed: false``.

    A string is parsed when it is a JSON object; any other text is kept as
    ``{"notes": text}`` (whether it passed is then unknown, so it does not block).
    """
    parsed = _evaluation_object(evaluation)
    if parsed is not None and parsed.get("passed") is False:
        raise GateFailed(
            "the evaluation did not pass; nothing was changed",
            evaluation=parsed,
        )
    return parsed


def _evaluation_object(evaluation: str | dict[str, Any] | None) -> dict[str, Any] | None:
    if evaluation is None or isinstance(evaluation, dict):
        return evaluation
    if not isinstance(evaluation, str):
        raise InvalidInput("evaluation must be text or an object like {'passed': true, ...}")
    text = evaluation.strip()
    if not text:
        return None
    if len(text) > 20_000:
        raise InvalidInput(f"evaluation is too long ({len(text)} > 20000 characters)")
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return {"notes": text}
    return value if isinstance(value, dict) else {"notes": text}


def acting_as(ws: Workspace, agent_name: str | None, action: str) -> str:
    """The acting agent; ``agent_name`` (a field naming the caller) must be it."""
    agent = ws.require_agent(action)
    if agent_name is not None and agent_name.strip() and agent_name.strip() != agent:
        raise NotYourIdentity(
            f"agent_name {agent_name!r} is not you: this session is {agent}; nothing was changed",
            agent_name=agent_name,
            agent=agent,
        )
    return agent


def _check_completable(cell: Cell) -> None:
    if cell.is_deleted:
        raise NotFound(f"{cell.id} is deleted", id=cell.id)
    if cell.is_closed:
        raise Conflict(f"{cell.id} is already closed", id=cell.id)
    if cell.type == "epic":
        raise InvalidInput(f"{cell.id} is an epic; complete its subtasks instead", id=cell.id)


def _refuse_reserved(
    ws: Workspace,
    snap: Snapshot,
    agent: str,
    touched: list[str],
    guard: OwnerGuard,
    now: datetime,
) -> None:
    """The touched files hive is to commit may not be under another agent's exclusive
    reservation (the pre-commit hook's rule for a ``git commit``); with ``force`` a
    coordinator or a person commits them anyway, recorded as an override."""
    if not touched:
        return
    held = files_held_by_others(ws, snap, agent, touched, now)
    if held.problems:
        raise problems_error(held.problems)
    if not held.blocked:
        return
    if guard.force:
        for _, item in held.blocked:
            guard.check(
                owner=item.agent,
                action="commit the files reserved",
                target=f"#{item.id} {item.path_pattern}",
                what="held by",
            )
        return
    parts = [held_message(path, item) for path, item in held.blocked]
    raise ReservationConflict(
        "; ".join(parts) + f": {agent} may not commit it, so nothing was changed. Leave it out"
        " of files_touched, or ask its holder to release it (swarmmail_send) and complete again",
        field="files_touched",
        conflicts=[
            conflict_detail(path, item).model_dump(mode="json") for path, item in held.blocked
        ],
    )


# ------------------------------------------------------------------ touched files


def normalize_touched(root: str, paths: Sequence[str]) -> list[str]:
    """Repository-relative, normalised, de-duplicated paths that stay inside ``root``."""
    if len(paths) > MAX_TOUCHED_FILES:
        raise InvalidInput(f"too many files_touched ({len(paths)} > {MAX_TOUCHED_FILES})")
    real_root = os.path.realpath(root)
    found: list[str] = []
    for raw in paths:
        relative = _relative_path(root, real_root, raw)
        if relative not in found:
            found.append(relative)
    return found


def _relative_path(root: str, real_root: str, raw: str) -> str:
    if not isinstance(raw, str) or not raw.strip() or "\0" in raw:
        raise InvalidInput(f"invalid path {raw!r} in files_touched")
    candidate = raw.strip()
    full = candidate if os.path.isabs(candidate) else os.path.join(root, candidate)
    normal = os.path.normpath(full)
    if normal != os.path.normpath(root) and not normal.startswith(os.path.normpath(root) + os.sep):
        raise PathOutsideRepository(f"{raw!r} is outside the repository")
    relative = os.path.relpath(normal, root).replace(os.sep, "/")
    if _is_private(relative):
        raise InvalidInput(f"{raw!r} is not a source file hive can commit for you")
    real = os.path.realpath(normal)
    if real != real_root and not real.startswith(real_root + os.sep):
        raise PathOutsideRepository(f"{raw!r} resolves (through a symlink) outside the repository")
    if _is_private(os.path.relpath(real, real_root).replace(os.sep, "/")):
        raise InvalidInput(f"{raw!r} resolves (through a symlink) to .git, .hive or the root")
    _refuse_symlinked_parent(real_root, relative, raw)
    return relative


def refuse_ignored(root: str, touched: Sequence[str]) -> None:
    """A touched file git ignores and does not track (a ``.env``, a build output) is
    refused, as ``git add`` refuses it: listed by mistake, it would put a secret or
    scratch file into history. A deleted one is left to the deletion check."""
    present = [path for path in touched if os.path.lexists(os.path.join(root, path))]
    ignored = ignored_untracked(root, present)
    if ignored:
        named = "; ".join(f"{path} is ignored by git ({rule})" for path, rule in ignored.items())
        raise InvalidInput(
            f"{named}, so nothing was changed: leave it out of files_touched, or, if it"
            f" belongs in the repository, run 'git add -f {next(iter(ignored))}' and complete"
            " again",
            field="files_touched",
        )


def _is_private(relative: str) -> bool:
    """Paths hive must never commit as agent work: git's own files and hive's records."""
    return relative == "." or is_hive_dir(relative.split("/")[0]) or in_git_dir(relative)


def _refuse_symlinked_parent(real_root: str, relative: str, raw: str) -> None:
    """A path whose directory is reached through a symlink would alias another file."""
    directory = os.path.dirname(relative)
    if not directory:
        return
    expected = os.path.join(real_root, *directory.split("/"))
    if os.path.realpath(expected) != expected:
        raise InvalidInput(
            f"{raw!r} goes through a symlinked directory; use the real path or commit with git"
        )


def kept_modes(ws: Workspace, paths: Sequence[str]) -> dict[str, int]:
    """The modes ``paths`` keep whatever the executable bit on disk says: with
    ``core.filemode=false`` git ignores that bit (a file system without it, a checkout
    shared with Windows), so a file keeps its index entry's mode, and a new file is
    100644, as ``git add`` does. Empty when git trusts the bit."""
    from hive.git.index import read_entries

    value = ws.git.config_value("core", "filemode")
    if value is None or value.strip().lower() not in ("false", "no", "off", "0"):
        return {}
    kept: dict[str, int] = {}
    for path in paths:
        entry = read_entries(ws.git.paths.index_path, path).get(path)
        kept[path] = entry.mode if entry is not None and entry.mode == EXECUTABLE else REGULAR
    return kept


def touched_change(root: str, path: str, *, kept_mode: int | None = None) -> Change:
    """The change that commits the current working-tree state of ``path`` (its mode:
    ``kept_mode``, else the executable bit on disk)."""
    full = os.path.join(root, path)
    if os.path.islink(full):
        raise InvalidInput(f"{path} is a symlink; commit symlinks with git")
    if not os.path.lexists(full):
        return Change(path, None)  # deleted: checked against HEAD when the plan runs
    if os.path.isdir(full):
        raise InvalidInput(
            f"{path} is a directory: files_touched takes the files you changed in it",
            field="files_touched",
        )
    if not os.path.isfile(full):
        raise InvalidInput(f"{path} is not a regular file", field="files_touched")
    info = os.stat(full)
    if info.st_size > MAX_FILE_BYTES:
        raise InvalidInput(f"{path} is larger than {MAX_FILE_BYTES // (1024 * 1024)} MB")
    with open(full, "rb") as handle:
        content = handle.read()
    mode = kept_mode or (EXECUTABLE if info.st_mode & 0o111 else REGULAR)
    return Change(path, content, mode=mode, from_worktree=True)


def _refuse_unknown_deletions(snap: Snapshot, changes: list[Change]) -> None:
    """A touched path missing from the worktree must at least exist in HEAD (a deletion)."""
    for change in changes:
        if change.content is None and snap.blob_sha(change.path) is None:
            step = "check the path"
            if GLOB_CHARS.search(change.path):
                step = "files_touched takes the paths of files, not patterns"
            raise InvalidInput(
                f"{change.path} exists neither in the working tree nor in HEAD; {step}",
                field="files_touched",
            )


# ------------------------------------------------------------------ the gate

GATE_SKIPPED = (
    "the verify gate was skipped by gate: false (--no-gate on the command line): the"
    " commands of verify.commands in .hive/config.yaml did not run (recorded in the"
    " outcome as gate: skipped)"
)


def run_verification(ws: Workspace, touched: list[str]) -> list[GateRun]:
    """Run the commands of ``verify`` in .hive/config.yaml; raise GateFailed on failure."""
    settings = verify_settings(ws)
    timeout = settings.timeout_seconds
    runs: list[GateRun] = []
    for template in settings.commands:
        run = _run_command(ws.root, _expand(str(template), touched), timeout)
        runs.append(run)
        if run.exit_code != 0:
            reason = "timed out" if run.exit_code is None else f"exited {run.exit_code}"
            raise GateFailed(
                f"verification gate failed: {run.command!r} {reason}; nothing was changed",
                gate=[r.model_dump() for r in runs],
            )
    return runs


def _expand(template: str, touched: list[str]) -> str:
    """``template`` with ``{files}``: the touched files, each one word, and one starting
    with ``-`` as ``./-name`` (a file named ``--exit-zero`` is not the gate's option)."""
    files = " ".join(shlex.quote(f"./{path}" if path.startswith("-") else path) for path in touched)
    return template.replace("{files}", files)


def _run_command(root: str, command: str, timeout: float) -> GateRun:
    started = time.monotonic()
    run = run_killable(command, cwd=root, timeout=timeout, merge_stderr=True)
    text = run.stdout.decode("utf-8", errors="replace")[-GATE_OUTPUT_LIMIT:]
    return GateRun(
        command=command, exit_code=run.exit_code, output=text, seconds=time.monotonic() - started
    )


# ------------------------------------------------------------------ the record


def _reservations_to_release(
    ws: Workspace,
    snap: Snapshot,
    agent: str,
    cell_id: str,
    now: datetime,
    *,
    only_this_cell: bool = False,
) -> tuple[list[Reservation], list[Reservation]]:
    """(released, kept): everything of the agent's except reservations for other cells
    (``only_this_cell``: only those made for ``cell_id``, when someone else completes
    the agent's cell and the agent may still be using the rest)."""
    mine = load_all(ws, snap).get(agent)
    if mine is None:
        return [], []
    active = [r for r in mine.reservations if r.active(now)]
    wanted = (cell_id,) if only_this_cell else (None, cell_id)
    released = [r for r in active if r.cell in wanted]
    kept = [r for r in active if r not in released]
    if not released and len(active) != len(mine.reservations):
        return [], kept  # only expired ones: nothing to release, leave the file alone
    return released, kept


def _closed(cell: Cell, summary: str, now: datetime) -> Cell:
    notes = (cell.notes.rstrip("\n") + "\n" if cell.notes else "") + f"Completed: {summary}"
    return cell.model_copy(
        update={
            "status": "closed",
            "closed_at": now,
            "updated_at": now,
            "close_reason": summary.splitlines()[0][:500],
            "notes": notes,
            "metadata": ran_to_completion(cell.metadata),
        }
    )


RUN_INFO = "swarm_run"  # what hive swarm run records on a subtask it dispatched


def ran_to_completion(metadata: dict[str, Any]) -> dict[str, Any]:
    """``metadata`` of a subtask being closed, its ``swarm_run.state`` ``completed``
    where a runner's worker was running it (``running``), in the commit that closes it:
    a closed subtask said ``running`` ever after. Other states (``blocked``,
    ``requeued``) and other metadata are left as they are."""
    info = metadata.get(RUN_INFO)
    if not isinstance(info, dict) or info.get("state") != "running":
        return metadata
    return {**metadata, RUN_INFO: {**info, "state": "completed"}}


def build_outcome(
    index: CellIndex,
    cell: Cell,
    agent: str,
    touched: list[str],
    reservations: list[Reservation],
    now: datetime,
    *,
    summary: str,
    evaluation: dict[str, Any] | None,
    error_count: int,
    retry_count: int,
    success: bool = True,
    duration_seconds: float | None = None,
    strategy: str | None = None,
    gate: str | None = None,
    fold_case: bool,
) -> Outcome:
    """The outcome of ``cell``'s work; ``fold_case``: the clone's file system ignores
    case (``reservecore.folds_case``), so touched files match scope case folded."""
    started = cell.started_at or cell.created_at
    epic = index.cells.get(cell.parent) if cell.parent else None
    return Outcome(
        id=new_outcome_id(cell.id),
        cell_id=cell.id,
        epic_id=epic.id if epic else None,
        epic_title=epic.title if epic else None,
        agent=agent,
        title=cell.title,
        strategy=strategy or epic_strategy(epic),
        success=success,
        duration_seconds=duration_seconds
        if duration_seconds is not None
        else max(0.0, (now - started).total_seconds()),
        error_count=error_count,
        retry_count=retry_count,
        files_planned=list(cell.files_owned),
        files_touched=touched,
        files_reserved=list(dict.fromkeys(r.path_pattern for r in reservations)),
        scope_violations=scope_violations(touched, cell.files_owned, reservations, fold_case),
        summary=summary,
        evaluation=evaluation,
        gate=gate,
        source="swarm_complete",
        recorded_at=now,
    )


def epic_strategy(epic: Cell | None) -> str | None:
    value = epic.metadata.get("strategy") if epic is not None else None
    return str(value) if value else None


def scope_violations(
    touched: list[str], owned: list[str], reservations: list[Reservation], fold_case: bool
) -> list[str]:
    """Touched files matching neither the cell's files_owned nor the agent's reservations
    (case folded with ``fold_case``, as the pre-commit hook compares them there).

    A cell with no files_owned and an agent with no reservations has no declared
    scope, so nothing can violate it.
    """
    patterns = [*owned, *(r.path_pattern for r in reservations)]
    if not patterns:
        return []
    return [path for path in touched if not any(path_matches(p, path, fold_case) for p in patterns)]
