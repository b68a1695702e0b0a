"""Who is acting: principals, registrations, overrides and the audit of hive commits."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from hive.models.base import HiveModel, Time, without_none
from hive.models.mail import Agent
from hive.models.principal import Principal as Principal
from hive.models.principal import PrincipalKind as PrincipalKind


class Registration(Agent):
    """What registering returns: the agent, and its credential when one was issued.

    ``token`` is shown once, to the caller that registered: the repository only
    keeps its hash. It is None when the caller proved an existing credential.
    """

    token: str | None = None
    reattached: bool = False


class Credential(HiveModel):
    """A freshly issued credential (for runners: pass it as ``HIVE_AGENT_TOKEN``)."""

    name: str
    token: str
    env: dict[str, str] = Field(default_factory=dict)


class IdentityInfo(HiveModel):
    """One identity known to this repository (``hive agent list``)."""

    name: str
    credential: bool  # a live credential exists in this clone
    registered_at: Time | None = None
    session: str | None = None
    registered_by: str | None = None
    task: str | None = None
    coordinator: bool = False
    retired_at: Time | None = None
    retired_by: str | None = None


class WhoAmI(HiveModel):
    name: str
    kind: PrincipalKind
    coordinator: bool = False
    registered: bool = False
    may_override: bool = False


class RetireResult(HiveModel):
    name: str
    retired_by: str
    reason: str
    retired_at: Time
    released: list[str] = Field(default_factory=list)  # its reservations, "#id pattern"
    reopened: list[str] = Field(default_factory=list)  # cells it had claimed, open again


class Override(HiveModel):
    """An ownership rule set aside by a coordinator or a person, with their reason."""

    by: str
    role: Literal["coordinator", "person"]
    action: str
    target: str
    owner: str
    reason: str

    def trailer(self) -> str:
        whose = "" if self.owner == self.target else f" of {self.owner}"
        text = f"{self.by} ({self.role}) {self.action} {self.target}{whose}: {self.reason}"
        return " ".join(text.split())[:500]


class AuditEntry(HiveModel):
    """A hive commit (or mail event) ``hive log --overrides`` reports."""

    commit: str
    time: int
    author: str
    subject: str
    agent: str | None = None
    kind: Literal["override", "unregistered", "author-mismatch"]
    detail: str
    ref: str = "HEAD"


class MailInit(Registration):
    """What ``swarmmail_init`` returns: the registration under the seed's name
    (``agent_name``); ``token`` and ``credential`` (how to act as it from a shell)
    only when this caller was issued the credential."""

    agent_name: str
    credential: str | None = None

    @model_serializer(mode="wrap")
    def _issued_only(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """No ``token`` or ``credential`` keys when none was issued to this caller."""
        return without_none(handler(self), ("token", "credential"))
