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

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import ValidationError

from hive.errors import CorruptFile
from hive.models import Cell, Comment, Dependency, MergeConflict
from hive.store.cells import decode_cell, encode_cell
from hive.store.layout import CELLS_DIR, cell_id_from_path

if TYPE_CHECKING:
    from hive.git.repo import GitRepo
    from hive.models.reservation import Reservation

TOMBSTONE_TTL = timedelta(days=30)
HISTORY_LIMIT = 2000  # commits searched for the versions of a file a side already had
RESERVATIONS_DIR = ".hive/reservations"
CONTEXT_PATH = ".hive/context.yaml"
CONFIG_PATH = ".hive/config.yaml"
CONFIG_CONFLICT = "# hive merge conflict: "  # a line of config.yaml: what a merge did not keep
MAX_KEPT_TEXT = 64 * 1024  # a broken side's text kept in a conflict record
CONFLICT_FIELDS = ("title", "description", "design", "acceptance_criteria", "assignee")
SCALAR_FIELDS = (
    "title",
    "description",
    "design",
    "acceptance_criteria",
    "type",
    "priority",
    "parent",
    "assignee",
    "created_by",
)
T = TypeVar("T")
K = TypeVar("K", bound=Hashable)


@dataclass
class MergeOutcome:
    """The merged file. ``clean`` is False only when nothing valid could be built
    (``content`` is then ``ours`` unchanged); ``conflicts`` are the records this
    merge added (values the rules did not keep)."""

    content: bytes
    clean: bool = True
    conflicts: list[MergeConflict] = field(default_factory=list)
    message: str = ""


def is_mergeable_path(path: str) -> bool:
    """Files the field-level merge understands (cells, reservation files, context,
    the config)."""
    return _is_cell_path(path) or _is_reservation_path(path) or path in (CONTEXT_PATH, CONFIG_PATH)


def _is_cell_path(path: str) -> bool:
    return path.startswith(CELLS_DIR + "/") and cell_id_from_path(path) is not None


def _is_reservation_path(path: str) -> bool:
    return path.startswith(RESERVATIONS_DIR + "/") and path.endswith(".yaml")


def merge_file(
    path: str, base: bytes | None, ours: bytes | None, theirs: bytes | None
) -> MergeOutcome:
    """Merge one ``.hive/`` file; a side that is ``None`` does not have the file."""
    if ours is None or theirs is None:
        kept = ours if ours is not None else theirs
        return MergeOutcome(content=kept or b"")  # hive never deletes a file by merging
    if ours == theirs:
        return MergeOutcome(content=ours)
    if base is not None and ours == base:
        return MergeOutcome(content=theirs)
    if base is not None and theirs == base:
        return MergeOutcome(content=ours)
    if _is_cell_path(path):
        return merge_cell_files(path, base, ours, theirs)
    if _is_reservation_path(path):
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
    if ours == theirs or (base is not None and base in (ours, theirs)):
        return merge_file(path, base, ours, theirs)
    if not is_mergeable_path(path) or (base is not None and not their_commits):
        # A cherry-pick, revert or rebase step: git's base is the picked commit's
        # parent, the right one (a revert's "theirs" is older on purpose).
        return merge_file(path, base, ours, theirs)
    from hive.git.syncref import path_versions
    from hive.git.worktree import blob_sha_of

    head = repo.head().commit
    ours_sha, theirs_sha = blob_sha_of(ours), blob_sha_of(theirs)
    if head is None or repo.lookup_path(repo.commit_tree(head), path) != ours_sha:
        return merge_file(path, base, ours, theirs)
    ours_had = path_versions(repo, head, path, limit=HISTORY_LIMIT)
    if theirs_sha in ours_had:
        return MergeOutcome(content=ours)  # theirs is a version this side already had
    for commit in their_commits:
        if repo.lookup_path(repo.commit_tree(commit), path) != theirs_sha:
            continue
        theirs_had = set(path_versions(repo, commit, path, limit=HISTORY_LIMIT))
        if ours_sha in theirs_had:
            return MergeOutcome(content=theirs)  # ours is a version they already had
        common = next((sha for sha in ours_had if sha in theirs_had), None)
        if common is not None:
            base = repo.read_blob(common)
        break
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
    """The merged cell and the conflict records it gained. Commutative in ours/theirs."""
    winner, loser = _order(ours, theirs)
    records: list[MergeConflict] = []
    merged: dict[str, Any] = {"id": ours.id}
    for name in SCALAR_FIELDS:
        value, lost = _scalar(name, base, winner, loser)
        merged[name] = value
        if lost is not None and name in CONFLICT_FIELDS:
            records.append(MergeConflict(field=name, kept=value, other=lost))
    merged.update(_status(base, winner, loser))
    merged["notes"] = _notes(base, winner, loser)
    merged["labels"] = _set_merge(_of(base, "labels"), ours.labels, theirs.labels, str)
    merged["files_owned"] = _set_merge(
        _of(base, "files_owned"), ours.files_owned, theirs.files_owned, str
    )
    merged["dependencies"] = _set_merge(
        _of(base, "dependencies"), ours.dependencies, theirs.dependencies, _dep_key
    )
    merged["comments"] = _comments(base, winner, loser)
    merged["metadata"] = _metadata(base, winner, loser)
    merged["created_at"] = min(ours.created_at, theirs.created_at)
    merged["updated_at"] = max(ours.updated_at, theirs.updated_at)
    merged["started_at"] = _earliest_change(base, ours, theirs, "started_at")
    merged["deleted_at"] = _tombstone(base, winner, loser)
    previous = _set_merge(_of(base, "conflicts"), ours.conflicts, theirs.conflicts, _conflict_key)
    merged["conflicts"] = previous + [r for r in records if r not in previous]
    try:
        return Cell.model_validate(merged), records
    except ValidationError:  # cannot happen with two valid sides; keep the winner whole
        return winner, []


