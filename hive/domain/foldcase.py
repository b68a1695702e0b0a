"""How hive compares names where case does not tell files apart: one folding function.

:func:`fold` is the name every comparison that ignores case reads: the pre-commit
hook (``cli/leanhook.py`` and ``domain/precommit.py``), the reservation conflict test
(``reservecore``), the hook's quick glob answers (``globquick``), the settling of
reservations two clones granted (``contest``) and the ``tools.permissions`` path rules
(``path_rules``); a pattern's text is folded by ``globs.case_folded``, which folds its
literal text with it.

A name is folded by Unicode's full case folding (``str.casefold``) between two
canonical normalisations: NFD first (Unicode's canonical caseless match), NFC last, so
a name macOS wrote decomposed (``e`` + U+0301) and one typed composed (``é``) fold to
one text. Full folding also folds ``ß`` to ``ss``: ``Straße``, ``STRASSE`` and
``strasse`` are one name here, which file systems that fold case one character at a
time (APFS, NTFS) tell apart: in doubt, a conflict is found, never missed. An ASCII
name is only lowered (the same answer, without ``unicodedata``), so the hook imports
that module only for a name that is not ASCII.

A leaf (no imports at module level): the hook's quick check imports it.
"""

from __future__ import annotations


def fold(text: str) -> str:
    """``text`` case folded and in NFC (see the module's doc); idempotent."""
    if text.isascii():
        return text.lower()
    from unicodedata import normalize

    return normalize("NFC", normalize("NFD", text).casefold())
