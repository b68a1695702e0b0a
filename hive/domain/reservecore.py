"""Reservations without the models: paths, the conflict test, the file format, ids.

``hive/domain/reservations.py`` (the full path, with the pydantic models) and the
lean command-line path (``hive/cli/lean_coord.py``, a fresh ``hive reserve`` or
``hive release`` process) share this module, so both find exactly the same
conflicts (pattern against pattern, both directions: :func:`conflicting`) and
write exactly the same bytes (:func:`entry_text`, :func:`file_text`).

Reading an agent's reservation file into plain objects (:func:`plain_file`), where
it lives and whether it is misfiled are ``hive/domain/reserveplain.py``'s (a leaf
without ``re``, which the pre-commit hook's quick check imports alone), re-exported
here.
"""

from __future__ import annotations

import functools
import os
import re
from datetime import datetime, timedelta

from hive.domain.foldcase import fold
from hive.domain.globs import (
    case_folded,
    expand_braces,
    normalize_pattern,
    path_matches,
    patterns_meet,
)
from hive.domain.reserveplain import FIELDS as FIELDS
from hive.domain.reserveplain import MAX_PLAIN_NAME as MAX_PLAIN_NAME
from hive.domain.reserveplain import RESERVATIONS_DIR as RESERVATIONS_DIR
from hive.domain.reserveplain import PlainFile as PlainFile
from hive.domain.reserveplain import PlainReservation as PlainReservation
from hive.domain.reserveplain import entry_text as entry_text
from hive.domain.reserveplain import file_text as file_text
from hive.domain.reserveplain import misfiled as misfiled
from hive.domain.reserveplain import plain_file as plain_file
from hive.domain.reserveplain import reservation_path as reservation_path
from hive.errors import AmbiguousId, InvalidInput, NotFound, PathOutsideRepository
from hive.record import suppress

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence
    from typing import Any, Protocol, TypeVar

    class Held(Protocol):
        """A reservation as the conflict test reads it (the model or a plain one)."""

        @property
        def agent(self) -> str: ...

        @property
        def path_pattern(self) -> str: ...

        @property
        def exclusive(self) -> bool: ...

        def active(self, now: datetime) -> bool: ...

    class Numbered(Protocol):
        @property
        def id(self) -> int: ...

        @property
        def path_pattern(self) -> str: ...

        @property
        def renumbered_from(self) -> int | None: ...

    class Granted(Numbered, Protocol):
        """A reservation as :func:`grant` renews it (the model or a plain one)."""

        @property
        def reason(self) -> str | None: ...

        @property
        def cell(self) -> str | None: ...

    H = TypeVar("H", bound=Held)
    N = TypeVar("N", bound=Numbered)
    G = TypeVar("G", bound=Granted)

    from hive.git.refs import RepoPaths
    from hive.git.repo import GitRepo, Snapshot


RESERVE_TOOL = "swarmmail_reserve"  # whose tools.permissions rules apply to reservations
GLOB_CHARS = re.compile(r"[*?\[{\\]")
MAX_TTL = 7 * 24 * 3600
SEQUENCE_FILE = "reservation.seq"
SEQUENCE_WIDTH = 20  # digits: every id fits, so a new number always covers the old one


# ------------------------------------------------------------------ paths


def normalize_request(root: str, path: str) -> str:
    """A reservation pattern relative to the repository root ``root``, in canonical
    form. Absolute paths inside the repository are made relative; an existing
    directory named without a glob means everything below it."""
    raw = path.strip()
    if os.path.isabs(raw):
        full = os.path.normpath(raw)
        base = os.path.normpath(root)
        if full != base and not full.startswith(base + os.sep):
            raise PathOutsideRepository(f"{path!r} is outside the repository {root}")
        raw = os.path.relpath(full, base).replace(os.sep, "/")
        if raw == ".":
            raw = "**"
    pattern = normalize_pattern(raw)
    if not GLOB_CHARS.search(pattern) and os.path.isdir(os.path.join(root, pattern)):
        pattern = f"{pattern}/**"
    return pattern


