"""Imports every module that declares operations (``hive.ops.spec.operations()``)."""

from hive.ops import cells, context, coord, files, plan, swarm  # noqa: F401
