"""Who acts in a workspace: the principal resolved from a credential or a claim (what
a commit says about it, author and trailers: ``hive/domain/actors.py``).

A :class:`~hive.domain.workspace.Workspace` keeps the claim, the token and the
resolved principal; these functions do the resolving, with no state of their own.
"""

from __future__ import annotations

from hive.domain.actors import check_actor, os_user
from hive.errors import NotRegistered, NotYourIdentity
from hive.git.repo import GitRepo
from hive.models.principal import Principal
from hive.store import credentials
from hive.text import shell_word


def person_name(git: GitRepo) -> str:
    """A person's name: their git identity, else the OS user."""
    identity = git.config_identity()
    return identity.name if identity else (os_user() or "unknown")


def resolve_principal(git: GitRepo, *, token: str | None, claim: str | None) -> Principal:
    """A credential (``token``) makes the caller that agent; a name claimed without one
    is refused unless it is the git user's own; with neither the caller is a person."""
    if token:
        name = credentials.name_of_token(git.paths.hive_state_dir, token)
        if name is None:
            raise NotYourIdentity(
                "HIVE_AGENT_TOKEN is not the credential of any agent registered in this"
                " repository (retired or replaced?); register again with"
                " 'hive agent register NAME'"
            )
        if claim and check_actor(claim) != name:
            raise NotYourIdentity(
                f"you are {name} (by HIVE_AGENT_TOKEN), not {claim}",
                claimed=claim,
                agent=name,
            )
        return Principal(name, "agent")
    person = person_name(git)
    if claim and check_actor(claim) != person:
        raise NotYourIdentity(
            f"acting as {claim} needs its credential: set HIVE_AGENT_TOKEN (issued by"
            f" 'hive agent register {shell_word(claim)}'); without one you act as yourself"
            f" ({person}): unset HIVE_AGENT / --actor",
            claimed=claim,
        )
    return Principal(person, "person")


def agent_name(principal: Principal, action: str) -> str:
    """The principal's name, when it may act as an agent (claim, reserve, use mail)."""
    if principal.kind == "unregistered":
        raise NotRegistered(
            f"{action} needs a registered agent: call swarmmail_init first (or start"
            " the server with --agent NAME, or with HIVE_AGENT_TOKEN set)"
        )
    return principal.name
