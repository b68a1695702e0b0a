"""The write path of a workspace: a plan run on the fresh state inside git's
compare-and-swap loop, its cells encoded and committed with other files in one
commit, and the commit message with its trailers."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hive import waits
from hive.domain.reading import StateReader, Written
from hive.errors import HiveError, InvalidInput, NotInitialized
from hive.git.repo import (
    Change,
    GitRepo,
    Identity,
    Plan,
    Snapshot,
    WriteResult,
    blob_sha_of,
    format_message,
)
from hive.models import Cell, HiveConfig
from hive.models.cell import without_control_chars
from hive.store.cache import CellIndex, node_of
from hive.store.cells import encode_cell, parsed_cell
from hive.store.index import ParsedCell
from hive.store.layout import cell_path


@dataclass
class MixedPlan:
    """What a write plan returns: cells, other file changes, and the commit subject."""

    cells: list[Cell]
    subject_id: str
    title: str
    result: Any = None
    files: list[Change] = field(default_factory=list)
    trailers: list[tuple[str, str]] = field(default_factory=list)  # e.g. Hive-Override
    body: str = ""  # between the subject and the trailers (swarm_complete: the summary)
    subject_is_cell: bool = True  # False: no Hive-Cell trailer for the subject (an agent's name)
    # cells made one at a time as they are written, instead of ``cells`` (an import of
    # thousands): each is encoded and its state index row stored as it comes, and only
    # its light facts are kept, never the list of models
    stream: Iterable[Cell] | None = None
    # the event this commit is (its subject and ``Hive-Event`` trailer), when the plan
    # decides it from the state it saw; None: the write's ``event``
    event: str | None = None


@dataclass
class Committer:
    """Who commits and how: the author, the lock's patience, staging or committing."""

    author: Identity
    lock_timeout: float
    stage_only: bool


def commit_message(
    event: str,
    subject_id: str,
    title: str,
    cell_ids: Sequence[str],
    trailers: Sequence[tuple[str, str]],
    body: str = "",
    subject_is_cell: bool = True,
) -> str:
    """``hive: EVENT ID TITLE``, the body, ``Hive-Cell`` trailers (the subject's when
    no cell is named and it is a cell) and ``trailers``."""
    named = cell_ids or ([subject_id] if subject_is_cell else [])
    found = [("Hive-Cell", cell_id) for cell_id in dict.fromkeys(named)]
    found += trailers
    subject = without_control_chars(f"hive: {event} {subject_id} {title}")
    text = "\n".join(without_control_chars(line) for line in body.splitlines())
    return format_message(subject, found, text)


DEFAULT_LOCK_TIMEOUT = waits.DEFAULT_WAIT  # seconds, where no config says otherwise


def lock_timeout(config: Callable[[], HiveConfig], *, config_optional: bool = False) -> float:
    """Seconds to wait for the write lock: ``HIVE_LOCK_TIMEOUT``, else the config's.
    ``config_optional``: the default where the config cannot be read (for a command
    that needs nothing else from it; a bad ``HIVE_LOCK_TIMEOUT`` is still refused)."""
    env = os.environ.get("HIVE_LOCK_TIMEOUT", "")
    if env.strip():  # set and not blank (blank: as if unset)
        seconds = waits.wait_of(env)
        if seconds is None:
            raise InvalidInput(waits.wait_refused("HIVE_LOCK_TIMEOUT", env))
        return seconds
    try:
        return waits.lock_wait(config().lock_timeout_seconds)
    except NotInitialized:
        return DEFAULT_LOCK_TIMEOUT
    except HiveError:
        if config_optional:
            return DEFAULT_LOCK_TIMEOUT
        raise


def _encode(cell: Cell) -> Written:
    content = encode_cell(cell)
    return cell_path(cell.id), blob_sha_of(content), cell, content


STREAM_BATCH = 500  # parsed rows stored at a time by a streamed write


def _encode_stream(
    reader: StateReader, cells: Iterable[Cell]
) -> tuple[dict[str, Written], list[Change]]:
    """Each cell encoded as it comes, its parsed row stored in the state index in
    batches (rows are keyed by blob id: harmless if the write does not land), and only
    its light facts kept for :meth:`StateReader.remember_write`."""
    written: dict[str, Written] = {}
    changes: list[Change] = []
    rows: list[tuple[str, ParsedCell]] = []
    for cell in cells:
        path, sha, _, content = _encode(cell)
        written[cell.id] = (path, sha, node_of(cell), None)
        changes.append(Change(path, content))
        rows.append((sha, parsed_cell(cell)))
        if len(rows) >= STREAM_BATCH:
            reader.remember_parsed(rows)
            rows = []
    reader.remember_parsed(rows)
    return written, changes


def write_cells(
    reader: StateReader,
    plan: Callable[[Snapshot, CellIndex], MixedPlan],
    *,
    event: str,
    trailers: Callable[[str], Sequence[tuple[str, str]]],
    by: Committer,
) -> WriteResult:
    """Run ``plan`` on the fresh state (re-read on every retry) and store the cells and
    files it returns in one commit; ``trailers(event)`` name the actor and the event
    (``event``, or the plan's own: decided on the state the transaction saw)."""
    last: dict[str, Any] = {}

    def git_plan(snap: Snapshot) -> Plan:
        index = reader.cells(snap)
        wanted = plan(snap, index)
        if wanted.stream is None:
            written = {cell.id: _encode(cell) for cell in wanted.cells}
            changes = [Change(path, content) for path, _, _, content in written.values()]
            cell_ids = [c.id for c in wanted.cells]
        else:
            written, changes = _encode_stream(reader, wanted.stream)
            cell_ids = list(written)
        last.update(base=index, written=written)
        changes += wanted.files
        named = wanted.event or event
        extra = [*trailers(named), *wanted.trailers]
        message = commit_message(
            named,
            wanted.subject_id,
            wanted.title,
            cell_ids,
            extra,
            wanted.body,
            subject_is_cell=wanted.subject_is_cell,
        )
        return Plan(changes=changes, message=message, result=wanted.result)

    outcome = write_files(reader.git, git_plan, by=by)
    if outcome.commit and outcome.tree and last.get("written"):
        reader.remember_write(outcome.commit, outcome.tree, last["base"], last["written"])
    return outcome


def write_files(git: GitRepo, plan: Callable[[Snapshot], Plan], *, by: Committer) -> WriteResult:
    """Commit (or stage) the changes ``plan`` makes to the fresh state."""
    return git.transact(
        plan, author=by.author, lock_timeout=by.lock_timeout, stage_only=by.stage_only
    )