def reservable(root: str, path: str) -> str:
    """:func:`normalize_request` of a pattern to reserve, refused when it names a path
    in git's own directory (a ``.git`` segment, in any case, at any depth: git tracks no
    file there, and a hook or an agent editing ``.git/config`` is no work a reservation
    coordinates). Releasing such a pattern, held from before, still works."""
    pattern = normalize_request(root, path)
    if in_git_dir(pattern):
        raise InvalidInput(
            f"{path!r} is inside git's own directory (.git), which holds no tracked file:"
            " reserve the files you edit, such as src/a.py"
        )
    return pattern


def in_git_dir(pattern: str) -> bool:
    """Whether a brace alternative of the normalized ``pattern`` has a ``.git`` segment."""
    return ".git" in pattern.lower() and any(
        segment.lower() == ".git"
        for alternative in expand_braces(pattern, pattern)
        for segment in alternative.split("/")
    )


# ------------------------------------------------------------------ conflicts


@functools.lru_cache(maxsize=8192)
def literal_prefix(pattern: str) -> str:
    match = GLOB_CHARS.search(pattern)
    return pattern if match is None else pattern[: match.start()]


def may_intersect(a: str, b: str) -> bool:
    """Cheap necessary condition: the literal prefixes must be compatible."""
    pa, pb = literal_prefix(a), literal_prefix(b)
    return pa.startswith(pb) or pb.startswith(pa)


def folds_case(paths: RepoPaths) -> bool:
    """Whether files are compared with reservations case folded here
    (:func:`hive.domain.globs.case_folded`, ``foldcase.fold``): where the file system
    ignores case (``core.ignorecase``), ``SRC/a.py`` and ``src/a.py`` are one file.
    Patterns are compared with each other case folded in every clone (:func:`conflicting`)."""
    from hive.git.configfile import ignores_case

    return ignores_case(paths)


def as_compared(pattern: str, fold_case: bool) -> str:
    """``pattern`` as reservations are compared: case folded (:func:`folds_case`,
    :func:`conflicting`), else as it is."""
    return case_folded(pattern) if fold_case else pattern


def compared_prefix(pattern: str) -> str:
    """The literal prefix of ``pattern`` as :func:`conflicting` compares it (folded)."""
    return literal_prefix(case_folded(pattern))


def _apart(a: str, b: str, compared: tuple[str, str]) -> bool:
    """Cheap sufficient condition for ``a`` and ``b`` (patterns, or a path and a pattern)
    to name no common file: their literal prefixes are incompatible as ``compared`` (the
    two as compared) and as written (a name that is not ASCII is also compared as
    written: ``globs.path_matches``)."""
    return not may_intersect(*compared) and not may_intersect(a, b)


def path_under(pattern: str, path: str, fold_case: bool = False) -> bool:
    """Whether the file ``path`` falls under the reservation ``pattern`` (its case
    folded, both, where the file system ignores case: ``globs.path_matches``)."""
    compared = (fold(path), case_folded(pattern)) if fold_case else (path, pattern)
    return not _apart(path, pattern, compared) and path_matches(pattern, path, fold_case)


def conflicts_with(requested: str, exclusive: bool, held: Held, *, fold_case: bool = False) -> bool:
    """Whether a request for ``requested`` conflicts with ``held`` (one of them exclusive
    and the patterns intersecting, case folded with ``fold_case``)."""
    if not exclusive and not held.exclusive:
        return False
    theirs = held.path_pattern
    compared = (as_compared(requested, fold_case), as_compared(theirs, fold_case))
    return not _apart(requested, theirs, compared) and patterns_meet(requested, theirs, fold_case)


def overlapping(a: Held, b: Held) -> bool:
    """Whether the exclusive reservations ``a`` and ``b`` may name one file, as a sync
    settling two clones' grants compares them (``contest``): case folded in every clone,
    and a pattern too complex to compare overlaps."""
    try:
        return conflicts_with(a.path_pattern, True, b, fold_case=True)
    except InvalidInput:
        return True


