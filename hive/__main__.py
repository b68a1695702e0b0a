"""``python -m hive``: the same entry point as the ``hive`` console script."""

from hive.cli.entry import console

console()
