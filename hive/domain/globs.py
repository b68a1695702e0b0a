"""Glob patterns for reservations: normalisation, matching, and exact intersection.

The dialect is minimatch's / wcmatch's ``globmatch`` with GLOBSTAR, BRACE and
DOTMATCH:

- ``*`` any characters except ``/`` (dotfiles included); ``?`` one character;
- ``[...]`` a character class (ranges, ``[!...]``/``[^...]`` negation, ``]``
  first is literal); it never matches ``/``;
- ``{a,b}`` alternation, nestable, expanded before matching;
- ``**`` as a whole segment: any number of segments. A leading or inner
  ``**`` may match none (``**/b`` matches ``b``, ``a/**/b`` matches ``a/b``);
  a trailing one needs at least one (``a/**`` matches ``a/x`` but not ``a``),
  exactly as wcmatch does. ``**`` inside a segment (``a**b``) acts like ``*``;
- ``\\x`` escapes ``x``.

Two patterns *intersect* when some path matches both. :func:`intersection_witness`
decides that exactly by searching both patterns' automata together (segment by
segment, then character by character) and returns a concrete witness path,
so every "yes" can be checked and every "no" is a proof that no path exists.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence

from hive.domain.foldcase import fold
from hive.domain.limits import MAX_GLOB, refuse_unprintable
from hive.errors import InvalidInput, PathOutsideRepository
from hive.record import Frozen

# Work bounds: a pattern expands to at most 64 brace alternatives, and two patterns
# are compared by at most 1,024 alternative pairs, so one check stays in the
# milliseconds (an unbounded ``{a,b}{a,b}...`` product took a minute while
# holding the write lock).
MAX_ALTERNATIVES = 64
MAX_PAIRS = 1024
MAX_PATTERN = MAX_GLOB  # one limit for every surface (hive.domain.limits)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")
SLASH = ord("/")
MAX_CHAR = 0x10FFFF
TYPE_CHECKING = False  # typing is not imported by a fresh hive process
if TYPE_CHECKING:
    from typing import TypeVar

    E = TypeVar("E")
    Item = TypeVar("Item")


# ------------------------------------------------------------------ character sets


class CharSet(Frozen):
    """A set of characters (never containing ``/``): ranges, possibly negated (a plain
    class: ``dataclasses`` is not imported by a fresh ``hive reserve``)."""

    __slots__ = ("negated", "ranges")
    _fields = ("ranges", "negated")

    def __init__(self, ranges: tuple[tuple[int, int], ...], negated: bool = False) -> None:
        self.ranges = ranges
        self.negated = negated

    def contains(self, char: int) -> bool:
        if char == SLASH:
            return False
        for lo, hi in self.ranges:
            if lo <= char <= hi:
                return not self.negated
        return self.negated


ANY = CharSet(ranges=(), negated=True)
PREFERRED = [ord(c) for c in "abcdefghijklmnopqrstuvwxyz0123456789_-."]


def common_char(a: CharSet, b: CharSet) -> int | None:
    """Some character in both sets (preferring plain letters), or None."""
    if not a.negated and not b.negated:
        return _positive_overlap(a, b)
    if a.negated and b.negated:
        return _outside_both(a, b)
    positive, negative = (a, b) if not a.negated else (b, a)
    for lo, hi in positive.ranges:
        char = lo
        while char <= hi:
            if negative.contains(char):
                return char
            char = _skip(negative, char)
    return None


def _positive_overlap(a: CharSet, b: CharSet) -> int | None:
    best: int | None = None
    for lo1, hi1 in a.ranges:
        for lo2, hi2 in b.ranges:
            lo, hi = max(lo1, lo2), min(hi1, hi2)
            for char in range(lo, min(hi, lo + 2) + 1):
                if char != SLASH and (best is None or _rank(char) < _rank(best)):
                    best = char
    return best


def _outside_both(a: CharSet, b: CharSet) -> int:
    for char in PREFERRED:
        if a.contains(char) and b.contains(char):
            return char
    char = 0x20
    while char <= MAX_CHAR:
        if a.contains(char) and b.contains(char):
            return char
        char += 1
    raise AssertionError("two negated classes always share a character")


def _skip(negative: CharSet, char: int) -> int:
    """The next character after ``char`` worth testing against a negated set."""
    for lo, hi in negative.ranges:
        if lo <= char <= hi:
            return hi + 1
    return char + 1


def _rank(char: int) -> int:
    text = chr(char)
    return 0 if text.isalnum() and text.isascii() else 1


# ------------------------------------------------------------------ parsing


class Token(Frozen):
    """One element of a segment: ``*`` (star) or a single character from ``chars``."""

    __slots__ = ("chars", "star")
    _fields = ("star", "chars")

    def __init__(self, star: bool = False, chars: CharSet = ANY) -> None:
        self.star = star
        self.chars = chars


Segment = tuple[Token, ...] | None  # None stands for a whole-segment ``**``
STAR = Token(star=True)


def _literal(char: str) -> Token:
    return Token(chars=CharSet(ranges=((ord(char), ord(char)),)))


def _parse_class(text: str, start: int, pattern: str) -> tuple[Token, int]:
    """Parse ``[...]`` beginning at ``start`` (the ``[``); return the token and next index."""
    index = start + 1
    negated = index < len(text) and text[index] in "!^"
    if negated:
        index += 1
    ranges: list[tuple[int, int]] = []
    first = True
    while index < len(text) and (text[index] != "]" or first):
        char = text[index]
        if char == "\\" and index + 1 < len(text):
            index += 1
            char = text[index]
        if index + 2 < len(text) and text[index + 1] == "-" and text[index + 2] != "]":
            high = text[index + 2]
            if high == "\\" and index + 3 < len(text):
                index += 1
                high = text[index + 2]
            if ord(high) < ord(char):
                raise InvalidInput(f"invalid range {char}-{high} in pattern {pattern!r}")
            ranges.append((ord(char), ord(high)))
            index += 3
        else:
            ranges.append((ord(char), ord(char)))
            index += 1
        first = False
    if index >= len(text):
        raise InvalidInput(f"unbalanced '[' in pattern {pattern!r}")
    ranges = _without_slash(ranges)
    return Token(chars=CharSet(ranges=tuple(ranges), negated=negated)), index + 1


def _without_slash(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Split ranges around ``/`` (a class never matches it)."""
    kept: list[tuple[int, int]] = []
    for lo, hi in ranges:
        if lo <= SLASH <= hi:
            kept += [r for r in ((lo, SLASH - 1), (SLASH + 1, hi)) if r[0] <= r[1]]
        else:
            kept.append((lo, hi))
    return kept


def _parse_segment(text: str, pattern: str) -> Segment:
    if text == "**":
        return None
    tokens: list[Token] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char == "*":
            if not tokens or not tokens[-1].star:
                tokens.append(STAR)
            index += 1
        elif char == "?":
            tokens.append(Token(chars=ANY))
            index += 1
        elif char == "[":
            token, index = _parse_class(text, index, pattern)
            tokens.append(token)
        elif char == "\\" and index + 1 < len(text):
            tokens.append(_literal(text[index + 1]))
            index += 2
        else:
            tokens.append(_literal(char))
            index += 1
    return tuple(tokens)


def _split_segments(text: str) -> list[str]:
    """Split on ``/`` outside character classes."""
    parts: list[str] = []
    current: list[str] = []
    in_class = False
    index = 0
    while index < len(text):
        char = text[index]
        if char == "\\" and index + 1 < len(text):
            current.append(text[index : index + 2])
            index += 2
            continue
        if char == "[" and not in_class:
            in_class = True
            current.append(char)
            if text[index + 1 : index + 2] in ("!", "^"):
                current.append(text[index + 1])
                index += 1
            if text[index + 1 : index + 2] == "]":
                current.append("]")
                index += 1
        elif char == "]" and in_class:
            in_class = False
            current.append(char)
        elif char == "/" and not in_class:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
        index += 1
    parts.append("".join(current))
    return parts


def expand_braces(text: str, pattern: str) -> list[str]:
    """All alternatives of ``{a,b}`` groups (nested), escapes kept."""
    results = _expand(text)
    if len(results) > MAX_ALTERNATIVES:
        raise InvalidInput(
            f"pattern {pattern!r} expands to more than {MAX_ALTERNATIVES} alternatives"
        )
    return list(dict.fromkeys(results))


def _expand(text: str) -> list[str]:
    start = _find_group(text)
    if start is None:
        return [text]
    end, options = start[1], start[2]
    prefix, suffix = text[: start[0]], text[end + 1 :]
    expanded: list[str] = []
    for option in options:
        for tail in _expand(option + suffix):
            expanded.append(prefix + tail)
            if len(expanded) > MAX_ALTERNATIVES:
                return expanded
    return expanded


def _find_group(text: str) -> tuple[int, int, list[str]] | None:
    """The first ``{...}`` with a top-level comma: (start, end, options)."""
    index = 0
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == "{":
            found = _group_at(text, index)
            if found is not None:
                return index, found[0], found[1]
        index += 1
    return None


def _group_at(text: str, start: int) -> tuple[int, list[str]] | None:
    depth = 0
    options: list[str] = []
    current: list[str] = []
    index = start
    while index < len(text):
        char = text[index]
        if char == "\\" and index + 1 < len(text):
            current.append(text[index : index + 2])
            index += 2
            continue
        if char == "{":
            depth += 1
            if depth > 1:
                current.append(char)
        elif char == "}":
            depth -= 1
            if depth == 0:
                options.append("".join(current))
                return (index, options) if len(options) > 1 else None
            current.append(char)
        elif char == "," and depth == 1:
            options.append("".join(current))
            current = []
        else:
            current.append(char)
        index += 1
    return None


# ------------------------------------------------------------------ normalisation


def normalize_pattern(pattern: str) -> str:
    """The canonical form of a repository-relative pattern or path (see module doc).

    ``.`` and ``..`` are resolved per brace alternative (``{a,..}/..`` has the
    alternative ``../..``, which escapes the repository and is refused), and an
    alternative that is absolute (``{,a}/x`` has ``/x``) is refused.
    """
    if not isinstance(pattern, str) or not pattern.strip():
        raise InvalidInput("empty path or pattern")
    if len(pattern) > MAX_PATTERN:
        raise InvalidInput(
            f"pattern is too long: {len(pattern)} characters (at most {MAX_PATTERN})"
        )
    if _CONTROL.search(pattern):
        raise InvalidInput(f"pattern {pattern!r} contains control characters")
    refuse_unprintable(pattern, "path or pattern")
    text = pattern.strip()
    alternatives = expand_braces(text, pattern) if "{" in text else [text]
    if len(alternatives) > 1 and any(_has_dot_segments(alt) for alt in alternatives):
        normal = list(dict.fromkeys(_normalize_plain(alt, pattern) for alt in alternatives))
        joined = (
            normal[0] if len(normal) == 1 else "{" + ",".join(map(_escape_commas, normal)) + "}"
        )
        _validate(joined, pattern)
        return joined
    normal_text = _normalize_plain(text, pattern)
    _validate(normal_text, pattern)
    return normal_text


def _has_dot_segments(alternative: str) -> bool:
    segments = _split_segments(alternative)
    return (
        alternative.startswith("/")
        or any(s in ("", ".", "..") for s in segments[:-1])
        or (segments[-1] in (".", ".."))
    )


def _escape_commas(text: str) -> str:
    escaped: list[str] = []
    index = 0
    while index < len(text):
        if text[index] == "\\":
            escaped.append(text[index : index + 2])
            index += 2
            continue
        escaped.append("\\," if text[index] == "," else text[index])
        index += 1
    return "".join(escaped)


def _leads_out(pattern: str) -> PathOutsideRepository:
    return PathOutsideRepository(
        f"pattern {pattern!r} points outside the repository; give a path inside it,"
        " relative to its top directory (src/a.py)"
    )


def _normalize_plain(text: str, pattern: str) -> str:
    """Resolve ``./``, ``//``, ``..`` and a trailing ``/`` of one alternative."""
    if text.startswith("/") or _DRIVE.match(text) or text.startswith("~"):
        raise PathOutsideRepository(
            f"pattern {pattern!r} is absolute; use a path inside the repository"
        )
    directory = text.endswith("/")
    parts: list[str] = []
    for part in _split_segments(text):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts or parts[-1] == "**":
                raise _leads_out(pattern)
            parts.pop()
            continue
        parts.append(part)
    if directory or not parts:
        parts.append("**")
    return "/".join(parts)


def _validate(normal: str, pattern: str) -> None:
    if normal.count("{") != normal.count("}") and "\\" not in normal:
        raise InvalidInput(f"unbalanced '{{' in pattern {pattern!r}")
    for alternative in expand_braces(normal, pattern):
        segments = _split_segments(alternative)
        if ".." in segments:
            raise _leads_out(pattern)
        for segment in segments:
            _parse_segment(segment, pattern)


# ------------------------------------------------------------------ compiling & matching


@functools.lru_cache(maxsize=4096)
def compile_pattern(pattern: str) -> tuple[tuple[Segment, ...], ...]:
    """Each brace alternative as segments; a trailing ``**`` becomes ``*/**``."""
    normal = normalize_pattern(pattern)
    compiled = []
    for alternative in expand_braces(normal, pattern):
        segments = [_parse_segment(part, pattern) for part in _split_segments(alternative) if part]
        if segments and segments[-1] is None:
            segments[-1] = (STAR,)
            segments.append(None)
        compiled.append(tuple(_squash_globstars(segments)))
    return tuple(compiled)


def _squash_globstars(segments: list[Segment]) -> list[Segment]:
    squashed: list[Segment] = []
    for segment in segments:
        if segment is None and squashed and squashed[-1] is None:
            continue
        squashed.append(segment)
    return squashed


def _wildcard_match(
    pattern: Sequence[E], items: Sequence[Item], star: E, one: Callable[[E, Item], bool]
) -> bool:
    """Whether ``items`` match ``pattern``, whose elements are ``star`` (any number of
    items) or take exactly one item (when ``one`` says so). As every other element takes
    exactly one item, the classic two-pointer search decides it without exploring other
    splits: on a mismatch, the latest star takes one item more."""
    p = q = 0
    latest = -1  # the latest star's index in pattern, and where its items end
    resume = 0
    count, length = len(pattern), len(items)
    while q < length:
        if p < count:
            element = pattern[p]
            if element is star:
                latest, resume, p = p, q, p + 1
                continue
            if one(element, items[q]):
                p, q = p + 1, q + 1
                continue
        if latest < 0:
            return False
        resume += 1
        p, q = latest + 1, resume
    while p < count and pattern[p] is star:
        p += 1
    return p == count


def _char_matches(token: Token, char: str) -> bool:
    return token.chars.contains(ord(char))


def _name_matches(segment: Segment, name: str) -> bool:
    return segment is not None and _wildcard_match(segment, name, STAR, _char_matches)


def _path_matches(segments: tuple[Segment, ...], names: list[str]) -> bool:
    """Whether ``names`` match ``segments`` (a ``**`` segment takes any number of names;
    a segment's ``*`` any number of characters)."""
    return _wildcard_match(segments, names, None, _name_matches)


def glob_matches(pattern: str, path: str) -> bool:
    """Whether the (normalised) ``path`` matches ``pattern``."""
    names = [part for part in path.split("/") if part and part != "."]
    if not names:
        return False
    return any(_path_matches(alternative, names) for alternative in compile_pattern(pattern))


# ------------------------------------------------------------------ intersection


def _segment_witness(a: tuple[Token, ...], b: tuple[Token, ...]) -> str | None:
    """A non-empty name matching both segments, or None."""
    return _segment_witness_cached(a, b)


DOT = ord(".")
_NAMED = 3  # automaton state: the name so far is neither empty, "." nor ".."


def _after(state: int, char: int) -> int:
    """Track whether the name built so far is "", ".", ".." (0, 1, 2) or a real name (3)."""
    return state + 1 if char == DOT and state < 2 else _NAMED


def _without(chars: CharSet, char: int) -> CharSet:
    if chars.negated:
        return CharSet(ranges=(*chars.ranges, (char, char)), negated=True)
    kept: list[tuple[int, int]] = []
    for lo, hi in chars.ranges:
        if lo < char:
            kept.append((lo, min(hi, char - 1)))
        if hi > char:
            kept.append((max(lo, char + 1), hi))
    return CharSet(ranges=tuple(kept))


def _choices(first: CharSet, second: CharSet) -> list[int]:
    """One representative of each character kind both sets share: a non-dot and a dot."""
    found: list[int] = []
    other = common_char(_without(first, DOT), _without(second, DOT))
    if other is not None:
        found.append(other)
    if first.contains(DOT) and second.contains(DOT):
        found.append(DOT)
    return found


@functools.lru_cache(maxsize=65536)
def _segment_witness_cached(a: tuple[Token, ...], b: tuple[Token, ...]) -> str | None:
    """Search the product of both segments' automata and a third that refuses the
    names "", "." and ".." (no path has such a segment)."""

    @functools.cache
    def step(p: int, q: int, state: int) -> str | None:
        x = a[p] if p < len(a) else None
        y = b[q] if q < len(b) else None
        if x is None and y is None:
            return "" if state == _NAMED else None
        if x is not None and x.star:
            found = step(p + 1, q, state)
            if found is not None:
                return found
        if y is not None and y.star:
            found = step(p, q + 1, state)
            if found is not None:
                return found
        if x is None or y is None:
            return None
        next_p = p if x.star else p + 1
        next_q = q if y.star else q + 1
        for char in _choices(x.chars, y.chars):
            following = _after(state, char)
            if (next_p, next_q, following) == (p, q, state):
                continue
            tail = step(next_p, next_q, following)
            if tail is not None:
                return chr(char) + tail
        return None

    return step(0, 0, 0)


def _alternative_witness(a: tuple[Segment, ...], b: tuple[Segment, ...]) -> list[str] | None:
    @functools.cache
    def step(i: int, j: int) -> tuple[str, ...] | None:
        if i == len(a) and j == len(b):
            return ()
        more_a, more_b = i < len(a), j < len(b)
        x = a[i] if more_a else None
        y = b[j] if more_b else None
        if more_a and x is None:
            found = step(i + 1, j)
            if found is not None or not more_b:
                return found
            return _absorb(y, lambda: step(i, j + 1))
        if more_b and y is None:
            found = step(i, j + 1)
            if found is not None or not more_a:
                return found
            return _absorb(x, lambda: step(i + 1, j))
        if x is None or y is None:
            return None
        name = _segment_witness(x, y)
        if name is None:
            return None
        rest = step(i + 1, j + 1)
        return None if rest is None else (name, *rest)

    found = step(0, 0)
    return None if found is None or not found else list(found)


def _absorb(segment: Segment, rest: Callable[[], tuple[str, ...] | None]) -> tuple[str, ...] | None:
    """A ``**`` on the other side consumes ``segment`` (a concrete name for it)."""
    name = "a" if segment is None else _segment_witness(segment, (STAR,))
    if name is None:
        return None
    tail = rest()
    return None if tail is None else (name, *tail)


@functools.lru_cache(maxsize=16384)
def intersection_witness(a: str, b: str) -> str | None:
    """A concrete path matching both patterns, or None if no path can.

    Raises InvalidInput when the two patterns have more than ``MAX_PAIRS``
    brace alternative pairs (the work would be unbounded).
    """
    lefts, rights = compile_pattern(a), compile_pattern(b)
    if len(lefts) * len(rights) > MAX_PAIRS:
        raise InvalidInput(
            f"patterns {a!r} and {b!r} have {len(lefts)} x {len(rights)} brace alternatives to"
            f" compare (more than {MAX_PAIRS}); use fewer {{a,b}} groups"
        )
    for left in lefts:
        for right in rights:
            names = _alternative_witness(left, right)
            if names is not None:
                return "/".join(names)
    return None


# ------------------------------------------------------------------ case folding

# A class range at most this long is folded character by character; a longer one
# (``[!-~]``, a negation's complement) keeps its ASCII letters' other case only.
_FOLDED_RANGE = 256


@functools.lru_cache(maxsize=4096)
def case_folded(pattern: str) -> str:
    """``pattern`` as a repository whose file system ignores case (git's
    ``core.ignorecase``) reads it: every path it names folded (``foldcase.fold``), so
    that where it and another folded pattern intersect, or it matches a folded path, the
    two name one file there (``SRC/a.py`` and ``src/*.py``). The text is put in NFC
    first; literal text is folded (``Straße`` reads ``strasse``); a character class also
    matches the folded form of each of its characters that folds to one character; a
    negated one no longer excludes a letter (it may exclude one case of it, which such a
    file system does not tell apart). So it names every folded path the pattern names
    (but where a wildcard stands for a character that folds to two: :func:`path_matches`
    asks the pattern as written too), and in doubt a few more: a conflict may be found
    where the cases differ in a class, never missed."""
    if not pattern.isascii():
        from unicodedata import normalize

        pattern = normalize("NFC", pattern)
    out: list[str] = []
    run: list[str] = []  # literal text, folded as one name (NFC joins across characters)
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char not in _FOLD_SPECIAL:
            run.append(char)
            index += 1
            continue
        out.append(fold("".join(run)))
        run = []
        if char == "\\" and index + 1 < len(pattern):
            out += ["\\" + folded for folded in fold(pattern[index + 1])]
            index += 2
        elif char == "[":
            try:
                token, index = _parse_class(pattern, index, pattern)
            except InvalidInput:
                return fold(pattern)  # (normalisation refuses it anyway)
            assert token.chars is not None
            out.append(_folded_class(token.chars))
        else:
            out.append(char)
            index += 1
    out.append(fold("".join(run)))
    return "".join(out)


_FOLD_SPECIAL = frozenset("\\[*?{},/")


def path_matches(pattern: str, path: str, fold_case: bool = False) -> bool:
    """:func:`glob_matches`, both case folded with ``fold_case`` (the file system
    ignores case: :func:`case_folded`, ``foldcase.fold``). A name that is not ASCII is
    asked as written too: a wildcard stands for one character of the folded name, and
    ``Stra?e`` names ``Straße`` though ``stra?e`` does not match ``strasse``."""
    if not fold_case:
        return glob_matches(pattern, path)
    if glob_matches(case_folded(pattern), fold(path)):
        return True
    return not (pattern.isascii() and path.isascii()) and glob_matches(pattern, path)


def patterns_meet(a: str, b: str, fold_case: bool = False) -> bool:
    """:func:`patterns_intersect`, both case folded with ``fold_case`` (and, for a
    pattern that is not ASCII, as written too: see :func:`path_matches`)."""
    if not fold_case:
        return patterns_intersect(a, b)
    if patterns_intersect(case_folded(a), case_folded(b)):
        return True
    return not (a.isascii() and b.isascii()) and patterns_intersect(a, b)


def _folded_class(chars: CharSet) -> str:
    """A class matching what ``chars`` matches in a folded path (see :func:`case_folded`),
    written with every character escaped."""
    ranges: list[tuple[int, int]] = []
    for lo, hi in chars.ranges:
        if chars.negated:  # only characters that have no case stay excluded
            ranges += _uncased(lo, hi)
            continue
        ranges.append((lo, hi))
        ranges += _lowered(lo, hi)
    if not ranges:
        return "?" if chars.negated else "[\\/]"  # ([/]: a class never matches "/")
    body = "".join(f"\\{chr(lo)}" if lo == hi else f"\\{chr(lo)}-\\{chr(hi)}" for lo, hi in ranges)
    return f"[!{body}]" if chars.negated else f"[{body}]"


def _lowered(lo: int, hi: int) -> list[tuple[int, int]]:
    """The folded forms (``foldcase.fold``) of the characters ``lo``..``hi`` that fold to
    one other character, as ranges (a long range: its ASCII capitals' lower case)."""
    if hi - lo <= _FOLDED_RANGE:
        found = {ord(low) for low in map(fold, map(chr, range(lo, hi + 1))) if len(low) == 1}
        return [(code, code) for code in sorted(found) if not lo <= code <= hi]
    upper_lo, upper_hi = max(lo, ord("A")), min(hi, ord("Z"))
    return [(upper_lo + 32, upper_hi + 32)] if upper_lo <= upper_hi else []


def _uncased(lo: int, hi: int) -> list[tuple[int, int]]:
    """The characters ``lo``..``hi`` that have no other case, as ranges (a long range
    keeps none: in doubt, nothing stays excluded)."""
    if hi - lo > _FOLDED_RANGE:
        return []
    codes = [
        code for code in range(lo, hi + 1) if fold(chr(code)) == chr(code) == chr(code).upper()
    ]
    return [(code, code) for code in codes]


def patterns_intersect(a: str, b: str) -> bool:
    """Whether some path matches both ``a`` and ``b`` (exact, both directions)."""
    return intersection_witness(a, b) is not None


# ------------------------------------------------------------------ samples

_FILLERS = ("", "q", "hive~sample.q")
_GLOBSTAR_FILLS: tuple[tuple[str, ...], ...] = ((), ("q",), ("hive~sample", "q"))
_SAMPLE_CHARS = [ord(c) for c in "q~zZ9_-"]


@functools.lru_cache(maxsize=4096)
def sample_paths(pattern: str) -> tuple[str, ...]:
    """A few different concrete paths ``pattern`` matches (each ``*`` and ``**`` filled
    in three ways, every brace alternative). A rule matching all of them very likely
    contains the whole pattern; one sample outside the rule proves it does not."""
    found: list[str] = []
    for alternative in compile_pattern(pattern):
        for variant in range(len(_FILLERS)):
            names: list[str] = []
            for segment in alternative:
                if segment is None:
                    names += _GLOBSTAR_FILLS[variant]
                else:
                    names.append(_sample_name(segment, variant))
            path = "/".join(names)
            if names and path not in found and glob_matches(pattern, path):
                found.append(path)
    return tuple(found)


def _sample_name(tokens: tuple[Token, ...], variant: int) -> str:
    chars: list[str] = []
    for token in tokens:
        if token.star:
            chars.append(_FILLERS[variant])
            continue
        char = next((c for c in _SAMPLE_CHARS if token.chars.contains(c)), None)
        if char is None:
            char = common_char(token.chars, ANY)
        chars.append(chr(char) if char is not None else "q")
    name = "".join(chars)
    return name if name not in ("", ".", "..") else "q"
