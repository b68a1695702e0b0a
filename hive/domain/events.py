"""The event log: ``<git common dir>/hive/events.jsonl``, one JSON object a line.

Every tool call is logged here (agent, session, tool, args digest, duration,
outcome, hook runs; ``hive.domain.policy.call_event``), so is every call of an
agent's command that runs its policy (``"surface": "cli"``, ``hive/cli/build.py``),
and so is every ownership override made on any surface
(``"event": "override"``: who, their role, what, whose, why and the commit).
Appends are best effort and never fail an operation; past ``MAX_EVENTS_BYTES``
the file is rotated to ``events.jsonl.1`` (one old generation kept).
"""

from __future__ import annotations

import contextlib
import os

from hive.eventargs import dumps

TYPE_CHECKING = False  # typing is not imported at run time (a lean command logs here too)
if TYPE_CHECKING:
    from typing import Any

EVENTS_FILE = "events.jsonl"
MAX_EVENTS_BYTES = 20_000_000


def events_path(state_dir: str) -> str:
    return os.path.join(state_dir, EVENTS_FILE)


def log_event(state_dir: str, event: dict[str, Any], max_bytes: int = MAX_EVENTS_BYTES) -> None:
    """Append one event to ``<git common dir>/hive/events.jsonl`` (best effort); past
    ``max_bytes`` the file is rotated to ``events.jsonl.1`` (one old generation kept)."""
    try:
        os.makedirs(state_dir, exist_ok=True)
        path = events_path(state_dir)
        line = dumps(event, default=_json_default) + "\n"
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(line)
        if os.path.getsize(path) > max_bytes:
            _rotate(path, max_bytes)
    except OSError:
        return


def _json_default(value: object) -> str:
    """``hive.times.json_default``, imported only for a value plain JSON does not hold
    (``datetime`` costs a lean command's line ~1 ms otherwise)."""
    from hive.times import json_default

    return json_default(value)


def _rotate(path: str, max_bytes: int) -> None:
    """Best effort, as the append: a rotation that waits too long for another is skipped
    (filelock is imported here, only when a log is this large, not by every command that
    may append an event)."""
    from filelock import FileLock, Timeout

    with contextlib.suppress(Timeout), FileLock(path + ".lock", timeout=5):
        if os.path.exists(path) and os.path.getsize(path) > max_bytes:
            os.replace(path, path + ".1")


def read_events(state_dir: str, limit: int | None = None) -> list[dict[str, Any]]:
    """The last ``limit`` events (all without a limit), read from the end of the file."""
    path = events_path(state_dir)
    try:
        with open(path, "rb") as handle:
            lines = _tail_lines(handle, limit) if limit is not None else handle.readlines()
    except OSError:
        return []
    return parse_event_lines(lines)


def parse_event_lines(lines: list[bytes]) -> list[dict[str, Any]]:
    import json

    events = []
    for line in lines:
        with contextlib.suppress(ValueError):
            value = json.loads(line)
            if isinstance(value, dict):
                events.append(value)
    return events


def _tail_lines(handle: Any, limit: int, block: int = 65_536) -> list[bytes]:
    """The last ``limit`` complete lines, reading backwards block by block."""
    end = handle.seek(0, os.SEEK_END)
    position, data = end, b""
    while position > 0 and data.count(b"\n") <= limit:
        step = min(block, position)
        position -= step
        handle.seek(position)
        data = handle.read(step) + data
    lines = data.splitlines(keepends=True)
    if position > 0:
        lines = lines[1:]  # the first line may be cut
    return lines[-limit:] if limit else []


def read_appended(state_dir: str, offset: int) -> tuple[list[dict[str, Any]], int]:
    """Events appended after byte ``offset`` and the new offset (restarts at 0 when
    the file was rotated or truncated; a half-written last line waits)."""
    path = events_path(state_dir)
    try:
        with open(path, "rb") as handle:
            end = handle.seek(0, os.SEEK_END)
            if end < offset:
                offset = 0
            handle.seek(offset)
            data = handle.read(end - offset)
    except OSError:
        return [], 0
    complete = data[: data.rfind(b"\n") + 1]
    return parse_event_lines(complete.splitlines()), offset + len(complete)


def events_size(state_dir: str) -> int:
    try:
        return os.path.getsize(events_path(state_dir))
    except OSError:
        return 0
