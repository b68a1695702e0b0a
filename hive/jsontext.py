"""JSON strings and scalars through CPython's C accelerator, without the ``json`` package;
and the escaping every encoder of hive's JSON answers applies (:func:`inert`).

Importing ``json`` (its decoder, scanner and encoder, and the patterns they
compile, with ``re``) costs ~1.5-4 ms of every fresh process; the lean paths only
ever need to quote a string, print a scalar, read one quoted string or read a small
document (the credential store), which ``_json`` (what ``json`` itself calls) does.
These give exactly ``json``'s results (and, for a document ``_json`` cannot read,
``json``'s own error)."""

from __future__ import annotations

from _json import encode_basestring, encode_basestring_ascii, scanstring

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

__all__ = [
    "dumps",
    "dumps_compact",
    "dumps_scalar",
    "dumps_strings",
    "encode_basestring",
    "inert",
    "inert_bytes",
    "loads",
    "loads_string",
    "nesting_depth",
]


# DEL and the C1 control characters (U+0080-U+009F), which JSON leaves as they are:
# a terminal takes U+009B for CSI and U+009D for OSC, as it takes ESC [ and ESC ].
_INERT = {code: f"\\u{code:04x}" for code in range(0x7F, 0xA0)}


def inert(text: str) -> str:
    """JSON text with DEL and the C1 control characters written as ``\\u`` escapes: the
    same JSON value, which a terminal showing it cannot take for a command (a title or
    message edited by hand, an agent's refused call in the event log).

    Applied by the encoders of hive's answers themselves, never by their callers:
    :func:`dumps` (the ``json`` module's text: the tool envelope, JSON errors, exports),
    ``celldoc.json_of`` and ``printed_by_python`` (the lean paths), ``index.
    write_json_list`` (listings from stored documents), ``cli.output.emit_json`` and
    ``json_line`` (the full CLI's, pydantic's), ``tools.mcp_server``'s wire (each
    reply the MCP SDK writes) and ``serve.app.JSONResponse`` (the web board's JSON API);
    ``tests/test_output_inert.py`` walks each."""
    return text.translate(_INERT)


def dumps(value: object, **options: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, **options)``, :func:`inert`: every JSON
    text of ``json``'s that hive answers with is made here (``json`` imported only
    when called: a lean answer that needs none does not pay for it)."""
    import json

    return inert(json.dumps(value, ensure_ascii=False, **options))


def inert_bytes(data: bytes) -> bytes:
    """:func:`inert` for UTF-8 JSON bytes (returned as they are when they hold no such
    character: in UTF-8 each C1 character starts with the byte 0xC2)."""
    if b"\xc2" not in data and b"\x7f" not in data:
        return data
    return inert(data.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")


def dumps_scalar(value: object) -> str:
    """``json.JSONEncoder(ensure_ascii=False).encode(value)`` for a str, int, float,
    bool or None."""
    if isinstance(value, str):
        return encode_basestring(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        if value != value:
            return "NaN"
        if value in (float("inf"), float("-inf")):
            return "Infinity" if value > 0 else "-Infinity"
        return float.__repr__(value)
    raise TypeError(f"Object of type {type(value).__name__} is not a JSON scalar")


def dumps_strings(values: list[str]) -> str:
    """``json.dumps(values)`` for a list of strings (ASCII, ``", "`` between items)."""
    return "[" + ", ".join(encode_basestring_ascii(value) for value in values) + "]"


def loads_string(text: str) -> str:
    """``json.loads(text)`` for ``text`` that is exactly one double-quoted string."""
    if not text.startswith('"'):
        raise ValueError("not a JSON string")
    value, end = scanstring(text, 1, True)
    if end != len(text):
        raise ValueError("extra data after a JSON string")
    return value


_SPACES = " \t\n\r"  # what json's decoder skips around a document


class _Defaults:
    """What ``_json.make_scanner`` reads of a ``json.JSONDecoder()``: its defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {
        "-Infinity": float("-inf"),
        "Infinity": float("inf"),
        "NaN": float("nan"),
    }.__getitem__


_SCANNER: list[Callable[[str, int], tuple[object, int]]] = []


def loads(text: str) -> object:
    """``json.loads(text)`` for a str: the value ``_json``'s scanner reads with the
    decoder's defaults, whitespace skipped around it as the decoder skips it. Text it
    does not read so (a byte order mark, a syntax error, anything after the value) is
    handed to ``json.loads``, which reads it or raises its own error."""
    if not _SCANNER:
        from _json import make_scanner

        _SCANNER.append(make_scanner(_Defaults()))  # type: ignore[arg-type]  # duck-typed
    if not text.startswith("\ufeff"):
        try:
            value, end = _SCANNER[0](text, len(text) - len(text.lstrip(_SPACES)))
        except (StopIteration, ValueError):
            pass
        else:
            if not text[end:].strip(_SPACES):
                return value
    import json

    found: object = json.loads(text)
    return found


def dumps_compact(value: object) -> str:
    """``json.dumps(value, separators=(",", ":"))`` for dicts (str keys), lists,
    tuples, strings, ints, bools and None."""
    if isinstance(value, str):
        return encode_basestring_ascii(value)
    if isinstance(value, dict):
        items = (
            encode_basestring_ascii(key) + ":" + dumps_compact(item) for key, item in value.items()
        )
        return "{" + ",".join(items) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(dumps_compact(item) for item in value) + "]"
    if isinstance(value, float):
        raise TypeError("floats are not written here")
    return dumps_scalar(value)


def nesting_depth(value: object, limit: int) -> int:
    """How deeply lists and objects (dicts, lists, tuples) nest in ``value``, counted
    without recursion (safe on hostile input); counting stops past ``limit``."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Iterable[object] = node.values()
        elif isinstance(node, list | tuple):
            children = node
        else:
            continue
        deepest = max(deepest, depth)
        if deepest > limit:
            return deepest
        stack.extend((child, depth + 1) for child in children)
    return deepest
