"""A fast reader for exactly the YAML that :func:`hive.store.yamlio.dumps` writes.

:func:`fast_loads` understands block mappings indented by two spaces with keys
in plain or double-quoted (JSON-escaped) form, block sequences (``- item``,
``- key: value`` items, ``-`` followed by a nested sequence), plain scalars of
the few shapes the emitter writes (``null``, ``true``, ``false``, decimal
integers, ``repr`` floats, ``.inf``/``-.inf``/``.nan`` and words matching
:data:`PLAIN_RE`), double-quoted scalars on one line, ``[]``, ``{}`` and
literal blocks (``|``, ``|-``, ``|+``) indented two spaces deeper than their
key. It returns ``None`` (declines) at the first thing it does not fully
understand: a comment, a blank line outside a literal block, other
indentation, flow style, anchors, tags, single quotes, a duplicate key, a tab,
a carriage return or any character YAML treats specially. The caller then
falls back to ruamel, so the answer is never different from ruamel's: the
parser only accepts texts whose meaning under YAML 1.2 is unambiguous.
"""

from __future__ import annotations

import re

from hive.jsontext import loads_string

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from typing import Any


# A plain (unquoted) scalar the emitter writes and YAML reads back as that string.
PLAIN_RE = re.compile(r"^[A-Za-z_/][A-Za-z0-9_./@+-]*(?: [A-Za-z0-9_./@+(),'-]+)*$")
# A plain mapping key.
KEY_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")
# Plain words some YAML version reads as a boolean, null or number: always quoted.
RESERVED_WORDS = frozenset(
    {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "nan", "inf", "~"}
)

# Anything but a line feed, printable ASCII and the printable non-ASCII YAML
# allows unescaped (no NEL, line/paragraph separators, BOM or U+FFFE/U+FFFF).
_UNUSUAL_CHAR = (
    "[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
)
# The same test for ASCII text (almost every file): compiling the class above costs
# ~5 ms, so it is compiled only when a text has non-ASCII characters.
_UNUSUAL_ASCII_RE = re.compile("[^\n\x20-\x7e]")
_BLANK_LINE_RE = re.compile(r"^ +$", re.MULTILINE)
# ``key:`` or ``key: value`` (the caller matches from the line's indentation).
_ENTRY_RE = re.compile(r'(?:([A-Za-z_][A-Za-z0-9_.-]*+)|("(?:[^"\\]|\\.)*+")):(?: (.+))?')
# A double-quoted scalar using only the escapes ``json.dumps`` writes. The
# quantifiers are possessive: a text that does not match fails in linear time.
_QUOTED_RE = re.compile(r'"(?:[^"\\]++|\\["\\bfnrt]|\\u(?![dD][89a-fA-F])[0-9a-fA-F]{4})*+"')
_INT_RE = re.compile(r"0|-?[1-9][0-9]*")
_FLOAT_RE = re.compile(r"-?[0-9]+(?:\.[0-9]+(?:e[-+][0-9]+)?|e[-+][0-9]+)")
_CONSTANTS: dict[str, Any] = {
    "null": None,
    "true": True,
    "false": False,
    ".inf": float("inf"),
    "-.inf": float("-inf"),
    ".nan": float("nan"),
}
# YAML allows an implicit key of at most 1024 characters; stay well below.
_MAX_KEY = 1000
_INDENT = 2


def _has_unusual_char(text: str) -> bool:
    if text.isascii():
        return _UNUSUAL_ASCII_RE.search(text) is not None
    return re.search(_UNUSUAL_CHAR, text) is not None  # compiled once, by re's cache


class _Decline(Exception):
    """The text is not in the canonical form; let ruamel read it."""


def fast_loads(text: str) -> dict[str, Any] | None:
    """The mapping ``text`` holds, or ``None`` when it is not in canonical form."""
    if not text.endswith("\n") or _has_unusual_char(text) or _BLANK_LINE_RE.search(text):
        return None
    lines = text[:-1].split("\n")
    try:
        mapping, end = _mapping(lines, 0, 0)
    except (_Decline, RecursionError):
        return None
    return mapping if end == len(lines) and mapping else None


