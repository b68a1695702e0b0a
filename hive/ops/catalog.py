"""Imports every module that declares operations (``hive.ops.spec.operations()``)."""

# ruff: noqa: F401  (imported to declare their operations)
from hive.ops import (
    audit,
    cells,
    context,
    coord,
    files,
    identity,
    plan,
    repo,
    swarm,
)
