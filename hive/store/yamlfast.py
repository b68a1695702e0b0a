"""A fast reader for exactly the YAML that :func:`hive.store.yamlio.dumps` writes.

:func:`fast_loads` understands block mappings indented by two spaces with keys
in plain or double-quoted (JSON-escaped) form, block sequences (``- item``,
``- key: value`` items, ``-`` followed by a nested sequence), plain scalars of
the few shapes the emitter writes (``null``, ``true``, ``false``, decimal
integers, ``repr`` floats, ``.inf``/``-.inf``/``.nan`` and words matching
:func:`is_plain`), double-quoted scalars on one line, ``[]``, ``{}`` and
literal blocks (``|``, ``|-``, ``|+``) indented two spaces deeper than their
key. It returns ``None`` (declines) at the first thing it does not fully
understand: a comment, a blank line outside a literal block, other
indentation, flow style, anchors, tags, single quotes, a duplicate key, a tab,
a carriage return or any character YAML treats specially. The caller then
falls back to ruamel, so the answer is never different from ruamel's: the
parser only accepts texts whose meaning under YAML 1.2 is unambiguous.
"""

from __future__ import annotations

from hive.jsontext import loads_string

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from typing import Any

# The scalars, keys and lines below are recognized with string methods, not ``re``:
# every fresh write process reads YAML, and ``re`` with its compiler costs ~2-4 ms of
# start-up. Each function states the regular expression it decides exactly
# (``tests/test_yamlfast.py`` compares them on generated text).
_ASCII_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_DIGITS = frozenset("0123456789")
_HEX = frozenset("0123456789abcdefABCDEF")
_KEY_FIRST = frozenset(_ASCII_LETTERS + "_")
_KEY_CHARS = frozenset(_ASCII_LETTERS + "0123456789_.-")
_PLAIN_FIRST = frozenset(_ASCII_LETTERS + "_/")
_PLAIN_CHARS = frozenset(_ASCII_LETTERS + "0123456789_./@+-")
_PLAIN_LATER = frozenset(_ASCII_LETTERS + "0123456789_./@+(),'-")
_PLAIN_LATER_OR_SPACE = _PLAIN_LATER | {" "}
_ESCAPES = frozenset('"\\bfnrt')
# Plain words some YAML version reads as a boolean, null or number: always quoted.
RESERVED_WORDS = frozenset(
    {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "nan", "inf", "~"}
)

# Anything but a line feed, printable ASCII and the printable non-ASCII YAML
# allows unescaped (no NEL, line/paragraph separators, BOM or U+FFFE/U+FFFF).
_UNUSUAL_CHAR = (
    "[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
)
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
# How deep a document may nest (``yamlio.MAX_NESTING``, where the loader refuses more):
# a collection at column ``c`` is ``c // _INDENT + 1`` levels deep, so one at this
# column or past it is declined here and refused there, whatever its form.
MAX_NESTING = 100
_DEEPEST = _INDENT * MAX_NESTING


def is_plain(text: str) -> bool:
    """A plain (unquoted) scalar the emitter writes and YAML reads back as that
    string: ``^[A-Za-z_/][A-Za-z0-9_./@+-]*(?: [A-Za-z0-9_./@+(),'-]+)*$`` in full."""
    if not text or text[0] not in _PLAIN_FIRST:
        return False
    first, space, later = text.partition(" ")
    if not _PLAIN_CHARS.issuperset(first):
        return False
    if not space:
        return True
    # each later word not empty: no space leading, trailing or doubled
    if not later or later[0] == " " or later[-1] == " " or "  " in later:
        return False
    return _PLAIN_LATER_OR_SPACE.issuperset(later)


def is_key(text: str) -> bool:
    """A plain mapping key: ``^[A-Za-z_][A-Za-z0-9_.-]*$`` in full."""
    return bool(text) and text[0] in _KEY_FIRST and _KEY_CHARS.issuperset(text)


def _has_unusual_char(text: str) -> bool:
    if text.isascii():  # ``[^\n\x20-\x7e]``: printable ASCII is exactly 0x20-0x7e
        return not text.replace("\n", "").isprintable()
    import re  # rare: non-ASCII text (its class compiles once, in re's cache)

    return re.search(_UNUSUAL_CHAR, text) is not None


def _has_blank_line(text: str) -> bool:
    """A line of spaces only (``^ +$``, multi-line), in a text ending with a line feed."""
    if " \n" not in text:  # every such line ends in a space before its line feed
        return False
    return any(line and not line.strip(" ") for line in text.split("\n"))


