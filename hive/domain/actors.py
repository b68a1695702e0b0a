"""Who acts: agent names and the fallbacks for a person (standard library only, so
the lean write path of a fresh process can use them: ``hive/cli/lean_write.py``)."""

from __future__ import annotations

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

    from hive.git.repo import GitRepo, Identity


_ACTOR_MARKS = frozenset(".@+-_")  # beside letters and digits (``\\w``); a space inside
_SLUG_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789.+-")


def _actor_name_ok(name: str) -> bool:
    """``^[\\w.@+-][\\w .@+-]{0,63}$`` (``\\w``: ``str.isalnum`` or ``_``), without ``re``
    (stripped names only: no line feed for ``$`` to stand before)."""
    if not 1 <= len(name) <= 64 or name[0] == " ":
        return False
    return all(char.isalnum() or char in _ACTOR_MARKS or char == " " for char in name)


def check_actor(name: str) -> str:
    cleaned = name.strip()
    if not _actor_name_ok(cleaned):
        from hive.text import first_unprintable

        advice = "use letters, digits, spaces and . _ @ + - (max 64)"
        hidden = first_unprintable(name)
        if hidden is not None:  # named: it cannot be seen in the name as printed
            from hive.domain.limits import hidden_character

            raise hidden_character(name, "agent name", hidden, advice)
        raise InvalidInput(f"invalid agent name {name!r}: {advice}")
    return cleaned


def slug(name: str) -> str:
    """``name`` lower-cased, each run of characters other than ``a-z0-9.+-`` made one
    dot, without dots at either end (``re.sub(r"[^a-z0-9.+-]+", ".", ...)``)."""
    out: list[str] = []
    for char in name.lower():
        if char in _SLUG_CHARS:
            out.append(char)
        elif not out or out[-1] != "\0":
            out.append("\0")  # one mark per run (NUL is never a slug character)
    return "".join(out).replace("\0", ".").strip(".") or "agent"


def commit_identity(git: GitRepo, principal: Acting) -> Identity:
    """Author and committer of the principal's commits, on the full and the lean path:
    a person's as git would make them (``GitRepo.person_identity``; where git knows none,
    the fields git's settings give and the person's name at ``hive.local``), an agent's
    name at ``hive.local``."""
    from hive.git.repo import Identity

    person = principal.name
    if principal.kind == "person":

        def made_up(name: str | None, email: str | None) -> Identity:
            name = name or person
            return Identity(name=name, email=email or f"{slug(name)}@hive.local")

        return git.person_identity(made_up)
    return Identity(name=person, email=f"{slug(person)}@hive.local")


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
