"""CLI for the local coordination state: shared context (``hive ctx``) and the
coordinator queue (``hive queue``)."""

import json
import time
from typing import Annotated, Any

import typer

from hive.cli import output
from hive.cli.common import JsonFlag, run_op, show, use_json, workspace

ctx_app = typer.Typer(
    help="Shared context: versioned values shared by a swarm.", no_args_is_help=True
)
queue_app = typer.Typer(help="The coordinator queue: work items with leases.", no_args_is_help=True)


def parse_json_arg(text: str) -> Any:
    """A command-line value: JSON when it parses, else the text itself."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def compact(value: Any, limit: int = 80) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def when(epoch: float | None) -> str:
    if epoch is None:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(epoch))


# ------------------------------------------------------------------ ctx


@ctx_app.command("list")
def ctx_list_cmd(
    prefix: Annotated[str | None, typer.Argument()] = None, json_flag: JsonFlag = False
) -> None:
    """Every entry with its version, writer and time."""
    from hive.domain.context import ctx_entries

    use_json(json_flag)
    entries = run_op(lambda: ctx_entries(workspace(), prefix=prefix))

    def render() -> None:
        if not entries:
            output.say("no shared context")
        for e in entries:
            output.say(
                f"{e.key}  v{e.version}  {e.agent}  {when(e.updated_at)}  {compact(e.value)}"
            )

    show(entries, json_flag, render)


@ctx_app.command("rm")
def ctx_rm_cmd(key: Annotated[str, typer.Argument()], json_flag: JsonFlag = False) -> None:
    """Remove a key."""
    from hive.domain.context import ctx_delete

    use_json(json_flag)
    removed = run_op(lambda: ctx_delete(workspace(), key=key))
    show(removed, json_flag, lambda: output.say(f"removed {key} (was v{removed.version})"))


@ctx_app.command("phase")
def ctx_phase_cmd(
    number: Annotated[int | None, typer.Argument(help="Set the phase (orchestrators).")] = None,
    json_flag: JsonFlag = False,
) -> None:
    """Show the current phase, or set it."""
    from hive.domain.context import PHASE_KEY, ctx_get, ctx_put

    use_json(json_flag)
    ws = workspace()
    if number is not None:
        run_op(lambda: ctx_put(ws, key=PHASE_KEY, value=number))
    found = run_op(lambda: ctx_get(ws, key=PHASE_KEY))
    show(found, json_flag, lambda: output.say(f"phase {found.value or 0}"))


# ------------------------------------------------------------------ queue


@queue_app.command("list")
def queue_list_cmd(
    status_filter: Annotated[
        str | None, typer.Option("--status", help="queued|claimed|done")
    ] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1)] = 100,
    json_flag: JsonFlag = False,
) -> None:
    """Items oldest first, with holders and leases."""
    from hive.domain.queue import list_items

    use_json(json_flag)
    items = run_op(lambda: list_items(workspace(), status=status_filter, limit=limit))

    def render() -> None:
        if not items:
            output.say("no queue items")
        for i in items:
            holder = f" {i.claimed_by} until {when(i.lease_until)}" if i.status == "claimed" else ""
            lapsed = " (lease expired)" if i.lease_expired else ""
            output.say(f"{i.id}  {i.status}{holder}{lapsed}  {i.kind}  {compact(i.payload, 60)}")

    show(items, json_flag, render)
