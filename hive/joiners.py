"""Where a name may hold the zero-width non-joiner and joiner (U+200C, U+200D): the
contexts of Unicode's identifier rules (UAX #31, section 2.3, "Layout and Format
Control Characters"), and emoji ZWJ sequences (UTS #51). Standard library only, and
imported only for a name that holds one (``hive.text.first_unprintable``).

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
SKIN_TONES = frozenset(chr(code) for code in range(0x1F3FB, 0x1F400))
ADLAM_NASALIZATION = "\U0001e94b"  # a modifier letter (Lm) of joining type Transparent

# (first, last, joining type): D dual-joining, L left-joining, R right-joining.
# fmt: off
_JOINING = (
    (0x620, 0x620, "D"), (0x622, 0x625, "R"), (0x626, 0x626, "D"), (0x627, 0x627, "R"),
    (0x628, 0x628, "D"), (0x629, 0x629, "R"), (0x62A, 0x62E, "D"), (0x62F, 0x632, "R"),
    (0x633, 0x63F, "D"), (0x641, 0x647, "D"), (0x648, 0x648, "R"), (0x649, 0x64A, "D"),
    (0x66E, 0x66F, "D"), (0x671, 0x673, "R"), (0x675, 0x677, "R"), (0x678, 0x687, "D"),
    (0x688, 0x699, "R"), (0x69A, 0x6BF, "D"), (0x6C0, 0x6C0, "R"), (0x6C1, 0x6C2, "D"),
    (0x6C3, 0x6CB, "R"), (0x6CC, 0x6CC, "D"), (0x6CD, 0x6CD, "R"), (0x6CE, 0x6CE, "D"),
    (0x6CF, 0x6CF, "R"), (0x6D0, 0x6D1, "D"), (0x6D2, 0x6D3, "R"), (0x6D5, 0x6D5, "R"),
    (0x6EE, 0x6EF, "R"), (0x6FA, 0x6FC, "D"), (0x6FF, 0x6FF, "D"), (0x710, 0x710, "R"),
    (0x712, 0x714, "D"), (0x715, 0x719, "R"), (0x71A, 0x71D, "D"), (0x71E, 0x71E, "R"),
    (0x71F, 0x727, "D"), (0x728, 0x728, "R"), (0x729, 0x729, "D"), (0x72A, 0x72A, "R"),
    (0x72B, 0x72B, "D"), (0x72C, 0x72C, "R"), (0x72D, 0x72E, "D"), (0x72F, 0x72F, "R"),
    (0x74D, 0x74D, "R"), (0x74E, 0x758, "D"), (0x759, 0x75B, "R"), (0x75C, 0x76A, "D"),
    (0x76B, 0x76C, "R"), (0x76D, 0x770, "D"), (0x771, 0x771, "R"), (0x772, 0x772, "D"),
    (0x773, 0x774, "R"), (0x775, 0x777, "D"), (0x778, 0x779, "R"), (0x77A, 0x77F, "D"),
    (0x7CA, 0x7EA, "D"), (0x840, 0x840, "R"), (0x841, 0x845, "D"), (0x846, 0x847, "R"),
    (0x848, 0x848, "D"), (0x849, 0x849, "R"), (0x84A, 0x853, "D"), (0x854, 0x854, "R"),
    (0x855, 0x855, "D"), (0x856, 0x858, "R"), (0x860, 0x860, "D"), (0x862, 0x865, "D"),
    (0x867, 0x867, "R"), (0x868, 0x868, "D"), (0x869, 0x86A, "R"), (0x870, 0x882, "R"),
    (0x886, 0x886, "D"), (0x889, 0x88D, "D"), (0x88E, 0x88E, "R"), (0x8A0, 0x8A9, "D"),
    (0x8AA, 0x8AC, "R"), (0x8AE, 0x8AE, "R"), (0x8AF, 0x8B0, "D"), (0x8B1, 0x8B2, "R"),
    (0x8B3, 0x8B8, "D"), (0x8B9, 0x8B9, "R"), (0x8BA, 0x8C8, "D"), (0x1807, 0x1807, "D"),
    (0x1820, 0x1878, "D"), (0x1887, 0x18A8, "D"), (0x18AA, 0x18AA, "D"), (0xA840, 0xA871, "D"),
    (0xA872, 0xA872, "L"), (0x10AC0, 0x10AC4, "D"), (0x10AC5, 0x10AC5, "R"),
    (0x10AC7, 0x10AC7, "R"), (0x10AC9, 0x10ACA, "R"), (0x10ACD, 0x10ACD, "L"),
    (0x10ACE, 0x10AD2, "R"), (0x10AD3, 0x10AD6, "D"), (0x10AD7, 0x10AD7, "L"),
    (0x10AD8, 0x10ADC, "D"), (0x10ADD, 0x10ADD, "R"), (0x10ADE, 0x10AE0, "D"),
    (0x10AE1, 0x10AE1, "R"), (0x10AE4, 0x10AE4, "R"), (0x10AEB, 0x10AEE, "D"),
    (0x10AEF, 0x10AEF, "R"), (0x10B80, 0x10B80, "D"), (0x10B81, 0x10B81, "R"),
    (0x10B82, 0x10B82, "D"), (0x10B83, 0x10B85, "R"), (0x10B86, 0x10B88, "D"),
    (0x10B89, 0x10B89, "R"), (0x10B8A, 0x10B8B, "D"), (0x10B8C, 0x10B8C, "R"),
    (0x10B8D, 0x10B8D, "D"), (0x10B8E, 0x10B8F, "R"), (0x10B90, 0x10B90, "D"),
    (0x10B91, 0x10B91, "R"), (0x10BA9, 0x10BAC, "R"), (0x10BAD, 0x10BAE, "D"),
    (0x10D00, 0x10D00, "L"), (0x10D01, 0x10D21, "D"), (0x10D22, 0x10D22, "R"),
    (0x10D23, 0x10D23, "D"), (0x10F30, 0x10F32, "D"), (0x10F33, 0x10F33, "R"),
    (0x10F34, 0x10F44, "D"), (0x10F51, 0x10F53, "D"), (0x10F54, 0x10F54, "R"),
    (0x10F70, 0x10F73, "D"), (0x10F74, 0x10F75, "R"), (0x10F76, 0x10F81, "D"),
    (0x10FB0, 0x10FB0, "D"), (0x10FB2, 0x10FB3, "D"), (0x10FB4, 0x10FB6, "R"),
    (0x10FB8, 0x10FB8, "D"), (0x10FB9, 0x10FBA, "R"), (0x10FBB, 0x10FBC, "D"),
    (0x10FBD, 0x10FBD, "R"), (0x10FBE, 0x10FBF, "D"), (0x10FC1, 0x10FC1, "D"),
    (0x10FC2, 0x10FC3, "R"), (0x10FC4, 0x10FC4, "D"), (0x10FC9, 0x10FC9, "R"),
    (0x10FCA, 0x10FCA, "D"), (0x10FCB, 0x10FCB, "L"), (0x1E900, 0x1E943, "D"),
)
# fmt: on
_JOINING_STARTS = [first for first, _, _ in _JOINING]

# Extended_Pictographic (emoji and the symbols reserved for them): (first, last).
# fmt: off
_PICTOGRAPHIC = (
    (0xA9, 0xA9), (0xAE, 0xAE), (0x203C, 0x203C), (0x2049, 0x2049), (0x2122, 0x2122),
    (0x2139, 0x2139), (0x2194, 0x2199), (0x21A9, 0x21AA), (0x231A, 0x231B), (0x2328, 0x2328),
    (0x2388, 0x2388), (0x23CF, 0x23CF), (0x23E9, 0x23F3), (0x23F8, 0x23FA), (0x24C2, 0x24C2),
    (0x25AA, 0x25AB), (0x25B6, 0x25B6), (0x25C0, 0x25C0), (0x25FB, 0x25FE), (0x2600, 0x2605),
    (0x2607, 0x2612), (0x2614, 0x2685), (0x2690, 0x2705), (0x2708, 0x2712), (0x2714, 0x2714),
    (0x2716, 0x2716), (0x271D, 0x271D), (0x2721, 0x2721), (0x2728, 0x2728), (0x2733, 0x2734),
    (0x2744, 0x2744), (0x2747, 0x2747), (0x274C, 0x274C), (0x274E, 0x274E), (0x2753, 0x2755),
    (0x2757, 0x2757), (0x2763, 0x2767), (0x2795, 0x2797), (0x27A1, 0x27A1), (0x27B0, 0x27B0),
    (0x27BF, 0x27BF), (0x2934, 0x2935), (0x2B05, 0x2B07), (0x2B1B, 0x2B1C), (0x2B50, 0x2B50),
    (0x2B55, 0x2B55), (0x3030, 0x3030), (0x303D, 0x303D), (0x3297, 0x3297), (0x3299, 0x3299),
    (0x1F000, 0x1F0FF), (0x1F10D, 0x1F10F), (0x1F12F, 0x1F12F), (0x1F16C, 0x1F171),
    (0x1F17E, 0x1F17F), (0x1F18E, 0x1F18E), (0x1F191, 0x1F19A), (0x1F1AD, 0x1F1E5),
    (0x1F201, 0x1F20F), (0x1F21A, 0x1F21A), (0x1F22F, 0x1F22F), (0x1F232, 0x1F23A),
    (0x1F23C, 0x1F23F), (0x1F249, 0x1F3FA), (0x1F400, 0x1F53D), (0x1F546, 0x1F64F),
    (0x1F680, 0x1F6FF), (0x1F774, 0x1F77F), (0x1F7D5, 0x1F7FF), (0x1F80C, 0x1F80F),
    (0x1F848, 0x1F84F), (0x1F85A, 0x1F85F), (0x1F888, 0x1F88F), (0x1F8AE, 0x1F8FF),
    (0x1F90C, 0x1F93A), (0x1F93C, 0x1F945), (0x1F947, 0x1FAFF), (0x1FC00, 0x1FFFD),
)
# fmt: on
_PICTOGRAPHIC_STARTS = [first for first, _ in _PICTOGRAPHIC]


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