def _of(base: Cell | None, name: str) -> Any:
    return None if base is None else getattr(base, name)


def _order(ours: Cell, theirs: Cell) -> tuple[Cell, Cell]:
    """(winner, loser) for scalar fields: later ``updated_at``; equal times are
    decided by the encoded bytes, so both clones pick the same side."""
    key_ours = (ours.updated_at, encode_cell(ours))
    key_theirs = (theirs.updated_at, encode_cell(theirs))
    return (ours, theirs) if key_ours >= key_theirs else (theirs, ours)


def _scalar(name: str, base: Cell | None, winner: Cell, loser: Cell) -> tuple[Any, Any]:
    """(merged value, value that lost or None)."""
    new, old = getattr(winner, name), getattr(loser, name)
    if new == old:
        return new, None
    if base is not None:
        original = getattr(base, name)
        if new == original:
            return old, None
        if old == original:
            return new, None
    return new, old


def _status(base: Cell | None, winner: Cell, loser: Cell) -> dict[str, Any]:
    """status, closed_at and close_reason, decided together: closed beats open."""

    def group(cell: Cell) -> tuple[str, datetime | None, str | None]:
        return (cell.status, cell.closed_at, cell.close_reason)

    new, old = group(winner), group(loser)
    chosen = new
    if new != old:
        original = group(base) if base is not None else None
        if new == original:
            chosen = old
        elif old == original:
            chosen = new
        elif winner.is_closed != loser.is_closed:
            chosen = new if winner.is_closed else old
    return {"status": chosen[0], "closed_at": chosen[1], "close_reason": chosen[2]}


def _notes(base: Cell | None, winner: Cell, loser: Cell) -> str:
    """Both sides' notes: text added on each side is kept, the earlier side's first."""
    new, old = winner.notes, loser.notes
    original = base.notes if base is not None else ""
    if new == old or old == original or old in new:
        return new
    if new == original or new in old:
        return old
    if original and new.startswith(original) and old.startswith(original):
        added = [old[len(original) :], new[len(original) :]]
        return _join([original, *added])
    return _join([old, new])


def _join(parts: list[str]) -> str:
    pieces = [part.strip("\n") for part in parts if part.strip("\n")]
    unique = list(dict.fromkeys(pieces))
    return "\n".join(unique)


