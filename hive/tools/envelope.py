"""The JSON tool-call envelope: ``{"tool_calls": [{"name": ..., "args": {...}}]}``,
alone or inside a ```json fence among other text."""

from __future__ import annotations

import contextlib
import json
import re
from typing import Any

from hive.errors import InvalidInput
from hive.tools.registry import CallContext, call_tool

MAX_ENVELOPE = 5_000_000
MAX_CALLS = 100
_FENCE = re.compile(r"```(?:json)?[ \t]*\n(.*?)```", re.S)


def parse_envelope(text: str) -> list[Any]:
    """The ``tool_calls`` list from ``text``; InvalidInput when there is none."""
    if len(text) > MAX_ENVELOPE:
        raise InvalidInput(f"input is too large ({len(text)} > {MAX_ENVELOPE} characters)")
    for candidate in _candidates(text):
        if isinstance(candidate, dict) and "tool_calls" in candidate:
            calls = candidate["tool_calls"]
            if not isinstance(calls, list):
                raise InvalidInput('"tool_calls" must be a list of {"name", "args"} objects')
            if len(calls) > MAX_CALLS:
                raise InvalidInput(f"too many tool calls ({len(calls)} > {MAX_CALLS})")
            return calls
    raise InvalidInput(
        'no tool-call envelope found: send {"tool_calls": [{"name": ..., "args": {...}}]}'
        " (alone or in a ```json fence)"
    )


def _candidates(text: str) -> list[Any]:
    found: list[Any] = []
    stripped = text.strip()
    with contextlib.suppress(json.JSONDecodeError):
        found.append(json.loads(stripped))
    for block in _FENCE.findall(text):
        try:
            found.append(json.loads(block))
        except json.JSONDecodeError:
            continue
    decoder = json.JSONDecoder()
    position = text.find("{")
    while position != -1 and len(found) < 50:
        try:
            value, end = decoder.raw_decode(text, position)
            found.append(value)
            position = text.find("{", end)
        except json.JSONDecodeError:
            position = text.find("{", position + 1)
    return found


def run_envelope(ctx: CallContext, text: str) -> dict[str, Any]:
    """Execute every call in order; the transcript has one entry per call."""
    try:
        calls = parse_envelope(text)
    except InvalidInput as exc:
        return {"agent": ctx.agent, "error": exc.message, "code": "invalid_envelope", "results": []}
    results = []
    for number, call in enumerate(calls):
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            results.append(
                {
                    "index": number,
                    "error": 'each tool call must be {"name": "...", "args": {...}}',
                    "code": "invalid_call",
                }
            )
            continue
        outcome = call_tool(ctx, call["name"], call.get("args", {}))
        results.append({"index": number, "name": call["name"], **outcome})
    return {"agent": ctx.agent, "results": results}
