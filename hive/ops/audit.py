"""Reviewing what agents did, described once: the arbiter's side of file-write
proposals (``hive proposals``) and the tool-call event log (``hive events``). For
people and coordinators at a shell, not agent tools: an agent proposes writes with
``fs_write`` and is not its own arbiter, and the log is an audit of agents."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field, ValidationError

from hive.domain.files import Proposal
from hive.errors import Conflict, InvalidInput, NotOwner
from hive.models.audit import Decided, Event
from hive.ops.spec import CLI_ONLY, Command, Operation, Params, declare

if TYPE_CHECKING:
    from hive.domain.workspace import Workspace

ProposalStatus = Literal["pending", "approved", "rejected", "applied", "failed"]


class ProposalsParams(Params):
    status: ProposalStatus | None = None


def _proposals(ws: Workspace, a: ProposalsParams) -> list[Proposal]:
    from hive.domain.files import list_proposals

    return list_proposals(ws.git.paths.hive_state_dir, a.status)


class DecideParams(Params):
    decisions: str = Field(
        min_length=1,
        max_length=10_000_000,
        description='the arbiter\'s {"decisions": [{"path", "action", "notes"}]} (JSON)',
    )
    allow_write: bool = Field(default=False, description="write approved proposals to disk")


def _decide(ws: Workspace, a: DecideParams) -> list[Decided]:
    """Apply the decisions (a coordinator's or a person's: an agent does not arbitrate
    writes); an approved write is checked again against the proposing agent's fs_write
    permissions. A decision naming no pending proposal is reported
    (``no_pending_proposal``), not raised: the others still apply."""
    from hive.domain.agents import write_check
    from hive.domain.files import decide
    from hive.domain.ownership import require_override_role

    require_override_role(
        ws,
        ws.actor,
        action="decide file-write proposals (an agent is not its own arbiter: ask one"
        " to run 'hive proposals decide')",
    )
    state_dir = ws.git.paths.hive_state_dir
    report = decide(
        ws.root, state_dir, a.decisions, allow_write=a.allow_write, check=write_check(ws)
    )
    return [Decided.model_validate(entry) for entry in report]


class EventsParams(Params):
    limit: int = Field(default=20, ge=1, le=1_000_000, description="the newest N")


def as_events(raw: list[dict[str, object]]) -> list[Event]:
    """Log lines as events (a line whose known keys have unexpected types is kept
    as written)."""
    found = []
    for line in raw:
        try:
            found.append(Event.model_validate(line))
        except ValidationError:
            found.append(Event.model_construct(**line))  # type: ignore[arg-type]
    return found


def _events(ws: Workspace, a: EventsParams) -> list[Event]:
    from hive.domain.events import read_events

    return as_events(read_events(ws.git.paths.hive_state_dir, a.limit))


declare(
    Operation(
        name="proposals_list",
        summary="Queued file writes (fs_write proposals).",
        params=ProposalsParams,
        result=list[Proposal],
        run=_proposals,
        writes=False,
        surfaces=CLI_ONLY,
        commands=(Command(("proposals", "list")),),
        help="Queued file writes.",
    ),
    Operation(
        name="proposals_decide",
        summary="Apply an arbiter's decisions to pending proposals.",
        params=DecideParams,
        result=list[Decided],
        run=_decide,
        writes=True,
        errors=(InvalidInput, Conflict, NotOwner),
        surfaces=CLI_ONLY,
        commands=(
            Command(("proposals", "decide"), arguments=("decisions",), defaults={"decisions": "-"}),
        ),
        help='Apply an arbiter\'s {"decisions": [...]} to pending proposals (exit 3 when a'
        " decision names no pending proposal, 1 when an approved write could not be"
        " applied). An approved proposal decided again with --allow-write is"
        " written. The arbiter is a person or a coordinator: an agent is not its own"
        " (exit 5).\n\nDECISIONS is a file with the JSON, or '-' for standard input.",
    ),
    Operation(
        name="events",
        summary="The tool-call event log, newest last.",
        params=EventsParams,
        result=list[Event],
        run=_events,
        writes=False,
        surfaces=CLI_ONLY,
        commands=(Command(("events",), short={"limit": ("-n",)}),),
        help="The event log of agents' tool calls (agent, tool, args digest, duration,"
        " outcome, hooks); an agent's command that ran its policy is marked (cli)."
        "\n\nReads only the end of the log; --follow reads only the bytes appended since."
        " --json prints the events as the log keeps them: one JSON list ([] for an empty"
        " log, which is otherwise said in words), or with --follow JSON lines, one event"
        " per line, as they come.",
    ),
)