def _set_merge(
    base: Sequence[T] | None, ours: Sequence[T], theirs: Sequence[T], key: Callable[[T], K]
) -> list[T]:
    """Items both sides have, or that one side added; a removal on either side wins.
    Order: the base's order, then additions sorted by key (the same on both clones)."""
    base_items = list(base or [])
    base_keys = {key(item) for item in base_items}
    our_keys = {key(item): item for item in ours}
    their_keys = {key(item): item for item in theirs}
    both = our_keys.keys() & their_keys.keys()
    kept = [our_keys[key(item)] for item in base_items if key(item) in both]
    added: dict[K, T] = {}
    for k, item in [*our_keys.items(), *their_keys.items()]:
        if k not in base_keys and k not in added:
            added[k] = item
    return kept + [added[k] for k in sorted(added, key=repr)]


def _dep_key(dep: Dependency) -> tuple[str, str]:
    return (dep.type, dep.target)


def _conflict_key(record: MergeConflict) -> str:
    return repr((record.field, record.kept, record.other))


def _comments(base: Cell | None, winner: Cell, loser: Cell) -> list[Comment]:
    """Comments of both sides by id (an id edited on both sides: the winner's text)."""
    by_id: dict[str, Comment] = {c.id: c for c in loser.comments}
    by_id.update({c.id: c for c in winner.comments})
    base_ids = {c.id for c in base.comments} if base is not None else set()
    ours_ids = {c.id for c in winner.comments}
    theirs_ids = {c.id for c in loser.comments}
    kept = [
        comment
        for cid, comment in by_id.items()
        if cid not in base_ids or (cid in ours_ids and cid in theirs_ids)
    ]
    return sorted(kept, key=lambda c: (c.created_at, c.id))


def _metadata(base: Cell | None, winner: Cell, loser: Cell) -> dict[str, Any]:
    original = base.metadata if base is not None else {}
    merged: dict[str, Any] = {}
    for key in sorted({*winner.metadata, *loser.metadata, *original}):
        missing = object()
        new = winner.metadata.get(key, missing)
        old = loser.metadata.get(key, missing)
        value = new if new is not missing else old
        if new != old and base is not None:
            value = old if new == original.get(key, missing) else new
        if value is missing:
            continue
        merged[key] = value
    return merged


def _earliest_change(base: Cell | None, ours: Cell, theirs: Cell, name: str) -> Any:
    a, b = getattr(ours, name), getattr(theirs, name)
    if a == b:
        return a
    if base is not None:
        original = getattr(base, name)
        if a == original:
            return b
        if b == original:
            return a
    present = [value for value in (a, b) if value is not None]
    return min(present) if present else None


def _tombstone(base: Cell | None, winner: Cell, loser: Cell) -> datetime | None:
    """A delete wins over an edit made before it or up to the TTL after it."""
    a, b = winner.deleted_at, loser.deleted_at
    if a is not None and b is not None:
        return min(a, b)
    if a is None and b is None:
        return None
    deleted, other = (winner, loser) if a is not None else (loser, winner)
    assert deleted.deleted_at is not None
    original = base.deleted_at if base is not None else None
    if original is not None and other.deleted_at is None and deleted.deleted_at == original:
        return None  # the other side restored it (undelete is explicit)
    if other.updated_at > deleted.deleted_at + TOMBSTONE_TTL:
        return None  # edited long after the delete by a clone that never saw it
    return deleted.deleted_at


# ------------------------------------------------------------------ reservations


def merge_reservation_files(
    path: str, base: bytes | None, ours: bytes, theirs: bytes
) -> MergeOutcome:
    """One agent's reservation file: entries merge as a set (removals win)."""
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

    def key(item: Reservation) -> tuple[str, str]:
        """A grant's identity: its pattern and time (not its id, which a merge may
        renumber)."""
        return (item.path_pattern, item.created_at.isoformat())

    def later(a: Reservation, b: Reservation) -> Reservation:
        """One grant changed on both sides: the later expiry; yielded if either side
        settled it as yielded (a contest found at a sync); renumbered if either side
        renumbered it."""
        kept = max(a, b, key=lambda r: (r.expires_at, r.model_dump_json()))
        return kept.model_copy(
            update={
                "yielded_to": kept.yielded_to or a.yielded_to or b.yielded_to,
                "id": max(a.id, b.id),
                "renumbered_from": a.renumbered_from or b.renumbered_from,
            }
        )

    theirs_by_key = {key(item): item for item in other.reservations}
    entries = _set_merge(
        original.reservations if original else None, mine.reservations, other.reservations, key
    )
    merged = [later(item, theirs_by_key.get(key(item), item)) for item in entries]
    merged.sort(key=lambda r: (r.created_at, r.id, r.path_pattern))
    result = ReservationFile(agent=mine.agent, reservations=_renumbered(merged))
    return MergeOutcome(content=encode_file(result))


