"""Reservation files read without the models and without ``re``: where an agent's file
lives (:func:`reservation_path`), whether a file is where its agent's belongs
(:func:`misfiled`) and :func:`plain_file`, which reads a file into plain objects when
the model would certainly read it the same way (canonical YAML, exact types, times as
hive writes them) and declines (None) anything else, which the caller then leaves to
the full path. ``tests/test_lean_coord.py`` checks it against the model, byte for byte.
The file format's writer is here too (:func:`entry_text`, :func:`file_text`; the YAML
emitter is imported by a write only).

A leaf of ``hive/domain/reservecore.py`` (which re-exports all of it), apart so that
the pre-commit hook's quick check (``cli/leanhook.py``) reads the reservations at
HEAD without the conflict test's imports (``re``, the glob parser, the YAML writer).
"""

from __future__ import annotations

from hive.digests import sha256_hex
from hive.times import exact_time, format_time

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from datetime import datetime
    from typing import Any

RESERVATIONS_DIR = ".hive/reservations"
MAX_PLAIN_NAME = 64
# A plain name, its own file name: ``[a-z0-9_@+-][a-z0-9._@+-]*`` (string methods,
# not ``re``: ``tests/test_hook_quick.py`` compares them on generated names).
_NAME_FIRST = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_@+-")
_NAME_CHARS = _NAME_FIRST | {"."}


def plain_name(agent: str) -> bool:
    """Whether ``agent`` is its own file name: ``[a-z0-9_@+-][a-z0-9._@+-]*``, at most
    MAX_PLAIN_NAME characters."""
    return (
        0 < len(agent) <= MAX_PLAIN_NAME
        and agent[0] in _NAME_FIRST
        and all(char in _NAME_CHARS for char in agent)
    )


def reservation_path(agent: str) -> str:
    """Where ``agent``'s reservations live: one file per agent, never shared.

    A name made only of lower-case safe characters is its own file name; any
    other name gets a readable lower-case slug plus ``~`` and a hash of the
    exact name (``~`` never occurs in a plain name), so two agents can never
    share a file, not even on a case-insensitive filesystem.
    """
    if plain_name(agent):
        return f"{RESERVATIONS_DIR}/{agent}.yaml"
    slug = "".join(c if c in _NAME_CHARS else "_" for c in agent.lower())
    slug = slug[:MAX_PLAIN_NAME].lstrip(".")
    digest = sha256_hex(agent.encode("utf-8"))[:12]
    return f"{RESERVATIONS_DIR}/{slug or 'agent'}~{digest}.yaml"


def entry_text(fields: dict[str, Any]) -> str:
    """One reservation's block of its agent's file. ``fields``: the reservation as
    ``model_dump(mode="json", exclude_none=True)`` gives it, but with its two times
    as datetimes."""
    entry = dict(fields)
    if not entry.get("forced"):
        entry.pop("forced", None)
    if not entry.get("overrides"):
        entry.pop("overrides", None)
    from hive.store.yamlio import dumps  # the writer: a reader does without it

    entry["created_at"] = format_time(entry["created_at"])
    entry["expires_at"] = format_time(entry["expires_at"])
    return dumps({"reservations": [entry]}).split("\n", 1)[1]


def file_text(agent: str, blocks: Sequence[str]) -> bytes:
    """An agent's reservation file: the agent, then one block per reservation."""
    from hive.store.yamlio import dumps

    if not blocks:
        return dumps({"agent": agent, "reservations": []}).encode("utf-8")
    return (dumps({"agent": agent}) + "reservations:\n" + "".join(blocks)).encode("utf-8")


def misfiled(path: str, agent: str, holders: Iterable[str]) -> str | None:
    """Why the file of ``agent`` holding reservations of ``holders`` may not be stored
    at ``path`` (None when it may)."""
    expected = reservation_path(agent)
    if path != expected:
        return f"{path}: holds agent {agent!r}, whose reservations belong in {expected}"
    strangers = sorted({name for name in holders if name != agent})
    if strangers:
        return f"{path}: holds reservations of {', '.join(strangers)}, not only {agent}"
    return None


FIELDS = (
    "id",
    "agent",
    "path_pattern",
    "exclusive",
    "reason",
    "cell",
    "created_at",
    "expires_at",
    "forced",
    "overrides",
    "yielded_to",
    "renumbered_from",
)
_REQUIRED = ("id", "agent", "path_pattern", "created_at", "expires_at")
_OVERRIDE_KEYS = {"reservation_id", "holder", "pattern"}


