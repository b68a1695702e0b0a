"""Imports every module that declares operations (``hive.ops.spec.operations()``)."""

from hive.ops import cells, coord, swarm  # noqa: F401
