"""The base of hive's pydantic models.

A model's validator and serializer are built when it is first used, not when its module
is imported (``defer_build``): a command uses a few of the ~240 models the operations
declare, and building all of them cost every full-CLI process ~140 ms of start-up."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class HiveModel(BaseModel):
    """A pydantic model built on first use (its subclasses add their own config)."""

    model_config = ConfigDict(defer_build=True)


def build_loaded_models() -> int:
    """Build now the validator and serializer of every model loaded so far that is not built
    yet; how many were built. For a process about to fork workers that use them (``hive
    swarm run``): built once here, the workers inherit them, instead of each building its
    own on first use."""
    built = 0
    pending: list[type[HiveModel]] = [HiveModel]
    seen: set[type[HiveModel]] = set()
    while pending:
        for model in pending.pop().__subclasses__():
            if model in seen:
                continue
            seen.add(model)
            pending.append(model)
            if not model.__pydantic_complete__ and model.model_rebuild(raise_errors=False):
                built += 1
    return built
