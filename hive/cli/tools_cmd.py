"""CLI for the agent surfaces: tool schemas, the JSON envelope, the MCP server,
write proposals and the event log."""

import json
import sys
import time
from typing import Annotated, Any

import typer

from hive.cli import output
from hive.cli.common import OPTIONS, JsonFlag, run_op, show, use_json, workspace
from hive.errors import InvalidInput

tools_app = typer.Typer(
    help="Agent tools: schemas and the JSON tool-call envelope.", no_args_is_help=True
)
proposals_app = typer.Typer(help="File-write proposals awaiting an arbiter.", no_args_is_help=True)

AgentOption = Annotated[
    str | None, typer.Option("--agent", help="Calling agent (default: --actor / $HIVE_AGENT).")
]


def _context(agent: str | None) -> Any:
    from hive.tools.registry import CallContext

    ws = workspace()
    name = agent or ws.actor
    return CallContext(root=ws.root, agent=name, session=f"tools:{name}")


def _dump(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False, default=str) + "\n")


@tools_app.command("schema")
def schema_cmd(
    format: Annotated[str, typer.Option("--format", help="mcp|openai|anthropic")] = "mcp",
) -> None:
    """Print every tool's schema for an agent runtime."""
    from hive.tools.schemas import render

    _dump(run_op(lambda: render(format)))


@tools_app.command("list")
def list_cmd(json_flag: JsonFlag = False) -> None:
    """Tool names and descriptions."""
    from hive.tools.registry import tools

    entries = [{"name": t.name, "description": t.description} for t in tools()]
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


@tools_app.command("run")
def run_cmd(
    agent: AgentOption = None,
    allow_write: Annotated[
        bool, typer.Option("--allow-write", help="Also apply arbiter-approved proposals.")
    ] = False,
) -> None:
    """Run the tool calls of a JSON envelope read from stdin; print the transcript."""
    from hive.tools.envelope import run_envelope
    from hive.tools.files import apply_approved

    ctx = run_op(lambda: _context(agent))
    transcript = run_envelope(ctx, sys.stdin.read())
    if allow_write:
        transcript["applied"] = apply_approved(ctx.root, ctx.state_dir)
    _dump(transcript)
    if "error" in transcript:
        raise typer.Exit(2)


def mcp_cmd(agent: AgentOption = None) -> None:
    """Serve every tool over MCP on stdin/stdout (for agent runtimes)."""
    from hive.tools.mcp_server import serve_stdio

    ctx = run_op(lambda: _context(agent))
    serve_stdio(ctx)


@proposals_app.command("list")
def proposals_list_cmd(
    status: Annotated[str | None, typer.Option("--status", help="pending|approved|...")] = None,
    json_flag: JsonFlag = False,
) -> None:
    """Queued file writes."""
    from hive.tools.files import list_proposals

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
    """Apply an arbiter's {"decisions": [...]} to pending proposals."""
    from hive.tools.files import decide

    use_json(json_flag)
    ws = workspace()
    text = run_op(lambda: _read(source))
    report = run_op(
        lambda: decide(ws.root, ws.git.paths.hive_state_dir, text, allow_write=allow_write)
    )

    def render() -> None:
        for entry in report:
            output.console().print(
                f"{entry.get('id', '-')}  {entry['status']:<20} {entry['path']}"
                f"  {entry.get('result', '')}"
            )

    show(report, json_flag, render)


def _read(source: str) -> str:
    if source == "-":
        return sys.stdin.read()
    try:
        with open(source, encoding="utf-8") as handle:
            return handle.read()
    except OSError as exc:
        raise InvalidInput(f"cannot read {source}: {exc.strerror}") from None


def events_cmd(
    limit: Annotated[int, typer.Option("--limit", "-n", min=1)] = 20,
    follow: Annotated[
        bool, typer.Option("--follow", "-f", help="Keep printing new events.")
    ] = False,
    json_flag: JsonFlag = False,
) -> None:
    """The tool-call event log (agent, tool, args digest, duration, outcome)."""
    from hive.tools.governance import read_events

    use_json(json_flag or OPTIONS.json)
    ws = workspace()
    state_dir = ws.git.paths.hive_state_dir
    seen = 0
    events = read_events(state_dir)
    shown = events[-limit:]
    seen = len(events)
    _print_events(shown, json_flag or OPTIONS.json)
    while follow:
        time.sleep(0.5)
        events = read_events(state_dir)
        if len(events) > seen:
            _print_events(events[seen:], json_flag or OPTIONS.json)
            seen = len(events)


def _print_events(events: list[dict[str, Any]], as_json: bool) -> None:
    for event in events:
        if as_json:
            sys.stdout.write(json.dumps(event) + "\n")
        else:
            stamp = time.strftime("%H:%M:%S", time.gmtime(float(event.get("ts", 0))))
            sys.stdout.write(
                f"{stamp}  {event.get('agent', '-'):<14} {event.get('tool', '-'):<28}"
                f" {event.get('outcome', '-'):<22} {event.get('duration_ms', 0):>8.1f} ms\n"
            )
    sys.stdout.flush()
