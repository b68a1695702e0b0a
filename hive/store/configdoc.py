"""``.hive/config.yaml`` read as a plain dict, without the model, when the model
(``HiveConfig``, ``store.cells.decode_config``) would certainly read it the same way:
what a fresh process needs of it (the id settings, the lock timeout, the ``tools:``
section) without importing pydantic. Anything it is not sure of is declined (None),
and the caller leaves the command to the full path, which reads the file with the
model and words any problem."""

from __future__ import annotations

from hive.store.yamlfast import fast_loads
from hive.waits import MAX_WAIT

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from typing import Any


def plain_config(data: bytes) -> dict[str, Any] | None:
    """The settings of the config file ``data`` (defaults filled in as the model fills
    them, ``tools`` None when there is no such section), or None to decline."""
    try:
        found = fast_loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(found, dict):
        return None
    config = {
        "prefix": found.get("prefix", "hv"),
        "id_length": found.get("id_length", 6),
        "child_id_length": found.get("child_id_length", 4),
        "lock_timeout_seconds": found.get("lock_timeout_seconds", 30.0),
        "tools": found.get("tools"),  # tools.permissions: path rules for agents
        "agent_policy": agent_policy(found),
    }
    prefix = config["prefix"]
    if not (isinstance(prefix, str) and 1 <= len(prefix) <= 12 and prefix.isascii()):
        return None
    if not prefix.replace("_", "").isalnum() or prefix != prefix.lower():
        return None
    for name, low, high in (("id_length", 4, 16), ("child_id_length", 2, 8)):
        value = config[name]
        if type(value) is not int or not low <= value <= high:
            return None
    timeout = config["lock_timeout_seconds"]
    if type(timeout) not in (int, float) or not 0 <= timeout <= MAX_WAIT:
        return None
    named = found.get("coordinators")
    if not (named is None or isinstance(named, str) or _strings(named)):
        return None  # the model refuses it: the full path says where
    return config


def agent_policy(found: dict[str, Any]) -> bool:
    """Whether the config ``found`` (as parsed) gives an agent's command anything of the
    policy its tool calls meet beyond the path rules (``hive.domain.policy``): an
    ``agents:`` section (tools lists, call limits, hooks, directories), ``tools:`` hooks
    or rate limits, ``permission_policy.protected_tools``. A lean command of an agent
    defers to the full CLI, which runs that policy, when it does (or may: a section
    that is not a mapping)."""
    tools = found.get("tools")
    policy = found.get("permission_policy")
    if found.get("agents") or (policy is not None and not isinstance(policy, dict)):
        return True
    if isinstance(policy, dict) and policy.get("protected_tools"):
        return True
    if tools is None:
        return False
    if not isinstance(tools, dict):
        return True
    hooks = tools.get("hooks")
    if hooks is not None and not isinstance(hooks, dict):
        return True
    if isinstance(hooks, dict) and any(hooks.values()):
        return True
    return bool(tools.get("rate_limits") or tools.get("agent_rate_limits"))


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)