def may_contest(held: Sequence[Held]) -> bool:
    """Whether two of ``held`` (active exclusive reservations that are not forced), of
    different agents, may name one file (:func:`overlapping`, asked both ways): when
    none do, ``contest.find_contests`` finds no contest to settle (the lean sync's
    test, ``cli/lean_sync.py``). The literal prefixes are compared first, as
    :func:`conflicting` does."""
    prefixes = [(compared_prefix(item.path_pattern), item) for item in held]
    for number, (prefix, a) in enumerate(prefixes):
        for other, b in prefixes[number + 1 :]:
            if a.agent == b.agent:
                continue
            if not (other.startswith(prefix) or prefix.startswith(other)) and (
                a.path_pattern.isascii() and b.path_pattern.isascii()
            ):
                continue  # cheap necessary condition first, as in conflicting
            if overlapping(a, b) or overlapping(b, a):
                return True
    return False


def conflicting(
    held: Iterable[tuple[str, H]],
    agent: str,
    patterns: Iterable[str],
    exclusive: bool,
    now: datetime,
) -> Iterator[tuple[str, H]]:
    """(requested pattern, held reservation) for every active reservation of another
    agent that a request by ``agent`` for ``patterns`` conflicts with; ``held``:
    reservations with their patterns' :func:`compared_prefix`. Patterns are compared
    case folded in every clone, whatever its file system: ``hive sync`` settles two
    clones' grants so (``contest``, one answer for every clone), and a grant here must
    not be one the next sync takes back."""
    listed = list(held)
    for pattern in patterns:
        prefix = compared_prefix(pattern)
        for held_prefix, item in listed:
            if not (held_prefix.startswith(prefix) or prefix.startswith(held_prefix)) and (
                pattern.isascii() and item.path_pattern.isascii()
            ):
                continue  # cheap necessary condition first: most held patterns fail it
            if item.agent == agent or not item.active(now):
                continue
            if conflicts_with(pattern, exclusive, item, fold_case=True):
                yield pattern, item


def split_release(
    held: list[N], patterns: Sequence[str], ids: Sequence[int]
) -> tuple[list[N], list[N], list[str]]:
    """(released, kept, requested-but-not-held) for a release request."""
    if not patterns and not ids:
        return list(held), [], []
    for number in ids:
        _refuse_ambiguous(held, number)
    released = [r for r in held if r.path_pattern in patterns or r.id in ids]
    kept = [r for r in held if r not in released]
    held_patterns = {r.path_pattern for r in held}
    held_ids = {r.id for r in held}
    missing = [p for p in patterns if p not in held_patterns]
    missing += [f"#{i}" for i in ids if i not in held_ids]
    return released, kept, missing


def nothing_matching(holder: str, missing: Sequence[str]) -> NotFound:
    """The refusal of a release none of whose patterns or ids matches an active
    reservation of ``holder`` (both paths)."""
    return NotFound(f"{holder} holds no active reservation matching {', '.join(missing)}")


def _refuse_ambiguous(held: Sequence[Numbered], number: int) -> None:
    """Raise AmbiguousId when ``number`` names more than one of ``held``: two clones
    both gave it (their copies met at a sync), or a merge renumbered one of them."""
    named = [r for r in held if number in (r.id, r.renumbered_from)]
    if len(named) < 2:
        return
    listed = "; ".join(
        f"#{r.id} {r.path_pattern!r}"
        + (f" (was #{r.renumbered_from})" if r.renumbered_from else "")
        for r in named
    )
    raise AmbiguousId(
        f"reservation #{number} names {len(named)} reservations (granted in different"
        f" clones): {listed}; release by pattern, or by the current id of the one you mean"
    )


def other_worktree_snapshots(git: GitRepo, snap: Snapshot) -> Iterator[tuple[str, Snapshot]]:
    """(branch, snapshot) of every other worktree's HEAD whose commit differs from
    ``snap``'s (and from every one already given): where else reservations are held.
    Read under the repository-wide write lock by a reserve, so a grant in one
    worktree is seen by the next request in any other."""
    seen = {snap.head.commit}
    for head in git.other_worktree_heads():
        if head.commit in seen:
            continue
        seen.add(head.commit)
        branch = (head.ref or "").removeprefix("refs/heads/") or (head.commit or "")[:10]
        yield branch, git.snapshot_at(head)


