"""CLI for coordination: swarm mail, file reservations and the git hook."""

import os
import sys
from typing import TYPE_CHECKING, Annotated

import typer

from hive.cli import output
from hive.cli.common import (
    OPTIONS,
    ForceFlag,
    JsonFlag,
    ReasonOption,
    run_op,
    show,
    use_json,
    workspace,
)

if TYPE_CHECKING:
    from hive.domain.workspace import Workspace

mail_app = typer.Typer(help="Swarm mail between agents.", no_args_is_help=True)
hooks_app = typer.Typer(help="The git pre-commit hook.", no_args_is_help=True)


@mail_app.command("init")
def mail_init_cmd(
    name: Annotated[
        str | None, typer.Option("--name", help="Agent name (generated if omitted).")
    ] = None,
    task: Annotated[
        str | None, typer.Option("--task", help="What this agent is working on.")
    ] = None,
    json_flag: JsonFlag = False,
) -> None:
    """Register as an agent (the same as 'hive agent register'; the name defaults to
    --actor / HIVE_AGENT). Prints the credential to export as HIVE_AGENT_TOKEN;
    with HIVE_AGENT_TOKEN already set, takes that identity back instead."""
    from hive.cli.agent_cmd import register_and_show

    register_and_show(name, task, replace=False, json_flag=json_flag)


@mail_app.command("sync")
def mail_sync_cmd(
    remote: Annotated[str, typer.Argument(help="Remote name or URL.")] = "origin",
    json_flag: JsonFlag = False,
) -> None:
    """Exchange mail with a remote: fetch, merge diverged logs, push."""
    from hive.domain.mail import sync_mail

    use_json(json_flag)
    result = run_op(lambda: sync_mail(workspace(), remote=remote))
    notes = [f"{result.received} new message(s)"]
    notes += ["merged"] * result.merged + ["pushed"] * result.pushed
    line = f"synced mail with {output.escape(result.remote)}: {', '.join(notes)}"
    show(result, json_flag, lambda: output.console().print(line))


@mail_app.command("send")
def mail_send_cmd(
    to: Annotated[
        list[str] | None,
        typer.Argument(help="Recipient agent names (optional with --thread).", show_default=False),
    ] = None,
    *,
    subject: Annotated[str, typer.Option("-s", "--subject")],
    body: Annotated[str, typer.Option("-b", "--body", help="Message body ('-' reads stdin).")] = "",
    thread: Annotated[
        str | None, typer.Option("--thread", help="Thread id (use the cell or epic id).")
    ] = None,
    importance: Annotated[
        str, typer.Option("--importance", help="low|normal|high|urgent")
    ] = "normal",
    ack: Annotated[bool, typer.Option("--ack-required")] = False,
    json_flag: JsonFlag = False,
) -> None:
    """Send a message to agents (a message on an epic thread reaches its workers)."""
    from hive.domain.mail import send_message

    use_json(json_flag)
    text = sys.stdin.read() if body == "-" else body
    sent = run_op(
        lambda: send_message(
            workspace(),
            to=to or [],
            subject=subject,
            body=text,
            thread_id=thread,
            importance=importance,
            ack_required=ack,
        )
    )
    show(
        sent,
        json_flag,
        lambda: output.console().print(f"sent #{sent.message_id} to {', '.join(sent.recipients)}"),
    )


@mail_app.command("inbox")
def mail_inbox_cmd(
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, max=5, clamp=True)] = 5,
    urgent: Annotated[bool, typer.Option("--urgent", help="Only urgent messages.")] = False,
    unread: Annotated[bool, typer.Option("--unread", help="Only unread messages.")] = False,
    agent: Annotated[
        str | None,
        typer.Option("--agent", help="Another agent's inbox (needs --force and --reason)."),
    ] = None,
    force: ForceFlag = False,
    reason: ReasonOption = None,
    json_flag: JsonFlag = False,
) -> None:
    """Newest messages first (headers only; at most 5)."""
    from hive.domain.mail import inbox

    use_json(json_flag)
    headers = run_op(
        lambda: inbox(
            workspace(),
            limit=limit,
            urgent_only=urgent,
            unread_only=unread,
            agent=agent,
            force=force,
            reason=reason,
        )
    )

    def render() -> None:
        out = output.console(wrap=True)
        if not headers:
            out.print("[dim]no messages[/dim]")
        for header in headers:
            flag = "" if header.read else "[bold]*[/bold]"
            thread = f" [{header.thread_id}]" if header.thread_id else ""
            out.print(
                f"{flag}#{header.id} {header.importance:<7} from {header.sender}"
                f"{output.escape(thread)}: "
                f"{output.escape(header.subject)}"
            )

    show(headers, json_flag, render)


