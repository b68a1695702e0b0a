"""The base of hive's pydantic models.

A model's validator and serializer are built when it is first used, not when its module
is imported (``defer_build``): a command uses a few of the ~240 models the operations
declare, and building all of them cost every full-CLI process ~140 ms of start-up."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, get_args

from pydantic import BaseModel, ConfigDict


class HiveModel(BaseModel):
    """A pydantic model built on first use (its subclasses add their own config)."""

    model_config = ConfigDict(defer_build=True)


def build_models(models: Iterable[type[BaseModel]]) -> None:
    """Build now the validator and serializer of each of ``models`` not built yet. For a
    process about to fork workers that use them (``hive swarm run``): built once here,
    the workers inherit them, instead of each building its own on first use."""
    for model in models:
        if not model.__pydantic_complete__:
            model.model_rebuild(raise_errors=False)


def models_in(annotation: Any) -> list[type[BaseModel]]:
    """The models an annotation names (``CellDetail | list[Cell]``: both)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [model for argument in get_args(annotation) for model in models_in(argument)]
