"""The event log's line of an agent's command answered on a lean path.

The full path logs each call of an agent's command that is a tool's (``hive ready``:
``hive_ready``) as a tool call with ``"surface": "cli"`` (``hive/cli/build.py``,
``policy.call_event``); a lean path answering one (``hive/cli/lean.py``,
``lean_write.py``, ``lean_coord.py``) logs the same line here: the command names its
tool and its arguments as the full path gives them (:func:`call`: by the names of
the tool's schema, without the values left at their defaults), the opening of the
repository who acts (:func:`acting`: an agent only; a person's command is no tool
call), a refusal its error (:func:`failed`), and ``hive/cli/entry.py`` writes the line
once the command answered (:func:`finish`; a command left to the full CLI logs
nothing here: the full CLI logs it). Standard library only (``hive.eventargs``)."""

from __future__ import annotations

import os
import time

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from typing import Any

    from hive.errors import HiveError

_CALL: dict[str, Any] = {}  # the command being answered (one per process run)
INTERRUPTED = 130


def session() -> str:
    """The CLI's mail session: ``HIVE_SESSION`` when exported, else this process only
    (``cli:HOST:PID:RANDOM``). Recorded only (who registered a name, from where; the
    event log's ``session``); identity is proven by the credential."""
    explicit = os.environ.get("HIVE_SESSION")
    if explicit:
        return explicit
    return f"cli:{host_name()}:{os.getpid()}:{os.urandom(4).hex()}"  # secrets.token_hex(4)


def host_name() -> str:
    """``socket.gethostname()`` (the kernel's node name, which ``uname`` gives too)
    without importing ``socket`` (its enums cost a fresh process ~2 ms) where ``uname``
    exists."""
    if hasattr(os, "uname"):
        return os.uname().nodename
    import socket

    return socket.gethostname()


def call(tool: str, args: dict[str, Any]) -> None:
    """The command is a call of ``tool`` with ``args`` (as the full path gives them)."""
    _CALL.clear()
    _CALL.update(tool=tool, args=args, started=time.monotonic())


def acting(state_dir: str, agent: str, tools: object) -> None:
    """An agent acts (the full path logs its calls), in the repository whose state
    directory is ``state_dir``; ``tools``: the config's ``tools`` section as read
    (``tools.events``: what the line keeps of the arguments)."""
    _CALL.update(state_dir=state_dir, agent=agent, tools=tools)


def failed(error: HiveError) -> None:
    """The call was refused with ``error`` (its code and message go in the line)."""
    _CALL["outcome"] = error.to_dict()


def finish(code: int | None) -> None:
    """The command ended with exit ``code`` (None: left to the full CLI): the line of
    an agent's call, appended to the event log (best effort)."""
    found = dict(_CALL)
    _CALL.clear()
    if code is None or "agent" not in found or "tool" not in found:
        return
    outcome: dict[str, Any] = found.get("outcome") or {"result": None}
    if code == INTERRUPTED and "outcome" not in found:
        outcome = {"error": "interrupted", "code": "interrupted"}
    elif code != 0 and "outcome" not in found:
        return  # an end this module was not told of: nothing sure to log
    from hive.domain.events import log_event

    log_event(found["state_dir"], line(found, outcome))


def line(found: dict[str, Any], outcome: dict[str, Any]) -> dict[str, Any]:
    """``policy.call_event``'s line for the call in ``found``."""
    from hive.eventargs import call_line

    redact, max_bytes = events_settings(found.get("tools"))
    return call_line(
        agent=found["agent"],
        session=session(),
        tool=found["tool"],
        args=found["args"],
        outcome=outcome,
        started=found["started"],
        redact=redact,
        max_bytes=max_bytes,
        surface="cli",
    )


def events_settings(tools: object) -> tuple[tuple[str, ...], int]:
    """``tools.events``'s redact words (the defaults and the configured ones, lower
    case) and ``max_args_bytes``, as the model reads them; the defaults where the
    section is not there or not plainly one the model takes (the full path then falls
    back to the defaults as well)."""
    from hive.eventargs import DEFAULT_MAX_ARGS_BYTES, DEFAULT_REDACT, redact_words

    events = tools.get("events") if isinstance(tools, dict) else None
    if not isinstance(events, dict) or not set(events) <= {"redact", "max_args_bytes"}:
        return DEFAULT_REDACT, DEFAULT_MAX_ARGS_BYTES
    redact = events.get("redact", list(DEFAULT_REDACT))
    most = events.get("max_args_bytes", DEFAULT_MAX_ARGS_BYTES)
    if not (isinstance(redact, list) and all(type(word) is str for word in redact)):
        return DEFAULT_REDACT, DEFAULT_MAX_ARGS_BYTES
    if type(most) is not int or not 0 <= most <= 1_000_000:
        return DEFAULT_REDACT, DEFAULT_MAX_ARGS_BYTES
    return redact_words(redact), most
