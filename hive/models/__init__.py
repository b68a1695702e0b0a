"""Pydantic models: the vocabulary every layer shares."""

from hive.models.cell import (
    CELL_TYPES,
    DEPENDENCY_TYPES,
    STATUSES,
    Cell,
    CellType,
    Comment,
    Dependency,
    DependencyType,
    MergeConflict,
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
    "Comment",
    "Dependency",
    "DependencyType",
    "HiveConfig",
    "MergeConflict",
    "Status",
    "utc_now",
]
