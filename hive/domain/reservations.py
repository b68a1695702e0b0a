"""File reservations that are enforced, not advisory.

Each agent's reservations live in ``.hive/reservations/<agent>.yaml`` on the
working branch, so ``swarm_complete`` can release them in the same commit
that closes the cell. A request is checked, pattern against pattern, against
every other agent's active reservation inside the write transaction, on this
branch and on the branch of every other worktree of the repository (all under
the one repository-wide write lock in the common git directory), so two agents
can never both be granted intersecting exclusive patterns. A conflicting
request is refused with ``reservation_conflict``; only a coordinator or a
person may ``force`` it, with a reason, and the override is recorded.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from hive.domain import reservecore
from hive.domain.config_sections import agent_profile, parsed_section
from hive.domain.ownership import (
    check_owner,
    override_role,
    override_trailers,
    record_overrides,
    require_override_role,
)
from hive.domain.path_rules import (
    PathPermissionDenied,
    pattern_only_denied,
    permissions_from_config,
)
from hive.domain.reservecore import (
    GLOB_CHARS as GLOB_CHARS,
)
from hive.domain.reservecore import (
    MAX_TTL,
    RESERVATIONS_DIR,
    RESERVE_TOOL,
    compared_prefix,
    conflicting,
    entry_text,
    file_text,
    path_under,
    reservation_path,
    split_release,
    write_sequence,
)
from hive.domain.reservecore import (
    conflicts_with as conflicts_with,
)
from hive.domain.reservecore import (
    may_intersect as may_intersect,
)
from hive.domain.workspace import Workspace, check_actor
from hive.errors import (
    AmbiguousId,
    Conflict,
    CorruptFile,
    InvalidInput,
    NotFound,
    NotOwner,
    ReservationConflict,
)
from hive.git.repo import Change, Snapshot, blob_sha_of, format_message
from hive.models import utc_now
from hive.models.identity import Override
from hive.models.reservation import (
    ConflictDetail,
    ReleaseResult,
    Reservation,
    ReservationFile,
    ReservationProblem,
    ReserveResult,
)
from hive.models.reservation import (
    Override as ReservationOverride,
)
from hive.store.layout import HIVE_DIR
from hive.store.yamlio import load_mapping
from hive.text import utf8_clean

LOADED_CACHE = "reservations.loaded"  # reservations tree key -> LoadedReservations
PREFIX_CACHE = "reservations.prefixed"  # blob sha -> [(literal prefix, reservation)]
BLOB_CACHE = "reservation_blobs"


# ------------------------------------------------------------------ storage


def encode_file(data: ReservationFile) -> bytes:
    """Deterministic YAML: the agent, then one block per reservation (each block is
    encoded once per reservation object: they are never mutated, renewal copies)."""
    return file_text(data.agent, [_encoded_entry(item) for item in data.reservations])


_ENTRY_TEXT: dict[int, tuple[Reservation, str]] = {}


def _encoded_entry(item: Reservation) -> str:
    known = _ENTRY_TEXT.get(id(item))
    if known is not None and known[0] is item:
        return known[1]
    fields = item.model_dump(mode="json", exclude_none=True)
    fields.update(created_at=item.created_at, expires_at=item.expires_at)
    text = entry_text(fields)
    if len(_ENTRY_TEXT) > 4096:
        _ENTRY_TEXT.clear()
    _ENTRY_TEXT[id(item)] = (item, text)
    return text


def _stamp(value: datetime) -> str:
    from hive.store.cells import format_time

    return format_time(value)


def decode_file(content: bytes, path: str) -> ReservationFile:
    mapping = load_mapping(content.decode("utf-8", errors="replace"), path)
    try:
        return ReservationFile.model_validate(mapping)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        raise CorruptFile(f"{path}: invalid field {where!r}: {error['msg']}", path=path) from None


@dataclass
class LoadedReservations:
    """Every trustworthy reservation file (by agent) and every file that is not."""

    files: dict[str, ReservationFile] = field(default_factory=dict)
    problems: list[ReservationProblem] = field(default_factory=list)
    # Every reservation with its pattern's literal prefix, expired ones included (time
    # moves on, the files do not). Callers never mutate a loaded state.
    held: list[tuple[str, Reservation]] = field(default_factory=list)


def load_reservations(ws: Workspace, snap: Snapshot) -> LoadedReservations:
    """Every agent's reservation file at ``snap``, and the files that cannot be trusted.

    A file that does not parse, or that is not at its agent's path, or that
    holds another agent's entries is a *problem*: callers must not treat it
    as empty (its exclusive reservations would silently stop counting).
    """
    key = snap.dir_key(RESERVATIONS_DIR)
    states: dict[str, LoadedReservations] = ws.state.setdefault(LOADED_CACHE, {})
    if key not in states:
        if len(states) >= 8:
            states.pop(next(iter(states)))
        states[key] = _load_reservations(ws, snap)
    return states[key]


def _load_reservations(ws: Workspace, snap: Snapshot) -> LoadedReservations:
    cache: dict[str, ReservationFile | str] = ws.state.setdefault(BLOB_CACHE, {})
    loaded = LoadedReservations()
    for path, sha in snap.listing(RESERVATIONS_DIR).items():
        if sha not in cache:
            try:
                cache[sha] = decode_file(ws.git.read_blob(sha), path)
            except CorruptFile as exc:
                cache[sha] = exc.message
        parsed = cache[sha]
        problem = parsed if isinstance(parsed, str) else misfiled(path, parsed)
        if problem is not None:
            loaded.problems.append(ReservationProblem(path=path, message=problem))
        elif not isinstance(parsed, str):
            loaded.files[parsed.agent] = parsed
            loaded.held += _prefixed(ws, sha, parsed)
    return loaded


def _prefixed(ws: Workspace, sha: str, data: ReservationFile) -> list[tuple[str, Reservation]]:
    """``data``'s reservations with their literal prefixes as compared
    (``reservecore.compared_prefix``), computed once per file version."""
    cache: dict[str, list[tuple[str, Reservation]]] = ws.state.setdefault(PREFIX_CACHE, {})
    if sha not in cache:
        cache[sha] = [(compared_prefix(r.path_pattern), r) for r in data.reservations]
    return cache[sha]


def misfiled(path: str, data: ReservationFile) -> str | None:
    """Why ``data`` may not be stored at ``path`` (None when it may)."""
    return reservecore.misfiled(path, data.agent, (r.agent for r in data.reservations))


def load_all(ws: Workspace, snap: Snapshot) -> dict[str, ReservationFile]:
    """Every agent's trustworthy reservation file at ``snap`` (see :func:`load_reservations`)."""
    return load_reservations(ws, snap).files


