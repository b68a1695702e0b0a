"""Whether a path matches a glob, told from the pattern's text alone when that is sure.

``hive/domain/globs.py`` parses and matches every pattern (``re``, ``functools`` and
the parser: ~5 ms of a fresh process). The pre-commit hook's quick check
(``cli/leanhook.py``) asks, for each staged path, whether somebody else's exclusive
reservation covers it; most such patterns are plainly elsewhere (``docs/**`` for a
staged ``src/a.py``). :func:`quick_match` answers those without the parser, and
``None`` (ask ``globs.glob_matches``) for anything else.

It answers only for a *simple* pattern: plain characters (ASCII letters, digits,
``._-@+``), the wildcards ``*`` and ``?``, and ``/`` between segments that are neither
empty nor ``.`` nor ``..``, at most ``MAX_GLOB`` characters. Such a pattern is its own
normal form (``globs.normalize_pattern`` leaves it as it is and never refuses it), so a
path it matches begins with its literal prefix (the text before its first wildcard:
each segment before it is matched literally, the one it stands in begins with the
rest); without a wildcard it matches exactly the path that is the pattern.
``tests/test_hook_quick.py`` checks every answer against ``glob_matches`` (and, case
folded, against ``path_matches``).
"""

from __future__ import annotations

from hive.domain.limits import MAX_GLOB

_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-@+")
_SIMPLE = _PLAIN | {"*", "?", "/"}


def quick_match(pattern: str, path: str, fold_case: bool = False) -> bool | None:
    """``globs.path_matches(pattern, path, fold_case)`` when the pattern's text tells it
    (see the module's doc), else None. Folded (``fold_case``: the file system ignores
    case), a simple pattern's folded form is its text folded by ``foldcase.fold``
    (lowered: it is ASCII), and a path that is not ASCII is asked as written too (as
    ``path_matches`` asks it)."""
    if not simple(pattern):
        return None
    if not fold_case:
        return _answer(pattern, path)
    from hive.domain.foldcase import fold

    folded = _answer(fold(pattern), fold(path))
    if folded or path.isascii():
        return folded
    exact = _answer(pattern, path)
    return True if exact else None if None in (folded, exact) else False


def _answer(pattern: str, path: str) -> bool | None:
    """``glob_matches(pattern, path)`` for a simple ``pattern`` when its text tells it."""
    names = [part for part in path.split("/") if part and part != "."]
    if not names:
        return False  # glob_matches: no name, no match
    joined = "/".join(names)
    wild = [at for at in (pattern.find("*"), pattern.find("?")) if at >= 0]
    if not wild:
        return joined == pattern
    return None if joined.startswith(pattern[: min(wild)]) else False


def simple(pattern: str) -> bool:
    """Whether ``pattern`` is a simple pattern (see the module's doc)."""
    if not 0 < len(pattern) <= MAX_GLOB or not _SIMPLE.issuperset(pattern):
        return False
    return all(segment not in ("", ".", "..") for segment in pattern.split("/"))
