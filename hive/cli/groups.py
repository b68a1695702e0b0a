"""The command groups (``hive mail ...``, ``hive agent ...``) whose commands are
generated from operations (``hive/cli/build.py``): only their help lives here."""

import typer


def group(text: str) -> typer.Typer:
    return typer.Typer(rich_markup_mode=None, help=text, no_args_is_help=True)


mail_app = group("Swarm mail between agents.")
hooks_app = group("The git pre-commit hook.")
agent_app = group("Agent identities and their credentials.")
ctx_app = group("Shared context: versioned values shared by a swarm.")
queue_app = group("The coordinator queue: work items with leases.")
proposals_app = group("File-write proposals awaiting an arbiter.")
import_app = group("Import another tracker's data.")
export_app = group("Export cells for another tracker.")
# seed 003 (hive/ops/network.py) and seed 002 (hive/ops/agent.py)
SEED_GROUPS = {
    "blackboard": group("The shared blackboard: entries with a TTL."),
    "permissions": group("Grants for protected resources (request_permission)."),
    "memory": group(
        "Project memory (.hive/context.yaml): goals, stack, decisions, milestones,"
        " banned approaches."
    ),
    "qa": group("The QA harness: score entries, compare with the last run."),
    "scratchpad": group("The swarm's shared scratchpad (1 MB per entry, 100 MB)."),
    "todo": group("Agents' todo lists (todo_write / todo_read)."),
}
