"""Seed 000's shared context (``ctx_*``) and coordinator queue (``coord_*``) as tools.

Registered by ``hive.tools.catalog``; each handler calls one domain function."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from hive.ops.spec import NoParams as NoArgs
from hive.tools.catalog import Args
from hive.tools.registry import CallContext, Tool

Key: Any = Field(min_length=1, max_length=256)
Lease: Any = Field(default=180, ge=1, le=7 * 86_400)


class CtxPutArgs(Args):
    key: str = Key
    value: Any
    mode: Literal["set", "if_absent", "if_version"] = "set"
    expected_version: int | None = Field(default=None, ge=0)


def _ctx_put(ctx: CallContext, a: CtxPutArgs) -> Any:
    from hive.domain.context import ctx_put

    return ctx_put(
        ctx.workspace(), key=a.key, value=a.value, mode=a.mode, expected_version=a.expected_version
    )


class CtxKeyArgs(Args):
    key: str = Key


def _ctx_get(ctx: CallContext, a: CtxKeyArgs) -> Any:
    from hive.domain.context import ctx_get

    return ctx_get(ctx.workspace(), key=a.key)


class CtxKeysArgs(Args):
    prefix: str | None = Field(default=None, max_length=256)


def _ctx_keys(ctx: CallContext, a: CtxKeysArgs) -> Any:
    from hive.domain.context import ctx_keys

    return ctx_keys(ctx.workspace(), prefix=a.prefix)


class CtxWaitArgs(Args):
    key: str = Key
    equals: Any = None
    at_least: float | None = None
    min_version: int | None = Field(default=None, ge=1)
    timeout_sec: float = Field(default=30, ge=0, le=300)


def _ctx_wait(ctx: CallContext, a: CtxWaitArgs) -> Any:
    from hive.domain.context import ctx_wait

    return ctx_wait(
        ctx.workspace(),
        key=a.key,
        equals=a.equals,
        at_least=a.at_least,
        min_version=a.min_version,
        timeout_sec=a.timeout_sec,
    )


class EnqueueArgs(Args):
    kind: str = Key
    payload: dict[str, Any]


def _enqueue(ctx: CallContext, a: EnqueueArgs) -> Any:
    from hive.domain.queue import enqueue

    return enqueue(ctx.workspace(), kind=a.kind, payload=a.payload)


class NextArgs(Args):
    lease_sec: float = Lease


def _next(ctx: CallContext, a: NextArgs) -> Any:
    from hive.domain.queue import next_item

    return next_item(ctx.workspace(), lease_sec=a.lease_sec)


class ClaimArgs(Args):
    id: str = Key
    lease_sec: float = Lease


def _claim(ctx: CallContext, a: ClaimArgs) -> Any:
    from hive.domain.queue import claim

    return claim(ctx.workspace(), id=a.id, lease_sec=a.lease_sec)


class CompleteItemArgs(Args):
    id: str = Key
    result: Any = None


def _complete(ctx: CallContext, a: CompleteItemArgs) -> Any:
    from hive.domain.queue import complete

    return complete(ctx.workspace(), id=a.id, result=a.result)


class ExtendArgs(Args):
    id: str = Key
    extend_sec: float = Field(ge=1, le=7 * 86_400)


def _extend(ctx: CallContext, a: ExtendArgs) -> Any:
    from hive.domain.queue import extend

    return extend(ctx.workspace(), id=a.id, extend_sec=a.extend_sec)


def _status(ctx: CallContext, a: NoArgs) -> Any:
    from hive.domain.queue import status

    return status(ctx.workspace())


TOOLS = [
    Tool(
        "ctx_put",
        "Set a shared-context value (mode if_version: compare-and-swap).",
        CtxPutArgs,
        _ctx_put,
    ),
    Tool("ctx_get", "Get a shared-context value and its version.", CtxKeyArgs, _ctx_get),
    Tool("ctx_keys", "List shared-context keys.", CtxKeysArgs, _ctx_keys),
    Tool(
        "ctx_wait",
        "Wait until a key equals / reaches at_least (e.g. phase).",
        CtxWaitArgs,
        _ctx_wait,
    ),
    Tool("coord_enqueue", "Queue a work item.", EnqueueArgs, _enqueue),
    Tool("coord_next", "Lease the next queued item (FIFO).", NextArgs, _next),
    Tool("coord_claim", "Lease a queue item by id.", ClaimArgs, _claim),
    Tool("coord_complete", "Mark a queue item done.", CompleteItemArgs, _complete),
    Tool("coord_extend", "Extend your lease on a queue item.", ExtendArgs, _extend),
    Tool("coord_status", "Queue length, front item, counts and phase.", NoArgs, _status),
]
