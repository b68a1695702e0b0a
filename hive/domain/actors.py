"""Who acts: agent names and the fallbacks for a person (standard library only, so
the lean write path of a fresh process can use them: ``hive/cli/lean_write.py``)."""

from __future__ import annotations

import re

from hive.errors import InvalidInput

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
