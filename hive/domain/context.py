"""Shared context (seed 000's ``ctx_*``): versioned JSON values shared by a swarm.

Every key has a version that starts at 1 and grows by one with each write, so
agents can compare-and-swap (``mode="if_version"``) and never lose an update.
Values live in the local coordination store (``hive.store.coord_db``).

Two conventions of the seed are checked, not only documented:

* **Findings.** A key shaped ``Agent.task`` whose value is an object with any of
  the findings fields must be a whole finding ``{ok, task, data, ts, agent}``:
  ``ok`` a boolean, ``ts`` ISO 8601, ``agent``/``task`` equal to the key's parts.
* **Phases.** ``phase`` (set by the orchestrator each round) is a non-negative
  integer; ``phase_ready`` is one, or an object of agent -> integer, and so is
  ``phase_ready.<Agent>``. ``ctx_wait`` waits for a key to reach a phase (a
  barrier: wait for ``phase_ready.<Agent>`` of every agent).
"""

from __future__ import annotations

import json
import re
import time
from datetime import datetime
from typing import Any

from hive import waits
from hive.domain.limits import refuse_unprintable
from hive.domain.workspace import Workspace
from hive.errors import InvalidInput, NotOwner
from hive.models.coordination import CtxEntry, CtxKeys, CtxPut, CtxRefused, CtxValue, CtxWait
from hive.store import coord_db, credentials

