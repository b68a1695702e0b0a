"""Field-level three-way merge of ``.hive/`` files.

git calls this as a merge driver (``hive init`` installs it, see
:mod:`hive.cli.merge_driver`) when both sides of a ``git merge``, ``git pull``,
``git rebase`` or ``git cherry-pick`` changed the same cell file, and
``hive sync`` uses it for every file both clones changed. The result is always
a file hive reads: never conflict markers.

Rules for a cell (``base``, ``ours``, ``theirs``; ``base`` is missing when both
sides created the file):

* a field only one side changed takes that side's value;
* **status**: closed beats open (a side that closed the cell wins over a side
  that edited its status otherwise, with its ``closed_at`` and ``close_reason``);
* **scalar fields** both sides changed: the side with the later ``updated_at``
  wins (equal times: the larger encoded cell, so both clones decide alike).
  For prose and ownership (title, description, design, acceptance criteria,
  assignee) the losing value is kept in the cell's ``conflicts`` list, shown
  by ``hive show`` and reported by ``hive doctor`` until ``hive resolve``;
* **notes** from both sides are kept (both appended texts, earlier side first);
  **comments** from both sides are kept (by id, oldest first);
* **labels, dependencies, owned files** merge as sets where removals win: an
  item is kept if both sides have it or one side added it;
* **deletions** are tombstones (``deleted_at``): a delete wins over an edit,
  unless the edit was made more than :data:`TOMBSTONE_TTL` after the delete
  (a clone that never saw the tombstone revives the cell);
* ``created_at`` is the earlier, ``updated_at`` the later of both sides;
* ``metadata`` merges key by key with the same scalar rule.

The merge is commutative (swapping ``ours`` and ``theirs`` gives the same
bytes) and always yields a valid cell. A side whose file does not parse is
not merged: the other side is kept and the broken text is recorded as a
conflict of field ``file``. Only when no side parses is the merge unclean.

Reservation files merge entry by entry (a set keyed by id, pattern and grant
time, removals win; a renewal keeps the later expiry).

The project context (``.hive/context.yaml``, an append-only log of goals,
decisions, milestones and banned approaches) merges section by section:
entries of both sides are kept once each (removals win), a milestone completed
on either side is completed, and ``stack``/``project`` merge key by key (a key
both sides set differently takes the larger value, so both clones agree).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from hive.domain.mergecore import (
    CONFIG_PATH,
    CONFLICT_FIELDS,
    CONTEXT_PATH,
    HISTORY_LIMIT,
    SCALAR_FIELDS,
    TOMBSTONE_TTL,
    history_base,
    is_cell_path,
    is_mergeable_path,
    is_reservation_path,
    merge_fields,
    order,
    settled,
)
from hive.domain.mergefiles import (
    CONFIG_CONFLICT,
    CONTEXT_SECTIONS,
    merge_config,
    merge_context,
    merge_reservations,
)
from hive.errors import CorruptFile
from hive.models import Cell, MergeConflict
from hive.store.cells import decode_cell, encode_cell

if TYPE_CHECKING:
    from hive.git.repo import GitRepo
    from hive.models.reservation import Reservation

__all__ = [
    "CONFIG_CONFLICT",
    "CONFLICT_FIELDS",
    "HISTORY_LIMIT",
    "SCALAR_FIELDS",
    "TOMBSTONE_TTL",
    "MergeOutcome",
    "is_mergeable_path",
    "merge_cells",
    "merge_file",
    "merge_in_repository",
]

MAX_KEPT_TEXT = 64 * 1024  # a broken side's text kept in a conflict record


@dataclass
class MergeOutcome:
    """The merged file. ``clean`` is False only when nothing valid could be built
    (``content`` is then ``ours`` unchanged); ``conflicts`` are the records this
    merge added (values the rules did not keep)."""

    content: bytes
    clean: bool = True
    conflicts: list[MergeConflict] = field(default_factory=list)
    message: str = ""


def merge_file(
    path: str, base: bytes | None, ours: bytes | None, theirs: bytes | None
) -> MergeOutcome:
    """Merge one ``.hive/`` file; a side that is ``None`` does not have the file."""
    done = settled(base, ours, theirs)
    if done is not None:
        return MergeOutcome(content=done)
    assert ours is not None and theirs is not None  # settled otherwise
    if is_cell_path(path):
        return merge_cell_files(path, base, ours, theirs)
    if is_reservation_path(path):
        return merge_reservation_files(path, base, ours, theirs)
    if path == CONTEXT_PATH:
        return merge_context_files(path, base, ours, theirs)
    if path == CONFIG_PATH:
        return merge_config_files(path, base, ours, theirs)
    return MergeOutcome(content=ours, clean=False, message=f"{path}: both sides changed it")


def merge_in_repository(
    repo: GitRepo,
    path: str,
    base: bytes | None,
    ours: bytes,
    theirs: bytes,
    *,
    their_commits: Sequence[str] = (),
) -> MergeOutcome:
    """:func:`merge_file` for git's merge driver, with what the two histories know.

    git's ``base`` is the file at the merge base of the two *branches*. A cell that
    reached both branches by ``hive sync`` (a sync commit on each, not a shared one)
    is missing there, or older than the version both clones had, and a three-way
    merge against it would bring back what one side removed. ``ours`` is HEAD's
    version (checked, else plain :func:`merge_file`). In a merge (``their_commits``:
    git names the commits being merged in its environment), or when git has no base
    at all (both sides added the file, as in a rebase of a sync commit), a version
    one side already had is older than that side's own, so the newer one is taken
    as it is; otherwise, in a merge, the base is the newest version both histories
    hold. A cherry-pick, revert or rebase step with a base keeps git's base.
    """
    from hive.git.syncref import RepoHistory

    decided, base = history_base(RepoHistory(repo), path, base, ours, theirs, their_commits)
    if decided is not None:
        return MergeOutcome(content=decided)
    return merge_file(path, base, ours, theirs)


# ------------------------------------------------------------------ cells


def merge_cell_files(path: str, base: bytes | None, ours: bytes, theirs: bytes) -> MergeOutcome:
    """Parse the three versions of a cell file and merge them field by field."""
    parsed_ours, error_ours = _parse(ours, path)
    parsed_theirs, _ = _parse(theirs, path)
    if parsed_ours is None and parsed_theirs is None:
        return MergeOutcome(
            content=ours, clean=False, message=f"{path}: neither side parses ({error_ours})"
        )
    if parsed_ours is None or parsed_theirs is None:
        good = parsed_ours or parsed_theirs
        broken = theirs if parsed_ours is not None else ours
        assert good is not None
        record = MergeConflict(field="file", kept=None, other=_broken_text(broken))
        merged = _with_conflicts(good, [record])
        return MergeOutcome(content=encode_cell(merged), conflicts=[record])
    parsed_base = _parse(base, path)[0] if base is not None else None
    if parsed_base is not None and parsed_base.id != parsed_ours.id:
        parsed_base = None
    merged, records = merge_cells(parsed_base, parsed_ours, parsed_theirs)
    return MergeOutcome(content=encode_cell(merged), conflicts=records)


def _parse(data: bytes | None, path: str) -> tuple[Cell | None, str]:
    if data is None:
        return None, "missing"
    try:
        return decode_cell(data, path), ""
    except CorruptFile as exc:
        return None, exc.message


def _broken_text(data: bytes) -> str:
    text = data.decode("utf-8", errors="replace")
    return text if len(text) <= MAX_KEPT_TEXT else text[:MAX_KEPT_TEXT] + "\n[truncated]"


def _with_conflicts(cell: Cell, records: Sequence[MergeConflict]) -> Cell:
    known = list(cell.conflicts)
    known += [record for record in records if record not in known]
    return cell.model_copy(update={"conflicts": known})


def merge_cells(base: Cell | None, ours: Cell, theirs: Cell) -> tuple[Cell, list[MergeConflict]]:
    """The merged cell and the conflict records it gained. Commutative in ours/theirs.
    The rules (``hive/domain/mergecore.py``) run on the cells' dumps, as the merge
    driver's plain path runs them on the files' plain cells."""
    plain_ours, plain_theirs = ours.model_dump(), theirs.model_dump()
    plain_base = base.model_dump() if base is not None else None
    merged, records = merge_fields(plain_base, plain_ours, plain_theirs)
    try:
        cell = Cell.model_validate(merged)
    except ValidationError:  # cannot happen with two valid sides; keep the winner whole
        return (ours if order(plain_ours, plain_theirs)[0] is plain_ours else theirs), []
    return cell, [MergeConflict.model_validate(record) for record in records]


# ------------------------------------------------------------------ reservations


def merge_reservation_files(
    path: str, base: bytes | None, ours: bytes, theirs: bytes
) -> MergeOutcome:
    """One agent's reservation file: entries merge as a set (removals win), by the
    rules of :func:`hive.domain.mergefiles.merge_reservations`."""
    from hive.domain.reservations import decode_file, encode_file
    from hive.models.reservation import ReservationFile

    try:
        mine, other = decode_file(ours, path), decode_file(theirs, path)
    except CorruptFile as exc:
        return MergeOutcome(content=ours, clean=False, message=exc.message)
    if mine.agent != other.agent:
        return MergeOutcome(content=ours, clean=False, message=f"{path}: agents differ")
    original: ReservationFile | None = None
    if base is not None:
        try:
            original = decode_file(base, path)
        except CorruptFile:
            original = None

    merged = merge_reservations(
        original.reservations if original is not None else None,
        mine.reservations,
        other.reservations,
        tie=reservation_tie,
        copy=reservation_copy,
    )
    return MergeOutcome(content=encode_file(ReservationFile(agent=mine.agent, reservations=merged)))


# ------------------------------------------------------------------ project context


def merge_context_files(path: str, base: bytes | None, ours: bytes, theirs: bytes) -> MergeOutcome:
    """``.hive/context.yaml``: an append-only log, merged section by section
    (:func:`hive.domain.mergefiles.merge_context`)."""
    from hive.domain.memory import ProjectContext, decode_context, encode_context

    def parse(data: bytes | None) -> ProjectContext | None:
        if data is None:
            return None
        try:
            return decode_context(data, path)
        except CorruptFile:
            return None

    def sections(context: ProjectContext) -> dict[str, Any]:
        return {name: getattr(context, name) for name in CONTEXT_SECTIONS}

    mine, other = parse(ours), parse(theirs)
    if mine is None and other is None:
        return MergeOutcome(content=ours, clean=False, message=f"{path}: neither side parses")
    if mine is None or other is None:
        good = mine or other
        assert good is not None
        return MergeOutcome(content=encode_context(good))
    original = parse(base)
    merged = merge_context(
        sections(original) if original is not None else None, sections(mine), sections(other)
    )
    return MergeOutcome(content=encode_context(ProjectContext.model_validate(merged)))


# ------------------------------------------------------------------ the config


def merge_config_files(path: str, base: bytes | None, ours: bytes, theirs: bytes) -> MergeOutcome:
    """``.hive/config.yaml``: setting by setting (:func:`hive.domain.mergefiles.merge_config`);
    a setting both sides set differently keeps one value and records the other, in a
    ``# hive merge conflict:`` line and in the merge's conflicts: never lost silently."""
    from hive.store.yamlio import load_mapping

    def parse(data: bytes) -> dict[str, Any]:
        return load_mapping(data.decode("utf-8", errors="replace"), path)

    try:
        mine, other = parse(ours), parse(theirs)
    except CorruptFile as exc:
        return MergeOutcome(content=ours, clean=False, message=exc.message)
    try:
        original = parse(base) if base is not None else None
    except CorruptFile:
        original = None
    content, records = merge_config((base, ours, theirs), original, mine, other)
    conflicts = [MergeConflict.model_validate(record) for record in records]
    return MergeOutcome(content=content, conflicts=conflicts)


def reservation_tie(item: Reservation) -> str:
    """``merge_reservations``' tie-break of two reservation models: their JSON."""
    return item.model_dump_json()


def reservation_copy(item: Reservation, changes: dict[str, Any]) -> Reservation:
    """``merge_reservations``' copy of a reservation model with ``changes``."""
    return item.model_copy(update=changes)
