"""The command groups (``hive mail ...``, ``hive agent ...``) whose commands are
generated from operations (``hive/cli/build.py``): only their help lives here. Each app
built (``hive/cli/main.py``: the whole CLI, or one command of it) gets fresh groups."""

import typer

HELP = {
    "dep": "Dependencies between cells.",
    "epic": "Epics and their subtasks.",
    "mail": "Swarm mail between agents.",
    "hooks": "The git hooks (reservations, cell trailers).",
    "agent": "Agent identities and their credentials.",
    "ctx": "Shared context: versioned values shared by a swarm.",
    "queue": "The coordinator queue: work items with leases.",
    "proposals": "File-write proposals awaiting an arbiter.",
    "import": "Import another tracker's data.",
    "export": "Export cells for another tracker.",
    # seed 003 (hive/ops/network.py) and seed 002 (hive/ops/agent.py)
    "blackboard": "The shared blackboard: entries with a TTL.",
    "permissions": "Grants for protected resources (request_permission).",
    "memory": (
        "Project memory (.hive/context.yaml): goals, stack, decisions, milestones,"
        " banned approaches."
    ),
    "qa": "The QA harness: score entries, compare with the last run.",
    "scratchpad": "The swarm's shared scratchpad (1 MB per entry, 100 MB).",
    "todo": "Agents' todo lists (todo_write / todo_read).",
}
SEED_GROUPS = ("blackboard", "permissions", "memory", "qa", "scratchpad", "todo")


def group(name: str) -> typer.Typer:
    """A new, empty group ``name``."""
    return typer.Typer(rich_markup_mode=None, help=HELP[name], no_args_is_help=True)
