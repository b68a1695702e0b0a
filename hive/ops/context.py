"""Seed 000's shared context (``ctx_*``) and coordinator queue (``coord_*``),
described once: the ``hive ctx`` / ``hive queue`` commands and the agent tools are
generated from these descriptions."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, JsonValue

from hive.errors import Conflict, InvalidInput, NotFound, NotOwner
from hive.models.coordination import (
    Claimed,
    Completed,
    CtxEntry,
    CtxKeys,
    CtxPut,
    CtxRefused,
    CtxValue,
    CtxWait,
    Enqueued,
    Extended,
    QueueNext,
    QueueRecord,
    QueueStatus,
)
from hive.ops.spec import CLI_ONLY, Command, NoParams, Operation, Params, cli_help_only, declare

if TYPE_CHECKING:
    from hive.domain.workspace import Workspace

Key: Any = Field(min_length=1, max_length=256)
Lease: Any = Field(
    default=180, ge=1, le=7 * 86_400, description="lease seconds", json_schema_extra=cli_help_only
)


def json_or_text(text: Any) -> Any:
    """A command-line value: JSON when it parses, else the text itself."""
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return text


class CtxPutParams(Params):
    key: str = Key
    value: JsonValue = Field(description="JSON (text on the command line is stored as is)")
    mode: Literal["set", "if_absent", "if_version"] = "set"
    expected_version: int | None = Field(default=None, ge=0, description="for if_version")


def _ctx_put(ws: Workspace, a: CtxPutParams) -> CtxPut | CtxRefused:
    from hive.domain.context import ctx_put

    return ctx_put(ws, key=a.key, value=a.value, mode=a.mode, expected_version=a.expected_version)


class CtxKeyParams(Params):
    key: str = Key


def _ctx_get(ws: Workspace, a: CtxKeyParams) -> CtxValue:
    from hive.domain.context import ctx_get

    return ctx_get(ws, key=a.key)


class CtxKeysParams(Params):
    prefix: str | None = Field(default=None, max_length=256)


def _ctx_keys(ws: Workspace, a: CtxKeysParams) -> CtxKeys:
    from hive.domain.context import ctx_keys

    return ctx_keys(ws, prefix=a.prefix)


class CtxWaitParams(Params):
    key: str = Key
    equals: JsonValue = None
    at_least: float | None = None
    min_version: int | None = Field(default=None, ge=1)
    timeout_sec: float = Field(default=30, ge=0, le=300, description="0: test only")


def _ctx_wait(ws: Workspace, a: CtxWaitParams) -> CtxWait:
    from hive.domain.context import ctx_wait

    return ctx_wait(
        ws,
        key=a.key,
        equals=a.equals,
        at_least=a.at_least,
        min_version=a.min_version,
        timeout_sec=a.timeout_sec,
    )


class EnqueueParams(Params):
    kind: str = Key
    payload: dict[str, JsonValue] = Field(
        description="a JSON object", json_schema_extra=cli_help_only
    )


def _enqueue(ws: Workspace, a: EnqueueParams) -> Enqueued:
    from hive.domain.queue import enqueue

    return enqueue(ws, kind=a.kind, payload=a.payload)


class NextParams(Params):
    lease_sec: float = Lease


def _next(ws: Workspace, a: NextParams) -> QueueNext:
    from hive.domain.queue import next_item

    return next_item(ws, lease_sec=a.lease_sec)


class ClaimParams(Params):
    id: str = Key
    lease_sec: float = Lease


def _claim(ws: Workspace, a: ClaimParams) -> Claimed:
    from hive.domain.queue import claim

    return claim(ws, id=a.id, lease_sec=a.lease_sec)


class CompleteItemParams(Params):
    id: str = Key
    result: JsonValue = None


def _complete(ws: Workspace, a: CompleteItemParams) -> Completed:
    from hive.domain.queue import complete

    return complete(ws, id=a.id, result=a.result)


class ExtendParams(Params):
    id: str = Key
    extend_sec: float = Field(ge=1, le=7 * 86_400)


def _extend(ws: Workspace, a: ExtendParams) -> Extended:
    from hive.domain.queue import extend

    return extend(ws, id=a.id, extend_sec=a.extend_sec)


def _status(ws: Workspace, a: NoParams) -> QueueStatus:
    from hive.domain.queue import status

    return status(ws)


def _ctx_list(ws: Workspace, a: CtxKeysParams) -> list[CtxEntry]:
    from hive.domain.context import ctx_entries

    return ctx_entries(ws, prefix=a.prefix)


def _ctx_delete(ws: Workspace, a: CtxKeyParams) -> CtxValue:
    from hive.domain.context import ctx_delete

    return ctx_delete(ws, key=a.key)


class PhaseParams(Params):
    number: int | None = Field(default=None, ge=0, description="set the phase (orchestrators)")


def _ctx_phase(ws: Workspace, a: PhaseParams) -> CtxValue:
    from hive.domain.context import PHASE_KEY, ctx_get, ctx_put

    if a.number is not None:
        ctx_put(ws, key=PHASE_KEY, value=a.number)
    return ctx_get(ws, key=PHASE_KEY)


class QueueListParams(Params):
    status: Literal["queued", "claimed", "done"] | None = None
    limit: int = Field(default=100, ge=1, le=10_000)


def _queue_list(ws: Workspace, a: QueueListParams) -> list[QueueRecord]:
    from hive.domain.queue import list_items

    return list_items(ws, status=a.status, limit=a.limit)


LEASE = {"lease_sec": ("--lease",)}
ITEM = (NotFound, Conflict)

declare(
    Operation(
        name="ctx_put",
        summary="Set a shared-context value (mode if_version: compare-and-swap).",
        params=CtxPutParams,
        result=CtxPut | CtxRefused,
        run=_ctx_put,
        writes=True,
        errors=(InvalidInput, NotOwner),
        parsers={"value": json_or_text},
        commands=(Command(("ctx", "put"), arguments=("key", "value")),),
        help="Store a value; exits 4 when a compare-and-swap (if_absent/if_version) loses.",
    ),
    Operation(
        name="ctx_get",
        summary="Get a shared-context value and its version.",
        params=CtxKeyParams,
        result=CtxValue,
        run=_ctx_get,
        writes=False,
        errors=(InvalidInput,),
        commands=(Command(("ctx", "get"), arguments=("key",)),),
        help="Print a value and its version (version 0: not set).",
    ),
    Operation(
        name="ctx_keys",
        summary="List shared-context keys.",
        params=CtxKeysParams,
        result=CtxKeys,
        run=_ctx_keys,
        writes=False,
        commands=(Command(("ctx", "keys"), arguments=("prefix",)),),
        help="List keys (starting with PREFIX).",
    ),
    Operation(
        name="ctx_wait",
        summary="Wait until a key equals / reaches at_least (e.g. phase).",
        params=CtxWaitParams,
        result=CtxWait,
        run=_ctx_wait,
        writes=False,
        errors=(InvalidInput,),
        parsers={"equals": json_or_text},
        commands=(
            Command(("ctx", "wait"), arguments=("key",), short={"timeout_sec": ("--timeout",)}),
        ),
        help="Wait until KEY equals a value or reaches a number (exit 1 on timeout).",
    ),
    Operation(
        name="coord_enqueue",
        summary="Queue a work item.",
        params=EnqueueParams,
        result=Enqueued,
        run=_enqueue,
        writes=True,
        errors=(InvalidInput,),
        parsers={"payload": json_or_text},
        commands=(
            Command(("queue", "add"), arguments=("kind", "payload"), defaults={"payload": {}}),
        ),
        help="Enqueue a work item.",
    ),
    Operation(
        name="coord_next",
        summary="Lease the next queued item (FIFO).",
        params=NextParams,
        result=QueueNext,
        run=_next,
        writes=True,
        commands=(Command(("queue", "next"), short=LEASE),),
        help="Lease the next item (FIFO); exit 1 when the queue is empty.",
    ),
    Operation(
        name="coord_claim",
        summary="Lease a queue item by id.",
        params=ClaimParams,
        result=Claimed,
        run=_claim,
        writes=True,
        errors=ITEM,
        commands=(Command(("queue", "claim"), arguments=("id",), short=LEASE),),
        help="Lease one item by id.",
    ),
    Operation(
        name="coord_complete",
        summary="Mark a queue item done.",
        params=CompleteItemParams,
        result=Completed,
        run=_complete,
        writes=True,
        errors=ITEM,
        parsers={"result": json_or_text},
        commands=(Command(("queue", "complete"), arguments=("id", "result")),),
        help="Mark an item done.",
    ),
    Operation(
        name="coord_extend",
        summary="Extend your lease on a queue item.",
        params=ExtendParams,
        result=Extended,
        run=_extend,
        writes=True,
        errors=ITEM,
        commands=(Command(("queue", "extend"), arguments=("id", "extend_sec")),),
        help="Extend your lease on an item.",
    ),
    Operation(
        name="coord_status",
        summary="Queue length, front item, counts and phase.",
        params=NoParams,
        result=QueueStatus,
        run=_status,
        writes=False,
        commands=(Command(("queue", "status")),),
        help="Length, front item, counts and the current phase.",
    ),
    # for people and orchestrators at a shell; agents have ctx_keys / ctx_get and
    # coord_status (each tool's schema costs every agent context)
    Operation(
        name="ctx_list",
        summary="Every shared-context entry with its version, writer and time.",
        params=CtxKeysParams,
        result=list[CtxEntry],
        run=_ctx_list,
        writes=False,
        surfaces=CLI_ONLY,
        commands=(Command(("ctx", "list"), arguments=("prefix",)),),
    ),
    Operation(
        name="ctx_delete",
        summary="Remove a shared-context key.",
        params=CtxKeyParams,
        result=CtxValue,
        run=_ctx_delete,
        writes=True,
        errors=(InvalidInput,),
        surfaces=CLI_ONLY,
        commands=(Command(("ctx", "rm"), arguments=("key",)),),
        help="Remove a key (one not set: nothing to remove, exit 0).",
    ),
    Operation(
        name="ctx_phase",
        summary="Show the current phase, or set it.",
        params=PhaseParams,
        result=CtxValue,
        run=_ctx_phase,
        writes=True,
        surfaces=CLI_ONLY,
        commands=(Command(("ctx", "phase"), arguments=("number",)),),
    ),
    Operation(
        name="coord_list",
        summary="Queue items oldest first, with holders and leases.",
        params=QueueListParams,
        result=list[QueueRecord],
        run=_queue_list,
        writes=False,
        errors=(InvalidInput,),
        surfaces=CLI_ONLY,
        commands=(Command(("queue", "list"), short={"limit": ("-n",)}),),
        help="Items oldest first, with holders and leases.",
    ),
)
