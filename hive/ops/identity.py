"""Agent identities (``hive agent``), described once. For people and coordinators at
a shell, not agent tools: an agent registers with ``swarmmail_init`` and is told its
name there; issuing, re-issuing and retiring credentials is a person's job."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field

from hive.domain.limits import MAX_SHORT
from hive.errors import InvalidInput, NameTaken, NotFound, NotOwner, NotYourIdentity
from hive.models.identity import IdentityInfo, Registration, RetireResult, WhoAmI
from hive.ops.spec import CLI_ONLY, REASON, Caller, Command, NoParams, Operation, Params, declare

if TYPE_CHECKING:
    from hive.domain.workspace import Workspace


class RegisterParams(Params):
    name: str | None = Field(
        default=None, max_length=MAX_SHORT, description="agent name (generated if omitted)"
    )
    task: str | None = Field(default=None, max_length=2000, description="what it works on")
    replace: bool = Field(
        default=False,
        description="re-issue the credential of a registered name (people, coordinators)",
    )


def _register(caller: Caller, a: RegisterParams) -> Registration:
    """The name defaults to the one claimed (``--actor`` / ``HIVE_AGENT``); with the
    caller's credential the registered name is taken back."""
    from hive.domain.identity import register_agent

    return register_agent(
        caller.workspace(),
        name=a.name or caller.wanted,
        task=a.task,
        token=caller.token,
        replace=a.replace,
    )


def _list(ws: Workspace, a: NoParams) -> list[IdentityInfo]:
    from hive.domain.identity import list_identities

    return list_identities(ws)


class RetireParams(Params):
    name: str = Field(min_length=1, max_length=MAX_SHORT, description="the agent to retire")
    reason: str | None = Field(default=None, max_length=5000, description=REASON)


def _retire(ws: Workspace, a: RetireParams) -> RetireResult:
    from hive.domain.identity import retire_agent

    return retire_agent(ws, name=a.name, reason=a.reason)


def _whoami(ws: Workspace, a: NoParams) -> WhoAmI:
    from hive.domain.identity import whoami

    return whoami(ws)


declare(
    Operation(
        name="agent_register",
        summary="Register an agent and issue its credential.",
        params=RegisterParams,
        result=Registration,
        session=_register,
        writes=True,
        access="anyone",
        errors=(NameTaken, NotOwner, NotYourIdentity, InvalidInput),
        surfaces=CLI_ONLY,
        commands=(Command(("agent", "register"), arguments=("name",)),),
        help="Register an agent and print its credential (export it as HIVE_AGENT_TOKEN).",
    ),
    Operation(
        name="agent_list",
        summary="Identities: live credentials, retired ones, mail-only names.",
        params=NoParams,
        result=list[IdentityInfo],
        run=_list,
        writes=False,
        surfaces=CLI_ONLY,
        commands=(Command(("agent", "list")),),
        help="Identities of this repository: live credentials, retired ones, mail-only names.",
    ),
    Operation(
        name="agent_retire",
        summary="Retire an agent's credential (the name becomes free).",
        params=RetireParams,
        result=RetireResult,
        run=_retire,
        writes=True,
        access="owner",
        errors=(NotFound, NotOwner, InvalidInput),
        surfaces=CLI_ONLY,
        commands=(Command(("agent", "retire"), arguments=("name",)),),
        help="Retire an agent's credential (coordinators and people; the name becomes free).",
    ),
    Operation(
        name="agent_whoami",
        summary="Who this process acts as.",
        params=NoParams,
        result=WhoAmI,
        run=_whoami,
        writes=False,
        errors=(NotYourIdentity,),
        surfaces=CLI_ONLY,
        commands=(Command(("agent", "whoami")),),
        help="Who this process acts as (agent by credential, or person by git identity).",
    ),
)
