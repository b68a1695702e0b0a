"""The base of hive's pydantic models.

A model's validator and serializer are built when it is first used, not when its module
is imported (``defer_build``): a command uses a few of the ~240 models the operations
declare, and building all of them cost every full-CLI process ~140 ms of start-up."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class HiveModel(BaseModel):
    """A pydantic model built on first use (its subclasses add their own config)."""

    model_config = ConfigDict(defer_build=True)
