"""CLI for the agent surfaces: tool schemas, the JSON envelope, the MCP server,
write proposals and the event log."""

import json
import os
import secrets
import sys
import time
from typing import Annotated, Any

import typer

from hive.cli import output
from hive.cli.common import (
    OPTIONS,
    JsonFlag,
    default_session,
    read_source,
    run_op,
    show,
    use_json,
    workspace,
)
from hive.errors import HiveError, InvalidInput, NotFound

tools_app = typer.Typer(
    help="Agent tools: schemas and the JSON tool-call envelope.", no_args_is_help=True
)
proposals_app = typer.Typer(help="File-write proposals awaiting an arbiter.", no_args_is_help=True)

ContextOption = Annotated[
    str | None,
    typer.Option(
        "--context",
        help="Directory file_read and list_files are confined to (default: the repository).",
    ),
]
AgentOption = Annotated[
    str | None, typer.Option("--agent", help="Calling agent (default: --actor / $HIVE_AGENT).")
]


def _context(agent: str | None, session: str | None = None) -> Any:
    """The calling agent: proven by the credential in $HIVE_AGENT_TOKEN, else registered
    now under --agent / --actor / $HIVE_AGENT (a name held by someone else leaves the
    session unbound, and calls that act say why), else unbound until swarmmail_init."""
    from hive.tools.registry import open_context

    ws = workspace(claim=False)
    wanted = agent or OPTIONS.actor or os.environ.get("HIVE_AGENT") or None
    token = os.environ.get("HIVE_AGENT_TOKEN") or None
    return open_context(ws.root, agent=wanted, token=token, session=session or default_session())


def _dump(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False, default=str) + "\n")


@tools_app.command("schema")
def schema_cmd(
    format: Annotated[str, typer.Option("--format", help="mcp|openai|anthropic")] = "mcp",
) -> None:
    """Print every tool's schema for an agent runtime (compact JSON: agents pay for
    every character)."""
    from hive.tools.schemas import render

    rendered = run_op(lambda: render(format))
    sys.stdout.write(json.dumps(rendered, ensure_ascii=False, separators=(",", ":")) + "\n")


@tools_app.command("list")
def list_cmd(
    agent: Annotated[
        str | None, typer.Option("--agent", help="Only the tools this agent may call.")
    ] = None,
    json_flag: JsonFlag = False,
) -> None:
    """Tool names and descriptions (with --agent: its tools list from agents: in the
    config; unknown names are warned about and skipped)."""
    from hive.tools.registry import CallContext, agent_tools, tools

    warnings: list[str] = []
    listed = tools()
    if agent:
        ctx = CallContext(root=workspace().root, agent=agent)
        listed, warnings = run_op(lambda: agent_tools(ctx))
    entries = [{"name": t.name, "description": t.description} for t in listed]
    for warning in warnings:
        output.err(f"warning: {agent}: {warning}")
    if json_flag or OPTIONS.json:
        _dump(entries)
        return
    for entry in entries:
        output.console().print(f"{entry['name']:<30} {entry['description']}")


@tools_app.command("docs")
def docs_cmd() -> None:
    """Print docs/tools.md as generated from the registry."""
    from hive.tools.docs import render_tools_docs

    sys.stdout.write(render_tools_docs())


def _context_dir(given: str | None) -> str | None:
    """``--context DIR``: an existing directory, as a real absolute path."""
    if given is None:
        return None

    def check() -> str:
        real = os.path.realpath(os.path.join(OPTIONS.directory, os.path.expanduser(given)))
        if not os.path.isdir(real):
            raise InvalidInput(f"--context {given}: not a directory")
        return real

    return run_op(check)


@tools_app.command("run")
def run_cmd(
    agent: AgentOption = None,
    allow_write: Annotated[
        bool, typer.Option("--allow-write", help="Also apply arbiter-approved proposals.")
    ] = False,
    context: ContextOption = None,
) -> None:
    """Run the tool calls of a JSON envelope read from stdin; print the transcript."""
    from hive.domain.files import apply_approved
    from hive.tools.envelope import run_envelope
    from hive.tools.registry import write_check

    ctx = run_op(lambda: _context(agent))
    ctx.context_dir = _context_dir(context)
    transcript = run_envelope(ctx, sys.stdin.read())
    if allow_write:
        try:
            transcript["applied"] = apply_approved(ctx.root, ctx.state_dir, write_check(ctx))
        except HiveError as exc:  # the transcript is still printed
            transcript["applied"] = []
            transcript["apply_error"] = exc.to_dict()
    _dump(transcript)
    if "error" in transcript:
        raise typer.Exit(2)


