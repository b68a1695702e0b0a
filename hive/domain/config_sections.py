"""Sections of ``.hive/config.yaml`` beyond the core settings (``tools:``, ``agents:``,
``permission_policy:``), parsed: a bad one is an InvalidInput naming its line, as a bad
``verify:`` entry or a bad core setting does (``.hive/config.yaml:7: tools.alice: ...``).

The parsers themselves (``hive.models``) see only the parsed YAML; the line is found
here, on the error path only, in the committed text the section came from.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from pydantic import BaseModel

from hive.domain.workspace import Workspace
from hive.errors import InvalidInput, NotInitialized
from hive.git.repo import Snapshot
from hive.models.agents_config import AgentProfile, parse_agents_config, profile_for
from hive.store.layout import CONFIG_PATH

Parsed = TypeVar("Parsed")
Settings = TypeVar("Settings", bound=BaseModel)


def parsed_section(
    ws: Workspace, key: str, parse: Callable[[object], Parsed], snap: Snapshot | None = None
) -> Parsed:
    """``parse`` of the section ``key`` (``None`` where there is no hive or no section)."""
    try:
        raw = ws.config(snap).extra_settings().get(key)
    except NotInitialized:
        raw = None
    try:
        return parse(raw)
    except InvalidInput as exc:
        raise with_line(ws, exc, snap) from None


def agent_profile(ws: Workspace, agent: str, snap: Snapshot | None = None) -> AgentProfile:
    """``agent``'s entry of the ``agents:`` section over its ``"*"`` entry (of ``snap``'s
    config): its tools list, directory, hooks, ``bypass_permissions``, ..."""
    return profile_for(parsed_section(ws, "agents", parse_agents_config, snap), agent)


def checked_section(ws: Workspace, key: str, model: type[Settings], form: str) -> Settings:
    """Section ``key`` of .hive/config.yaml as ``model`` (empty when absent), checked: a
    malformed entry is an error naming its line and ending with ``form`` (what the
    section takes): ``.hive/config.yaml:7: invalid verify.commands.0: ...; FORM``."""
    from pydantic import ValidationError

    from hive.models.cell import first_error

    raw = ws.config().extra_settings().get(key)
    try:
        return model.model_validate({} if raw is None else raw)
    except ValidationError as exc:
        _, why = first_error(exc)
        if not isinstance(raw, dict):  # not pydantic's "... or instance of MODEL"
            why = f"a mapping is expected, not {type(raw).__name__}"
        loc = [key, *(str(part) for part in exc.errors()[0]["loc"])]
        line = config_line(ws, loc)
        raise InvalidInput(
            f"{CONFIG_PATH}:{line}: invalid {'.'.join(loc)}: {why}; {form}",
            path=CONFIG_PATH,
            line=line,
        ) from None


def with_line(ws: Workspace, exc: InvalidInput, snap: Snapshot | None = None) -> InvalidInput:
    """``exc`` (a message ``.hive/config.yaml: KEY: ...`` with a ``key`` detail) naming the
    line of KEY in the config file; ``exc`` itself where it names no key."""
    key = exc.details.get("key")
    prefix = f"{CONFIG_PATH}: "
    if not isinstance(key, str) or not exc.message.startswith(prefix):
        return exc
    line = config_line(ws, key.split("."), snap)
    located = type(exc)(
        f"{CONFIG_PATH}:{line}: {exc.message.removeprefix(prefix)}",
        **{**exc.details, "path": CONFIG_PATH, "line": line},
    )
    return located


def config_line(ws: Workspace, loc: list[str], snap: Snapshot | None = None) -> int:
    """The line of the key (or list item) at ``loc`` in the config file of ``snap``; the
    line of the deepest part of it that exists (1 where none does)."""
    from hive.store.yamlio import line_of

    sha = (snap or ws.snapshot()).blob_sha(CONFIG_PATH)
    text = ws.git.read_blob(sha).decode("utf-8", "replace") if sha else ""
    parts: list[str | int] = [int(part) if part.isdigit() else part for part in loc]
    return line_of(text, parts)
