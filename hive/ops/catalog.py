"""Imports every module that declares operations (``hive.ops.spec.operations()``)."""

from hive.ops import (  # noqa: F401
    agent,
    audit,
    cells,
    context,
    coord,
    files,
    identity,
    network,
    plan,
    repo,
    swarm,
)