@mail_app.command("read")
def mail_read_cmd(
    message_id: Annotated[int, typer.Argument()],
    force: ForceFlag = False,
    reason: ReasonOption = None,
    json_flag: JsonFlag = False,
) -> None:
    """Show one message with its body (marks it read). Another agent's message needs
    --force and --reason (coordinators and people; recorded)."""
    from hive.domain.mail import read_message

    use_json(json_flag)
    message = run_op(
        lambda: read_message(workspace(), message_id=message_id, force=force, reason=reason)
    )

    def render() -> None:
        out = output.console()
        out.print(
            f"#{message.id} from {message.sender} to {', '.join(message.to)}"
            f"  {output.escape(f'[{message.importance}]')}"
        )
        out.print(f"[bold]{output.escape(message.subject)}[/bold]")
        out.print(output.escape(message.body))

    show(message, json_flag, render)


@mail_app.command("ack")
def mail_ack_cmd(message_id: Annotated[int, typer.Argument()], json_flag: JsonFlag = False) -> None:
    """Acknowledge a message."""
    from hive.domain.mail import ack_message

    use_json(json_flag)
    acked = run_op(lambda: ack_message(workspace(), message_id=message_id))
    show(acked, json_flag, lambda: output.console().print(f"acknowledged #{acked.message_id}"))


def from_cwd(ws: "Workspace", patterns: list[str]) -> list[str]:
    """Relative patterns are relative to the current directory, as in git."""
    base = os.path.realpath(os.path.abspath(OPTIONS.directory))
    relative = os.path.relpath(base, os.path.realpath(ws.root)).replace(os.sep, "/")
    if relative == "." or relative.startswith(".."):
        return list(patterns)
    return [p if os.path.isabs(p.strip()) else f"{relative}/{p.strip()}" for p in patterns]


def reserve_cmd(
    patterns: Annotated[list[str], typer.Argument(metavar="PATTERN...", help="Paths or globs.")],
    shared: Annotated[
        bool, typer.Option("--shared", help="Shared (read) instead of exclusive.")
    ] = False,
    ttl: Annotated[int, typer.Option("--ttl", help="Seconds until it expires.")] = 3600,
    reason: Annotated[str | None, typer.Option("--reason")] = None,
    cell: Annotated[str | None, typer.Option("--cell", help="The cell this work is for.")] = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force", help="Coordinators and people: override conflicts (needs --reason)."
        ),
    ] = False,
    json_flag: JsonFlag = False,
) -> None:
    """Reserve files before editing them (refused on conflict)."""
    from hive.domain.reservations import reserve

    use_json(json_flag)
    ws = run_op(workspace)
    result = run_op(
        lambda: reserve(
            ws,
            paths=from_cwd(ws, patterns),
            reason=reason,
            exclusive=not shared,
            ttl_seconds=ttl,
            cell=cell,
            force=force,
        )
    )

    def render() -> None:
        out = output.console()
        for item in result.granted:
            kind = "exclusive" if item.exclusive else "shared"
            out.print(
                f"reserved #{item.id} {item.path_pattern} ({kind})"
                f" until {item.expires_at:%H:%M:%S}Z"
            )
        for conflict in result.overridden:
            out.print(f"[yellow]overrode {conflict.holder}'s {conflict.pattern}[/yellow]")

    show(result, json_flag, render)


def release_cmd(
    patterns: Annotated[list[str] | None, typer.Argument(metavar="[PATTERN...]")] = None,
    ids: Annotated[
        list[int] | None, typer.Option("--id", help="Reservation id (repeatable).")
    ] = None,
    release_all: Annotated[bool, typer.Option("--all", help="Release all of yours.")] = False,
    agent: Annotated[
        str | None,
        typer.Option(
            "--agent",
            help="Another holder's reservations (all of them without PATTERN/--id;"
            " needs --force, --reason).",
        ),
    ] = None,
    force: ForceFlag = False,
    reason: ReasonOption = None,
    json_flag: JsonFlag = False,
) -> None:
    """Release your reservations (given patterns/ids, or --all)."""
    from hive.domain.reservations import release

    use_json(json_flag)
    if not patterns and not ids and not release_all and not agent:
        output.err("error: give PATTERN..., --id ID, --all or --agent NAME")
        raise typer.Exit(2)
    ws = run_op(workspace)
    result = run_op(
        lambda: release(
            ws,
            paths=from_cwd(ws, patterns or []) or None,
            reservation_ids=ids or None,
            agent=agent,
            force=force,
            reason=reason,
        )
    )
    show(
        result,
        json_flag,
        lambda: output.console().print(
            f"released {len(result.released)} reservation(s)"
            + (f"; not held: {', '.join(result.not_found)}" if result.not_found else "")
        ),
    )


