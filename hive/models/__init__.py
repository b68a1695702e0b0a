"""Pydantic models: the vocabulary every layer shares."""

from hive.models.cell import (
    CELL_TYPES,
    DEPENDENCY_TYPES,
    STATUSES,
    Cell,
    CellType,
    Dependency,
    DependencyType,
    Status,
    utc_now,
)
from hive.models.config import HiveConfig

__all__ = [
    "CELL_TYPES",
    "DEPENDENCY_TYPES",
    "STATUSES",
    "Cell",
    "CellType",
    "Dependency",
    "DependencyType",
    "HiveConfig",
    "Status",
    "utc_now",
]