# ------------------------------------------------------------------ granting


def next_id(held: Iterable[Numbered], state_dir: str) -> int:
    """The id of the next reservation: above every one held and every one this clone
    ever granted or received (ids are never reused; a reserve calls
    :func:`raise_from_history` first, for what came without hive)."""
    highest = max((item.id for item in held), default=0)
    return 1 + max(highest, read_sequence(state_dir))


def grant(
    mine: list[G],
    patterns: Sequence[str],
    *,
    agent: str,
    exclusive: bool,
    reason: str | None,
    cell: str | None,
    now: datetime,
    ttl_seconds: int,
    first_id: int,
    overrides: Callable[[str], list[Any]],
    renew: Callable[[G, dict[str, Any]], G],
    create: Callable[[dict[str, Any]], G],
) -> tuple[list[G], list[int]]:
    """Add or renew ``agent``'s entries for ``patterns`` in ``mine`` (its active
    reservations, changed in place): (granted, ids renewed). A renewal keeps the
    reason and cell not given again; a new entry takes the next id from
    ``first_id``. ``overrides(pattern)``: what a forced grant of the pattern
    overrode; ``renew(existing, values)`` and ``create(fields)`` make the
    reservation objects (models on the full path, plain ones on the lean path)."""
    expires = now + timedelta(seconds=ttl_seconds)
    granted: list[G] = []
    renewed: list[int] = []
    number = first_id
    for pattern in patterns:
        existing = next((r for r in mine if r.path_pattern == pattern), None)
        overridden = overrides(pattern)
        values: dict[str, Any] = {
            "exclusive": exclusive,
            "reason": reason,
            "cell": cell,
            "expires_at": expires,
            "forced": bool(overridden),
            "overrides": overridden,
        }
        if existing is not None:
            values["reason"] = reason if reason is not None else existing.reason
            values["cell"] = cell if cell is not None else existing.cell
            updated = renew(existing, values)
            mine[mine.index(existing)] = updated
            granted.append(updated)
            renewed.append(existing.id)
            continue
        fields = {"id": number, "agent": agent, "path_pattern": pattern, "created_at": now}
        item = create({**fields, **values})
        number += 1
        mine.append(item)
        granted.append(item)
    return granted, renewed


# ------------------------------------------------------------------ the file


# ------------------------------------------------------------------ ids


def read_sequence(state_dir: str) -> int:
    """The highest reservation id this clone ever granted (ids are never reused)."""
    try:
        with open(os.path.join(state_dir, SEQUENCE_FILE), encoding="ascii") as handle:
            return int(handle.read().strip() or 0)
    except (OSError, ValueError):
        return 0


def write_sequence(state_dir: str, highest: int) -> None:
    """Record ``highest`` unless a higher id is recorded. The number is written in
    place, fixed-width, into the one sector at the start of the file: replacing the
    file by a rename made ext4 allocate and flush it at once (~3 ms per reserve).
    Read and written under a lock on the file itself: a git merge driver raising it
    (it holds no hive lock) never lowers a number a reserve wrote meanwhile."""
    if highest <= read_sequence(state_dir):
        return
    path = os.path.join(state_dir, SEQUENCE_FILE)
    try:
        os.makedirs(state_dir, exist_ok=True)
        descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError:
        return
    try:
        _lock_file(descriptor)
        recorded = os.pread(descriptor, SEQUENCE_WIDTH + 1, 0).decode("ascii", "replace").strip()
        if highest > (int(recorded) if recorded.isdigit() else 0):
            os.pwrite(descriptor, f"{highest:0{SEQUENCE_WIDTH}d}\n".encode("ascii"), 0)
    except OSError:
        return
    finally:
        os.close(descriptor)  # releases the lock