def _renumbered(items: list[Reservation]) -> list[Reservation]:
    """``items`` (sorted by grant time) with every id given once: two clones that both
    granted an agent the same number (offline, before they met) leave it to the
    earliest grant; a later one takes the next number above every id in the file and
    remembers the old one (``renumbered_from``: a release by it is refused as
    ambiguous). Depends only on the items, so every clone renumbers alike."""
    top = max((item.id for item in items), default=0)
    seen: set[int] = set()
    result = []
    for item in items:
        if item.id in seen:
            top += 1
            former = item.renumbered_from or item.id
            item = item.model_copy(update={"id": top, "renumbered_from": former})
        seen.add(item.id)
        result.append(item)
    return result


# ------------------------------------------------------------------ project context


def merge_context_files(path: str, base: bytes | None, ours: bytes, theirs: bytes) -> MergeOutcome:
    """``.hive/context.yaml``: an append-only log, merged section by section."""
    from hive.domain.memory import ProjectContext, decode_context, encode_context

    def parse(data: bytes | None) -> ProjectContext | None:
        if data is None:
            return None
        try:
            return decode_context(data, path)
        except CorruptFile:
            return None

    mine, other = parse(ours), parse(theirs)
    if mine is None and other is None:
        return MergeOutcome(content=ours, clean=False, message=f"{path}: neither side parses")
    if mine is None or other is None:
        good = mine or other
        assert good is not None
        return MergeOutcome(content=encode_context(good))
    original = parse(base)

    def section(name: str) -> Any:
        return None if original is None else getattr(original, name)

    merged = ProjectContext(
        goals=_log_merge(section("goals"), mine.goals, other.goals),
        banned=_log_merge(section("banned"), mine.banned, other.banned),
        decisions=_log_merge(section("decisions"), mine.decisions, other.decisions),
        milestones=_milestones(section("milestones"), mine.milestones, other.milestones),
        stack=_mapping_merge(section("stack"), mine.stack, other.stack),
        project=_mapping_merge(section("project"), mine.project, other.project),
    )
    return MergeOutcome(content=encode_context(merged))


def _canonical(item: Any) -> str:
    import json

    return json.dumps(item, sort_keys=True, ensure_ascii=False, default=str)


def _log_merge(base: list[T] | None, ours: list[T], theirs: list[T]) -> list[T]:
    """Entries of both sides once each (an entry either side removed is gone); the
    base's order, then what was added, by recording time (the same on both clones)."""
    merged = _set_merge(base, ours, theirs, _canonical)
    before = {_canonical(item) for item in base or []}
    kept = [item for item in merged if _canonical(item) in before]
    added = [item for item in merged if _canonical(item) not in before]
    return kept + sorted(added, key=lambda item: (_recorded(item), _canonical(item)))


def _recorded(item: Any) -> str:
    return str(item.get("recorded_at", "")) if isinstance(item, dict) else ""


