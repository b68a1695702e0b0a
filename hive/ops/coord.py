"""Swarm mail and file reservations, described once (CLI commands and agent tools
are generated from these descriptions)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field, field_validator

from hive.errors import (
    AmbiguousId,
    InvalidInput,
    NameTaken,
    NotFound,
    NotOwner,
    NotRegistered,
    NotYourIdentity,
    PermissionDenied,
    ReservationConflict,
)
from hive.models.identity import MailInit, Registration
from hive.models.mail import AckResult, Message, MessageHeader, SendResult
from hive.models.reservation import (
    ReleaseResult,
    Reservation,
    ReservationSummary,
    ReserveResult,
)
from hive.ops.spec import (
    OVERRIDE,
    Caller,
    Command,
    Glob,
    Operation,
    Params,
    Short,
    cli_help_only,
    declare,
)
from hive.text import shell_word

if TYPE_CHECKING:
    from hive.domain.workspace import Workspace

MAX_INBOX = 5
OVERRIDES = {"force": ("--force",)}


# ------------------------------------------------------------------ mail


class MailInitParams(Params):
    project_path: str | None = Field(default=None, max_length=4096)
    agent_name: Short | None = Field(
        default=None, description="generated if omitted", json_schema_extra=cli_help_only
    )
    task_description: str | None = Field(
        default=None, max_length=2000, description="your current task (replaces the last one)"
    )


def _mail_init(caller: Caller, a: MailInitParams) -> MailInit:
    """Register, then act as the returned name for the rest of this session. A session
    keeps the identity it registered: asking for another name is not_your_identity.
    Without a session (the command line) the name is taken back with its credential
    (``HIVE_AGENT_TOKEN``) or registered anew."""
    from hive.domain.identity import mail_init
    from hive.domain.swarm.complete import check_project_path

    check_project_path(caller.root, a.project_path, field="project_path")
    if caller.agent is not None:
        agent = _bound_again(caller, a)
    else:
        agent = mail_init(
            caller.workspace(),
            agent_name=a.agent_name or caller.wanted,
            task_description=a.task_description,
            session=caller.session,
            token=caller.token,
            from_tool=caller.from_tool,
        )
    if agent.token:
        caller.bind(agent.name, agent.token, issued=True)
    shown = agent.model_dump(exclude={"token"})
    if not (caller.issued and caller.token):
        return MailInit(agent_name=agent.name, **shown)
    return MailInit(
        agent_name=agent.name,
        **shown,
        token=caller.token,
        credential=f"this session acts as {agent.name}; to act as it from a shell (hive CLI,"
        f" git commit) export HIVE_AGENT={shell_word(agent.name)} HIVE_AGENT_TOKEN=<token>",
    )


def _bound_again(caller: Caller, a: MailInitParams) -> Registration:
    """``swarmmail_init`` in a session already bound to an identity: that identity."""
    from hive.domain.identity import mail_init
    from hive.domain.mail import list_agents

    assert caller.agent is not None
    if a.agent_name and a.agent_name.strip() != caller.agent:
        raise NotYourIdentity(
            f"this session is {caller.agent}: its identity is fixed by its registration;"
            f" start another session to act as {a.agent_name}",
            agent=caller.agent,
        )
    try:
        return mail_init(
            caller.workspace(),
            agent_name=caller.agent,
            task_description=a.task_description,
            session=caller.session,
            token=caller.token,
        )
    except NameTaken:  # in-process code bound a name without its credential
        known = next(x for x in list_agents(caller.workspace()) if x.name == caller.agent)
        return Registration(**known.model_dump())


class SendParams(Params):
    to: list[str] = Field(
        default_factory=list,
        max_length=64,
        description="recipients",
        json_schema_extra=cli_help_only,
    )
    subject: str = Field(min_length=1, max_length=200)
    body: str = Field(default="", max_length=65_536)
    thread_id: str | None = Field(default=None, description="cell or epic id")
    importance: Literal["low", "normal", "high", "urgent"] = "normal"
    ack_required: bool = False


def _send(ws: Workspace, a: SendParams) -> SendResult:
    from hive.domain.mail import send_message

    return send_message(
        ws,
        to=a.to,
        subject=a.subject,
        body=a.body,
        thread_id=a.thread_id,
        importance=a.importance,
        ack_required=a.ack_required,
    )


class InboxParams(Params):
    limit: int = Field(
        default=MAX_INBOX, ge=1, description="capped at 5", json_schema_extra=cli_help_only
    )
    urgent_only: bool = False
    unread_only: bool = False
    agent: Short | None = Field(default=None, description="another's inbox: " + OVERRIDE)
    force: bool = False
    reason: str | None = Field(default=None, max_length=5000)

    @field_validator("limit")
    @classmethod
    def _cap(cls, value: int) -> int:
        return min(value, MAX_INBOX)


def _inbox(ws: Workspace, a: InboxParams) -> list[MessageHeader]:
    from hive.domain.mail import inbox

    return inbox(
        ws,
        limit=a.limit,
        urgent_only=a.urgent_only,
        unread_only=a.unread_only,
        agent=a.agent,
        force=a.force,
        reason=a.reason,
    )


class MessageParams(Params):
    message_id: int = Field(ge=1)


class ReadParams(MessageParams):
    force: bool = Field(default=False, description=OVERRIDE)
    reason: str | None = Field(default=None, max_length=5000)


def _read(ws: Workspace, a: ReadParams) -> Message:
    from hive.domain.mail import read_message

    return read_message(ws, message_id=a.message_id, force=a.force, reason=a.reason)


def _ack(ws: Workspace, a: MessageParams) -> AckResult:
    from hive.domain.mail import ack_message

    return ack_message(ws, message_id=a.message_id)


# ------------------------------------------------------------------ reservations


class ReserveParams(Params):
    paths: list[Glob] = Field(min_length=1, max_length=200, description="paths or globs")
    reason: str | None = Field(default=None, max_length=500)
    exclusive: bool = Field(default=True, description="exclusive (write) or shared (read)")
    ttl_seconds: int = Field(
        default=3600, ge=1, le=7 * 24 * 3600, description="seconds", json_schema_extra=cli_help_only
    )
    cell: str | None = Field(
        default=None, description="the cell this work is for", json_schema_extra=cli_help_only
    )
    force: bool = Field(default=False, description=OVERRIDE)


def _reserve(ws: Workspace, a: ReserveParams) -> ReserveResult:
    from hive.domain.reservations import reserve

    return reserve(
        ws,
        paths=a.paths,
        reason=a.reason,
        exclusive=a.exclusive,
        ttl_seconds=a.ttl_seconds,
        cell=a.cell,
        force=a.force,
    )


class ReleaseParams(Params):
    paths: list[Glob] | None = Field(default=None, max_length=200)
    reservation_ids: list[int] | None = Field(default=None, max_length=200)
    all: bool = Field(
        default=False,
        description="all yours (also when none given)",
        json_schema_extra=cli_help_only,
    )
    agent: Short | None = Field(default=None, description="another holder: " + OVERRIDE)
    force: bool = False
    reason: str | None = Field(default=None, max_length=5000)


def _release(ws: Workspace, a: ReleaseParams) -> ReleaseResult:
    from hive.domain.reservations import release

    return release(
        ws,
        paths=None if a.all else a.paths or None,
        reservation_ids=None if a.all else a.reservation_ids or None,
        agent=a.agent,
        force=a.force,
        reason=a.reason,
    )


class ReservationsParams(Params):
    agent: Short | None = Field(default=None, description="only this agent's")
    include_expired: bool = False
    verbose: bool = Field(default=False, description="whole records (reason, created_at, ...)")


def _reservations(
    ws: Workspace, a: ReservationsParams
) -> list[Reservation] | list[ReservationSummary]:
    from hive.domain.reservations import list_reservations

    found = list_reservations(ws, agent=a.agent, include_expired=a.include_expired)
    return found if a.verbose else [ReservationSummary.of(item) for item in found]


MESSAGE_ID = ("message_id",)


def numbered(given: str | list[str]) -> str | list[str]:
    """A message or reservation number as hive prints it (``#12``) or bare (``12``)."""
    if isinstance(given, list):
        return [str(item).strip().removeprefix("#") for item in given]
    return str(given).strip().removeprefix("#")


NUMBERED = {"message_id": numbered}
MAIL_ERRORS = (NotFound, NotOwner, NotRegistered)

declare(
    Operation(
        name="swarmmail_init",
        summary="Register as an agent (same session: same name).",
        params=MailInitParams,
        result=MailInit,
        session=_mail_init,
        writes=True,
        errors=(NameTaken, NotYourIdentity, NotOwner, InvalidInput),
        commands=(
            Command(
                ("mail", "init"),
                short={"agent_name": ("--name",), "task_description": ("--task",)},
            ),
        ),
        help="Register as an agent (the same as 'hive agent register'; the name defaults to"
        " --actor / HIVE_AGENT). Prints the credential to export as HIVE_AGENT_TOKEN. With"
        " HIVE_AGENT_TOKEN set, the name it proves is taken back instead (another name"
        " given is registered anew, as a coordinator registers its workers).",
    ),
    Operation(
        name="swarmmail_send",
        summary="Send a message; an epic thread reaches its workers.",
        params=SendParams,
        result=SendResult,
        run=_send,
        writes=True,
        access="agent",
        errors=(*MAIL_ERRORS, InvalidInput),
        commands=(
            Command(
                ("mail", "send"),
                arguments=("to",),
                short={"subject": ("-s",), "body": ("-b",), "thread_id": ("--thread",)},
                argument_options={"to": ("--to",)},
            ),
        ),
        help="Send a message to agents (a message on an epic thread reaches its workers)."
        "\n\nTO is optional with --thread (--to NAME works too); --body - reads the body"
        " from standard input.",
    ),
    Operation(
        name="swarmmail_inbox",
        summary="Newest messages, headers only (max 5).",
        params=InboxParams,
        result=list[MessageHeader],
        run=_inbox,
        writes=False,
        access="agent",
        errors=(*MAIL_ERRORS, PermissionDenied),
        commands=(
            Command(
                ("mail", "inbox"),
                short={
                    "limit": ("-n",),
                    "urgent_only": ("--urgent",),
                    "unread_only": ("--unread",),
                },
            ),
        ),
        help="Newest messages first (headers only; at most 5: when the inbox holds more,"
        " stderr says how many, with --json too).",
    ),
    Operation(
        name="swarmmail_read_message",
        summary="Read one message (marks it read).",
        params=ReadParams,
        result=Message,
        run=_read,
        writes=True,
        access="owner",
        errors=MAIL_ERRORS,
        commands=(Command(("mail", "read"), arguments=MESSAGE_ID),),
        parsers=NUMBERED,
        help="Show one message with its body (marks it read).\n\nAnother agent's message"
        " needs --force (people; coordinators also give --reason; recorded).",
    ),
    Operation(
        name="swarmmail_ack",
        summary="Acknowledge a message.",
        params=MessageParams,
        result=AckResult,
        run=_ack,
        writes=True,
        access="owner",
        errors=MAIL_ERRORS,
        commands=(Command(("mail", "ack"), arguments=MESSAGE_ID),),
        parsers=NUMBERED,
    ),
    Operation(
        name="swarmmail_reserve",
        summary="Reserve files; refused if another agent holds them.",
        params=ReserveParams,
        result=ReserveResult,
        run=_reserve,
        writes=True,
        access="registered",
        errors=(ReservationConflict, InvalidInput, NotRegistered, PermissionDenied),
        # no ``paths``: a pattern is checked by the reservation itself (a pattern that
        # merely could contain denied files is granted: path_rules.pattern_only_denied)
        commands=(
            Command(
                ("reserve",),
                arguments=("paths",),
                short={"exclusive": ("--shared",), "ttl_seconds": ("--ttl",)},
                help="Reserve files before editing them (refused on conflict).\n\nRelative"
                " patterns are relative to the current directory, as in git.",
            ),
        ),
    ),
    Operation(
        name="swarmmail_release",
        summary="Release reservations (none given: all yours).",
        params=ReleaseParams,
        result=ReleaseResult,
        run=_release,
        writes=True,
        access="owner",
        errors=(NotFound, AmbiguousId, NotOwner, NotRegistered),
        commands=(
            Command(
                ("release",),
                arguments=("paths",),
                short={"reservation_ids": ("--id",)},
                help="Release your reservations (given patterns/ids, or --all).",
                helps={"all": "all yours"},
            ),
        ),
        parsers={"reservation_ids": numbered},
    ),
    Operation(
        name="swarmmail_reservations",
        summary="Active reservations.",
        params=ReservationsParams,
        result=list[Reservation] | list[ReservationSummary],
        run=_reservations,
        writes=False,
        errors=(InvalidInput,),
        commands=(
            Command(
                ("reservations",),
                short={"include_expired": ("--expired",)},
                helps={"include_expired": "also those past their expiry, still in their files"},
            ),
        ),
    ),
)
