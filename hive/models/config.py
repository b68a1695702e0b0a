"""The repository's ``.hive/config.yaml``."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import ConfigDict, Field, field_validator

from hive.models.base import HiveModel
from hive.waits import MAX_WAIT, seconds_of, wait_rule


class HiveConfig(HiveModel):
    """Settings shared by everyone working in a repository."""

    model_config = ConfigDict(extra="allow")

    prefix: str = Field(default="hv", min_length=1, max_length=12)
    id_length: int = Field(default=6, ge=4, le=16)
    child_id_length: int = Field(default=4, ge=2, le=8)
    # seconds to wait for a lock, 0 (one try) to a day (hive never waits without end):
    # the rule of HIVE_LOCK_TIMEOUT (hive.waits)
    lock_timeout_seconds: float = Field(default=30.0, ge=0, le=MAX_WAIT, allow_inf_nan=False)
    # Agents granted the coordinator role (proven by their credential): they may
    # override ownership rules with force and a reason, and force reservations.
    coordinators: list[str] = Field(default_factory=list)

    @field_validator("lock_timeout_seconds", mode="before")
    @classmethod
    def _check_lock_timeout(cls, value: Any) -> Any:
        if seconds_of(value) is None:
            raise ValueError(f"lock_timeout_seconds must be {wait_rule(value)}")
        return value

    @field_validator("prefix")
    @classmethod
    def _check_prefix(cls, value: str) -> str:
        if not value.replace("_", "").isalnum() or not value.isascii() or value != value.lower():
            raise ValueError("prefix must be lowercase ASCII letters, digits or '_'")
        return value

    @field_validator("coordinators", mode="before")
    @classmethod
    def _check_coordinators(cls, value: Any) -> Any:
        if value is None:
            return []
        if isinstance(value, str):
            return [value]
        return value

    def extra_settings(self) -> dict[str, Any]:
        return dict(self.model_extra or {})

    def unknown_settings(self) -> list[str]:
        """Keys of the file that are neither a core setting nor a section hive reads (a
        misspelt ``tool:`` or ``cordinators:`` does nothing: ``hive doctor`` warns)."""
        return [str(key) for key in self.model_extra or {} if key not in SECTIONS]


# the sections beside the core settings, each read by its own model
# (hive.domain.config_sections, hive.domain.swarm.verify)
SECTIONS = ("verify", "swarm", "tools", "agents", "permission_policy")


def known_settings() -> list[str]:
    """Every top-level key of ``.hive/config.yaml`` hive reads."""
    return [*HiveConfig.model_fields, *SECTIONS]


class SwarmSettings(HiveModel):
    """``swarm:`` in ``.hive/config.yaml``: settings of ``hive swarm run``."""

    model_config = ConfigDict(extra="forbid", strict=True)

    # name patterns of files git ignores that a worker's worktree may be removed with,
    # besides the build outputs and caches hive knows (runner.DISPOSABLE); at most as
    # many and as long as a call's file patterns (limits.MAX_ITEMS, MAX_GLOB)
    disposable: list[Annotated[str, Field(min_length=1, max_length=1000)]] = Field(
        default_factory=list, max_length=200
    )


class VerifySettings(HiveModel):
    """``verify:`` in ``.hive/config.yaml``: the gate ``swarm_complete`` runs first."""

    model_config = ConfigDict(extra="forbid", strict=True)

    commands: list[str] = Field(default_factory=list)  # ``{files}``: the touched files
    timeout_seconds: float = Field(default=300.0, gt=0)

    @field_validator("commands", mode="before")
    @classmethod
    def _one_command(cls, value: Any) -> Any:
        if value is None:
            return []
        return [value] if isinstance(value, str) else value

    @field_validator("timeout_seconds", mode="before")
    @classmethod
    def _number(cls, value: Any) -> Any:
        if value is None:
            return 300.0
        return float(value) if isinstance(value, int) and not isinstance(value, bool) else value