def mcp_cmd(agent: AgentOption = None, context: ContextOption = None) -> None:
    """Serve every tool over MCP on stdin/stdout (for agent runtimes). Each server
    process has its own session, so two servers never share a mail identity."""
    try:
        from hive.tools.mcp_server import serve_stdio
        from hive.tools.registry import agent_tools

        session = f"mcp:{os.getpid()}:{secrets.token_hex(4)}"
        ctx = run_op(lambda: _context(agent, session))
        ctx.context_dir = _context_dir(context)
        for warning in run_op(lambda: agent_tools(ctx))[1]:
            output.err(f"warning: {ctx.agent}: {warning}")
        serve_stdio(ctx)  # returns on stdin EOF, Ctrl-C or SIGTERM
    except KeyboardInterrupt:  # Ctrl-C while starting: stopped as asked, not a failure
        return


@proposals_app.command("list")
def proposals_list_cmd(
    status: Annotated[str | None, typer.Option("--status", help="pending|approved|...")] = None,
    json_flag: JsonFlag = False,
) -> None:
    """Queued file writes."""
    from hive.domain.files import list_proposals

    use_json(json_flag)
    ws = workspace()
    found = list_proposals(ws.git.paths.hive_state_dir, status)

    def render() -> None:
        out = output.console()
        if not found:
            out.print("[dim]no proposals[/dim]")
        for proposal in found:
            out.print(
                f"{proposal.id}  {proposal.status:<8} {proposal.path}"
                f"  ({len(proposal.content.encode())} bytes, by {proposal.agent})"
            )

    show(found, json_flag, render)


@proposals_app.command("decide")
def proposals_decide_cmd(
    source: Annotated[str, typer.Argument(help="Decisions JSON file, or '-' for stdin.")] = "-",
    allow_write: Annotated[
        bool, typer.Option("--allow-write", help="Write approved proposals to disk.")
    ] = False,
    json_flag: JsonFlag = False,
) -> None:
    """Apply an arbiter's {"decisions": [...]} to pending proposals (exit 3 when a
    decision names no pending proposal)."""
    from hive.domain.files import decide
    from hive.tools.registry import CallContext, write_check

    use_json(json_flag)
    ctx = CallContext(root=run_op(lambda: workspace(claim=False)).root)
    text = run_op(lambda: read_source(source))
    report = run_op(
        lambda: decide(
            ctx.root, ctx.state_dir, text, allow_write=allow_write, check=write_check(ctx)
        )
    )

    def render() -> None:
        for entry in report:
            output.console().print(
                f"{entry.get('id', '-')}  {entry['status']:<20} {entry['path']}"
                f"  {entry.get('result', '')}"
            )

    show(report, json_flag, render)
    unmatched = [entry["path"] for entry in report if entry["status"] == "no_pending_proposal"]
    if unmatched:
        output.err(f"error: no pending proposal for {', '.join(unmatched)}")
        raise typer.Exit(NotFound.exit_code)


def events_cmd(
    limit: Annotated[int, typer.Option("--limit", "-n", min=1)] = 20,
    follow: Annotated[
        bool, typer.Option("--follow", "-f", help="Keep printing new events.")
    ] = False,
    json_flag: JsonFlag = False,
) -> None:
    """The tool-call event log (agent, tool, args digest, duration, outcome, hooks).
    Reads only the end of the log; --follow reads only the bytes appended since."""
    from hive.domain.governance import events_size, read_appended, read_events

    use_json(json_flag or OPTIONS.json)
    ws = workspace()
    state_dir = ws.git.paths.hive_state_dir
    offset = events_size(state_dir)
    _print_events(read_events(state_dir, limit), json_flag or OPTIONS.json)
    while follow:
        time.sleep(0.5)
        events, offset = read_appended(state_dir, offset)
        _print_events(events, json_flag or OPTIONS.json)


def _short_args(args: Any, limit: int = 120) -> str:
    if args in (None, {}):
        return ""
    text = json.dumps(args, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _print_events(events: list[dict[str, Any]], as_json: bool) -> None:
    for event in events:
        if as_json:
            sys.stdout.write(json.dumps(event) + "\n")
        else:
            stamp = time.strftime("%H:%M:%S", time.gmtime(float(event.get("ts", 0))))
            sys.stdout.write(
                f"{stamp}  {event.get('agent', '-'):<14} {event.get('tool', '-'):<28}"
                f" {event.get('outcome', '-'):<22} {event.get('duration_ms', 0):>8.1f} ms"
                f"  {_short_args(event.get('args'))}\n"
            )
    sys.stdout.flush()
