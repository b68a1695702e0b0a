"""The ``tools:`` section of ``.hive/config.yaml`` as strict pydantic models.

Unknown keys are refused (a misspelt ``deny_paths`` must not fail open) and a bad
value is reported with the key that holds it. ``hive.domain.governance`` uses the
parsed models; ``hive doctor`` reports the same error.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import AliasChoices, ConfigDict, Field, ValidationError, field_validator

from hive.errors import InvalidInput
from hive.eventargs import DEFAULT_REDACT as DEFAULT_REDACT
from hive.models.base import HiveModel
from hive.models.cell import first_error

DEFAULT_HOOK_TIMEOUT = 10.0


class _Strict(HiveModel):
    model_config = ConfigDict(extra="forbid")


class PathRules(_Strict):
    allowed_paths: list[str] = Field(default_factory=list)
    denied_paths: list[str] = Field(default_factory=list)


class RateLimit(_Strict):
    capacity: float = Field(default=60, ge=1)  # below 1 no call could ever spend a token
    per_seconds: float = Field(default=60, gt=0)


class HookSpec(_Strict):
    type: Literal["command"] = "command"  # SwarmSDK's YAML says so; shell commands only
    matcher: str = ".*"
    command: str = Field(min_length=1)
    timeout_seconds: float = Field(
        default=DEFAULT_HOOK_TIMEOUT,
        gt=0,
        le=3600,
        validation_alias=AliasChoices("timeout_seconds", "timeout"),
    )

    @field_validator("matcher")
    @classmethod
    def _regex(cls, value: str) -> str:
        """A matcher that is no regular expression is refused with the section (every
        call through it would fail), so ``hive doctor`` reports it too."""
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a regular expression: {exc}") from None
        return value


class HookLists(_Strict):
    pre_tool_use: list[HookSpec] = Field(default_factory=list)
    post_tool_use: list[HookSpec] = Field(default_factory=list)


class EventsConfig(_Strict):
    """What the event log keeps of each call's arguments."""

    max_args_bytes: int = Field(default=4096, ge=0, le=1_000_000)
    redact: list[str] = Field(default_factory=list)  # added to DEFAULT_REDACT


class ToolsConfig(_Strict):
    """``permissions``: agent -> tool -> rules; ``rate_limits``: tool (or ``default``)
    -> bucket; ``agent_rate_limits``: agent -> tool (or ``default``) -> bucket."""

    permissions: dict[str, dict[str, PathRules]] = Field(default_factory=dict)
    rate_limits: dict[str, RateLimit] = Field(default_factory=dict)
    agent_rate_limits: dict[str, dict[str, RateLimit]] = Field(default_factory=dict)
    hooks: HookLists = Field(default_factory=HookLists)
    events: EventsConfig = Field(default_factory=EventsConfig)


def parse_tools_config(raw: Any) -> ToolsConfig:
    """The parsed section; InvalidInput naming the offending key otherwise."""
    if raw is None:
        return ToolsConfig()
    if not isinstance(raw, dict):
        raise InvalidInput(".hive/config.yaml: 'tools' must be a mapping", key="tools")
    try:
        return ToolsConfig.model_validate(_none_as_empty(raw))
    except ValidationError as exc:
        where, message = first_error(exc)
        key = ".".join(part for part in ("tools", where) if part)
        raise InvalidInput(f".hive/config.yaml: {key}: {message}", key=key) from None


def _none_as_empty(raw: dict[str, Any]) -> dict[str, Any]:
    """``hooks:`` or ``permissions:`` left empty in YAML mean "none"."""
    cleaned = {key: value for key, value in raw.items() if value is not None}
    hooks = cleaned.get("hooks")
    if isinstance(hooks, dict):
        cleaned["hooks"] = {key: value for key, value in hooks.items() if value is not None}
    return cleaned
