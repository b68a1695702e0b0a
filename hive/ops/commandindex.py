"""Which modules of ``hive/ops`` declare the commands under each first word of the
command line (``hive mail ...``: ``coord`` and ``repo``), so that a process running
one command of the full CLI imports those modules only (``hive.cli.main``) instead of
the whole catalogue (``hive.ops.catalog``, every operation module and its models).
Standard library only; ``tests/test_cli_startup.py`` keeps it equal to the
declarations."""

HAND_WRITTEN = ("demo", "tools", "mcp", "serve")  # commands no operation declares

COMMAND_MODULES: dict[str, tuple[str, ...]] = {
    "ctx": ("context",),
    "queue": ("context",),
    "search": ("agent",),
    "scratchpad": ("agent",),
    "todo": ("agent",),
    "proposals": ("audit",),
    "events": ("audit",),
    "create": ("cells",),
    "show": ("cells",),
    "list": ("cells",),
    "ready": ("cells",),
    "update": ("cells",),
    "start": ("cells",),
    "close": ("cells",),
    "reopen": ("cells",),
    "delete": ("cells",),
    "comment": ("cells",),
    "resolve": ("cells",),
    "dep": ("cells",),
    "blocked": ("cells",),
    "stats": ("cells",),
    "mail": ("coord", "repo"),
    "reserve": ("coord",),
    "release": ("coord",),
    "reservations": ("coord",),
    "agent": ("identity",),
    "delegate": ("network",),
    "swarm": ("network", "plan", "swarm"),
    "epic": ("network", "plan"),
    "permissions": ("network",),
    "blackboard": ("network",),
    "memory": ("network",),
    "qa": ("network",),
    "init": ("repo",),
    "doctor": ("repo",),
    "gc": ("repo",),
    "hooks": ("repo",),
    "sync": ("repo",),
    "import": ("repo",),
    "export": ("repo",),
    "log": ("swarm",),
    "review": ("swarm",),
}

WORDS = frozenset({*COMMAND_MODULES, *HAND_WRITTEN})
"""The first word of every command and group of ``hive`` (hidden ones too)."""
