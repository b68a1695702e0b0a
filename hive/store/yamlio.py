"""Deterministic YAML: a small emitter for hive's documents, ruamel for reading.

The emitter writes block style with a fixed key order chosen by the caller,
literal blocks (``|``) for multi-line text so ``git diff`` of a cell reads like
prose, and double-quoted scalars wherever a plain scalar could be misread
(``yes``, ``null``, ``007``, ``a: b``, timestamps). The same data always gives
the same bytes.

Reading first tries :func:`fast_loads`, a parser for exactly the canonical
form the emitter writes (what almost every file in ``.hive/`` is); it declines
at the first thing it does not fully understand (a comment, flow style, an
anchor, other indentation, a duplicate key, ...), and then ruamel's safe loader
(C-accelerated when present, imported only then) reads the text. So a file a
person edited parses exactly as before, and never differently.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Mapping, Sequence

from hive.errors import CorruptFile, InvalidInput
from hive.jsontext import encode_basestring, nesting_depth
from hive.store import yamlfast
from hive.store.yamlfast import RESERVED_WORDS, fast_loads, is_key, is_plain

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from typing import Any

# Characters written as escapes: YAML refuses them raw or reads them as line breaks.
# Compiled (with ``re``) only for text that is not ASCII; ASCII text is checked with
# ``str.isprintable`` (its only such characters: 0x00-0x08, 0x0b-0x1f and 0x7f).
_UNPRINTABLE = "[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]"
INDENT = "  "


class YamlError(ValueError):
    """Raised by :func:`loads` with the line (1-based) of the problem when known."""

    def __init__(self, message: str, line: int | None = None, *, malformed: bool = True) -> None:
        super().__init__(message)
        self.line = line
        self.malformed = malformed  # False: the message says all (a key set twice)

    def said(self) -> str:
        """The problem as a sentence: ``malformed YAML: ...`` unless it says all."""
        return f"malformed YAML: {self}" if self.malformed else str(self)


def dumps(document: Mapping[str, Any]) -> str:
    """Emit ``document`` (keys in the order given) as block-style YAML."""
    lines: list[str] = []
    _emit_mapping(document, 0, lines)
    return "\n".join(lines) + "\n"


def _emit_mapping(mapping: Mapping[str, Any], depth: int, lines: list[str]) -> None:
    pad = INDENT * depth
    for key, value in mapping.items():
        head = f"{pad}{_key(key)}:"
        _emit_value(head, value, depth, lines)


def _emit_value(head: str, value: Any, depth: int, lines: list[str]) -> None:
    if isinstance(value, Mapping):
        if not value:
            lines.append(f"{head} {{}}")
            return
        lines.append(head)
        _emit_mapping(value, depth + 1, lines)
    elif isinstance(value, Sequence) and not isinstance(value, str | bytes):
        if not value:
            lines.append(f"{head} []")
            return
        lines.append(head)
        _emit_sequence(value, depth + 1, lines)
    elif isinstance(value, str) and _literal_ok(value):
        lines.append(f"{head} |{_chomp(value)}")
        pad = INDENT * (depth + 1)
        lines.extend(f"{pad}{line}" if line else "" for line in _literal_lines(value))
    else:
        lines.append(f"{head} {_scalar(value)}")


def _emit_sequence(items: Sequence[Any], depth: int, lines: list[str]) -> None:
    pad = INDENT * depth
    for item in items:
        if isinstance(item, Mapping) and item:
            nested: list[str] = []
            _emit_mapping(item, depth + 1, nested)
            first = nested[0][len(INDENT) * (depth + 1) :]
            lines.append(f"{pad}- {first}")
            lines.extend(nested[1:])
        else:
            _emit_value(f"{pad}-", item, depth, lines)


def _key(key: Any) -> str:
    text = str(key)
    if is_key(text) and text.lower() not in RESERVED_WORDS:
        return text
    return _quoted(text)


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _float(value)
    text = str(value)
    if is_plain(text) and text.lower() not in RESERVED_WORDS:
        return text
    return _quoted(text)


def _float(value: float) -> str:
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    text = repr(value)
    return text if ("." in text or "e" in text) else f"{text}.0"


def _quoted(text: str) -> str:
    encoded = encode_basestring(text)  # json.dumps(text, ensure_ascii=False)
    if encoded.isascii() and "\x7f" not in encoded:
        return encoded  # JSON escaped the rest of ASCII's unprintable characters
    import re

    if re.search("[\ud800-\udfff]", text):  # YAML has no escape for a lone surrogate
        raise InvalidInput(
            f"{text[:60]!r}: not UTF-8 text (a lone surrogate, e.g. from bytes that are"
            " not UTF-8); nothing was written"
        )
    return re.sub(_UNPRINTABLE, lambda m: f"\\u{ord(m.group()):04x}", encoded)


def _has_unprintable(text: str) -> bool:
    if text.isascii():
        return not text.replace("\n", "").replace("\t", "").isprintable()
    import re

    return re.search(_UNPRINTABLE, text) is not None


def _literal_ok(text: str) -> bool:
    """Whether ``text`` survives a literal block scalar unchanged."""
    if "\n" not in text or _has_unprintable(text) or "\r" in text or "\t" in text:
        return False
    body = text.rstrip("\n")
    first = body.lstrip("\n")
    if not first or first[0] == " ":
        return False
    return all(line.strip(" ") or not line for line in body.split("\n"))


def _chomp(text: str) -> str:
    if not text.endswith("\n"):
        return "-"
    return "+" if text.endswith("\n\n") else ""


def _literal_lines(text: str) -> list[str]:
    body = text[:-1] if text.endswith("\n") else text
    return body.split("\n")


@functools.cache
def _loader() -> Any:
    """ruamel's safe loader: C-accelerated (libyaml) when ruamel.yaml.clib is
    installed, else pure Python. Either refuses an anchor defined twice in one
    document (libyaml's composer raises; ruamel's pure-Python one only printed a
    ``ReusedAnchorWarning`` to stderr and took the later one)."""
    from ruamel.yaml import YAML
    from ruamel.yaml.composer import Composer, ComposerError
    from ruamel.yaml.events import AliasEvent

    class UniqueAnchors(Composer):
        """The pure-Python composer, raising libyaml's error for an anchor defined twice."""

        def compose_node(self, parent: Any, index: Any) -> Any:
            if not self.parser.check_event(AliasEvent):
                event = self.parser.peek_event()
                first = self.anchors.get(event.anchor) if event.anchor is not None else None
                if first is not None:
                    raise ComposerError(
                        _DUPLICATE_ANCHOR, first.start_mark, "second occurrence", event.start_mark
                    )
            return super().compose_node(parent, index)

    loader = YAML(typ="safe")
    loader.Composer = UniqueAnchors
    return loader


