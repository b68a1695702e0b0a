"""CLI for the agent surfaces: tool schemas, the JSON envelope and the MCP server.
Hand-written on purpose (see docs/architecture.md): they serve or describe the
tools rather than being operations themselves."""

import json
import os
import sys
from typing import Annotated, Any

import typer

from hive.cli import output
from hive.cli.common import (
    OPTIONS,
    JsonFlag,
    default_session,
    run_op,
    workspace,
)
from hive.errors import HiveError

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


def _context(agent: str | None) -> Any:
    """The calling agent (see ``mcp_start.open_session``)."""
    from hive.cli.mcp_start import open_session

    wanted = agent or OPTIONS.actor or os.environ.get("HIVE_AGENT")
    return open_session(OPTIONS.directory, wanted, default_session())


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
    """Print docs/tools.md as generated from the registry (--json: {"markdown": ...})."""
    from hive.tools.docs import render_tools_docs

    if OPTIONS.json:
        _dump({"markdown": render_tools_docs()})
        return
    sys.stdout.write(render_tools_docs())


def _context_dir(given: str | None) -> str | None:
    """``--context DIR``: an existing directory, as a real absolute path."""
    from hive.cli.mcp_start import context_dir

    return run_op(lambda: context_dir(OPTIONS.directory, given))


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
    if ctx.bind_error is not None:  # "agent": null says nothing of why
        transcript["warnings"] = [ctx.bind_error.message, *transcript.get("warnings", [])]
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
    from hive.cli.mcp_start import serve

    code = serve(OPTIONS.directory, OPTIONS.actor, OPTIONS.json, agent, context)
    if code:
        raise typer.Exit(code)
