"""Who acts in a workspace: the principal resolved from a credential or a claim (what
a commit says about it, author and trailers: ``hive/domain/actors.py``).

A :class:`~hive.domain.workspace.Workspace` keeps the claim, the token and the
resolved principal; these functions do the resolving, with no state of their own.
"""

from __future__ import annotations

from hive.domain.actors import check_claim, os_user, unknown_credential
from hive.errors import NotRegistered
from hive.git.repo import GitRepo
from hive.models.principal import Principal
from hive.store import credentials


def person_name(git: GitRepo) -> str:
    """A person's name: their git ``user.name``, else the OS user."""
    name = git.config_value("user", "name")
    return name if name is not None else (os_user() or "unknown")


def resolve_principal(git: GitRepo, *, token: str | None, claim: str | None) -> Principal:
    """A credential (``token``) makes the caller that agent; a name claimed without one
    is refused unless it is the git user's own; with neither the caller is a person."""
    if token:
        name = credentials.name_of_token(git.paths.hive_state_dir, token)
        if name is None:
            raise unknown_credential()
        check_claim(claim, name, by_token=True)
        return Principal(name, "agent")
    person = person_name(git)
    check_claim(claim, person, by_token=False)
    return Principal(person, "person")


def agent_name(principal: Principal, action: str) -> str:
    """The principal's name, when it may act as an agent (claim, reserve, use mail)."""
    if principal.kind == "unregistered":
        raise NotRegistered(
            f"{action} needs a registered agent: call swarmmail_init first (or start"
            " the server with --agent NAME, or with HIVE_AGENT_TOKEN set)"
        )
    return principal.name
