"""Where a name may hold the zero-width non-joiner and joiner (U+200C, U+200D): the
contexts of Unicode's identifier rules (UAX #31, section 2.3, "Layout and Format
Control Characters"), and emoji ZWJ sequences (UTS #51); and where a variation
selector (:func:`selector_allowed`). Standard library only, and imported only for a
name that holds one (``hive.text.first_unprintable``).

- **A1**, ZWNJ between joining letters: a left- or dual-joining letter, transparent
  marks, ZWNJ, transparent marks, a right- or dual-joining letter (Persian
  ``می‌خواهم``: the ZWNJ keeps the ی from joining the خ).
- **A2**, ZWNJ after a virama, and **B**, ZWJ after a virama: a letter, marks, a virama
  (canonical combining class 9), nonspacing marks of another class, then the joiner
  (Hindi ``क्‍ष``, Malayalam chillu letters, Sinhala ``ශ්‍රී``).
- **Emoji**: ZWJ between two emoji, the first optionally followed by an emoji
  presentation selector (U+FE0F) or a skin-tone modifier (a family ``👨‍👩‍👧``, a
  rainbow flag ``🏳️‍🌈``, a technologist ``🧑🏽‍💻``). UAX #31 leaves emoji to a profile;
  hive allows them because people write such names (labels above all), a renderer that
  knows the sequence shows one glyph where the parts without the joiner are several,
  and each part is visible on its own.

Anywhere else (at either end, alone, between Latin letters, doubled) a joiner changes
nothing a reader sees and makes two names that read alike differ: refused.

``unicodedata`` gives general categories and combining classes; it has no joining types
nor Extended_Pictographic, so the tables below hold them, derived once from the Unicode
Character Database 14.0 (Python 3.11's ``unicodedata.unidata_version``) with Perl's
``Unicode::UCD::prop_invlist`` (``Joining_Type=Dual_Joining``, ``=Left_Joining``,
``=Right_Joining``, ``Extended_Pictographic``). Joining type Transparent is derived as
ArabicShaping.txt derives it: nonspacing and enclosing marks (Mn, Me); the format
characters it also counts are refused in names anyway. Letters a later Unicode adds are
absent (a joiner beside them is refused), never wrongly allowed.
"""

from __future__ import annotations

import unicodedata
from bisect import bisect_right

ZWNJ = "\u200c"
ZWJ = "\u200d"
VIRAMA = 9  # canonical combining class
EMOJI_PRESENTATION = "\ufe0f"
PRESENTATION_SELECTORS = frozenset("\ufe0e\ufe0f")  # text style, emoji style
KEYCAP_BASES = frozenset("0123456789#*")
SKIN_TONES = frozenset(chr(code) for code in range(0x1F3FB, 0x1F400))
ADLAM_NASALIZATION = "\U0001e94b"  # a modifier letter (Lm) of joining type Transparent


def _range(token: str) -> tuple[str, str, str, str]:
    """``62A-62E:D`` as (``62A``, ``-``, ``62E``, ``D``); ``6CC:D``, ``A9``: no last."""
    span, _, kind = token.partition(":")
    first, dash, last = span.partition("-")
    return first, dash, last, kind