# libyaml's ComposerError context for an anchor defined twice (its marks: the first
# definition and the second).
_DUPLICATE_ANCHOR = "found duplicate anchor; first occurrence"


def _key_twice(text: str, exc: Any) -> YamlError | None:
    """The refusal of ``text``, whose mapping has a key twice (``exc``, the loader's
    DuplicateKeyError, marks the second): the key and both lines, as a person reads
    them; None when the key is not found again (ruamel's own words then)."""
    from ruamel.yaml.error import YAMLError
    from ruamel.yaml.nodes import MappingNode, SequenceNode

    second = exc.problem_mark
    try:
        nodes = [_loader().compose(text)]
    except (YAMLError, ValueError, TypeError, RecursionError):
        return None
    walked: set[int] = set()  # an alias can make a node its own descendant (&x [*x])
    while nodes:
        node = nodes.pop()
        if id(node) in walked:
            continue
        walked.add(id(node))
        if isinstance(node, SequenceNode):
            nodes.extend(node.value)
        if not isinstance(node, MappingNode):
            continue
        keys = [key for key, _ in node.value]
        for key in keys:
            mark = key.start_mark
            if (mark.line, mark.column) == (second.line, second.column):
                first = next(k for k in keys if k.tag == key.tag and k.value == key.value)
                if first is key or not isinstance(key.value, str):
                    return None
                return YamlError(
                    f"{key.value!r} is set twice (first on line {first.start_mark.line + 1}):"
                    " keep one",
                    second.line + 1,
                    malformed=False,
                )
        nodes.extend(value for _, value in node.value)
    return None


def _anchor_twice(text: str, exc: Any) -> YamlError:
    """The refusal of ``text``, whose anchor is defined twice (``exc``, the loader's
    error): its name and both lines."""
    first, second = exc.context_mark, exc.problem_mark
    lines = text.splitlines()
    rest = lines[second.line][second.column :] if second.line < len(lines) else ""
    name = "".join(
        itertools.takewhile(lambda char: not char.isspace() and char not in ",[]{}", rest)
    )
    anchor = f"anchor {name}" if name.startswith("&") else "an anchor"
    return YamlError(
        f"{anchor} is defined twice (lines {first.line + 1} and {second.line + 1});"
        " a hive file may define each anchor once",
        second.line + 1,
    )


# How deep a document may nest (hive's own files nest 3 levels; a person's metadata a
# few more). ruamel's C loader composes recursively, once a level: a file nested some
# 100,000 levels deep (a few hundred KB of brackets) crashed the process (SIGSEGV),
# and one nested 20,000 deep parsed but failed every later step, for every command.
# (``fast_loads`` declines such text too: this loader refuses it, whatever its form.)
MAX_NESTING = yamlfast.MAX_NESTING
_DEEPLY = f"nested more than {MAX_NESTING} levels deep"


def _may_nest_deeply(text: str) -> bool:
    """Whether ``text`` could nest more than :data:`MAX_NESTING` levels: more flow
    brackets open (``[``, ``{``, quoted ones counted too) than that, or a line whose
    indentation and ``- ``/``? ``/``: `` marks are longer than two columns a level.
    An upper bound (no text for which it is false nests past ~300 levels, which the C
    loader composes safely): a cheap filter before :func:`_opens_too_deep`."""
    if text.count("[") + text.count("{") > MAX_NESTING:
        return True
    limit = 2 * MAX_NESTING
    return any(
        len(line) > limit and len(line) - len(line.lstrip(" -?:")) > limit
        for line in text.splitlines()
    )