class PlainReservation:
    """A reservation as ``Reservation.model_dump()`` holds it (a plain class: a
    dataclass costs a compile at every start-up)."""

    __slots__ = FIELDS
    id: int
    agent: str
    path_pattern: str
    exclusive: bool
    reason: str | None
    cell: str | None
    created_at: datetime
    expires_at: datetime
    forced: bool
    overrides: list[dict[str, Any]]
    yielded_to: dict[str, Any] | None
    renumbered_from: int | None

    def __init__(self, values: dict[str, Any]) -> None:
        for name in FIELDS:
            setattr(self, name, values[name])

    def active(self, now: datetime) -> bool:
        return self.expires_at > now and self.yielded_to is None

    def dump(self) -> dict[str, Any]:
        """``model_dump()``: every field, in the model's order."""
        return {name: getattr(self, name) for name in FIELDS}

    def fields(self) -> dict[str, Any]:
        """What :func:`entry_text` takes (``model_dump(mode="json", exclude_none=True)``
        with the times as datetimes)."""
        return {name: value for name, value in self.dump().items() if value is not None}

    def text(self) -> str:
        return entry_text(self.fields())


def exclusive_held(
    reservations: Iterable[PlainReservation], now: datetime
) -> list[PlainReservation]:
    """The reservations of ``reservations`` that hold their files against every other
    agent at ``now``: exclusive, unexpired and not yielded to another clone's grant (a
    forced one too: it holds them). The one rule of the readers without the models: the
    pre-commit hook's quick check (``cli/leanhook.py``, whose holds these block) and the
    lean sync's (``cli/lean_sync.py``, which leaves a sync to the full path when two
    agents have such a reservation: ``contest`` may have one to settle)."""
    return [item for item in reservations if item.exclusive and item.active(now)]


class PlainFile:
    """An agent's reservation file read plainly: its agent and its reservations."""

    __slots__ = ("agent", "reservations")

    def __init__(self, agent: str, reservations: list[PlainReservation]) -> None:
        self.agent = agent
        self.reservations = reservations

    def encode(self) -> bytes:
        return file_text(self.agent, [item.text() for item in self.reservations])


def plain_file(content: bytes) -> PlainFile | None:
    """The reservation file ``content``, when the model certainly reads it as this;
    None to leave it to the model (which may read it, or report it corrupt)."""
    from hive.store.yamlfast import fast_loads

    try:
        mapping = fast_loads(content.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(mapping, dict) or not set(mapping) <= {"agent", "reservations"}:
        return None
    agent = mapping.get("agent")
    items = mapping.get("reservations", [])
    if not isinstance(agent, str) or not isinstance(items, list):
        return None
    found = []
    for item in items:
        plain = _plain_reservation(item)
        if plain is None:
            return None
        found.append(plain)
    return PlainFile(agent, found)


def _plain_reservation(item: object) -> PlainReservation | None:
    if not isinstance(item, dict) or not set(item) <= set(FIELDS):
        return None
    if any(name not in item for name in _REQUIRED):
        return None
    values = {
        "exclusive": True,
        "reason": None,
        "cell": None,
        "forced": False,
        "overrides": [],
        "yielded_to": None,
        "renumbered_from": None,
        **item,
    }
    number, former = values["id"], values["renumbered_from"]
    if type(number) is not int or number < 1:
        return None
    if former is not None and (type(former) is not int or former < 1):
        return None
    if not (isinstance(values["agent"], str) and isinstance(values["path_pattern"], str)):
        return None
    if type(values["exclusive"]) is not bool or type(values["forced"]) is not bool:
        return None
    texts = (values["reason"], values["cell"])
    if any(text is not None and not isinstance(text, str) for text in texts):
        return None
    for name in ("created_at", "expires_at"):
        values[name] = exact_time(values[name])
        if values[name] is None:
            return None
    overrides = values["overrides"]
    if not isinstance(overrides, list) or not all(_override(o) for o in overrides):
        return None
    values["overrides"] = [_ordered(o) for o in overrides]
    yielded = values["yielded_to"]
    if yielded is not None and not _override(yielded):
        return None
    values["yielded_to"] = None if yielded is None else _ordered(yielded)
    return PlainReservation(values)


def _ordered(value: dict[str, Any]) -> dict[str, Any]:
    """An override's fields in the model's order."""
    return {name: value[name] for name in ("reservation_id", "holder", "pattern")}


def _override(value: object) -> bool:
    if not isinstance(value, dict) or set(value) != _OVERRIDE_KEYS:
        return False
    number = value["reservation_id"]
    return (
        type(number) is int
        and isinstance(value["holder"], str)
        and isinstance(value["pattern"], str)
    )
