"""The JSON tool-call envelope: ``{"tool_calls": [{"name": ..., "args": {...}}]}``,
alone or inside a ```json fence among other text.

The scan does bounded work on hostile text: at most MAX_ATTEMPTS fenced blocks
are decoded, and a bare object is only tried where ``{"tool_calls"`` begins or
a line starts with ``{`` (at most MAX_ATTEMPTS places each). The first envelope
found runs; further ones are reported."""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

from hive.errors import InvalidInput
from hive.tools.registry import CallContext, call_tool

MAX_ENVELOPE = 5_000_000
MAX_CALLS = 100
MAX_ATTEMPTS = 100
_FENCE = re.compile(r"```(?:json)?[ \t]*\n(.*?)```", re.S)
_ENVELOPE_START = re.compile(r'(\{)\s*"tool_calls"')
_LINE_START = re.compile(r"(?:^|\n)[ \t]*(\{)")


def parse_envelope(text: str) -> tuple[list[Any], int]:
    """The ``tool_calls`` list from ``text`` and how many more envelopes it holds;
    InvalidInput when there is none."""
    if len(text) > MAX_ENVELOPE:
        raise InvalidInput(f"input is too large ({len(text)} > {MAX_ENVELOPE} characters)")
    envelopes: list[dict[str, Any]] = []
    for candidate in _candidates(text):
        is_envelope = isinstance(candidate, dict) and "tool_calls" in candidate
        if is_envelope and not _seen(candidate, envelopes):
            envelopes.append(candidate)
    if not envelopes:
        raise InvalidInput(
            'no tool-call envelope found: send {"tool_calls": [{"name": ..., "args": {...}}]}'
            " (alone or in a ```json fence)"
        )
    calls = envelopes[0]["tool_calls"]
    if not isinstance(calls, list):
        raise InvalidInput('"tool_calls" must be a list of {"name", "args"} objects')
    if len(calls) > MAX_CALLS:
        raise InvalidInput(f"too many tool calls ({len(calls)} > {MAX_CALLS})")
    return calls, len(envelopes) - 1


def _candidates(text: str) -> list[Any]:
    whole = _loads(text.strip())
    if whole is not _NOTHING:
        return [whole]
    blocks = (match.group(1) for match in _FENCE.finditer(text))
    decoded = map(_loads, itertools.islice(blocks, MAX_ATTEMPTS))
    found = [value for value in decoded if value is not _NOTHING]
    for starts in (_ENVELOPE_START, _LINE_START):
        found += _scan(text, starts)
    return found


def _scan(text: str, starts: re.Pattern[str]) -> list[Any]:
    """Objects decoded at the first MAX_ATTEMPTS places ``starts`` matches."""
    decoder = json.JSONDecoder()
    found: list[Any] = []
    resume = 0
    for attempt, match in enumerate(starts.finditer(text)):
        if attempt >= MAX_ATTEMPTS:
            break
        if match.start(1) < resume:
            continue
        try:
            value, resume = decoder.raw_decode(text, match.start(1))
        except (ValueError, RecursionError):
            continue
        found.append(value)
    return found


_NOTHING = object()


def _seen(candidate: dict[str, Any], envelopes: list[dict[str, Any]]) -> bool:
    """The same envelope is found by several routes (whole text, fence, scan)."""
    try:
        return candidate in envelopes
    except RecursionError:
        return any(candidate is known for known in envelopes)


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return _NOTHING


CALL_KEYS = ("name", "args")


def _call_problem(call: Any) -> str | None:
    """Why ``call`` is not a ``{"name": ..., "args": {...}}`` object, None when it is. A key
    of another shape (``arguments``, ``input``) is refused, not ignored: the call would
    run without its arguments."""
    form = 'each tool call must be {"name": "...", "args": {...}}'
    if not isinstance(call, dict) or not isinstance(call.get("name"), str):
        return form
    unknown = [key for key in call if key not in CALL_KEYS]
    if unknown:
        return f"unknown key(s) {', '.join(map(repr, unknown))} in a tool call: {form}"
    return None


def run_envelope(ctx: CallContext, text: str) -> dict[str, Any]:
    """Execute every call in order; the transcript has one entry per call."""
    try:
        calls, ignored = parse_envelope(text)
    except InvalidInput as exc:
        return {"agent": ctx.agent, "error": exc.message, "code": "invalid_envelope", "results": []}
    results = []
    for number, call in enumerate(calls):
        problem = _call_problem(call)
        if problem:
            results.append({"index": number, "error": problem, "code": "invalid_call"})
            continue
        outcome = call_tool(ctx, call["name"], call.get("args", {}))
        results.append({"index": number, "name": call["name"], **outcome})
    transcript: dict[str, Any] = {"agent": ctx.agent, "results": results}
    if ignored:
        transcript["warnings"] = [
            f"{ignored} more tool-call envelope(s) in the text were not run: send one"
            " envelope per message"
        ]
    return transcript