def problems_error(problems: list[ReservationProblem]) -> CorruptFile:
    first = problems[0]
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return CorruptFile(
        f"{first.message}{more}; reservations cannot be checked until it is fixed"
        " (see 'hive doctor')",
        path=first.path,
    )


def active_reservations(files: dict[str, ReservationFile], now: datetime) -> list[Reservation]:
    return [r for data in files.values() for r in data.reservations if r.active(now)]


# ------------------------------------------------------------------ paths


def normalize_request(ws: Workspace, path: str) -> str:
    """A reservation pattern relative to the repository root, in canonical form
    (see :func:`hive.domain.reservecore.normalize_request`)."""
    return reservecore.normalize_request(ws.root, path)


# ------------------------------------------------------------------ operations


def reserve(
    ws: Workspace,
    *,
    paths: Sequence[str],
    reason: str | None = None,
    exclusive: bool = True,
    ttl_seconds: int = 3600,
    cell: str | None = None,
    force: bool = False,
) -> ReserveResult:
    """Reserve glob patterns for the actor, or refuse with the conflicts.

    Conflicts are searched in this branch's reservations and in those of every
    other worktree's branch. ``force`` (a coordinator or a person, with a
    ``reason``) grants a conflicting request and records what it overrode. An
    agent may not reserve a pattern that names only files its
    ``tools.permissions`` rules deny it.
    """
    agent = ws.require_agent("reserving files")
    if not paths:
        raise InvalidInput("give at least one path or pattern to reserve")
    if not 1 <= ttl_seconds <= MAX_TTL:
        raise InvalidInput(f"ttl_seconds must be between 1 and {MAX_TTL}, got {ttl_seconds}")
    patterns = list(dict.fromkeys(reservecore.reservable(ws.root, p) for p in paths))
    cell_id = _resolve_cell(ws, cell)
    forced: list[Override] = []

    def plan(snap: Snapshot) -> tuple[list[Change], str, Any]:
        ws.config(snap)  # reservations are only enforced in an initialised hive
        if force:
            require_override_role(ws, agent, action="force a reservation", snap=snap)
        _refuse_denied(ws, snap, agent, patterns)
        now = utc_now()
        loaded = load_reservations(ws, snap)
        others = worktree_reservations(ws, snap)
        problems = loaded.problems + [p for _, other in others for p in other.problems]
        if problems:
            raise problems_error(problems)
        files = loaded.files
        found = _conflicts(loaded, agent, patterns, exclusive, now)
        for branch, other in others:
            found += _conflicts(other, agent, patterns, exclusive, now, branch=branch)
        if found and not force:
            raise _conflict_error(found)
        overrides = _overrides(ws, snap, found, reason) if found else []
        forced[:] = overrides
        mine = _pruned(files.get(agent), agent, now)
        held = (r for data in files.values() for r in data.reservations)
        reservecore.raise_from_history(ws.git.paths, snap.head.commit)  # git pull, reset
        bases.append(snap.head.commit)
        granted, renewed = reservecore.grant(
            mine.reservations,
            patterns,
            agent=agent,
            exclusive=exclusive,
            reason=reason,
            cell=cell_id,
            now=now,
            ttl_seconds=ttl_seconds,
            first_id=reservecore.next_id(held, ws.git.paths.hive_state_dir),
            overrides=lambda pattern: _overridden(found, pattern),
            renew=lambda existing, values: existing.model_copy(update=values),
            create=lambda fields: Reservation(**fields),
        )
        result = ReserveResult(granted=granted, renewed=renewed, overridden=found)
        change = file_change(ws, mine)
        verb = "force-reserve" if force and found else "reserve"
        message = _message(ws, verb, f"{agent} {', '.join(patterns)}", cell_id, found, overrides)
        return [change], message, result

    bases: list[str | None] = []  # the commit the last plan was made on
    written = ws.write_files(plan)
    outcome: ReserveResult = written.result
    _write_sequence(ws, max((r.id for r in outcome.granted), default=0))
    reservecore.advance_tips(ws.git.paths, bases[-1] if bases else None, written.commit)
    if forced:
        record_overrides(ws, forced, written.commit)
    return outcome


