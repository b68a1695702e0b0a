"""Text rules shared by every layer (standard library only, like ``hive.errors``).

No ``re`` here: every fresh process imports these rules, and ``re`` with its
compiler costs ~2-4 ms of start-up. ASCII text without control characters, nearly
every value, is settled by ``str.isprintable``; other text is checked against the
set of control characters in C (``frozenset.isdisjoint``)."""

from __future__ import annotations

# C0 and C1 control characters (tab, escape, NUL, CR, ...) and Unicode line separators.
CONTROL_CHARS = frozenset(
    [chr(code) for code in range(0x20)]
    + [chr(code) for code in range(0x7F, 0xA0)]
    + ["\u2028", "\u2029"]
)

# Letters and marks ``str.isprintable`` passes that are shown as nothing (Unicode's
# default ignorable ones): the combining grapheme joiner, the Hangul fillers, Khmer's
# inherent vowels.
BLANK_LETTERS_AND_MARKS = (0x34F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x3164, 0xFFA0)

# Characters that are not seen but change what is seen ("Trojan Source"): the
# bidirectional marks, embeddings, overrides and isolates (they reorder the text around
# them: U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069), and Unicode's other
# invisible format characters (category Cf): the soft hyphen, the Mongolian vowel
# separator, the zero-width space, the word joiner and invisible operators, the
# deprecated format controls, the byte-order mark, interlinear annotations, the shorthand
# format controls, the musical beam, tie, slur and phrase controls and the tag
# characters (invisible text); and the letters and marks shown as nothing that are no
# format characters (:data:`BLANK_LETTERS_AND_MARKS`; not the variation selectors:
# emoji and ideographs take them). Not among them: the zero-width non-joiner and joiner
# (U+200C, U+200D), which shape the letters of Persian and Indic words and join emoji
# (a family, a rainbow flag) and neither reorder nor hide text, and the visible format
# characters of some scripts (Arabic number signs, hieroglyph controls). Written text
# may hold any of them (Hebrew and Arabic use the marks); a terminal is not given them.
INVISIBLE_CHARS = frozenset(
    [chr(code) for code in (0xAD, 0x61C, 0x180E, 0xFEFF, 0xE0001)]
    + [chr(code) for code in BLANK_LETTERS_AND_MARKS]
    + [chr(code) for code in (0x200B, 0x200E, 0x200F)]
    + [chr(code) for code in range(0x202A, 0x202F)]
    + [chr(code) for code in range(0x2060, 0x2065)]
    + [chr(code) for code in range(0x2066, 0x2070)]
    + [chr(code) for code in range(0xFFF9, 0xFFFC)]
    + [chr(code) for code in range(0x1BCA0, 0x1BCA4)]
    + [chr(code) for code in range(0x1D173, 0x1D17B)]
    + [chr(code) for code in range(0xE0020, 0xE0080)]
)

# What text shown to a person holds none of (a control character is shown as ``?``, an
# invisible one by its code point: ``<U+202E>``).
UNSHOWN_CHARS = CONTROL_CHARS | INVISIBLE_CHARS


def code_point(char: str) -> str:
    """``U+202E``: how hive names a character in messages and on screen."""
    return f"U+{ord(char):04X}"


def first_unprintable(text: str) -> tuple[int, str] | None:
    """(position counted from 1, character) of the first character of ``text`` that a
    name may not hold, None when it holds none: every character not shown as itself
    (``str.isprintable``: control characters, format characters (bidirectional
    controls, zero-width characters, the byte-order mark), line and paragraph
    separators, spaces other than the plain space, private-use and unassigned code
    points) and every one :data:`SHOWN_AS_NOTHING` holds, but the zero-width non-joiner
    and joiner (U+200C, U+200D) where Unicode's identifier rules allow them (after a
    virama, between joining letters, inside an emoji sequence) and a variation selector
    after a character it gives a form of (an emoji, an ideograph): ``hive.joiners``."""
    if text.isprintable() and (text.isascii() or SHOWN_AS_NOTHING.isdisjoint(text)):
        return None
    for at, char in enumerate(text, start=1):
        if char.isprintable() and char not in SHOWN_AS_NOTHING:
            continue
        if char in JOINERS or char in SELECTORS:
            from hive.joiners import allowed_in_place

            if allowed_in_place(text, at - 1):
                continue
        return at, char
    return None


# The zero-width non-joiner and joiner: shaping in Persian and Indic words, emoji.
JOINERS = frozenset("\u200c\u200d")

# Variation selectors: each chooses a form of the character before it (an emoji's
# presentation, an ideograph's variant, a Mongolian letter's form: the free variation
# selectors), and is shown as nothing itself.
SELECTORS = frozenset(
    [chr(code) for code in range(0xFE00, 0xFE10)]
    + [chr(code) for code in range(0xE0100, 0xE01F0)]
    + [chr(code) for code in (0x180B, 0x180C, 0x180D, 0x180F)]
)

