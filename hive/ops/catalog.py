"""Imports every module that declares operations (``hive.ops.spec.operations()``)."""

from hive.ops import cells  # noqa: F401
