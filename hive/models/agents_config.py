"""``agents:`` in ``.hive/config.yaml``: per-agent profiles (seeds 002 and 004), parsed
strictly (a misspelt key must not fail open).

    agents:
      "*":                              # defaults for every agent (optional)
        read_before_write: true
      BlueLake:
        tools: [context_search, {name: file_read}, list_files]   # only these tools
        toolCallLimit: 10               # calls per phase (default 10 with a tools list)
        directory: backend              # working directory (relative to the repository)
        read_before_write: true         # fs_write only for files read this session
        bypass_permissions: false       # skip tools.permissions path rules
        hooks:                          # like tools.hooks, for this agent only
          pre_tool_use: [{matcher: "fs_write", command: "./check.sh", timeout: 5}]

An agent's own entry overrides the ``"*"`` entry key by key.
"""

from __future__ import annotations

from typing import Any

from pydantic import AliasChoices, ConfigDict, Field, ValidationError, field_validator

from hive.errors import InvalidInput
from hive.models.base import HiveModel
from hive.models.cell import first_error
from hive.models.tools_config import HookLists

DEFAULT_TOOL_CALL_LIMIT = 10
ALL_AGENTS = "*"


class ToolRef(HiveModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)


class AgentProfile(HiveModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    tools: list[ToolRef] | None = None
    tool_call_limit: int | None = Field(
        default=None,
        ge=1,
        le=100_000,
        validation_alias=AliasChoices("toolCallLimit", "tool_call_limit"),
    )
    directory: str | None = Field(default=None, min_length=1)
    read_before_write: bool | None = None
    bypass_permissions: bool | None = None
    hooks: HookLists | None = None

    @field_validator("tools", mode="before")
    @classmethod
    def _names(cls, value: Any) -> Any:
        """``tools: [a, {name: b}]``: plain names are accepted too."""
        if isinstance(value, list):
            return [{"name": item} if isinstance(item, str) else item for item in value]
        return value

    @property
    def limit(self) -> int | None:
        """Calls allowed per phase: the configured limit, 10 with a tools list, else none."""
        if self.tool_call_limit is not None:
            return self.tool_call_limit
        return DEFAULT_TOOL_CALL_LIMIT if self.tools is not None else None


def parse_agents_config(raw: Any) -> dict[str, AgentProfile]:
    """The parsed section; InvalidInput naming the key when anything is wrong."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise InvalidInput(".hive/config.yaml: 'agents' must be a mapping", key="agents")
    profiles = {}
    for name, entry in raw.items():
        try:
            profiles[str(name)] = AgentProfile.model_validate(entry or {})
        except ValidationError as exc:
            where, message = first_error(exc)
            key = ".".join(part for part in ("agents", str(name), where) if part)
            raise InvalidInput(f".hive/config.yaml: {key}: {message}", key=key) from None
    return profiles


def profile_for(profiles: dict[str, AgentProfile], agent: str) -> AgentProfile:
    """The agent's entry over the ``"*"`` entry, key by key."""
    base = profiles.get(ALL_AGENTS, AgentProfile())
    own = profiles.get(agent)
    if own is None:
        return base
    merged = base.model_dump(exclude_unset=True)
    merged.update(own.model_dump(exclude_unset=True))
    return AgentProfile.model_validate(merged)
