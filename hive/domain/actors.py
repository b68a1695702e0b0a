"""Who acts: agent names and the fallbacks for a person (standard library only, so
the lean write path of a fresh process can use them: ``hive/cli/lean_write.py``)."""

from __future__ import annotations

import re

from hive.errors import InvalidInput

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from typing import Protocol

    class Acting(Protocol):
        """Who acts, as a commit names it (the model's ``Principal`` or the lean one)."""

        @property
        def name(self) -> str: ...

        @property
        def kind(self) -> str: ...


_ACTOR_RE = re.compile(r"^[\w.@+-][\w .@+-]{0,63}$")


def check_actor(name: str) -> str:
    cleaned = name.strip()
    if not _ACTOR_RE.match(cleaned):
        raise InvalidInput(
            f"invalid agent name {name!r}: use letters, digits, spaces and . _ @ + - (max 64)"
        )
    return cleaned


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9.+-]+", ".", name.lower()).strip(".") or "agent"


def os_user() -> str | None:
    try:
        import getpass

        return getpass.getuser()
    except (KeyError, OSError):
        return None


def event_trailers(principal: Acting, event: str) -> list[tuple[str, str]]:
    """``Hive-Agent`` and ``Hive-Event`` (+ ``Hive-Identity`` for non-agents): the
    trailers of every commit ``principal`` makes, on the full and the lean path."""
    found = [("Hive-Agent", principal.name), ("Hive-Event", event)]
    if principal.kind != "agent":
        found.append(("Hive-Identity", principal.kind))
    return found