def worktree_reservations(ws: Workspace, snap: Snapshot) -> list[tuple[str, LoadedReservations]]:
    """(branch, reservations) of every other worktree's HEAD, when it differs from
    ``snap``'s commit (:func:`hive.domain.reservecore.other_worktree_snapshots`)."""
    return [
        (branch, load_reservations(ws, other))
        for branch, other in reservecore.other_worktree_snapshots(ws.git, snap)
    ]


@dataclass
class HeldFiles:
    """Files another agent's exclusive reservation keeps from a commit by ``agent``."""

    blocked: list[tuple[str, Reservation]]  # (file, the other agent's reservation)
    problems: list[ReservationProblem]  # this branch's reservation files not to be trusted


def held_message(path: str, item: Reservation) -> str:
    """How a file under another agent's reservation is named to whoever commits it (the
    pre-commit hook, ``swarm_complete``); a name whose bytes are not UTF-8 is shown with
    them escaped (``caf\\xe9.txt``), as every surface shows it."""
    cell = f" for {item.cell}" if item.cell else ""
    return (
        f"{utf8_clean(path)} is reserved by {item.agent}{cell} ({item.path_pattern}) until "
        f"{item.expires_at:%Y-%m-%d %H:%M:%S}Z"
    )


def files_held_by_others(
    ws: Workspace,
    snap: Snapshot,
    agent: str,
    paths: Iterable[str],
    now: datetime,
    *,
    submodules: Collection[str] = (),
    also: Sequence[Reservation] = (),
) -> HeldFiles:
    """Which of ``paths`` (files about to be committed for ``agent``) fall under another
    agent's active exclusive reservation, on this branch or on any other worktree's,
    unless ``agent`` force-reserved them over it: what the pre-commit hook refuses in a
    ``git commit``, and ``swarm_complete`` in the files it commits. A path among
    ``submodules`` (a staged gitlink) stands for every file below it; ``also``: more
    reservations that count (the hook's: those HEAD holds, which a commit that drops
    them from its own staged files does not escape)."""
    loaded = load_reservations(ws, snap)
    held = active_reservations(loaded.files, now) + list(also)
    for _, other in worktree_reservations(ws, snap):
        held += active_reservations(other.files, now)
    fold = reservecore.folds_case(ws.git.paths)  # SRC/a.py is src/a.py there
    blocked = blocked_paths(held, agent, paths, fold, submodules)
    return HeldFiles(blocked=blocked, problems=list(loaded.problems))


