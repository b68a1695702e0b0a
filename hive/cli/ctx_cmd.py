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


@ctx_app.command("get")
def ctx_get_cmd(key: Annotated[str, typer.Argument()], json_flag: JsonFlag = False) -> None:
    """Print a value and its version (version 0: not set)."""
    from hive.domain.context import ctx_get

    use_json(json_flag)
    found = run_op(lambda: ctx_get(workspace(), key=key))
    show(found, json_flag, lambda: output.say(f"{compact(found.value, 2000)}  (v{found.version})"))


@ctx_app.command("put")
def ctx_put_cmd(
    key: Annotated[str, typer.Argument()],
    value: Annotated[str, typer.Argument(help="JSON (plain text is stored as a string).")],
    mode: Annotated[str, typer.Option("--mode", help="set|if_absent|if_version")] = "set",
    expected_version: Annotated[
        int | None, typer.Option("--expected-version", help="For --mode if_version.")
    ] = None,
    json_flag: JsonFlag = False,
) -> None:
    """Store a value; exits 4 when a compare-and-swap (if_absent/if_version) loses."""
    from hive.domain.context import ctx_put

    use_json(json_flag)
    stored = run_op(
        lambda: ctx_put(
            workspace(),
            key=key,
            value=parse_json_arg(value),
            mode=mode,
            expected_version=expected_version,
        )
    )
    if not stored.ok:
        show(
            stored, json_flag, lambda: output.err(f"error: {stored.error} (now v{stored.version})")
        )
        raise typer.Exit(4)
    show(stored, json_flag, lambda: output.say(f"{key} = v{stored.version}"))


@ctx_app.command("keys")
def ctx_keys_cmd(
    prefix: Annotated[str | None, typer.Argument()] = None, json_flag: JsonFlag = False
) -> None:
    """List keys (starting with PREFIX)."""
    from hive.domain.context import ctx_keys

    use_json(json_flag)
    found = run_op(lambda: ctx_keys(workspace(), prefix=prefix))
    show(found, json_flag, lambda: output.say("\n".join(found.keys) or "no keys"))


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


@ctx_app.command("wait")
def ctx_wait_cmd(
    key: Annotated[str, typer.Argument()],
    equals: Annotated[str | None, typer.Option("--equals", help="JSON value to wait for.")] = None,
    at_least: Annotated[float | None, typer.Option("--at-least")] = None,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds (0: test only).")] = 30,
    json_flag: JsonFlag = False,
) -> None:
    """Wait until KEY equals a value or reaches a number (exit 1 on timeout)."""
    from hive.domain.context import ctx_wait

    use_json(json_flag)
    wanted = parse_json_arg(equals) if equals is not None else None
    found = run_op(
        lambda: ctx_wait(
            workspace(), key=key, equals=wanted, at_least=at_least, timeout_sec=timeout
        )
    )
    verdict = "reached" if found.met else "timed out"
    show(found, json_flag, lambda: output.say(f"{key}: {verdict} ({compact(found.value)})"))
    if not found.met:
        raise typer.Exit(1)


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


@queue_app.command("add")
def queue_add_cmd(
    kind: Annotated[str, typer.Argument()],
    payload: Annotated[str, typer.Argument(help="A JSON object.")] = "{}",
    json_flag: JsonFlag = False,
) -> None:
    """Enqueue a work item."""
    from hive.domain.queue import enqueue

    use_json(json_flag)
    added = run_op(lambda: enqueue(workspace(), kind=kind, payload=parse_json_arg(payload)))
    show(added, json_flag, lambda: output.say(f"queued {added.id} ({added.kind})"))


@queue_app.command("next")
def queue_next_cmd(
    lease: Annotated[float, typer.Option("--lease", help="Lease seconds.")] = 180,
    json_flag: JsonFlag = False,
) -> None:
    """Lease the next item (FIFO); exit 1 when the queue is empty."""
    from hive.domain.queue import next_item

    use_json(json_flag)
    found = run_op(lambda: next_item(workspace(), lease_sec=lease))
    item = found.item

    def render() -> None:
        if item is None:
            output.say("queue is empty")
        else:
            output.say(
                f"{item.id} {item.kind} {compact(item.payload)} until {when(item.lease_until)}"
            )

    show(found, json_flag, render)
    if item is None:
        raise typer.Exit(1)


@queue_app.command("claim")
def queue_claim_cmd(
    item_id: Annotated[str, typer.Argument(metavar="ID")],
    lease: Annotated[float, typer.Option("--lease", help="Lease seconds.")] = 180,
    json_flag: JsonFlag = False,
) -> None:
    """Lease one item by id."""
    from hive.domain.queue import claim

    use_json(json_flag)
    got = run_op(lambda: claim(workspace(), id=item_id, lease_sec=lease))
    show(got, json_flag, lambda: output.say(f"claimed {got.id} until {when(got.lease_until)}"))


@queue_app.command("complete")
def queue_complete_cmd(
    item_id: Annotated[str, typer.Argument(metavar="ID")],
    result: Annotated[str, typer.Argument(help="JSON result.")] = "null",
    json_flag: JsonFlag = False,
) -> None:
    """Mark an item done."""
    from hive.domain.queue import complete

    use_json(json_flag)
    done = run_op(lambda: complete(workspace(), id=item_id, result=parse_json_arg(result)))
    show(done, json_flag, lambda: output.say(f"{done.id} done"))


@queue_app.command("extend")
def queue_extend_cmd(
    item_id: Annotated[str, typer.Argument(metavar="ID")],
    seconds: Annotated[float, typer.Argument()],
    json_flag: JsonFlag = False,
) -> None:
    """Extend your lease on an item."""
    from hive.domain.queue import extend

    use_json(json_flag)
    got = run_op(lambda: extend(workspace(), id=item_id, extend_sec=seconds))
    show(got, json_flag, lambda: output.say(f"{got.id} leased until {when(got.lease_until)}"))


@queue_app.command("status")
def queue_status_cmd(json_flag: JsonFlag = False) -> None:
    """Length, front item, counts and the current phase."""
    from hive.domain.queue import status

    use_json(json_flag)
    found = run_op(lambda: status(workspace()))
    counts = found.counts
    line = (
        f"{found.length} waiting; queued {counts.queued}, claimed {counts.claimed},"
        f" done {counts.done}; phase {found.phase}"
    )
    if found.front is not None:
        line += f"; next {found.front.id} ({found.front.kind})"
    show(found, json_flag, lambda: output.say(line))


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
