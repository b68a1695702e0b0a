"""``hive blocked`` and ``hive stats``: what waits on what, and how the work is going."""

from __future__ import annotations

from typing import Annotated

import typer

from hive.cli import output
from hive.cli.common import JsonFlag, run_op, show, use_json, workspace


def blocked_cmd(
    limit: Annotated[int | None, typer.Option("--limit", "-n", min=1, help="At most N.")] = None,
    json_flag: JsonFlag = False,
) -> None:
    """Cells waiting on open blockers, and which (most urgent first)."""
    from hive.domain.stats import blocked_cells

    use_json(json_flag)
    found = run_op(lambda: blocked_cells(workspace(), limit=limit))

    def render() -> None:
        if not found:
            output.say("nothing is blocked")
            return
        output.cell_table(found)
        for cell in found:
            waits = ", ".join(f"{ref.id} [{ref.status}]" for ref in cell.open_blockers)
            output.say(f"{cell.id} waits on {waits}")

    show(found, json_flag, render)


def stats_cmd(json_flag: JsonFlag = False) -> None:
    """Counts by status, type, priority and assignee; ready, blocked; lead time."""
    from hive.domain.stats import cell_stats

    use_json(json_flag)
    stats = run_op(lambda: cell_stats(workspace()))

    def render() -> None:
        output.say(
            f"{stats.total} cells: {stats.open} open ({stats.ready} ready, {stats.blocked} blocked)"
        )
        for name, counts in (
            ("status", stats.by_status),
            ("type", stats.by_type),
            ("priority", stats.by_priority),
            ("assignee", stats.by_assignee),
        ):
            shown = ", ".join(f"{key} {value}" for key, value in counts.items() if value)
            output.say(f"  by {name:<9} {shown or '-'}")
        lead = stats.lead_time
        if lead.closed:
            output.say(
                f"  lead time    {lead.closed} closed: mean {lead.mean_hours}h,"
                f" median {lead.median_hours}h, max {lead.max_hours}h"
            )
        else:
            output.say("  lead time    no closed cells yet")

    show(stats, json_flag, render)