# Code point ranges (hex) and joining types: D dual-joining, L left-joining, R
# right-joining; as (first, last, type) below.
_JOINING_TEXT = """
620:D 622-625:R 626:D 627:R 628:D 629:R 62A-62E:D 62F-632:R 633-63F:D 641-647:D 648:R
649-64A:D 66E-66F:D 671-673:R 675-677:R 678-687:D 688-699:R 69A-6BF:D 6C0:R 6C1-6C2:D
6C3-6CB:R 6CC:D 6CD:R 6CE:D 6CF:R 6D0-6D1:D 6D2-6D3:R 6D5:R 6EE-6EF:R 6FA-6FC:D 6FF:D
710:R 712-714:D 715-719:R 71A-71D:D 71E:R 71F-727:D 728:R 729:D 72A:R 72B:D 72C:R
72D-72E:D 72F:R 74D:R 74E-758:D 759-75B:R 75C-76A:D 76B-76C:R 76D-770:D 771:R 772:D
773-774:R 775-777:D 778-779:R 77A-77F:D 7CA-7EA:D 840:R 841-845:D 846-847:R 848:D 849:R
84A-853:D 854:R 855:D 856-858:R 860:D 862-865:D 867:R 868:D 869-86A:R 870-882:R 886:D
889-88D:D 88E:R 8A0-8A9:D 8AA-8AC:R 8AE:R 8AF-8B0:D 8B1-8B2:R 8B3-8B8:D 8B9:R 8BA-8C8:D
1807:D 1820-1878:D 1887-18A8:D 18AA:D A840-A871:D A872:L 10AC0-10AC4:D 10AC5:R 10AC7:R
10AC9-10ACA:R 10ACD:L 10ACE-10AD2:R 10AD3-10AD6:D 10AD7:L 10AD8-10ADC:D 10ADD:R
10ADE-10AE0:D 10AE1:R 10AE4:R 10AEB-10AEE:D 10AEF:R 10B80:D 10B81:R 10B82:D
10B83-10B85:R 10B86-10B88:D 10B89:R 10B8A-10B8B:D 10B8C:R 10B8D:D 10B8E-10B8F:R 10B90:D
10B91:R 10BA9-10BAC:R 10BAD-10BAE:D 10D00:L 10D01-10D21:D 10D22:R 10D23:D 10F30-10F32:D
10F33:R 10F34-10F44:D 10F51-10F53:D 10F54:R 10F70-10F73:D 10F74-10F75:R 10F76-10F81:D
10FB0:D 10FB2-10FB3:D 10FB4-10FB6:R 10FB8:D 10FB9-10FBA:R 10FBB-10FBC:D 10FBD:R
10FBE-10FBF:D 10FC1:D 10FC2-10FC3:R 10FC4:D 10FC9:R 10FCA:D 10FCB:L 1E900-1E943:D
"""
_JOINING = [
    (int(first, 16), int(last or first, 16), kind)
    for first, _, last, kind in (_range(token) for token in _JOINING_TEXT.split())
]
_JOINING_STARTS = [first for first, _, _ in _JOINING]

# Extended_Pictographic (emoji and the symbols reserved for them): (first, last).
_PICTOGRAPHIC_TEXT = """
A9 AE 203C 2049 2122 2139 2194-2199 21A9-21AA 231A-231B 2328 2388 23CF 23E9-23F3
23F8-23FA 24C2 25AA-25AB 25B6 25C0 25FB-25FE 2600-2605 2607-2612 2614-2685 2690-2705
2708-2712 2714 2716 271D 2721 2728 2733-2734 2744 2747 274C 274E 2753-2755 2757
2763-2767 2795-2797 27A1 27B0 27BF 2934-2935 2B05-2B07 2B1B-2B1C 2B50 2B55 3030 303D
3297 3299 1F000-1F0FF 1F10D-1F10F 1F12F 1F16C-1F171 1F17E-1F17F 1F18E 1F191-1F19A
1F1AD-1F1E5 1F201-1F20F 1F21A 1F22F 1F232-1F23A 1F23C-1F23F 1F249-1F3FA 1F400-1F53D
1F546-1F64F 1F680-1F6FF 1F774-1F77F 1F7D5-1F7FF 1F80C-1F80F 1F848-1F84F 1F85A-1F85F
1F888-1F88F 1F8AE-1F8FF 1F90C-1F93A 1F93C-1F945 1F947-1FAFF 1FC00-1FFFD
"""
_PICTOGRAPHIC = [
    (int(first, 16), int(last or first, 16))
    for first, _, last, _ in (_range(token) for token in _PICTOGRAPHIC_TEXT.split())
]
_PICTOGRAPHIC_STARTS = [first for first, _ in _PICTOGRAPHIC]


