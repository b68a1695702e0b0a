"""One set of input limits for every surface (CLI, JSON envelope, MCP, library).

The operations' parameter models (``hive/ops/``) declare these numbers in
their schemas so agents see them, and the domain functions check them again,
so a value refused by one surface is refused by all of them with the same
message.
"""

from __future__ import annotations

from hive.errors import InvalidInput
from hive.text import (
    TEXT_KEPT,
    code_point,
    described,
    first_control,
    first_unprintable,
    refusal_reason,
)

MAX_TITLE = 500
MAX_TEXT = 20_000  # description, notes, design, acceptance criteria, comments
MAX_SHORT = 200  # a label, an assignee, an agent name
MAX_ID = 200
MAX_GLOB = 1000  # a reservation pattern or an owned-file glob
MAX_ITEMS = 200  # files or patterns in one call
MAX_LABELS = 50
MAX_DEPS = 100


def check_text(value: str, what: str, limit: int = MAX_TEXT) -> str:
    """Free text (may span lines): at most ``limit`` characters, no control characters
    other than the tab and the line breaks (``hive.text.TEXT_KEPT``: LF, CR, CRLF, VT,
    FF, NEL, U+2028, U+2029, which the cell file keeps exactly and ``hive show`` lays out
    as line breaks). A refusal names the character and its position (also as
    ``character`` and ``position`` for tools)."""
    if len(value) > limit:
        raise InvalidInput(f"{what} is too long: {len(value)} characters (at most {limit})")
    found = first_control(value, TEXT_KEPT)
    if found is not None:
        position = value.index(found) + 1
        raise InvalidInput(
            f"{what} must not contain control characters (found {code_point(found)}) at"
            f" position {position}: remove it (text may hold tabs and line breaks, no other"
            " control character)",
            character=code_point(found),
            position=position,
        )
    return value


def check_short(value: str, what: str, limit: int = MAX_SHORT) -> str:
    """A one-line value (label, name, glob): no control characters or line breaks."""
    if len(value) > limit:
        raise InvalidInput(f"{what} is too long: {len(value)} characters (at most {limit})")
    found = first_control(value)
    if found is not None:
        raise InvalidInput(
            f"{what} must be one line without control characters (found {code_point(found)})"
        )
    return value


def check_count(values: object, what: str, limit: int) -> None:
    count = len(values) if isinstance(values, list | tuple | set) else 0
    if count > limit:
        raise InvalidInput(f"too many {what}: {count} (at most {limit})")


def check_name(value: str, what: str, limit: int = MAX_SHORT) -> str:
    """A name others refer to and match exactly (a label, an assignee, a file pattern, a
    key, a thread id): a one-line value (:func:`check_short`) that also holds no
    character shown as something else or as nothing (:func:`refuse_unprintable`)."""
    check_short(value, what, limit)
    refuse_unprintable(value, what)
    return value


def refuse_unprintable(value: str, what: str, *, spaced: bool = True, **details: object) -> None:
    """InvalidInput naming the first character of ``value`` that a name may not hold
    (``hive.text.first_unprintable``: a bidirectional override, a zero-width space, a
    byte-order mark, a control character, a no-break space, a joiner outside the
    letters it joins), its code point and its position: two names that read alike would
    be different names ("Trojan Source"). ``spaced``: a plain space may stand in the
    name (a no-break space is then answered "write a plain space"). Free text (titles,
    descriptions, bodies) may hold them; it is shown with each invisible one as
    ``<U+XXXX>``."""
    found = first_unprintable(value)
    if found is not None:
        raise hidden_character(value, what, found, spaced=spaced, details=details)


def hidden_character(
    value: str,
    what: str,
    found: tuple[int, str],
    *,
    advice: str = "",
    spaced: bool = True,
    details: dict[str, object] | None = None,
) -> InvalidInput:
    """The one refusal of a name holding a character not shown as itself (``found``:
    its position from 1 and the character, as ``hive.text.first_unprintable`` gives
    them), for every kind of name, agent names included (``actors.check_actor``): the
    character and its position in the message and as ``character`` and ``position``,
    what the character is and what to write instead (``hive.text.refusal_reason``;
    ``spaced``: whether the name may hold a plain space); ``advice`` says what else the
    name may hold; ``details`` go to the error as well (a tool's ``field``)."""
    position, char = found
    kind, fix = refusal_reason(char, spaced=spaced)
    if advice:
        fix = advice if fix == "remove it" else f"{fix}; {advice}"
    return InvalidInput(
        f"invalid {what} {value!r}: {described(char)} at position {position} is {kind},"
        f" which a name may not hold (it would read as another name); {fix}",
        character=code_point(char),
        position=position,
        **(details or {}),
    )