TIPS_FILE = "reservation.tips"  # the heads whose history raise_from_history has read
# A reservation's ``id: N`` line as a file hive did not write may hold it: the first key
# of a list item or another key of one (a free-text value's lines are indented further)
_ID_LINE = re.compile(rb"\n {0,4}(?:- )?id: ([0-9]{1,18})\n")


def raise_from_history(paths: RepoPaths, head: str | None) -> None:
    """Reservation ids that came in commits no hive code saw (a ``git pull`` that fast-
    forwards, a merge that took another clone's file as it was, a ``git reset``, a
    clone) are never given again here, even once released: every version of a
    reservation file written by a commit the heads reach and the heads read last time
    did not (``hive/git/arrivals.py``) raises the sequence. Under the write lock; a
    fresh clone reads its whole history once."""
    from hive.git.arrivals import versions_since
    from hive.git.refs import other_worktree_heads

    heads = {head.commit for head in other_worktree_heads(paths)} | {head}
    tips = sorted(sha for sha in heads if sha)
    state_dir = paths.hive_state_dir
    known = _read_tips(state_dir)
    if tips == known or not tips:
        return
    highest = 0
    for content in versions_since(paths, tips, known, RESERVATIONS_DIR):
        highest = max([highest, *_ids_in(content)])
    if highest:
        write_sequence(state_dir, highest)
    _write_tips(state_dir, tips)


def advance_tips(paths: RepoPaths, before: str | None, after: str | None) -> None:
    """After this clone's own commit ``after`` of reservation files on top of ``before``
    (a reserve, whose ids were given here, or a release, which gives none): when the
    heads :func:`raise_from_history` read last time include ``before``, ``after``
    replaces it, so the next reserve walks only what came since (else it would read
    back the reservation files this clone just wrote, every time)."""
    if not before or not after or before == after:
        return
    state_dir = paths.hive_state_dir
    known = _read_tips(state_dir)
    if before in known:
        _write_tips(state_dir, sorted({*known, after} - {before}))


def _ids_in(content: bytes) -> list[int]:
    """The reservation ids a version of a reservation file holds: read as the plain
    reader reads it, so that a reason's line reading ``id: N`` is not taken for one;
    a file it declines, by its ``id:`` lines at an item's depth."""
    read = plain_file(content)
    if read is not None:
        return [item.id for item in read.reservations]
    return [int(number) for number in _ID_LINE.findall(content)]


def _read_tips(state_dir: str) -> list[str]:
    try:
        with open(os.path.join(state_dir, TIPS_FILE), encoding="ascii") as handle:
            return sorted(line for line in handle.read().split() if len(line) == 40)
    except (OSError, ValueError):
        return []


def _write_tips(state_dir: str, tips: list[str]) -> None:
    """Written in place, not truncated first nor renamed (either made ext4 flush the
    file at once: milliseconds per reserve, see :func:`write_sequence`)."""
    data = "".join(f"{sha}\n" for sha in tips).encode("ascii")
    with suppress(OSError):
        descriptor = os.open(os.path.join(state_dir, TIPS_FILE), os.O_RDWR | os.O_CREAT, 0o666)
        try:
            os.pwrite(descriptor, data, 0)
            if os.fstat(descriptor).st_size > len(data):
                os.ftruncate(descriptor, len(data))
        finally:
            os.close(descriptor)


def raise_sequence(state_dir: str, files: Iterable[tuple[str, bytes | None]]) -> None:
    """Reservation ids that arrived from another clone (``files``: (path, content) of
    merged hive files) are never given again here: a merge may have renumbered one
    above every id this clone granted (``hive sync``, git's merge driver)."""
    highest = 0
    for path, content in files:
        if path.startswith(RESERVATIONS_DIR + "/") and content is not None:
            read = plain_file(content)
            if read is not None:
                highest = max([highest, *(item.id for item in read.reservations)])
    if highest:
        write_sequence(state_dir, highest)


def _lock_file(descriptor: int) -> None:
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no flock; reserves still take turns
        return
    fcntl.flock(descriptor, fcntl.LOCK_EX)
