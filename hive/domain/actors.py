"""Who acts: agent names and the fallbacks for a person (standard library only, so
the lean write path of a fresh process can use them: ``hive/cli/lean_write.py``)."""

from __future__ import annotations

from hive.errors import InvalidInput, NotYourIdentity

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
    (stripped names only: no line feed for ``$`` to stand before); after the first
    character also the combining marks of a word (Hindi and Malayalam vowel signs and
    viramas: UAX #31's identifier characters); and none a name may not hold
    (``hive.text.first_unprintable``: a Hangul filler is a letter shown as nothing, a
    joiner or a variation selector is allowed only in its place)."""
    if not 1 <= len(name) <= 64 or name[0] == " ":
        return False
    if name.isascii():
        return all(char.isalnum() or char in _ACTOR_MARKS or char == " " for char in name)
    if not (name[0].isalnum() or name[0] in _ACTOR_MARKS):
        return False
    from hive.text import first_unprintable

    return first_unprintable(name) is None and all(map(_word_char, name))


def _word_char(char: str) -> bool:
    """A character of an agent name that is not ASCII: a letter or digit, a combining
    mark or a joiner (where marks and joiners stand is
    :func:`hive.text.first_unprintable`'s to judge)."""
    import unicodedata

    if char.isalnum() or char in _ACTOR_MARKS or char in " \u200c\u200d":
        return True
    return unicodedata.category(char) in ("Mn", "Mc")


_ASCII_SPACE = " \t\n\r\v\f"  # trimmed from an agent name's ends (``$(cat file)``)


def check_actor(name: str) -> str:
    """The agent name ``name`` with plain spaces and line breaks trimmed from its ends;
    InvalidInput for a name that is no agent name. Any other space (a no-break space,
    U+2003) is refused at the ends as inside, not stripped: ``str.strip`` dropped it,
    so a name that reads as another one was taken as that one."""
    cleaned = name.strip(_ASCII_SPACE)
    if not _actor_name_ok(cleaned):
        from hive.text import first_unprintable

        advice = "use letters, digits, spaces and . _ @ + - (max 64)"
        hidden = first_unprintable(name)
        if hidden is not None:  # named: it cannot be seen in the name as printed
            from hive.domain.limits import hidden_character

            raise hidden_character(name, "agent name", hidden, advice=advice)
        raise InvalidInput(f"invalid agent name {name!r}: {advice}")
    return cleaned


def unknown_credential() -> NotYourIdentity:
    """``HIVE_AGENT_TOKEN`` names no registered agent of this repository."""
    return NotYourIdentity(
        "HIVE_AGENT_TOKEN is not the credential of any agent registered in this"
        " repository (retired or replaced?): unset it, and register the agent again"
        " ('hive agent register NAME' prints its new credential)"
    )


def check_claim(claim: str | None, name: str, *, by_token: bool) -> None:
    """A name claimed (``--actor`` / ``HIVE_AGENT``) must be who acts: ``name``, the agent
    of the credential (``by_token``) or else the person of git's identity.
    NotYourIdentity otherwise (InvalidInput for a claim that is no agent name); the
    full and the lean command-line paths word it alike."""
    if not claim or check_actor(claim) == name:
        return
    if by_token:
        raise NotYourIdentity(
            f"you are {name} (by HIVE_AGENT_TOKEN), not {claim}", claimed=claim, agent=name
        )
    from hive.text import shell_word

    raise NotYourIdentity(
        f"acting as {claim} needs its credential: set HIVE_AGENT_TOKEN (issued by"
        f" 'hive agent register {shell_word(claim)}'); without one you act as yourself"
        f" ({name}): unset HIVE_AGENT / --actor",
        claimed=claim,
    )


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