def _mapping(lines: list[str], i: int, indent: int) -> tuple[dict[str, Any], int]:
    """The block mapping whose keys start at column ``indent`` from line ``i``."""
    result: dict[str, Any] = {}
    pad = " " * indent
    count = len(lines)
    match_entry = _ENTRY_RE.fullmatch
    while i < count:
        line = lines[i]
        if not line.startswith(pad):
            if not line:
                raise _Decline
            break  # a shallower line: the parent continues there
        match = match_entry(line, indent)
        if match is None:
            raise _Decline
        plain, quoted, value = match.groups()
        key = plain if plain is not None else _quoted(quoted)
        if plain is not None and plain.lower() in RESERVED_WORDS:
            raise _Decline
        if key in result or match.end(2 if plain is None else 1) - indent > _MAX_KEY:
            raise _Decline
        if value is None:
            result[key], i = _block(lines, i + 1, indent + _INDENT)
        else:
            result[key], i = _value(value, lines, i + 1, indent + _INDENT)
    return result, i


def _block(lines: list[str], i: int, indent: int) -> tuple[Any, int]:
    """The block sequence or mapping that must start at line ``i``, column ``indent``."""
    if i >= len(lines):
        raise _Decline
    line = lines[i]
    if not line.startswith(" " * indent) or line[indent : indent + 1] in ("", " "):
        raise _Decline
    if line[indent : indent + 2] in ("-", "- "):
        return _sequence(lines, i, indent)
    return _mapping(lines, i, indent)


def _sequence(lines: list[str], i: int, indent: int) -> tuple[list[Any], int]:
    """The block sequence whose dashes are at column ``indent`` from line ``i``."""
    items: list[Any] = []
    pad = " " * indent
    count = len(lines)
    while i < count:
        line = lines[i]
        if not line.startswith(pad):
            if not line:
                raise _Decline
            break
        rest = line[indent:]
        if rest == "-":
            item, i = _block(lines, i + 1, indent + _INDENT)
        elif rest[:2] == "- ":
            body = rest[2:]
            if _ENTRY_RE.fullmatch(body):
                # ``- key: value``: a mapping whose first key sits after the dash.
                lines[i] = pad + "  " + body
                item, i = _mapping(lines, i, indent + _INDENT)
            else:
                item, i = _value(body, lines, i + 1, indent + _INDENT)
        else:
            raise _Decline
        items.append(item)
    return items, i


def _value(text: str, lines: list[str], i: int, indent: int) -> tuple[Any, int]:
    """The value written after ``key: `` or ``- ``; a literal block continues at line ``i``."""
    if not text:
        raise _Decline
    first = text[0]
    if first == '"':
        return _quoted(text), i
    if first == "|":
        return _literal(text[1:], lines, i, indent)
    if text == "[]":
        return [], i
    if text == "{}":
        return {}, i
    return _plain(text), i


def _quoted(text: str) -> str:
    if len(text) < 2 or text[-1] != '"':
        raise _Decline
    inner = text[1:-1]
    if "\\" not in inner:
        if '"' in inner:
            raise _Decline
        return inner
    if _QUOTED_RE.fullmatch(text) is None:
        raise _Decline
    return loads_string(text)


def _plain(text: str) -> Any:
    if PLAIN_RE.fullmatch(text) and text.lower() not in RESERVED_WORDS:
        return text
    if text in _CONSTANTS:
        return _CONSTANTS[text]
    try:
        if _INT_RE.fullmatch(text):
            return int(text)
        if _FLOAT_RE.fullmatch(text):
            return float(text)
    except ValueError:  # more digits than int() converts
        raise _Decline from None
    raise _Decline


def _literal(chomp: str, lines: list[str], i: int, indent: int) -> tuple[str, int]:
    """A literal block scalar (header ``|`` + ``chomp``) whose text starts at line ``i``."""
    if chomp not in ("", "-", "+"):
        raise _Decline
    pad = " " * indent
    start = i
    count = len(lines)
    while i < count and (not lines[i] or lines[i].startswith(pad)):
        i += 1
    end = i
    while end > start and not lines[end - 1]:
        end -= 1
    first = next((line for line in lines[start:end] if line), None)
    # Without an indentation indicator YAML takes the indentation of the first
    # non-empty line: it must be exactly ``indent``.
    if first is None or first[indent : indent + 1] in ("", " "):
        raise _Decline
    text = "\n".join([line[indent:] for line in lines[start:end]])
    if chomp == "-":
        return text, i
    if chomp == "+":
        return text + "\n" * (i - end + 1), i
    return text + "\n", i