def reservations_cmd(
    agent: Annotated[str | None, typer.Option("--agent", help="Only this agent's.")] = None,
    expired: Annotated[bool, typer.Option("--expired", help="Include expired ones.")] = False,
    json_flag: JsonFlag = False,
) -> None:
    """Active reservations."""
    from hive.domain.contest import yielded_reservations
    from hive.domain.reservations import list_reservations, reservation_problems

    use_json(json_flag)
    ws = run_op(workspace)
    items = run_op(lambda: list_reservations(ws, agent=agent, include_expired=expired))
    for problem in run_op(lambda: reservation_problems(ws)):
        output.err(f"warning: {problem.message}; reserving and committing are blocked until fixed")
    yielded = run_op(lambda: yielded_reservations(ws))

    def render() -> None:
        from rich.table import Table

        for item in yielded:
            if agent is None or item.agent == agent:
                winner = item.yielded_to
                assert winner is not None
                output.say(
                    f"contested across clones: {item.agent}'s #{item.id}"
                    f" {item.path_pattern!r} yielded to {winner.holder}'s"
                    f" #{winner.reservation_id} {winner.pattern!r} (earliest grant wins)"
                )
        if not items:
            output.console().print("[dim]no active reservations[/dim]")
            return
        table = Table(box=None, header_style="bold")
        for column in ("ID", "AGENT", "PATTERN", "KIND", "CELL", "EXPIRES"):
            wraps = column in ("AGENT", "PATTERN")  # ids, cells and times are never cut
            table.add_column(column, no_wrap=not wraps, overflow="fold")
        for item in items:
            table.add_row(
                str(item.id),
                item.agent,
                output.escape(item.path_pattern),
                "exclusive" if item.exclusive else "shared",
                item.cell or "",
                f"{item.expires_at:%Y-%m-%d %H:%M:%S}Z",
            )
        output.console().print(table)

    show(items, json_flag, render)


@hooks_app.command("install")
def hooks_install_cmd(json_flag: JsonFlag = False) -> None:
    """Install the pre-commit hook (keeps and chains an existing one)."""
    from hive.domain.hooks import install_hook

    use_json(json_flag)
    result = run_op(lambda: install_hook(workspace()))
    show(
        result,
        json_flag,
        lambda: output.console().print(
            f"{result.action}: {result.path}"
            + (f" (chains {result.chained})" if result.chained else "")
        ),
    )


@hooks_app.command("uninstall")
def hooks_uninstall_cmd(json_flag: JsonFlag = False) -> None:
    """Remove hive's pre-commit hook (restores a chained one)."""
    from hive.domain.hooks import uninstall_hook

    use_json(json_flag)
    result = run_op(lambda: uninstall_hook(workspace()))
    show(result, json_flag, lambda: output.console().print(f"{result.action}: {result.path}"))


@hooks_app.command("run")
def hooks_run_cmd(
    hook: Annotated[str, typer.Argument(help="Only 'pre-commit'.")],
    json_flag: JsonFlag = False,
) -> None:
    """Run a hook now (what git runs on commit)."""
    from hive.domain.precommit import check_staged

    use_json(json_flag)
    if hook != "pre-commit":
        output.err(f"error: unknown hook {hook!r}: only 'pre-commit' exists")
        raise typer.Exit(2)
    report = run_op(lambda: check_staged(workspace(claim=False)))
    for line in report.recovered:
        output.err(f"hive: {line}")

    def render() -> None:
        if report.note and report.violations:
            output.err(f"hive: note: {report.note}")
        for violation in report.violations:
            output.err(f"hive: {violation.message}")
        if report.violations:
            output.err("hive: commit blocked (HIVE_BYPASS=1 or --no-verify to skip)")

    show(report, json_flag, render)
    if not report.ok:
        raise typer.Exit(1)