def _entry(line: str, start: int) -> tuple[str | None, str | None, str | None, int] | None:
    """(plain key, quoted key, value, end of the key) of ``line[start:]`` when it is
    ``key:`` or ``key: value``: what
    ``(?:([A-Za-z_][A-Za-z0-9_.-]*+)|("(?:[^"\\\\]|\\\\.)*+")):(?: (.+))?`` matches in full
    from ``start``; None otherwise."""
    if start >= len(line):
        return None
    first = line[start]
    if first in _KEY_FIRST:
        colon = line.find(":", start)
        if colon < 0 or not _KEY_CHARS.issuperset(line[start + 1 : colon]):
            return None
        plain: str | None = line[start:colon]
        quoted = None
    elif first == '"':
        colon = _closing_quote(line, start) + 1
        if colon <= 0 or colon >= len(line) or line[colon] != ":":
            return None
        plain, quoted = None, line[start:colon]
    else:
        return None
    after = line[colon + 1 :]
    if not after:
        return plain, quoted, None, colon
    if after[0] != " " or len(after) < 2:
        return None
    return plain, quoted, after[1:], colon


def _closing_quote(line: str, start: int) -> int:
    """The index of the quote that closes the one at ``start`` (a backslash escaping
    any one character), -1 when none does."""
    position = start + 1
    while True:
        quote = line.find('"', position)
        backslash = line.find("\\", position, quote if quote >= 0 else len(line))
        if backslash < 0:
            return quote
        if backslash + 1 >= len(line):
            return -1
        position = backslash + 2


class _Decline(Exception):
    """The text is not in the canonical form; let ruamel read it."""


def fast_loads(text: str) -> dict[str, Any] | None:
    """The mapping ``text`` holds, or ``None`` when it is not in canonical form."""
    if not text.endswith("\n") or _has_unusual_char(text) or _has_blank_line(text):
        return None
    lines = text[:-1].split("\n")
    try:
        mapping, end = _mapping(lines, 0, 0)
    except (_Decline, RecursionError):
        return None
    return mapping if end == len(lines) and mapping else None


def _mapping(lines: list[str], i: int, indent: int) -> tuple[dict[str, Any], int]:
    """The block mapping whose keys start at column ``indent`` from line ``i``."""
    if indent >= _DEEPEST:
        raise _Decline
    result: dict[str, Any] = {}
    pad = " " * indent
    count = len(lines)
    while i < count:
        line = lines[i]
        if not line.startswith(pad):
            if not line:
                raise _Decline
            break  # a shallower line: the parent continues there
        match = _entry(line, indent)
        if match is None:
            raise _Decline
        plain, quoted, value, end = match
        key = plain if plain is not None else _quoted(quoted or "")
        if plain is not None and plain.lower() in RESERVED_WORDS:
            raise _Decline
        if key in result or end - indent > _MAX_KEY:
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
    if indent >= _DEEPEST:
        raise _Decline
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
            if _entry(body, 0) is not None:
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
    if text in ("[]", "{}"):
        if indent >= _DEEPEST:
            raise _Decline
        return ([] if text == "[]" else {}), i
    return _plain(text), i


def _quoted(text: str) -> str:
    if len(text) < 2 or text[-1] != '"':
        raise _Decline
    inner = text[1:-1]
    if "\\" not in inner:
        if '"' in inner:
            raise _Decline
        return inner
    if not _json_escapes_only(inner):
        raise _Decline
    return loads_string(text)


def _json_escapes_only(inner: str) -> bool:
    """The inside of a double-quoted scalar uses only the escapes ``json.dumps`` writes
    and no bare quote: ``(?:[^"\\\\]++|\\\\["\\\\bfnrt]|\\\\u(?![dD][89a-fA-F])[0-9a-fA-F]{4})*+``
    in full."""
    position = 0
    while True:
        backslash = inner.find("\\", position)
        if '"' in inner[position : backslash if backslash >= 0 else len(inner)]:
            return False
        if backslash < 0:
            return True
        mark = inner[backslash + 1 : backslash + 2]
        if mark and mark in _ESCAPES:
            position = backslash + 2
            continue
        digits = inner[backslash + 2 : backslash + 6]
        if mark != "u" or len(digits) < 4 or not _HEX.issuperset(digits):
            return False
        if digits[0] in "dD" and digits[1] in "89abcdefABCDEF":
            return False  # a surrogate
        position = backslash + 6


def _is_int(text: str) -> bool:
    """``0|-?[1-9][0-9]*`` in full."""
    digits = text[1:] if text[:1] == "-" else text
    if text == "0":
        return True
    return bool(digits) and digits[0] != "0" and _DIGITS.issuperset(digits)


def _is_float(text: str) -> bool:
    """``-?[0-9]+(?:\\.[0-9]+(?:e[-+][0-9]+)?|e[-+][0-9]+)`` in full."""
    number = text[1:] if text[:1] == "-" else text
    mantissa, e, exponent = number.partition("e")
    if e and not (exponent[:1] in ("-", "+") and _digits(exponent[1:])):
        return False
    whole, dot, fraction = mantissa.partition(".")
    if not _digits(whole):
        return False
    return _digits(fraction) if dot else bool(e)


def _digits(text: str) -> bool:
    return bool(text) and _DIGITS.issuperset(text)


def _plain(text: str) -> Any:
    if is_plain(text) and text.lower() not in RESERVED_WORDS:
        return text
    if text in _CONSTANTS:
        return _CONSTANTS[text]
    try:
        if _is_int(text):
            return int(text)
        if _is_float(text):
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