# Characters ``str.isprintable`` passes that are shown as nothing: the blank letters
# and marks and the variation selectors. A name refuses them (a selector in its place
# is allowed).
SHOWN_AS_NOTHING = SELECTORS | frozenset(map(chr, BLANK_LETTERS_AND_MARKS))


def refusal_reason(char: str, *, spaced: bool = True) -> tuple[str, str]:
    """(what ``char`` is, what to do) for a name holding it (one
    :func:`first_unprintable` found): ``("a space other than the plain space", "write a
    plain space (U+0020) instead")``; ``spaced``: the name may hold a plain space (an id
    may not: the space is then to be removed)."""
    import unicodedata

    category = unicodedata.category(char)
    if category == "Zs":
        fix = "write a plain space (U+0020) instead" if spaced else "remove it"
        return "a space other than the plain space", fix
    if category == "Co":
        return "a private-use character (fonts show it differently or not at all)", "remove it"
    if category == "Cn":
        return "an unassigned code point", "remove it"
    if char in JOINERS:
        where = "after a virama, between joining letters or between emoji"
        return f"a joiner outside the letters or emoji it may join ({where})", "remove it"
    if char in SELECTORS:
        where = "an emoji, an ideograph or a symbol it gives a form of"
        return f"a variation selector that is not after {where}", "remove it"
    if char in SHOWN_AS_NOTHING:
        return "a character shown as nothing (a filler or a grapheme joiner)", "remove it"
    return "an invisible, bidirectional or control character", "remove it"


def described(char: str) -> str:
    """``U+202E (RIGHT-TO-LEFT OVERRIDE)``; the code point alone for a character Unicode
    gives no name (control characters, unassigned ones)."""
    import unicodedata

    name = unicodedata.name(char, "")
    return f"{code_point(char)} ({name})" if name else code_point(char)


def first_control(text: str, allowed: frozenset[str] = frozenset()) -> str | None:
    """The first control character of ``text`` (:data:`CONTROL_CHARS`) that is not in
    ``allowed``, None when there is none."""
    if (text.isascii() and text.isprintable()) or CONTROL_CHARS.isdisjoint(text):
        return None
    return next((char for char in text if char in CONTROL_CHARS and char not in allowed), None)


def without_control(text: str, kept: frozenset[str] = frozenset()) -> str:
    """``text`` with each control character (but those in ``kept``) shown as ``?`` and
    each invisible format character (:data:`INVISIBLE_CHARS`) as its code point in angle
    brackets (``<U+202E>``): commit subjects, and every value a person's terminal shows
    (an escape sequence in a title must not clear the screen; a right-to-left override
    must not reorder what a reviewer reads, who sees instead that the text holds one)."""
    if (text.isascii() and text.isprintable()) or UNSHOWN_CHARS.isdisjoint(text):
        return text
    return "".join(_shown_char(char, kept) for char in text)


def _shown_char(char: str, kept: frozenset[str]) -> str:
    if char in INVISIBLE_CHARS:
        return f"<{code_point(char)}>"
    return "?" if char in CONTROL_CHARS and char not in kept else char


def shown_pieces(text: str) -> list[str]:
    """``text`` (as shown: :func:`without_control`) in the pieces a cut may not split:
    each ``<U+XXXX>`` (four to six hex digits) whole, every other character alone."""
    if "<U+" not in text:
        return list(text)
    pieces: list[str] = []
    at = 0
    while at < len(text):
        end = _marker_end(text, at)
        pieces.append(text[at:end])
        at = end
    return pieces


_HEX_DIGITS = frozenset("0123456789ABCDEF")


def _marker_end(text: str, at: int) -> int:
    """Where the ``<U+XXXX>`` at ``at`` ends (``at + 1`` when none starts there)."""
    if text.startswith("<U+", at):
        close = text.find(">", at + 3, at + 10)
        if close - at - 3 in (4, 5, 6) and _HEX_DIGITS.issuperset(text[at + 3 : close]):
            return close + 1
    return at + 1


# What a terminal is given of text that spans lines (descriptions, message bodies).
LINES_KEPT = frozenset("\n\t")

# Unicode's mandatory line breaks (UAX #14 classes BK, CR, LF and NL): line feed,
# carriage return, line tabulation, form feed, next line (NEL, U+0085), line separator
# (U+2028) and paragraph separator (U+2029). Pasted text holds them (a word processor's
# soft line break is U+2028, text from EBCDIC systems ends lines with NEL).
LINE_BREAKS = frozenset("\n\r\x0b\x0c\x85\u2028\u2029")

