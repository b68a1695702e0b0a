"""CLI for working across machines and trackers: sync, and beads import/export."""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer

from hive.cli import output
from hive.cli.common import JsonFlag, run_op, show, use_json, workspace

import_app = typer.Typer(help="Import another tracker's data.", no_args_is_help=True)
export_app = typer.Typer(help="Export cells for another tracker.", no_args_is_help=True)


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0  # the import names the problem


@import_app.command("beads")
def import_beads_cmd(
    path: Annotated[str, typer.Argument(metavar="FILE.jsonl", help="A beads JSONL export.")],
    update: Annotated[
        bool, typer.Option("--update", help="Replace cells whose ids already exist.")
    ] = False,
    json_flag: JsonFlag = False,
) -> None:
    """Import a beads (bd) JSONL export: one cell per record, in one commit."""
    from hive.domain.beads import import_beads

    use_json(json_flag)
    ws = run_op(workspace)
    with output.progress_bar(_size(path), enabled=not json_flag) as report:
        result = run_op(lambda: import_beads(ws, path=path, update=update, progress=report))

    def render() -> None:
        output.say(
            f"imported {result.imported} cells from {result.source}"
            + (f", updated {result.updated}" if result.updated else "")
            + (f", skipped {result.skipped} already present" if result.skipped else "")
            + (f" (commit {result.commit[:10]})" if result.commit else "")
        )
        for what, counts in (("status", result.mapped_statuses), ("type", result.mapped_types)):
            if counts:
                listed = ", ".join(f"{name} ({n})" for name, n in sorted(counts.items()))
                output.say(f"  beads {what} values hive lacks, mapped and recorded: {listed}")

    show(result, json_flag, render)


@export_app.command("beads")
def export_beads_cmd(
    path: Annotated[
        str | None, typer.Argument(metavar="[FILE]", help="Where to write (default: stdout).")
    ] = None,
    json_flag: JsonFlag = False,
) -> None:
    """Export every cell as beads (bd) JSONL, to FILE or stdout."""
    from hive.domain.beads import export_beads

    use_json(json_flag)
    result = run_op(lambda: export_beads(workspace(), path=path))
    if path is None and not json_flag:
        sys.stdout.write(result.text or "")
        sys.stdout.flush()
        return
    show(result, json_flag, lambda: output.say(f"exported {result.records} cells to {path}"))


def sync_cmd(
    remote: Annotated[str, typer.Argument(help="Remote name or URL.")] = "origin",
    json_flag: JsonFlag = False,
) -> None:
    """Exchange hive's cells, reservations and mail with REMOTE: fetch, merge, push.

    Only hive's files and refs change (never your other files or your branch's
    code); a push rejected because another clone pushed first is retried after
    a fresh fetch.
    """
    from hive.domain.sync import sync

    use_json(json_flag)
    ws = run_op(workspace)
    always = output.PROGRESS_FROM  # a sync waits on the network: always worth a bar
    with output.progress_bar(always, enabled=not json_flag, first="fetching") as report:
        result = run_op(lambda: sync(ws, remote=remote, progress=report))

    def render() -> None:
        commit = f" (commit {result.commit[:10]})" if result.commit else ""
        output.say(
            f"synced with {result.remote}: {result.received_cells} cell file(s) received,"
            f" {result.sent_cells} sent, {result.mail_received} message(s) received{commit}"
        )
        for record in result.conflicts:
            output.say(
                f"  merge conflict on {record.get('cell')}: both sides changed"
                f" {record.get('field')} (see 'hive show {record.get('cell')}')"
            )
        for problem in result.unresolved:
            output.say(f"  not merged: {problem}")
        for contest in result.contested:
            lost, kept = contest.yielded, contest.kept
            output.say(
                f"  reservation contested: {lost.agent}'s {lost.path_pattern!r} yields to"
                f" {kept.agent}'s {kept.path_pattern!r} (earliest grant wins; both told by mail)"
            )

    show(result, json_flag, render)
