"""Results of the shared-context and coordinator-queue operations (seed 000 shapes)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from hive.models.base import HiveModel


class CtxPut(HiveModel):
    """A stored value: ``{ok: true, key, version}``."""

    ok: Literal[True] = True
    key: str
    version: int


class CtxRefused(HiveModel):
    """A lost compare-and-swap: ``{ok: false, error, version}`` with the version now
    stored (``error`` is ``version_mismatch`` for both modes, the seed's one error: an
    ``if_absent`` finds a version above 0)."""

    ok: Literal[False] = False
    error: str
    version: int


class CtxValue(HiveModel):
    key: str
    value: Any = None
    version: int = 0  # 0: the key is not set


class CtxKeys(HiveModel):
    keys: list[str]


class CtxWait(HiveModel):
    key: str
    value: Any = None
    version: int = 0
    met: bool
    waited_sec: float


class CtxEntry(HiveModel):
    key: str
    value: Any = None
    version: int
    agent: str
    updated_at: float


class QueueItem(HiveModel):
    """What ``coord_next`` hands out."""

    id: str
    kind: str
    payload: Any = None
    lease_until: float | None = None
    claimed_by: str | None = None


class QueueNext(HiveModel):
    item: QueueItem | None


class Enqueued(HiveModel):
    enqueued: Literal[True] = True
    id: str
    kind: str


class Claimed(HiveModel):
    id: str
    kind: str
    lease_until: float
    claimed_by: str


class Completed(HiveModel):
    id: str
    status: Literal["done"] = "done"


class Extended(HiveModel):
    id: str
    lease_until: float


class QueueFront(HiveModel):
    id: str
    kind: str
    payload: Any = None
    status: str


class QueueCounts(HiveModel):
    queued: int = 0
    claimed: int = 0
    done: int = 0


class QueueStatus(HiveModel):
    length: int
    front: QueueFront | None
    counts: QueueCounts
    phase: int


class QueueRecord(HiveModel):
    """One item as people inspect it (``hive queue list``)."""

    id: str
    kind: str
    payload: Any = None
    status: str
    claimed_by: str | None = None
    lease_until: float | None = None
    result: Any = None
    enqueued_by: str = ""
    created_at: float
    done_at: float | None = None
    lease_expired: bool = Field(default=False)