def _milestones(
    base: list[dict[str, Any]] | None, ours: list[dict[str, Any]], theirs: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Milestones by name: both sides' kept; completed on either side is completed."""

    def name(item: dict[str, Any]) -> str:
        return str(item.get("name"))

    def rank(item: dict[str, Any]) -> tuple[bool, str]:
        return (item.get("status") == "completed", _canonical(item))

    by_name: dict[str, dict[str, Any]] = {}
    for item in [*ours, *theirs]:
        current = by_name.get(name(item))
        if current is None or rank(item) > rank(current):
            by_name[name(item)] = item
    chosen = _log_merge(
        [{"name": name(item)} for item in base] if base is not None else None,
        [{"name": name(item)} for item in ours],
        [{"name": name(item)} for item in theirs],
    )
    ordered = [by_name[str(item["name"])] for item in chosen]
    return sorted(ordered, key=lambda item: (_recorded(item), name(item)))


def _mapping_merge(
    base: dict[str, Any] | None, ours: dict[str, Any], theirs: dict[str, Any]
) -> dict[str, Any]:
    """Key by key: a key only one side changed takes that side's value (a removal
    too); a key both sides set differently takes the larger value (commutative)."""
    original = base or {}
    missing = object()
    merged: dict[str, Any] = {}
    for key in sorted({*ours, *theirs, *original}):
        mine, other = ours.get(key, missing), theirs.get(key, missing)
        value, _ = _pick(mine, other, original.get(key, missing), missing)
        if value is not missing:
            merged[key] = value
    return merged


# ------------------------------------------------------------------ the config


def merge_config_files(path: str, base: bytes | None, ours: bytes, theirs: bytes) -> MergeOutcome:
    """``.hive/config.yaml``: setting by setting (nested mappings key by key). A setting
    only one side changed takes that side's value; one both sides set differently
    keeps the larger value (the same on every clone) and the other is recorded, as a
    ``# hive merge conflict:`` line at the top of the file (``hive doctor`` reports it
    until someone deletes it) and in the merge's conflicts: never lost silently."""
    from hive.store.yamlio import dumps, load_mapping

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
    conflicts: list[MergeConflict] = []
    merged = _settings_merge(original, mine, other, "", conflicts)
    lines = _set_merge(
        _conflict_lines(base) if base is not None else None,
        _conflict_lines(ours),
        _conflict_lines(theirs),
        lambda line: line,
    )
    lines += [
        f"{CONFIG_CONFLICT}both clones changed {record.field}: kept {_canonical(record.kept)},"
        f" the other had {_canonical(record.other)} (set it, then delete this line)"
        for record in conflicts
    ]
    header = "".join(line + "\n" for line in dict.fromkeys(lines))
    return MergeOutcome(content=(header + dumps(merged)).encode("utf-8"), conflicts=conflicts)


def _conflict_lines(data: bytes) -> list[str]:
    text = data.decode("utf-8", errors="replace")
    return [line for line in text.splitlines() if line.startswith(CONFIG_CONFLICT)]


def _settings_merge(
    base: dict[str, Any] | None,
    ours: dict[str, Any],
    theirs: dict[str, Any],
    prefix: str,
    conflicts: list[MergeConflict],
) -> dict[str, Any]:
    """Three-way, key by key, into nested mappings; keys in the base's order, then
    the added ones sorted (the same file whichever side is ours)."""
    original = base or {}
    missing = object()
    merged: dict[str, Any] = {}
    added = sorted(key for key in {*ours, *theirs} if key not in original)
    for key in [*original, *added]:
        mine, other = ours.get(key, missing), theirs.get(key, missing)
        before = original.get(key, missing)
        value, lost = _pick(mine, other, before, missing)
        if lost is not missing and isinstance(mine, dict) and isinstance(other, dict):
            start = before if isinstance(before, dict) else None
            value = _settings_merge(start, mine, other, f"{prefix}{key}.", conflicts)
        elif lost is not missing:
            conflicts.append(MergeConflict(field=f"{prefix}{key}", kept=value, other=lost))
        if value is not missing:
            merged[key] = value
    return merged


def _pick(mine: Any, other: Any, before: Any, missing: object) -> tuple[Any, Any]:
    """One key of a three-way merge (``missing``: the side does not have it): (the
    value kept, ``missing`` or the value both sides' change lost). A key only one side
    changed takes that side's value (a removal too); one both set differently keeps
    the larger value (the same whichever side is ours); a side that removed it loses
    as None."""
    if mine == other or other == before:
        return mine, missing
    if mine == before:
        return other, missing
    present = [v for v in (mine, other) if v is not missing]
    kept = max(present, key=_canonical)
    lost = next((v for v in (mine, other) if v is not kept), missing)
    return kept, None if lost is missing else lost