def blocked_paths(
    held: Sequence[Reservation],
    agent: str,
    paths: Iterable[str],
    fold: bool,
    submodules: Collection[str] = (),
) -> list[tuple[str, Reservation]]:
    """(path, the reservation) for each of ``paths`` (outside .hive/) that another
    agent's exclusive reservation among ``held`` keeps from ``agent``, unless ``agent``
    force-reserved it over that one (:func:`files_held_by_others`)."""
    mine = [r for r in held if r.agent == agent]
    blocking = [r for r in held if r.exclusive and r.agent != agent]
    blocked: list[tuple[str, Reservation]] = []
    for path in paths:
        if path.startswith(HIVE_DIR + "/"):
            continue
        below = _escaped(path) + "/**" if path in submodules else None
        for item in blocking:
            if not path_under(item.path_pattern, path, fold) and (
                below is None or not conflicts_with(below, True, item, fold_case=fold)
            ):
                continue
            if not _forced_over(mine, item, path, fold):
                blocked.append((path, item))
                break
    return blocked


def _escaped(path: str) -> str:
    """``path`` as a pattern that matches it alone (glob characters escaped)."""
    return "".join("\\" + char if char in "\\*?[]{}," else char for char in path)


def _forced_over(mine: list[Reservation], item: Reservation, path: str, fold: bool) -> bool:
    """True when the committer force-reserved ``path`` over ``item`` (a coordinator)."""
    return any(
        override.holder == item.agent
        and override.reservation_id == item.id
        and path_under(own.path_pattern, path, fold)
        for own in mine
        for override in own.overrides
    )


def _refuse_denied(ws: Workspace, snap: Snapshot, agent: str, patterns: list[str]) -> None:
    """An agent may not reserve a pattern naming only files denied to it (a pattern that
    merely could contain denied files is fine: those stay denied file by file), unless
    its ``agents:`` entry has ``bypass_permissions`` (it skips the path rules)."""
    if ws.principal.kind != "agent":
        return
    rules = parsed_section(ws, "tools", permissions_from_config, snap)
    fold = reservecore.folds_case(ws.git.paths)
    try:
        for pattern in patterns:
            pattern_only_denied(rules, agent, RESERVE_TOOL, pattern, fold_case=fold)
    except PathPermissionDenied:
        if not agent_profile(ws, agent, snap).bypass_permissions:
            raise


def _overrides(
    ws: Workspace, snap: Snapshot, found: list[ConflictDetail], reason: str | None
) -> list[Override]:
    overrides: list[Override] = []
    for holder in dict.fromkeys(c.holder for c in found):
        held = ", ".join(f"#{c.reservation_id} {c.pattern}" for c in found if c.holder == holder)
        override = check_owner(
            ws,
            owner=holder,
            action="override the reservations",
            target=held,
            force=True,
            reason=reason,
            snap=snap,
            what="held by",
        )
        if override is not None:
            overrides.append(override)
    return overrides


def _write_sequence(ws: Workspace, highest: int) -> None:
    write_sequence(ws.git.paths.hive_state_dir, highest)


def _overridden(found: list[ConflictDetail], pattern: str) -> list[ReservationOverride]:
    """What a forced grant of ``pattern`` overrides (recorded in its reservation)."""
    return [
        ReservationOverride(reservation_id=c.reservation_id, holder=c.holder, pattern=c.pattern)
        for c in found
        if c.requested == pattern
    ]


def _pruned(data: ReservationFile | None, agent: str, now: datetime) -> ReservationFile:
    if data is None:
        return ReservationFile(agent=agent)
    return ReservationFile(
        agent=agent, reservations=[r for r in data.reservations if r.active(now)]
    )


