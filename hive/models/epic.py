"""Epic decomposition input: the subtasks of an epic."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from hive.models.cell import CellType


class SubtaskSpec(BaseModel):
    """One planned subtask; ``dependencies`` are indexes of sibling subtasks it waits for."""

    model_config = ConfigDict(extra="ignore")

    title: str = Field(min_length=1, max_length=500)
    description: str = ""
    type: CellType = "task"
    priority: int | None = Field(default=None, ge=0, le=4)
    files: list[str] = Field(default_factory=list)
    dependencies: list[int] = Field(default_factory=list)
    labels: list[str] = Field(default_factory=list)
    estimated_complexity: int | None = Field(default=None, ge=1, le=5)
    metadata: dict[str, Any] = Field(default_factory=dict)
