"""CLI for the agent surfaces: tool schemas, the JSON envelope and the MCP server.
Hand-written on purpose (see docs/architecture.md): they serve or describe the
tools rather than being operations themselves."""

import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from hive.cli import output
from hive.cli.common import OPTIONS, JsonFlag, run_op, workspace
from hive.jsontext import dumps
from hive.times import json_default

if TYPE_CHECKING:
    from hive.tools.registry import Tool

tools_app = typer.Typer(
    rich_markup_mode=None,
    help="Agent tools: schemas and the JSON tool-call envelope.",
    no_args_is_help=True,
)

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


def _dump(value: Any) -> None:
    sys.stdout.write(dumps(value, indent=2, default=json_default) + "\n")


OnlyAgentOption = Annotated[
    str | None, typer.Option("--agent", help="Only the tools this agent may call.")
]


@tools_app.command("schema")
def schema_cmd(
    format: Annotated[str, typer.Option("--format", help="mcp|openai|anthropic")] = "mcp",
    agent: OnlyAgentOption = None,
) -> None:
    """Print every tool's schema for an agent runtime (compact JSON: agents pay for
    every character); with --agent only its tools, as hive mcp lists them to it."""
    from hive.tools.schemas import render

    listed = _agent_tools(agent)
    rendered = run_op(lambda: render(format, listed))
    with output.to_reader():
        sys.stdout.write(dumps(rendered, separators=(",", ":")) + "\n")


def _agent_tools(agent: str | None) -> "list[Tool] | None":
    """The tools ``agent`` may call (its tools list in agents: of the config; unknown
    names are warned about and skipped); None without an agent: every tool."""
    from hive.tools.registry import CallContext, agent_tools

    if not agent:
        return None
    ctx = CallContext(root=workspace().root, agent=agent)
    listed, warnings = run_op(lambda: agent_tools(ctx))
    for warning in warnings:
        output.err(f"warning: {agent}: {warning}")
    return listed


@tools_app.command("list")
def list_cmd(agent: OnlyAgentOption = None, json_flag: JsonFlag = False) -> None:
    """Tool names and descriptions (with --agent: its tools list from agents: in the
    config; unknown names are warned about and skipped)."""
    from hive.tools.registry import tools

    listed = _agent_tools(agent)
    if listed is None:
        listed = tools()
    entries = [{"name": t.name, "description": t.description} for t in listed]
    with output.to_reader():
        if json_flag or OPTIONS.json:
            _dump(entries)
            return
        for entry in entries:  # cut to the terminal's width, as hive list cuts a title
            output.row(f"{entry['name']:<30} {entry['description']}")


@tools_app.command("docs")
def docs_cmd() -> None:
    """Print docs/tools.md as generated from the registry (--json: {"markdown": ...})."""
    from hive.tools.docs import render_tools_docs

    with output.to_reader():
        if OPTIONS.json:
            _dump({"markdown": render_tools_docs()})
            return
        sys.stdout.write(render_tools_docs())


@tools_app.command("run")
def run_cmd(
    agent: AgentOption = None,
    allow_write: Annotated[
        bool, typer.Option("--allow-write", help="Also apply arbiter-approved proposals.")
    ] = False,
    context: ContextOption = None,
) -> None:
    """Run the tool calls of a JSON envelope read from stdin; print the transcript.

    Exit code 0 when every call succeeded, else that of the first call that failed
    (the table above: not_found 3, invalid_arguments 2, ...); the transcript is
    printed either way."""
    from hive.cli.tools_start import run_calls

    code = run_calls(OPTIONS.directory, OPTIONS.actor, OPTIONS.json, agent, allow_write, context)
    if code:
        raise typer.Exit(code)


def mcp_cmd(agent: AgentOption = None, context: ContextOption = None) -> None:
    """Serve every tool over MCP on stdin/stdout (for agent runtimes). Each server
    process has its own session, so two servers never share a mail identity.
    Started outside a git repository, it still serves (a client completes the
    handshake): every tool call answers not_a_git_repository, naming the directory."""
    from hive.cli.mcp_start import serve

    code = serve(OPTIONS.directory, OPTIONS.actor, OPTIONS.json, agent, context)
    if code:
        raise typer.Exit(code)
