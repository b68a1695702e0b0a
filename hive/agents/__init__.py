"""Agent programs that ship with hive (``python -m hive.agents.example``)."""