def _conflicts(
    loaded: LoadedReservations,
    agent: str,
    patterns: Iterable[str],
    exclusive: bool,
    now: datetime,
    *,
    branch: str | None = None,
) -> list[ConflictDetail]:
    return [
        conflict_detail(pattern, held, branch)
        for pattern, held in conflicting(loaded.held, agent, patterns, exclusive, now)
    ]


def conflict_detail(requested: str, held: Reservation, branch: str | None = None) -> ConflictDetail:
    """What a conflict with ``held`` over ``requested`` (a pattern or a file) reports."""
    return ConflictDetail(
        requested=requested,
        holder=held.agent,
        pattern=held.path_pattern,
        exclusive=held.exclusive,
        cell=held.cell,
        expires_at=held.expires_at,
        reservation_id=held.id,
        branch=branch,
    )


def _conflict_error(found: list[ConflictDetail]) -> ReservationConflict:
    parts = []
    for conflict in found:
        where = f" for {conflict.cell}" if conflict.cell else ""
        if conflict.branch:
            where += f" in the worktree of branch {conflict.branch}"
        parts.append(
            f"{conflict.requested} conflicts with {conflict.pattern} reserved by"
            f" {conflict.holder}{where} until {_stamp(conflict.expires_at)}"
        )
    holders = " or ".join(dict.fromkeys(conflict.holder for conflict in found))
    step = (
        f"; nothing was reserved: ask {holders} to release it (a message), wait until it"
        " expires, or reserve other files"
    )
    return ReservationConflict(
        "; ".join(parts) + step, conflicts=[c.model_dump(mode="json") for c in found]
    )


def _resolve_cell(ws: Workspace, cell: str | None) -> str | None:
    if cell is None:
        return None
    from hive.domain.cells import get_cell

    return get_cell(ws.cells(), cell).id


def _message(
    ws: Workspace,
    verb: str,
    subject: str,
    cell_id: str | None,
    overridden: Sequence[ConflictDetail] = (),
    overrides: Sequence[Override] = (),
    extra: Sequence[tuple[str, str]] = (),
) -> str:
    trailers = [("Hive-Cell", cell_id)] if cell_id else []
    trailers += ws.trailers(verb)
    trailers += [
        ("Hive-Overrides", f"{c.holder} #{c.reservation_id} {c.pattern}") for c in overridden
    ]
    trailers += override_trailers(overrides)
    trailers += list(extra)
    return format_message(f"hive: {verb} {subject}", trailers)


def release(
    ws: Workspace,
    *,
    paths: Sequence[str] | None = None,
    reservation_ids: Sequence[int] | None = None,
    agent: str | None = None,
    force: bool = False,
    reason: str | None = None,
) -> ReleaseResult:
    """Release the actor's reservations: given patterns/ids, or all of them.

    Only the holder releases. ``agent`` names another holder, whose reservations a
    coordinator or a person may release with ``force`` and a ``reason`` (recorded).
    """
    me = ws.require_agent("releasing reservations")
    holder = check_actor(agent) if agent else me
    wanted_patterns = [normalize_request(ws, p) for p in paths or []]
    wanted_ids = list(reservation_ids or [])
    forced: list[Override] = []

    bases: list[str | None] = []  # the commit the last plan was made on

    def plan(snap: Snapshot) -> tuple[list[Change], str, Any]:
        now = utc_now()
        bases.append(snap.head.commit)
        loaded = load_reservations(ws, snap)
        own = [p for p in loaded.problems if p.path == reservation_path(holder)]
        if own:
            raise problems_error(own)
        files = loaded.files
        mine = _pruned(files.get(holder), holder, now)
        released, kept, missing = split_release(mine.reservations, wanted_patterns, wanted_ids)
        if holder == me:
            _refuse_others_ids(files, me, [int(m[1:]) for m in missing if m.startswith("#")], now)
        if (wanted_patterns or wanted_ids) and not released:
            raise reservecore.nothing_matching(holder, missing)
        overrides = []
        if holder != me and not released:  # nothing of theirs to release: no override
            return [], "", ReleaseResult(released=[], not_found=missing)
        if holder != me:
            held = ", ".join(f"#{r.id} {r.path_pattern}" for r in released)
            override = check_owner(
                ws,
                owner=holder,
                action="release",
                target=held,
                force=force,
                reason=reason,
                snap=snap,
                what="held by",
            )
            overrides = [override] if override is not None else []
        forced[:] = overrides
        current = files.get(holder)
        if current is None or (not released and len(current.reservations) == len(kept)):
            return [], "", ReleaseResult(released=[], not_found=missing)
        change = release_change(holder, kept, ws)
        subject = f"{holder} {', '.join(r.path_pattern for r in released) or '(expired)'}"
        message = _message(ws, "release", subject, None, overrides=overrides)
        return [change], message, ReleaseResult(released=released, not_found=missing)

    written = ws.write_files(plan)
    if forced and written.commit:
        record_overrides(ws, forced, written.commit)
    reservecore.advance_tips(ws.git.paths, bases[-1] if bases else None, written.commit)
    outcome: ReleaseResult = written.result
    return outcome