MODES = ("set", "if_absent", "if_version")
MAX_KEY = 256
MAX_VALUE_BYTES = 1_000_000
MAX_WAIT_SEC = 300.0
PHASE_KEY = "phase"
READY_KEY = "phase_ready"
FINDING_FIELDS = ("ok", "task", "data", "ts", "agent")
_FINDING_KEY = re.compile(r"^([A-Za-z][\w-]{0,63})\.([\w][\w.:/-]*)$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def state_dir(ws: Workspace) -> str:
    return ws.git.paths.hive_state_dir


def check_key(key: Any, what: str = "key") -> str:
    if not isinstance(key, str) or not key.strip():
        raise InvalidInput(f"{what} must be a non-empty string", field=what)
    if len(key) > MAX_KEY:
        raise InvalidInput(f"{what} is longer than {MAX_KEY} characters", field=what)
    if _CONTROL.search(key):
        raise InvalidInput(f"{what} must not contain control characters", field=what)
    refuse_unprintable(key, what, field=what)
    return key


def encode_value(value: Any, limit: int = MAX_VALUE_BYTES, what: str = "value") -> str:
    """The JSON text stored for ``value``; InvalidInput when it is not JSON or too big."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise InvalidInput(f"{what} is not JSON: {exc}", field=what) from None
    if len(text.encode("utf-8")) > limit:
        raise InvalidInput(f"{what} is larger than {limit} bytes of JSON", field=what)
    return text


# ------------------------------------------------------------------ conventions


def check_convention(key: str, value: Any) -> None:
    """Phase keys hold phase numbers; ``Agent.task`` findings have the seed's shape."""
    if key == PHASE_KEY or key.startswith(READY_KEY + "."):
        _phase_number(key, value)
        return
    if key == READY_KEY:
        if isinstance(value, dict):
            for agent, number in value.items():
                _phase_number(f"{key}.{agent}", number)
        else:
            _phase_number(key, value)
        return
    problem = finding_problem(key, value)
    if problem is not None:
        raise InvalidInput(f"{key}: {problem}", field="value")


def _phase_number(key: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidInput(f"{key} must be a phase number (an integer >= 0), got {value!r}")
    return value


def finding_problem(key: str, value: Any) -> str | None:
    """Why ``value`` under ``key`` breaks the findings convention (None: it does not,
    or it is not a finding at all)."""
    shape = _FINDING_KEY.match(key)
    if shape is None or not isinstance(value, dict):
        return None
    if not {"ok", "task", "agent", "ts"} & set(value):
        return None
    agent, task = shape.groups()
    missing = [name for name in FINDING_FIELDS if name not in value]
    if missing:
        return f"a finding needs {', '.join(FINDING_FIELDS)}; missing {', '.join(missing)}"
    if not isinstance(value["ok"], bool):
        return "finding field 'ok' must be true or false"
    for name in ("task", "agent", "ts"):
        if not isinstance(value[name], str):
            return f"finding field {name!r} must be a string"
    if not is_iso8601(value["ts"]):
        return f"finding field 'ts' must be an ISO 8601 time, got {value['ts']!r}"
    if value["agent"] != agent:
        return f"finding field 'agent' is {value['agent']!r} but the key names {agent!r}"
    if value["task"] != task:
        return f"finding field 'task' is {value['task']!r} but the key names {task!r}"
    return None


def check_writer(ws: Workspace, key: str, value: Any, previous: Any) -> None:
    """A value naming an agent is that agent's to write: ``phase_ready.<Agent>`` (and its
    entry in a ``phase_ready`` object) and the findings ``<Agent>.task`` of a registered
    agent, or holding a finding. Another agent is refused (``not_owner``), so a barrier
    or a finding says what that agent did; people and coordinators may write any."""
    named = set(_named_agents(ws, key, value, previous)) - {ws.actor}
    if not named:
        return
    from hive.domain.ownership import override_role

    if override_role(ws) is not None:
        return
    owner = sorted(named)[0]
    raise NotOwner(
        f"{key} holds {owner}'s {'phase' if key.startswith(READY_KEY) else 'findings'}: only"
        f" {owner} writes or removes it, {ws.actor} may not (write your own:"
        f" {_own_key(key, ws.actor)})",
        owner=owner,
        field="key",
    )


def _named_agents(ws: Workspace, key: str, value: Any, previous: Any) -> list[str]:
    if key.startswith(READY_KEY + "."):
        return [key[len(READY_KEY) + 1 :]]
    if key == READY_KEY:
        old = previous if isinstance(previous, dict) else {}
        new = value if isinstance(value, dict) else {}
        return [name for name in {*old, *new} if old.get(name) != new.get(name)]
    shape = _FINDING_KEY.match(key)
    if shape is None:
        return []
    agent = shape.group(1)
    finding = isinstance(value, dict) and bool({"ok", "task", "agent", "ts"} & set(value))
    if finding or agent in credentials.load(state_dir(ws))["agents"]:
        return [agent]
    return []


def _own_key(key: str, agent: str) -> str:
    if key.startswith(READY_KEY):
        return f"{READY_KEY}.{agent}"
    return f"{agent}.{key.split('.', 1)[1]}"


def is_iso8601(text: str) -> bool:
    try:
        datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return False
    return True


# ------------------------------------------------------------------ operations


def ctx_put(
    ws: Workspace,
    *,
    key: str,
    value: Any,
    mode: str = "set",
    expected_version: int | None = None,
) -> CtxPut | CtxRefused:
    """Store ``value``; ``if_absent`` / ``if_version`` are compare-and-swaps decided
    inside one write transaction."""
    check_key(key)
    if mode not in MODES:
        raise InvalidInput(f"mode must be one of {', '.join(MODES)}, got {mode!r}", field="mode")
    if mode == "if_version" and expected_version is None:
        raise InvalidInput("mode if_version needs expected_version", field="expected_version")
    check_convention(key, value)
    text = encode_value(value)
    with coord_db.write(state_dir(ws)) as db:
        row = db.execute("SELECT version, value FROM ctx WHERE key = ?", (key,)).fetchone()
        current = row[0] if row else 0
        check_writer(ws, key, value, json.loads(row[1]) if row else None)
        if mode == "if_absent" and current:
            return CtxRefused(error="version_mismatch", version=current)
        if mode == "if_version" and current != expected_version:
            return CtxRefused(error="version_mismatch", version=current)
        db.execute(
            "INSERT INTO ctx (key, value, version, agent, updated_at) VALUES (?, ?, ?, ?, ?)"
            " ON CONFLICT(key) DO UPDATE SET value = excluded.value, version = excluded.version,"
            " agent = excluded.agent, updated_at = excluded.updated_at",
            (key, text, current + 1, ws.actor, time.time()),
        )
    return CtxPut(key=key, version=current + 1)


def ctx_get(ws: Workspace, *, key: str) -> CtxValue:
    """The value and version of ``key``; an unset key is ``value: null, version: 0``."""
    check_key(key)
    with coord_db.read(state_dir(ws)) as db:
        row = db.execute("SELECT value, version FROM ctx WHERE key = ?", (key,)).fetchone()
    if row is None:
        return CtxValue(key=key)
    return CtxValue(key=key, value=json.loads(row[0]), version=row[1])


def ctx_keys(ws: Workspace, *, prefix: str | None = None) -> CtxKeys:
    """Every key (starting with ``prefix``), sorted."""
    with coord_db.read(state_dir(ws)) as db:
        keys = [row[0] for row in db.execute("SELECT key FROM ctx ORDER BY key")]
    return CtxKeys(keys=[key for key in keys if not prefix or key.startswith(prefix)])


def ctx_entries(ws: Workspace, *, prefix: str | None = None) -> list[CtxEntry]:
    """Every entry (under ``prefix``), sorted by key, for people and listings."""
    with coord_db.read(state_dir(ws)) as db:
        rows = db.execute(
            "SELECT key, value, version, agent, updated_at FROM ctx ORDER BY key"
        ).fetchall()
    return [
        CtxEntry(key=key, value=json.loads(value), version=version, agent=agent, updated_at=updated)
        for key, value, version, agent, updated in rows
        if not prefix or key.startswith(prefix)
    ]


def ctx_delete(ws: Workspace, *, key: str) -> CtxValue:
    """Remove ``key``; returns what it held. Removing a value that names an agent is
    that agent's to do, as writing it is (:func:`check_writer`)."""
    check_key(key)
    with coord_db.write(state_dir(ws)) as db:
        row = db.execute("SELECT value, version FROM ctx WHERE key = ?", (key,)).fetchone()
        if row is not None:
            check_writer(ws, key, json.loads(row[0]), None)  # the agents it names
        db.execute("DELETE FROM ctx WHERE key = ?", (key,))
    if row is None:
        return CtxValue(key=key)
    return CtxValue(key=key, value=json.loads(row[0]), version=row[1])


def current_phase(ws: Workspace) -> int:
    value = ctx_get(ws, key=PHASE_KEY).value
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return 0


def ctx_wait(
    ws: Workspace,
    *,
    key: str,
    equals: Any = None,
    at_least: float | None = None,
    min_version: int | None = None,
    timeout_sec: float = 30.0,
) -> CtxWait:
    """Wait until ``key`` equals ``equals``, is a number >= ``at_least``, or reaches
    ``min_version`` (with none of them: until it is set), at most ``timeout_sec``.
    ``met`` says whether it happened; a zero timeout tests without waiting."""
    check_key(key)
    if not 0 <= timeout_sec <= MAX_WAIT_SEC:
        raise InvalidInput(f"timeout_sec must be between 0 and {MAX_WAIT_SEC:g}")
    started = time.monotonic()
    pause = 0.02
    while True:
        current = ctx_get(ws, key=key)
        met = _met(current, equals, at_least, min_version)
        waited = time.monotonic() - started
        if met or waited >= timeout_sec:
            return CtxWait(
                key=key,
                value=current.value,
                version=current.version,
                met=met,
                waited_sec=round(waited, 3),
            )
        if not waits.pause(min(pause, max(0.0, timeout_sec - waited))):
            timeout_sec = 0.0  # the caller gave up on the call: one last look, then stop
        pause = min(pause * 2, 0.25)


def _met(current: CtxValue, equals: Any, at_least: float | None, min_version: int | None) -> bool:
    if current.version == 0:
        return False
    checks = []
    if equals is not None:
        checks.append(current.value == equals)
    if at_least is not None:
        value = current.value
        number = isinstance(value, int | float) and not isinstance(value, bool)
        checks.append(number and value >= at_least)
    if min_version is not None:
        checks.append(current.version >= min_version)
    return all(checks)
