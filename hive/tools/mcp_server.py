"""``hive mcp``: the registry served over stdio with the official MCP Python SDK.

Tool results are JSON text (plus structured content); domain errors come back as
results with ``isError`` set, so the model sees the message and can correct
itself. Hooks' ``warnings`` and ``hook_feedback`` on a success follow the result as
a second text block. Calls run in a worker thread: hive's operations do blocking file I/O.

The SDK drops a line it cannot parse without answering; ``serve_stdio`` answers it
instead: ``-32700`` (parse error, also for JSON nested too deeply) or ``-32600``
(not a JSON-RPC message), with the request id when one can be read from the line;
a ``tools/call`` whose params are not a tool's name and an object of arguments gets
``-32602`` saying which (:func:`invalid_call`).
At stdin EOF the SDK cancels the requests under way and drops their answers;
``serve_stdio`` holds the EOF back until each is answered (:class:`Unanswered`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import re
from collections.abc import Callable
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from hive import __version__
from hive.errors import HiveError
from hive.jsontext import inert
from hive.text import utf8_clean
from hive.times import json_default
from hive.tools.registry import CallContext, agent_tools, call_tool, tools
from hive.tools.schemas import input_schema

INSTRUCTIONS = (
    "hive: git-backed cells (issues), swarm mail, enforced file reservations and swarm "
    "orchestration. Start with swarmmail_init, then hive_ready / swarm_subtask_prompt; "
    "reserve files before editing; finish with swarm_complete."
)


NOTES = ("warnings", "hook_feedback")  # a call's notes besides its result (registry)


def build_server(ctx: CallContext) -> Server[Any]:
    @functools.cache
    def listed() -> dict[str, types.Tool]:
        """Every tool as MCP lists it: made on the first ``tools/list``, not at start-up
        (it imports every operation module and builds each one's schema)."""
        return {
            tool.name: types.Tool(
                name=tool.name, description=tool.description, input_schema=input_schema(tool)
            )
            for tool in tools()
        }

    def offered() -> list[types.Tool]:
        """The bound agent's tools (its ``tools`` list in ``agents:``), else every tool."""
        try:
            allowed, _ = agent_tools(ctx)
        except HiveError:
            return list(listed().values())
        return [listed()[tool.name] for tool in allowed]

    async def on_list_tools(
        request: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=await anyio.to_thread.run_sync(offered))

    async def on_call_tool(
        request: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        outcome = await _abandonable(lambda: call_tool(ctx, params.name, params.arguments or {}))
        failed = "result" not in outcome
        try:
            content, structured = _reply(outcome, failed)
        except UnicodeEncodeError:  # a file name that is not UTF-8 (lone surrogates):
            content, structured = _reply(utf8_clean(outcome), failed)  # its bytes escaped
        return types.CallToolResult(
            content=content,
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


def _reply(outcome: Any, failed: bool) -> tuple[list[types.TextContent], dict[str, Any]]:
    """The call's content blocks and structured content, as UTF-8 text (an outcome
    that UTF-8 cannot carry raises UnicodeEncodeError: the SDK's encoder failed on it
    later, which ended the server mid-call)."""
    payload = outcome if failed else outcome["result"]
    # A text result (a markdown block, a file's content) is sent as it is.
    text = (
        payload
        if isinstance(payload, str)
        else json.dumps(payload, ensure_ascii=False, default=json_default)
    )
    text.encode("utf-8")
    structured = payload if isinstance(payload, dict) else {"result": payload}
    content = [types.TextContent(text=text)]
    # hooks' warnings and feedback ride beside a result (inside an error already)
    notes = {} if failed else {key: outcome[key] for key in NOTES if key in outcome}
    if notes:
        noted = json.dumps(notes, ensure_ascii=False)
        noted.encode("utf-8")
        content.append(types.TextContent(text=noted))
    return content, structured


async def _abandonable(call: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """Run ``call`` in a worker thread; when the client cancels it, stop waiting for it
    and tell its waits to end (:func:`hive.waits.pause`): a cancelled ``ctx_wait`` of
    minutes held the server's stop at stdin EOF (the process waits for its threads)
    until its time was up. A cancelled write runs to its end, its answer dropped."""
    import threading

    from hive import waits

    abandoned = threading.Event()

    def run() -> dict[str, Any]:
        waits.abandoned_when(abandoned)  # this thread's context: a copy, for this call
        return call()

    try:
        return await anyio.to_thread.run_sync(run, abandon_on_cancel=True)
    except anyio.get_cancelled_exc_class():
        abandoned.set()
        raise


def serve_stdio(ctx: CallContext) -> None:
    """Serve until the client closes stdin (or stops reading stdout), or Ctrl-C / SIGTERM
    asks the server to stop: each is a clean stop (no traceback; the CLI exits 0). A
    signal stops it at once, also during a call (a write cut short is completed by the
    next hive command, as after a kill): left to asyncio, Ctrl-C only cancelled the
    call, and the server went on serving."""
    import signal

    asked: list[int] = []

    def stop(signum: int, frame: object) -> None:
        asked.append(signum)
        raise KeyboardInterrupt

    previous = {number: signal.signal(number, stop) for number in (signal.SIGTERM, signal.SIGINT)}
    try:
        _serve(ctx)
    except KeyboardInterrupt:
        return
    except BaseException as exc:
        if asked:  # what the stop broke on its way out (an import's lock): still a stop
            return
        if not client_gone(exc):
            raise
        _quiet_stdout()  # nobody reads it: no second error when Python flushes it at exit
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def client_gone(exc: BaseException) -> bool:
    """The client closed its end of the pipes (every error in ``exc`` says so): the
    session is over, as at stdin EOF."""
    return _only(exc, (BrokenPipeError, ConnectionResetError))


def _only(exc: BaseException | None, kinds: tuple[type[BaseException], ...]) -> bool:
    """Whether ``exc`` is one of ``kinds``, or a group (a task group's) of only those."""
    if isinstance(exc, BaseExceptionGroup):
        return all(_only(inner, kinds) for inner in exc.exceptions)
    return isinstance(exc, kinds)


def _quiet_stdout() -> None:
    import os
    import sys

    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


class Unanswered:
    """The client's requests the server has not answered yet. At stdin EOF the SDK
    cancels the requests under way and drops their answers (a tool call had run, a
    cell was created, and the client never heard of it): the session's end is held
    back from the SDK until every request is answered, or cancelled by the client."""

    def __init__(self) -> None:
        self.ids: set[types.RequestId] = set()
        self.settled = anyio.Event()
        self.settled.set()

    def asked(self, message: Any) -> None:
        if isinstance(message, types.JSONRPCRequest):
            if not self.ids:
                self.settled = anyio.Event()
            self.ids.add(message.id)
        elif (
            isinstance(message, types.JSONRPCNotification)
            and message.method == "notifications/cancelled"  # never answered
        ):
            self._done((message.params or {}).get("requestId"))

    def answered(self, message: Any) -> None:
        if isinstance(message, (types.JSONRPCResponse, types.JSONRPCError)):
            self._done(message.id)

    def abandon(self) -> None:
        self.ids.clear()
        self.settled.set()

    def _done(self, request_id: Any) -> None:
        self.ids.discard(request_id)
        if not self.ids:
            self.settled.set()


def _serve(ctx: CallContext) -> None:
    server = build_server(ctx)

    async def main() -> None:
        asyncio.get_running_loop().set_exception_handler(_unless_stopped)
        unanswered = Unanswered()
        async with stdio_server() as (raw_read, sdk_write):
            write_stream = InertWire(sdk_write)
            checked_writer, checked_read = anyio.create_memory_object_stream[
                SessionMessage | Exception
            ](0)
            replies, replied = anyio.create_memory_object_stream[SessionMessage](0)

            async def forward() -> None:
                async with checked_writer, raw_read:
                    async for item in raw_read:
                        if isinstance(item, Exception):
                            await write_stream.send(SessionMessage(malformed_reply(item)))
                        elif (refused := invalid_call(item.message)) is not None:
                            await write_stream.send(SessionMessage(refused))
                        else:
                            unanswered.asked(item.message)
                            await checked_writer.send(item)
                    await unanswered.settled.wait()  # stdin ended: answer what was asked

            async def backward() -> None:  # the server's replies, on to stdout
                async with replied, write_stream:  # closed: the session is over
                    async for reply in replied:
                        try:
                            await write_stream.send(reply)
                        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                            unanswered.abandon()  # stdout is gone (client_gone): no
                            return  # reply can reach the client, none is waited for
                        unanswered.answered(reply.message)

            async with anyio.create_task_group() as group:
                group.start_soon(forward)
                group.start_soon(backward)
                await server.run(checked_read, replies, server.create_initialization_options())

    anyio.run(main)


class InertMessage:
    """A message as the SDK's stdout writer writes it (``model_dump_json``), made inert
    (``jsontext.inert``: DEL and the C1 control characters as ``\\u`` escapes, the same
    JSON value), as every JSON hive writes is."""

    __slots__ = ("message",)

    def __init__(self, message: Any) -> None:
        self.message = message

    def model_dump_json(self, **options: Any) -> str:
        return inert(self.message.model_dump_json(**options))


class InertWire:
    """The SDK's write stream to stdout, every message sent through it made inert: the
    one place the MCP server's replies (results, errors, refusals) are encoded."""

    __slots__ = ("stream",)

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    async def send(self, item: SessionMessage) -> None:
        wrapped = InertMessage(item.message)
        await self.stream.send(SessionMessage(wrapped, item.metadata))  # type: ignore[arg-type]  # duck-typed: written by model_dump_json

    async def __aenter__(self) -> InertWire:
        await self.stream.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        closed: bool | None = await self.stream.__aexit__(*exc)
        return closed


def _unless_stopped(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """The event loop's report of an error no task handled, except the KeyboardInterrupt
    ``serve_stdio`` raises to stop: a task it ended was reported at shutdown as
    "unhandled exception during asyncio.run() shutdown", with its traceback."""
    if not _only(context.get("exception"), (KeyboardInterrupt,)):  # a task group's too
        loop.default_exception_handler(context)


_ID = re.compile(r'"id"\s*:\s*(-?\d{1,18}|"[^"\\]{0,200}")')


def malformed_reply(error: Exception) -> types.JSONRPCError:
    """The JSON-RPC error answering a line the SDK could not read."""
    raw = _offending_input(error)
    found = _ID.search(raw[:2000]) if raw else None
    request_id: int | str | None = json.loads(found.group(1)) if found else None
    is_json_error = isinstance(error, ValidationError) and any(
        e["type"] == "json_invalid" for e in error.errors()
    )
    code, message = (
        (types.PARSE_ERROR, "Parse error: the line is not valid JSON (or nested too deeply)")
        if is_json_error or not isinstance(error, ValidationError)
        else (-32600, "Invalid Request: not a JSON-RPC 2.0 message")
    )
    return types.JSONRPCError(
        jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message)
    )


def invalid_call(message: Any) -> types.JSONRPCError | None:
    """The error answering a ``tools/call`` whose params are not ``{"name": "<tool>",
    "arguments": {...}}``; None for any other message. The SDK's own answer was
    "Invalid request parameters" with nothing saying which or how to send them."""
    if not isinstance(message, types.JSONRPCRequest) or message.method != "tools/call":
        return None
    params = message.params or {}
    name, arguments = params.get("name"), params.get("arguments")
    if not isinstance(name, str):
        problem = f"'name' must be a tool's name (a string), not {_json_type(name)}"
    elif arguments is not None and not isinstance(arguments, dict):
        problem = f"'arguments' must be a JSON object, not {_json_type(arguments)}"
    else:
        return None
    return types.JSONRPCError(
        jsonrpc="2.0",
        id=message.id,
        error=types.ErrorData(
            code=types.INVALID_PARAMS,
            message=f"Invalid params of tools/call: {problem}; send"
            ' {"name": "hive_ready", "arguments": {"limit": 5}} (tools/list names the tools)',
        ),
    )


def _json_type(value: Any) -> str:
    """What a JSON value is, as a person would call it (``a list``, ``null``)."""
    kinds = {bool: "a boolean", int: "a number", float: "a number", str: "a string"}
    kinds |= {list: "a list", dict: "an object"}
    return "null" if value is None else kinds.get(type(value), type(value).__name__)


def _offending_input(error: Exception) -> str:
    if not isinstance(error, ValidationError):
        return ""
    for detail in error.errors():
        value = detail.get("input")
        if isinstance(value, str):
            return value
        if isinstance(value, dict) and "id" in value:
            return json.dumps({"id": value["id"]}, default=str)
    return ""