def allowed_in_place(text: str, index: int) -> bool:
    """Whether ``text[index]``, a joiner or a variation selector, stands where a name
    may hold it."""
    if text[index] in (ZWNJ, ZWJ):
        return joiner_allowed(text, index)
    return selector_allowed(text, index)


def selector_allowed(text: str, index: int) -> bool:
    """A variation selector right after a character it gives a form of: the emoji
    presentation selectors (U+FE0E, U+FE0F) after an emoji or a keycap's digit, ``#`` or
    ``*`` (``❤️``, ``1️⃣``); the others (U+FE00-U+FE0D, the ideographic ones from
    U+E0100, Mongolian's free variation selectors) after a letter of a script without
    case (an ideograph, a Mongolian letter: category Lo) or a symbol other than ASCII
    (the standardized variants of math symbols). After a Latin letter, a space, a
    mark, another selector or at the start it selects nothing and is refused."""
    if index == 0:
        return False
    base = text[index - 1]
    if text[index] in PRESENTATION_SELECTORS:
        return pictographic(base) or base in KEYCAP_BASES
    category = unicodedata.category(base)
    return category == "Lo" or (category[0] == "S" and not base.isascii())


def joiner_allowed(text: str, index: int) -> bool:
    """Whether the joiner ``text[index]`` (ZWNJ or ZWJ) stands where the rules above
    allow it."""
    if _after_virama(text, index):
        return True
    if text[index] == ZWNJ:
        return _between_joining_letters(text, index)
    return _between_emoji(text, index)


def joining_type(char: str) -> str:
    """``D``, ``L``, ``R``, ``T`` (transparent) or ``U`` (non-joining)."""
    code = ord(char)
    at = bisect_right(_JOINING_STARTS, code) - 1
    if at >= 0 and code <= _JOINING[at][1]:
        return _JOINING[at][2]
    if unicodedata.category(char) in ("Mn", "Me") or char == ADLAM_NASALIZATION:
        return "T"
    return "U"


def pictographic(char: str) -> bool:
    code = ord(char)
    at = bisect_right(_PICTOGRAPHIC_STARTS, code) - 1
    return at >= 0 and code <= _PICTOGRAPHIC[at][1]


def _after_virama(text: str, index: int) -> bool:
    """``$L $M* $V $M1* joiner``: a letter, nonspacing marks, a virama, nonspacing
    marks of a class other than 0 and 9, the joiner."""
    at = index - 1
    while at >= 0 and _mark_after_virama(text[at]):
        at -= 1
    if at < 0 or unicodedata.combining(text[at]) != VIRAMA:
        return False
    at -= 1
    while at >= 0 and unicodedata.category(text[at]) == "Mn":
        at -= 1
    return at >= 0 and unicodedata.category(text[at]).startswith("L")


def _mark_after_virama(char: str) -> bool:
    return unicodedata.category(char) == "Mn" and unicodedata.combining(char) not in (0, VIRAMA)


def _between_joining_letters(text: str, index: int) -> bool:
    """``$LJ $T* ZWNJ $T* $RJ``."""
    before = index - 1
    while before >= 0 and joining_type(text[before]) == "T":
        before -= 1
    after = index + 1
    while after < len(text) and joining_type(text[after]) == "T":
        after += 1
    return (
        before >= 0
        and after < len(text)
        and joining_type(text[before]) in ("D", "L")
        and joining_type(text[after]) in ("D", "R")
    )


def _between_emoji(text: str, index: int) -> bool:
    """An emoji (its presentation selector or skin tone after it), ZWJ, an emoji."""
    before = index - 1
    if before >= 0 and (text[before] in SKIN_TONES or text[before] == EMOJI_PRESENTATION):
        before -= 1
    after = index + 1
    return (
        before >= 0
        and after < len(text)
        and pictographic(text[before])
        and pictographic(text[after])
    )
