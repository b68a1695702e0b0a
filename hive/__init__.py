"""hive: a git-backed issue tracker and coordination layer for swarms of coding agents."""

__version__ = "0.1.0"
