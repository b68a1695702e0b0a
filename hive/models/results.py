"""Result models returned by domain operations (beyond Cell itself)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from hive.models.cell import Cell


class InitResult(BaseModel):
    root: str
    prefix: str
    created: bool
    commit: str | None = None


class EpicStatus(BaseModel):
    epic: Cell
    total: int
    by_status: dict[str, int]
    closed: int
    percent_complete: int
    ready: list[str] = Field(default_factory=list)
    blocked: list[str] = Field(default_factory=list)
    children: list[Cell] = Field(default_factory=list)


class LogEntry(BaseModel):
    commit: str
    time: int
    author: str
    subject: str
    cells: list[str]
    agent: str | None = None
    event: str | None = None


class Problem(BaseModel):
    kind: str
    message: str
    path: str | None = None
    cell: str | None = None


class DoctorReport(BaseModel):
    cells: int
    problems: list[Problem] = Field(default_factory=list)
    # Worth a look, but not broken: overrides, commits naming unregistered identities,
    # .hive/ changes committed without hive's trailers (edited by hand).
    warnings: list[Problem] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


class DependencyNode(BaseModel):
    id: str
    type: str | None = None
    title: str | None = None
    status: str
    depends_on: list[DependencyNode] = Field(default_factory=list)

    @classmethod
    def from_tree(cls, tree: dict[str, Any]) -> DependencyNode:
        return cls.model_validate(tree)
