"""``hive mcp``: the registry served over stdio with the official MCP Python SDK.

Tool results are JSON text (plus structured content); domain errors come back as
results with ``isError`` set, so the model sees the message and can correct
itself. Calls run in a worker thread: hive's operations do blocking file I/O.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from hive import __version__
from hive.tools.registry import CallContext, call_tool, tools
from hive.tools.schemas import input_schema

INSTRUCTIONS = (
    "hive: git-backed cells (issues), swarm mail, enforced file reservations and swarm "
    "orchestration. Start with swarmmail_init, then hive_ready / swarm_subtask_prompt; "
    "reserve files before editing; finish with swarm_complete."
)


def build_server(ctx: CallContext) -> Server[Any]:
    listed = [
        types.Tool(name=tool.name, description=tool.description, input_schema=input_schema(tool))
        for tool in tools()
    ]

    async def on_list_tools(
        request: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def on_call_tool(
        request: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        outcome = await anyio.to_thread.run_sync(
            lambda: call_tool(ctx, params.name, params.arguments or {})
        )
        failed = "result" not in outcome
        payload = outcome if failed else outcome["result"]
        text = json.dumps(payload, ensure_ascii=False, default=str)
        structured = payload if isinstance(payload, dict) else {"result": payload}
        return types.CallToolResult(
            content=[types.TextContent(text=text)],
            structured_content=structured,
            is_error=failed,
        )

    return Server(
        "hive",
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )


def serve_stdio(ctx: CallContext) -> None:
    """Serve until the client closes stdin."""
    server = build_server(ctx)

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(main)
