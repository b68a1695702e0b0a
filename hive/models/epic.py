"""The plan of an epic: its subtasks. One model serves decomposition (the plan an
agent writes), validation (``swarm_validate_decomposition``) and epic creation
(``hive_create_epic``, ``hive epic create``, delegation)."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field, field_validator

from hive.models.base import HiveModel
from hive.models.cell import CellType


class PlannedSubtask(HiveModel):
    """One planned subtask (other keys are ignored)."""  # in every agent's tool list

    model_config = ConfigDict(extra="ignore")

    title: str = Field(min_length=1, max_length=500)
    description: str = ""
    type: CellType = "task"
    priority: int | None = Field(default=None, ge=0, le=4)
    files: list[str] = Field(default_factory=list)
    dependencies: list[int] = Field(default_factory=list, description="indexes of subtasks")
    labels: list[str] = Field(default_factory=list)
    estimated_complexity: int = Field(default=2, ge=1, le=5)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("priority", "estimated_complexity", mode="before")
    @classmethod
    def _number(cls, value: Any) -> Any:
        return _not_a_boolean(value)

    @field_validator("dependencies", mode="before")
    @classmethod
    def _indexes(cls, value: Any) -> Any:
        if isinstance(value, list):
            for item in value:
                _not_a_boolean(item)
        return value


def _not_a_boolean(value: Any) -> Any:
    """JSON ``true``/``false`` where a number belongs is a mistake, not 1 or 0."""
    if isinstance(value, bool):
        raise ValueError("expected a number, not a boolean")
    return value


SubtaskSpec = PlannedSubtask  # the name epic creation used