def _refuse_others_ids(
    files: dict[str, ReservationFile], me: str, ids: list[int], now: datetime
) -> None:
    """Releasing another agent's reservation by id is refused, naming its holder."""
    for data in files.values():
        if data.agent == me:
            continue
        for item in data.reservations:
            if item.id in ids and item.active(now):
                raise NotOwner(
                    f"reservation #{item.id} ({item.path_pattern}) is held by {data.agent};"
                    f" only {data.agent} may release it (a coordinator or a person may"
                    " override with agent, force and a reason)",
                    owner=data.agent,
                    reservation_id=item.id,
                )


def release_for_holder(
    ws: Workspace,
    *,
    reservation_id: int,
    agent: str | None = None,
    as_coordinator: bool = False,
    only_stale: bool = False,
    reason: str | None = None,
) -> ReleaseResult:
    """Release one reservation by id, whoever holds it (a stale one: its holder
    stopped or moved on). The holder's expired entries are pruned in the same
    commit; the commit names the actor and carries ``Hive-Released: holder #id
    pattern``. ``agent`` names the holder: ids are unique within a clone, but two
    clones may have given one number to different agents' grants (they meet at a
    sync); an id that names more than one reservation is refused (AmbiguousId)
    unless the holder is named.

    Releasing another agent's reservation is an override: the actor must be a
    coordinator (``coordinators:`` in the config) or a person, unless
    ``as_coordinator`` says the surface already granted that role (``hive serve
    --allow-write``); it is recorded (``Hive-Override`` trailer, event log) with
    ``reason`` (default: why it is stale). Releasing one's own needs no role.
    With ``only_stale`` another agent's reservation that is not stale (see
    ``staleness``) is refused (Conflict): its holder may still be working.
    """
    actor = ws.actor
    forced: list[Override] = []

    def plan(snap: Snapshot) -> tuple[list[Change], str, Any]:
        loaded = load_reservations(ws, snap)
        matches = [
            r
            for data in loaded.files.values()
            for r in data.reservations
            if r.id == reservation_id and agent in (None, r.agent)
        ]
        if not matches:
            of = f" of {agent}" if agent else ""
            raise NotFound(f"no reservation #{reservation_id}{of}", reservation_id=reservation_id)
        if len(matches) > 1:
            named = "; ".join(f"{r.agent}'s {r.path_pattern!r}" for r in matches)
            raise AmbiguousId(
                f"reservation #{reservation_id} names {len(matches)} reservations (granted in"
                f" different clones): {named}; name the holder (agent) too",
                reservation_id=reservation_id,
            )
        found = matches[0]
        holder = found.agent
        overrides: list[Override] = []
        # why it looks stale: only another agent's needs saying (it reads the cells)
        why = (
            None
            if holder == actor
            else staleness(found, utc_now(), _cell_status(ws, snap, found.cell))
        )
        if only_stale and holder != actor and why is None:
            raise Conflict(
                f"reservation #{found.id} {found.path_pattern} of {holder} is not stale:"
                f" it runs until {_stamp(found.expires_at)} and its cell is not closed;"
                f" only {holder} may release it now (a coordinator: 'hive release --agent"
                f" {holder} --id {found.id} --force --reason WHY')",
                reservation_id=found.id,
                holder=holder,
            )
        if holder != actor:
            role = "coordinator" if as_coordinator else override_role(ws, snap)
            if role is None:
                require_override_role(
                    ws, actor, action="release another agent's reservation", snap=snap
                )
            overrides = [
                Override(
                    by=actor,
                    role=role or "coordinator",
                    action="release the reservation",
                    target=f"#{found.id} {found.path_pattern}",
                    owner=holder,
                    reason=" ".join((reason or _stale_reason(why)).split()),
                )
            ]
        forced[:] = overrides
        kept = [
            r for r in _pruned(loaded.files[holder], holder, utc_now()).reservations if r != found
        ]
        subject = f"{holder} {found.path_pattern}" + (f" (by {actor})" if holder != actor else "")
        trailers = [("Hive-Released", f"{holder} #{found.id} {found.path_pattern}")]
        message = _message(ws, "release", subject, found.cell, overrides=overrides, extra=trailers)
        return [release_change(holder, kept, ws)], message, ReleaseResult(released=[found])

    written = ws.write_files(plan)
    if forced:
        record_overrides(ws, forced, written.commit)
    outcome: ReleaseResult = written.result
    return outcome