# The control characters free text (a description, notes, a comment, a mail body) may
# hold: the tab and the line breaks. Every other one (ESC, NUL, BEL, backspace, DEL, the
# other C1 controls) is no text: refused when written, shown as ``?`` when read.
TEXT_KEPT = LINE_BREAKS | frozenset("\t")


def as_lines(text: str) -> str:
    """``text`` with each of its line breaks (:data:`LINE_BREAKS`; a CRLF is one) as a
    line feed: how a text block spanning lines (a description, a comment) is laid out on a
    terminal, which moves a line separator, a NEL, a lone carriage return or a form feed
    elsewhere or nowhere (a lone carriage return would overwrite the line)."""
    if (text.isascii() and text.isprintable()) or LINE_BREAKS.isdisjoint(text):
        return text
    text = text.replace("\r\n", "\n")
    return "".join("\n" if char in LINE_BREAKS else char for char in text)


def shown_lines(text: str) -> str:
    """``text`` (which may span lines) as a terminal is to show it: line breaks and tabs
    kept (a CRLF as a line break), every other control character shown as ``?`` (the
    ESC of an escape sequence, a lone carriage return, a bell) and every invisible format
    character as ``<U+XXXX>`` (a right-to-left override, a zero-width space)."""
    if (text.isascii() and text.isprintable()) or UNSHOWN_CHARS.isdisjoint(text):
        return text
    return without_control(text.replace("\r\n", "\n"), LINES_KEPT)


def shown_patch(text: str) -> str:
    """A patch (``git diff``'s text) as a pipe is given it: as :func:`shown_lines`, but a
    CRLF kept as it is, so the diff of a file with CRLF line endings still applies
    (a carriage return before a line feed moves nothing a terminal shows; a lone one,
    which would overwrite the line, is shown as ``?``)."""
    if (text.isascii() and text.isprintable()) or UNSHOWN_CHARS.isdisjoint(text):
        return text
    return "\r\n".join(without_control(part, LINES_KEPT) for part in text.split("\r\n"))


# Characters a POSIX shell takes literally in a word (shlex's own set; shlex imports re).
_SHELL_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./-_")


def shell_word(text: str) -> str:
    """``text`` as one shell word, for the commands messages tell a user to run: as is
    when the shell takes it literally, else quoted (``Jane Doe`` -> ``"Jane Doe"``)."""
    if text and _SHELL_SAFE.issuperset(text):
        return text
    if not any(char in '"$`\\!' for char in text):
        return f'"{text}"'
    return "'" + text.replace("'", "'\"'\"'") + "'"


def counted(number: int, noun: str) -> str:
    """``1 cell``, ``2 cells`` (``noun`` takes an ``s``)."""
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def duration(seconds: float) -> str:
    """A length of time in a unit that fits it: ``0.4s``, ``42s``, ``3.5min``, ``2.3h``,
    ``4.1d``."""
    if round(seconds) < 60:  # (59.96 s is "1.0min", not "60s")
        return f"{seconds:.1f}s" if round(seconds, 1) < 10 else f"{seconds:.0f}s"
    for unit, size, next_size in (("min", 60, 3600), ("h", 3600, 86400)):
        if round(seconds / size, 1) < next_size / size:  # (59.99 min is "1.0h")
            return f"{seconds / size:.1f}{unit}"
    return f"{seconds / 86400:.1f}d"


def utf8_clean(value: object) -> object:
    """``value`` (JSON-like: dicts, lists, strings) with every string that is not
    Unicode text written with backslash escapes: a file name whose bytes are not UTF-8
    reaches Python as lone surrogates (``bad\\udcffname``), which no UTF-8 encoder
    takes; it is shown as ``bad\\xffname``. Other values are returned as they are."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            try:
                raw = value.encode("utf-8", "surrogateescape")
            except UnicodeEncodeError:  # a surrogate no byte stands for
                return value.encode("utf-8", "backslashreplace").decode("utf-8")
            return raw.decode("utf-8", "backslashreplace")
        return value
    if isinstance(value, dict):
        return {utf8_clean(key): utf8_clean(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [utf8_clean(item) for item in value]
    return value


def looks_binary(data: bytes) -> bool:
    """Whether file content is binary by git's rule: a NUL byte in its first 8,000 bytes
    (text in any encoding but UTF-16/32 has none)."""
    return b"\0" in data[:8000]


def utf8_text(data: bytes) -> str:
    """``data`` as UTF-8 text, a byte order mark opening it (Notepad's, PowerShell's)
    dropped: the encoding's mark, not text. UnicodeDecodeError counts its bytes in
    ``data``, the mark included."""
    mark = 3 if data.startswith(b"\xef\xbb\xbf") else 0
    try:
        return data[mark:].decode("utf-8")
    except UnicodeDecodeError as exc:
        start, end = exc.start + mark, exc.end + mark
        raise UnicodeDecodeError(exc.encoding, data, start, end, exc.reason) from None
