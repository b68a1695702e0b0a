"""What the event log keeps of a call (a leaf module: the standard library only).

Every line of ``events.jsonl`` (``hive.domain.events``) is written here, and so are a
call's arguments as the line keeps them (redacted, long strings cut, capped) and their
digest: the full path (``hive.domain.policy.call_event``) and an agent's command
answered on a lean path (``hive/cli/leanlog.py``) write the same bytes. Plain JSON
(dicts with string keys, lists, strings, numbers, booleans, null) goes through
``_json``'s encoders, exactly as ``json.dumps`` writes it, without importing ``json``
(~1.5-4 ms of a fresh process, see ``hive/jsontext.py``); anything else through
``json`` itself."""

from __future__ import annotations

from _json import encode_basestring, encode_basestring_ascii

from hive.digests import sha256_hex
from hive.jsontext import dumps_scalar

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

# keys whose values the event log never keeps (``tools.events.redact``'s default),
# matched case-insensitively as substrings
DEFAULT_REDACT = (
    "password",
    "passwd",
    "secret",
    "token",
    "api_key",
    "apikey",
    "authorization",
    "credential",
    "private_key",
)
DEFAULT_MAX_ARGS_BYTES = 4096  # ``tools.events.max_args_bytes``'s default
REDACTED = "[redacted]"
MAX_LOGGED_STRING = 1000
LOGGED_ERROR_CHARS = 500
_DEEPEST = 100  # nesting the plain encoder writes itself; deeper: ``json``'s to refuse


class _NotPlain(Exception):
    """A value the plain encoder leaves to ``json``."""


def dumps(
    value: object,
    *,
    ensure_ascii: bool = True,
    sort_keys: bool = False,
    default: Callable[[Any], Any] | None = None,
) -> str:
    """``json.dumps(value, separators=(",", ":"), ensure_ascii=..., sort_keys=...,
    default=...)``."""
    try:
        quote = encode_basestring_ascii if ensure_ascii else encode_basestring
        return _plain(value, quote, sort_keys, 0)
    except _NotPlain:
        import json

        return json.dumps(
            value,
            separators=(",", ":"),
            ensure_ascii=ensure_ascii,
            sort_keys=sort_keys,
            default=default,
        )


def _plain(value: object, quote: Callable[[str], str], sort_keys: bool, depth: int) -> str:
    if depth > _DEEPEST:
        raise _NotPlain
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, dict):
        if not all(type(key) is str for key in value):
            raise _NotPlain  # json turns other keys into strings (and sorts them its way)
        pairs = sorted(value.items()) if sort_keys else value.items()
        return (
            "{"
            + ",".join(quote(k) + ":" + _plain(v, quote, sort_keys, depth + 1) for k, v in pairs)
            + "}"
        )
    if isinstance(value, list | tuple):
        return "[" + ",".join(_plain(item, quote, sort_keys, depth + 1) for item in value) + "]"
    if value is None or isinstance(value, bool | int | float):
        return dumps_scalar(value)
    raise _NotPlain


def args_digest(args: object) -> str:
    """16 hex digits of the SHA-256 of the arguments' canonical JSON (sorted keys)."""
    try:
        canonical = dumps(args, sort_keys=True, default=str)
    except (ValueError, TypeError, RecursionError):
        canonical = repr(type(args))
    return sha256_hex(canonical.encode("utf-8", "replace"))[:16]


def redact_words(configured: object) -> tuple[str, ...]:
    """The words the event log redacts: ``DEFAULT_REDACT`` and, added to them, the
    configured ``tools.events.redact`` words (lower case). Configuring a word never
    drops a default: listing ``pin`` must not start logging passwords."""
    words = list(DEFAULT_REDACT)
    for word in configured if isinstance(configured, list | tuple) else ():
        lowered = str(word).lower()
        if lowered not in words:
            words.append(lowered)
    return tuple(words)


def logged_args(
    args: object, redact: tuple[str, ...] = DEFAULT_REDACT, max_bytes: int = DEFAULT_MAX_ARGS_BYTES
) -> object:
    """The call's arguments as the event log keeps them: values under keys naming a
    secret (``redact``, lower case, matched as substrings) are replaced, long strings
    cut, and the whole capped at ``max_bytes`` of JSON (beyond it only a cut JSON text
    is kept)."""
    cleaned = _redacted(args, redact, 0)
    text = dumps(cleaned, default=str, ensure_ascii=False)
    data = text.encode("utf-8", "surrogatepass")  # a refused call's lone surrogate too
    if len(data) <= max_bytes:
        return cleaned
    cut = data[:max_bytes].decode("utf-8", "ignore")
    return {"_truncated": cut, "_bytes": len(data)}


def _redacted(value: object, words: tuple[str, ...], depth: int) -> object:
    if depth > 40:
        return "..."
    if isinstance(value, dict):
        return {
            str(key): REDACTED
            if any(word in str(key).lower() for word in words)
            else _redacted(item, words, depth + 1)
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [_redacted(item, words, depth + 1) for item in value]
    if isinstance(value, str) and len(value) > MAX_LOGGED_STRING:
        return value[:MAX_LOGGED_STRING] + f"...[+{len(value) - MAX_LOGGED_STRING} chars]"
    return value


def call_line(
    *,
    agent: str | None,
    session: str | None,
    tool: str,
    args: object,
    outcome: dict[str, Any],
    started: float,
    redact: tuple[str, ...] = DEFAULT_REDACT,
    max_bytes: int = DEFAULT_MAX_ARGS_BYTES,
    hooks: list[dict[str, Any]] | None = None,
    surface: str | None = None,
) -> dict[str, Any]:
    """The event log's line for one call, whatever surface made it: who (``agent``),
    the caller's session, the tool, its arguments (redacted and capped) and their
    digest, the duration since ``started`` (``time.monotonic``), the outcome (``ok`` or
    the error's code) with the error, the hook runs, and the ``surface`` when it is not
    the tools' (``cli``: an agent's command)."""
    import os
    import time

    event: dict[str, Any] = {
        "ts": time.time(),
        "agent": agent,
        "session": session,
        "tool": tool[:200],
        "args_digest": args_digest(args),
        "args": logged_args(args, redact, max_bytes),
        "duration_ms": round((time.monotonic() - started) * 1000, 2),
        "outcome": "ok" if "result" in outcome else str(outcome.get("code")),
        "pid": os.getpid(),
    }
    if "result" not in outcome:
        event["error"] = str(outcome.get("error"))[:LOGGED_ERROR_CHARS]
    if hooks:
        event["hooks"] = hooks
    if surface is not None:
        event["surface"] = surface
    return event