def retired_release(
    ws: Workspace, snap: Snapshot, agent: str
) -> tuple[list[Change], list[Reservation], list[tuple[str, str]]]:
    """What releasing every reservation ``agent`` holds changes in ``snap``, as its
    identity is retired (part of the retire's one commit): the change (none when it
    holds nothing), the active reservations released and their ``Hive-Released``
    trailers."""
    path = reservation_path(agent)
    if snap.blob_sha(path) is None:
        return [], [], []
    held = load_reservations(ws, snap).files.get(agent)
    now = utc_now()
    active = [r for r in held.reservations if r.active(now)] if held else []
    trailers = [("Hive-Released", f"{agent} #{r.id} {r.path_pattern}") for r in active]
    return [Change(path, None)], active, trailers


def staleness(held: Reservation, now: datetime, cell_status: str | None) -> str | None:
    """Why ``held`` looks stale (its holder stopped or moved on), or None: it expired
    (or was yielded), or its cell is closed or gone (``cell_status`` None)."""
    if not held.active(now):
        return "expired"
    if held.cell and cell_status in (None, "closed"):
        return f"cell {cell_status or 'gone'}"
    return None


def _stale_reason(why: str | None) -> str:
    return f"a stale reservation ({why})" if why else "a reservation still active"


def _cell_status(ws: Workspace, snap: Snapshot, cell_id: str | None) -> str | None:
    """The status of ``cell_id`` in ``snap`` (None: no such cell, or deleted)."""
    if cell_id is None:
        return None
    node = ws.cells(snap).nodes.get(cell_id)
    return None if node is None or node.deleted else node.status


def release_change(agent: str, kept: list[Reservation], ws: Workspace | None = None) -> Change:
    """The file change that leaves ``agent`` holding only ``kept``."""
    if not kept:
        return Change(reservation_path(agent), None)
    return file_change(ws, ReservationFile(agent=agent, reservations=kept))


def file_change(ws: Workspace | None, data: ReservationFile) -> Change:
    """The change that stores ``data``; remembers it parsed so it is never re-read."""
    content = encode_file(data)
    if ws is not None:
        cache: dict[str, ReservationFile | str] = ws.state.setdefault(BLOB_CACHE, {})
        # Reservations are never mutated (renewal copies), so sharing them is safe.
        held = list(data.reservations)
        cache[blob_sha_of(content)] = ReservationFile(agent=data.agent, reservations=held)
    return Change(reservation_path(data.agent), content)


def list_reservations(
    ws: Workspace, *, agent: str | None = None, include_expired: bool = False
) -> list[Reservation]:
    """Active reservations (all agents, or one), soonest expiry first."""
    now = utc_now()
    files = load_all(ws, ws.snapshot())
    found = [
        r
        for data in files.values()
        for r in data.reservations
        if (include_expired or r.active(now)) and (agent is None or r.agent == agent)
    ]
    return sorted(found, key=lambda r: (r.expires_at, r.id))


def reservation_problems(ws: Workspace, snap: Snapshot | None = None) -> list[ReservationProblem]:
    """Reservation files that cannot be trusted (``hive reservations`` and doctor warn)."""
    return load_reservations(ws, snap or ws.snapshot()).problems
