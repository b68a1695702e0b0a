"""Imports every module that declares operations (``hive.ops.spec.operations()``)."""

from hive.ops import cells, coord, plan, swarm  # noqa: F401