def _opens_too_deep(text: str) -> int | None:
    """The line (1-based) where the first document of ``text`` opens a collection
    more than :data:`MAX_NESTING` levels inside others, as the loader's own parser
    reads it; None when it does not (or the text is not YAML up to there: the load
    then reports that, at the same place).

    libyaml's event parser (C) keeps its levels on a heap stack, not the C stack, and
    this stops at the first level too many: milliseconds for a file nested 100,000
    levels, which ruamel's pure-Python scanner takes seconds to reach (its simple-key
    bookkeeping is linear in the depth, per token). Without the C extension there is
    nothing to guard: the pure-Python loader stops at Python's recursion limit."""
    from ruamel.yaml.error import YAMLError
    from ruamel.yaml.events import (
        CollectionEndEvent,
        CollectionStartEvent,
        DocumentEndEvent,
        StreamEndEvent,
    )
    from ruamel.yaml.parser import Parser as PurePython

    parser_class = _loader().Parser
    if parser_class is PurePython:
        return None
    parser = parser_class(text)
    depth = 0
    try:
        while True:
            event = parser.get_event()
            if isinstance(event, CollectionStartEvent):
                depth += 1
                if depth > MAX_NESTING:
                    return int(event.start_mark.line) + 1
            elif isinstance(event, CollectionEndEvent):
                depth -= 1
            elif event is None or isinstance(event, DocumentEndEvent | StreamEndEvent):
                return None  # the load reads one document; what follows is an error
    except (YAMLError, ValueError, TypeError):
        return None
    finally:
        parser.dispose()


def loads(text: str) -> Any:
    """Parse one YAML document; raises :class:`YamlError` with a line number."""
    fast = fast_loads(text)
    return fast if fast is not None else ruamel_loads(text)


def ruamel_loads(text: str) -> Any:
    """:func:`loads` without the fast path: always ruamel's safe loader.

    Text nested more than :data:`MAX_NESTING` levels is malformed: refused before
    the load where its brackets or indentation could nest that deep (the C loader,
    given such text, could exhaust the C stack), after it where aliases nest it."""
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    if _may_nest_deeply(text):
        line = _opens_too_deep(text)
        if line is not None:
            raise YamlError(_DEEPLY, line)
    try:
        data = _loader().load(text)
    except RecursionError:  # the pure-Python loader (no C extension)
        raise YamlError(_DEEPLY) from None
    except MarkedYAMLError as exc:
        if exc.context == _DUPLICATE_ANCHOR:
            raise _anchor_twice(text, exc) from None
        twice = _key_twice(text, exc) if type(exc).__name__ == "DuplicateKeyError" else None
        if twice is not None:
            raise twice from None
        # An unclosed bracket or quote is reported at end of file; the line
        # where the construct started (the context) is the useful one. A
        # duplicate key is the exception: its problem mark is the duplicate.
        duplicate = type(exc).__name__ == "DuplicateKeyError"
        mark = (exc.problem_mark or exc.context_mark) if duplicate else None
        mark = mark or exc.context_mark or exc.problem_mark
        line = mark.line + 1 if mark is not None else None
        problem = " ".join(part for part in (exc.context, exc.problem) if part) or "invalid YAML"
        raise YamlError(str(problem), line) from None
    except (YAMLError, ValueError, TypeError) as exc:
        raise YamlError(str(exc).splitlines()[0] if str(exc) else "invalid YAML") from None
    if nesting_depth(data, MAX_NESTING) > MAX_NESTING:
        raise YamlError(_DEEPLY)
    return data


def load_mapping(text: str, path: str) -> dict[str, Any]:
    """Parse a document that must be a mapping; errors name ``path`` and the line."""
    try:
        data = loads(text)
    except YamlError as exc:
        where = f"{path}:{exc.line}" if exc.line else path
        raise CorruptFile(f"{where}: {exc.said()}", path=path, line=exc.line) from None
    if not isinstance(data, dict):
        raise CorruptFile(f"{path}:1: expected a mapping at the top level", path=path, line=1)
    return data


def line_of(text: str, loc: Sequence[str | int]) -> int:
    """The 1-based line of the key (or item) at ``loc`` in ``text``.

    For a key that is missing, the line of the mapping that lacks it (1 at the
    top level). Only used on error paths: it parses ``text`` once more.
    """
    from ruamel.yaml.error import YAMLError
    from ruamel.yaml.nodes import MappingNode, SequenceNode

    try:
        node = _loader().compose(text)
    except (YAMLError, ValueError, TypeError):
        return 1
    line = 1
    for part in loc:
        found = None
        if isinstance(node, MappingNode):
            found = next(((k, v) for k, v in node.value if k.value == str(part)), None)
        elif isinstance(node, SequenceNode) and isinstance(part, int) and part < len(node.value):
            item = node.value[part]
            found = (item, item)
        if found is None:
            break
        line = found[0].start_mark.line + 1
        node = found[1]
    return line
