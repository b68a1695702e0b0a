"""Imports every module that declares operations (``hive.ops.spec.operations()``)."""

from hive.ops import (  # noqa: F401
    agent,
    cells,
    context,
    coord,
    files,
    network,
    plan,
    swarm,
)
