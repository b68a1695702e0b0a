"""The merge rules of reservation files, the project context and the config, without
the models.

Like :mod:`hive.domain.mergecore` for cells: one set of rules that the full path
(:mod:`hive.domain.merge`, on what its models read) and git's merge driver (on plain
objects read by ``hive/store/yamlfast.py``, without pydantic or dulwich) both run. The
``plain_*`` functions read a file only when the model would certainly read it the same
way, and decline (None) everything else, which the caller then leaves to the full path;
:func:`reservation_file`, :func:`context_file` and :func:`config_file` give the merged
file's bytes exactly as the full path writes them, or None
(``tests/test_merge_driver_lean.py`` compares the two). :func:`set_merge`, the rule for
sets, is the cells' too (``hive/domain/mergecore.py``).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from collections.abc import Callable, Hashable, Sequence
    from datetime import datetime
    from typing import Any, Protocol, TypeVar

    from hive.domain.reservecore import PlainReservation

    class Entry(Protocol):
        """A reservation as the merge reads it (the model or a plain one)."""

        @property
        def id(self) -> int: ...

        @property
        def path_pattern(self) -> str: ...

        @property
        def created_at(self) -> datetime: ...

        @property
        def expires_at(self) -> datetime: ...

        @property
        def yielded_to(self) -> object: ...

        @property
        def renumbered_from(self) -> int | None: ...

    E = TypeVar("E", bound=Entry)
    T = TypeVar("T")
    K = TypeVar("K", bound=Hashable)

CONFIG_CONFLICT = "# hive merge conflict: "  # a line of config.yaml: what a merge did not keep
# the ProjectContext model's sections, in its order (what its dump holds)
CONTEXT_SECTIONS = ("project", "goals", "stack", "decisions", "milestones", "banned")


# ------------------------------------------------------------------ sets


def set_merge(
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


# ------------------------------------------------------------------ reservation files


def merge_reservations(
    base: Sequence[E] | None,
    ours: Sequence[E],
    theirs: Sequence[E],
    *,
    tie: Callable[[E], str],
    copy: Callable[[E, dict[str, Any]], E],
) -> list[E]:
    """One agent's reservations from three versions of its file: a set keyed by pattern
    and grant time (removals win: an expired entry one side pruned is gone), a grant
    changed on both sides keeps the later expiry, sorted by grant time, ids given once
    (:func:`renumbered`). ``tie(entry)``: the entry's JSON (``model_dump_json``), which
    decides between two changes with one expiry; ``copy(entry, changes)``: the entry
    with ``changes`` (models on the full path, plain ones here)."""

    def key(item: E) -> tuple[str, str]:
        """A grant's identity: its pattern and time (not its id, which a merge may
        renumber)."""
        return (item.path_pattern, item.created_at.isoformat())

    def later(a: E, b: E) -> E:
        """One grant changed on both sides: the later expiry; yielded if either side
        settled it as yielded (a contest found at a sync); renumbered if either side
        renumbered it."""
        kept = max(a, b, key=lambda r: (r.expires_at, tie(r)))
        return copy(
            kept,
            {
                "yielded_to": kept.yielded_to or a.yielded_to or b.yielded_to,
                "id": max(a.id, b.id),
                "renumbered_from": a.renumbered_from or b.renumbered_from,
            },
        )

    theirs_by_key = {key(item): item for item in theirs}
    entries = set_merge(base, ours, theirs, key)
    merged = [later(item, theirs_by_key.get(key(item), item)) for item in entries]
    merged.sort(key=lambda r: (r.created_at, r.id, r.path_pattern))
    return renumbered(merged, copy)


def renumbered(items: list[E], copy: Callable[[E, dict[str, Any]], E]) -> list[E]:
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
            item = copy(item, {"id": top, "renumbered_from": former})
        seen.add(item.id)
        result.append(item)
    return result


def reservation_file(base: bytes | None, ours: bytes, theirs: bytes) -> bytes | None:
    from hive.domain.reservecore import PlainFile, plain_file

    mine, other = plain_file(ours), plain_file(theirs)
    # git gives an empty base when both sides added the file; the model refuses it
    original = plain_file(base) if base else None
    if mine is None or other is None or (base and original is None):
        return None
    if mine.agent != other.agent:
        return None  # the full path refuses the merge, with its message
    merged = merge_reservations(
        original.reservations if original is not None else None,
        mine.reservations,
        other.reservations,
        tie=reservation_json,
        copy=_copied,
    )
    return PlainFile(mine.agent, merged).encode()


def _copied(item: PlainReservation, changes: dict[str, Any]) -> PlainReservation:
    from hive.domain.reservecore import PlainReservation

    return PlainReservation({**item.dump(), **changes})


def reservation_json(item: PlainReservation) -> str:
    """``Reservation.model_dump_json()`` of the plain reservation: compact, every field
    in the model's order, times as the model's JSON gives them (``hive.times``). Raises
    ValueError for text that is not UTF-8 (lone surrogates: pydantic refuses them)."""
    import json

    from hive.times import format_time

    fields = item.dump()
    fields["created_at"] = format_time(item.created_at)
    fields["expires_at"] = format_time(item.expires_at)
    text = json.dumps(fields, ensure_ascii=False, separators=(",", ":"))
    text.encode("utf-8")  # refuses lone surrogates, as pydantic does
    return text


# ------------------------------------------------------------------ the project context


def merge_context(
    base: dict[str, Any] | None, ours: dict[str, Any], theirs: dict[str, Any]
) -> dict[str, Any]:
    """The merged context (sections in the model's order) of three contexts' sections:
    logs keep the entries of both sides once each (removals win), a milestone completed
    on either side is completed, ``stack``/``project`` merge key by key."""

    def section(name: str) -> Any:
        return None if base is None else base[name]

    merged: dict[str, Any] = {}
    for name in CONTEXT_SECTIONS:
        if name in ("project", "stack"):
            merged[name] = mapping_merge(section(name), ours[name], theirs[name])
        elif name == "milestones":
            merged[name] = _milestones(section(name), ours[name], theirs[name])
        else:
            merged[name] = _log_merge(section(name), ours[name], theirs[name])
    return merged


def context_file(base: bytes | None, ours: bytes, theirs: bytes) -> bytes | None:
    from hive.store.yamlio import dumps

    mine, other = plain_context(ours), plain_context(theirs)
    original = plain_context(base) if base else None
    if mine is None or other is None or (base and original is None):
        return None
    return dumps(merge_context(original, mine, other)).encode("utf-8")


def plain_context(data: bytes) -> dict[str, Any] | None:
    """The sections of the context ``data`` holds (``ProjectContext.model_dump()``),
    when the model certainly reads it so, else None."""
    mapping = _mapping(data)
    if mapping is None or not set(mapping) <= set(CONTEXT_SECTIONS):
        return None
    context: dict[str, Any] = {}
    for name in CONTEXT_SECTIONS:
        value = mapping.get(name, {} if name in ("project", "stack") else [])
        if name in ("project", "stack"):
            ok = isinstance(value, dict) and _json_plain(value)
        elif name in ("goals", "banned"):
            ok = isinstance(value, list) and all(isinstance(item, str) for item in value)
        else:
            ok = isinstance(value, list) and all(
                isinstance(item, dict) and _json_plain(item) for item in value
            )
        if not ok:
            return None
        context[name] = value
    return context


def _mapping(data: bytes) -> dict[str, Any] | None:
    from hive.store.yamlfast import fast_loads

    try:
        mapping = fast_loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    return mapping if isinstance(mapping, dict) else None


def _json_plain(value: Any) -> bool:
    """Only what a JSON dump keeps as it is: strings, ints, booleans, None, finite
    floats, lists and string-keyed mappings (pydantic writes inf and nan as null)."""
    if value is None or isinstance(value, str | bool | int):
        return True
    if isinstance(value, float):
        return value - value == 0.0  # not inf, not nan
    if isinstance(value, list):
        return all(_json_plain(item) for item in value)
    if isinstance(value, dict):
        return all(isinstance(key, str) and _json_plain(item) for key, item in value.items())
    return False


def canonical(item: Any) -> str:
    import json

    return json.dumps(item, sort_keys=True, ensure_ascii=False, default=str)


def _log_merge(base: list[T] | None, ours: list[T], theirs: list[T]) -> list[T]:
    """Entries of both sides once each (an entry either side removed is gone); the
    base's order, then what was added, by recording time (the same on both clones)."""
    merged = set_merge(base, ours, theirs, canonical)
    before = {canonical(item) for item in base or []}
    kept = [item for item in merged if canonical(item) in before]
    added = [item for item in merged if canonical(item) not in before]
    return kept + sorted(added, key=lambda item: (_recorded(item), canonical(item)))


def _recorded(item: Any) -> str:
    return str(item.get("recorded_at", "")) if isinstance(item, dict) else ""


def _milestones(
    base: list[dict[str, Any]] | None, ours: list[dict[str, Any]], theirs: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Milestones by name: both sides' kept; completed on either side is completed."""

    def name(item: dict[str, Any]) -> str:
        return str(item.get("name"))

    def rank(item: dict[str, Any]) -> tuple[bool, str]:
        return (item.get("status") == "completed", canonical(item))

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


def mapping_merge(
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


def merge_config(
    texts: tuple[bytes | None, bytes, bytes],
    base: dict[str, Any] | None,
    ours: dict[str, Any],
    theirs: dict[str, Any],
) -> tuple[bytes, list[dict[str, Any]]]:
    """(the merged ``.hive/config.yaml``, its conflict records ``{field, kept, other}``)
    from the three files' ``texts`` (base, ours, theirs) and the settings they hold:
    setting by setting (nested mappings key by key). A setting only one side changed
    takes that side's value; one both sides set differently keeps the larger value (the
    same on every clone) and the other is recorded, as a ``# hive merge conflict:`` line
    at the top of the file (``hive doctor`` reports it until someone deletes it) and in
    the records: never lost silently."""
    from hive.store.yamlio import dumps

    records: list[dict[str, Any]] = []
    merged = _settings_merge(base, ours, theirs, "", records)
    lines = set_merge(
        _conflict_lines(texts[0]) if texts[0] is not None else None,
        _conflict_lines(texts[1]),
        _conflict_lines(texts[2]),
        lambda line: line,
    )
    lines += [
        f"{CONFIG_CONFLICT}both clones changed {record['field']}: kept"
        f" {canonical(record['kept'])}, the other had {canonical(record['other'])}"
        " (set it, then delete this line)"
        for record in records
    ]
    header = "".join(line + "\n" for line in dict.fromkeys(lines))
    return (header + dumps(merged)).encode("utf-8"), records


def config_file(
    base: bytes | None, ours: bytes, theirs: bytes
) -> tuple[bytes, list[dict[str, Any]]] | None:
    """:func:`merge_config` of three config files the plain reader reads as the loader
    does (None: it may read them otherwise, or refuse them), when its conflict records
    hold only what a JSON dump keeps as it is (as ``MergeConflict`` dumps them)."""
    mine, other = _mapping(ours), _mapping(theirs)
    original = _mapping(base) if base else None
    if mine is None or other is None or (base and original is None):
        return None  # the loader may read them otherwise (or refuse them)
    content, records = merge_config((base, ours, theirs), original, mine, other)
    if not all(_json_plain(record["kept"]) and _json_plain(record["other"]) for record in records):
        return None
    return content, records


def _conflict_lines(data: bytes) -> list[str]:
    text = data.decode("utf-8", errors="replace")
    return [line for line in text.splitlines() if line.startswith(CONFIG_CONFLICT)]


def _settings_merge(
    base: dict[str, Any] | None,
    ours: dict[str, Any],
    theirs: dict[str, Any],
    prefix: str,
    records: list[dict[str, Any]],
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
            value = _settings_merge(start, mine, other, f"{prefix}{key}.", records)
        elif lost is not missing:
            records.append({"field": f"{prefix}{key}", "kept": value, "other": lost})
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
    kept = max(present, key=canonical)
    lost = next((v for v in (mine, other) if v is not kept), missing)
    return kept, None if lost is missing else lost
