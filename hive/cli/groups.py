"""The command groups (``hive mail ...``, ``hive agent ...``) whose commands are
generated from operations (``hive/cli/build.py``): only their help lives here."""

import typer


def group(text: str) -> typer.Typer:
    return typer.Typer(help=text, no_args_is_help=True)


mail_app = group("Swarm mail between agents.")
hooks_app = group("The git pre-commit hook.")
agent_app = group("Agent identities and their credentials.")
ctx_app = group("Shared context: versioned values shared by a swarm.")
queue_app = group("The coordinator queue: work items with leases.")
proposals_app = group("File-write proposals awaiting an arbiter.")
import_app = group("Import another tracker's data.")
export_app = group("Export cells for another tracker.")
